#!/bin/sh
# tests/tls_certs.sh DIR: test credentials for the TLS tests, made fresh
# with the openssl CLI (nothing secret is committed):
#   ca.pem                CA "iwarp-test-ca"
#   srv.pem srv.key       server, signed by ca (SAN IP:127.0.0.1, ::1, localhost)
#   cli.pem cli.key       client, signed by ca
#   rogue-ca.pem          another CA
#   rogue.pem rogue.key   client, signed by rogue-ca
#   psk.hex psk2.hex      two different 32-octet PSKs (hex)
set -eu
d=${1:?usage: tls_certs.sh DIR}
mkdir -p "$d"
cd "$d"
ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 \
	-subj /CN=iwarp-test-ca 2>/dev/null
openssl req -x509 $ec -keyout rogue-ca.key -out rogue-ca.pem -days 2 \
	-subj /CN=iwarp-rogue-ca 2>/dev/null
leaf() { # name ca cn san
	openssl req $ec -keyout "$1.key" -out "$1.csr" -subj "/CN=$3" 2>/dev/null
	printf 'subjectAltName=%s\n' "$4" >"$1.ext"
	openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" \
		-CAcreateserial -days 2 -out "$1.pem" -extfile "$1.ext" 2>/dev/null
}
leaf srv ca iwarp-server 'IP:127.0.0.1,IP:::1,DNS:localhost'
leaf cli ca iwarp-client 'DNS:iwarp-client'
leaf rogue rogue-ca iwarp-rogue 'DNS:iwarp-rogue'
openssl rand -hex 32 >psk.hex
openssl rand -hex 32 >psk2.hex
chmod 600 ./*.key psk.hex psk2.hex
