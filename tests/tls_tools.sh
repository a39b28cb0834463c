#!/usr/bin/env bash
# tests/tls_tools.sh: iwarp_ping and iwarp_bw with --tls over loopback:
#  - ping -V (every ping's data checked by both sides) with mutual
#    certificates and with a PSK; bw write/read/send (result rows present,
#    both tools exit 0) with a server certificate;
#  - refusals: a plain client, a client with a certificate of another CA and
#    an `openssl s_client -tls1_2` (downgrade) against one persistent TLS
#    ping server each fail, and the same server then serves a good client;
#  - a capture (dumpcap) of a TLS bw run: tshark decodes TLS application
#    data records and finds NO iwarp_mpa frame, while the same check on a
#    plain run finds them (the check can fail).
# Every run is bounded by timeout(1). Skips the capture part (not the test)
# when dumpcap cannot capture on lo.
set -uo pipefail
. "${top_srcdir:-.}/tests/testlib.sh"

B=${top_builddir:-.}
PING=$B/tools/iwarp_ping
BW=$B/tools/iwarp_bw
TSHARK=${TSHARK:-$(command -v tshark || true)}
DUMPCAP=${DUMPCAP:-$(command -v dumpcap || true)}
TMO=${RUN_TMO:-60}
for t in "$PING" "$BW"; do
	[ -x "$t" ] || { echo "FAIL: $t not built"; exit 1; }
done
command -v openssl >/dev/null || { echo "SKIP: no openssl CLI"; exit 77; }

W=$(mktemp -d) || exit 99
spid= dpid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
sh "${top_srcdir:-.}/tests/tls_certs.sh" "$W/c" || { echo "FAIL: certificates"; exit 1; }
C=$W/c
SRV_CERT=(--tls-cert "$C/srv.pem" --tls-key "$C/srv.key")
CLI_MUTUAL=(--tls-cert "$C/cli.pem" --tls-key "$C/cli.key" --tls-ca "$C/ca.pem")
fail=0 pass=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# start_server TOOL ARGS...: starts TOOL -p PORT ARGS in the background
# (PORT chosen here, retried when taken); sets spid and port.
start_server() {
	local tool=$1 tries=0
	shift
	while :; do
		port=$(free_port)
		timeout "$TMO" "$tool" -p "$port" "$@" >"$W/s.out" 2>&1 &
		spid=$!
		wait_listen "$port" "$spid" && return 0
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		spid=
		tries=$((tries + 1))
		port_taken "$W/s.out" && [ $tries -lt 5 ] || return 1
	done
}

# ping_pair NAME "SERVER ARGS" "CLIENT ARGS": 20 validated pings.
ping_pair() {
	local name=$1 crc src
	read -ra sa <<<"$2"
	read -ra ca <<<"$3"
	start_server "$PING" -s -a 127.0.0.1 -V -C 20 "${sa[@]}" ||
		{ bad "$name: server did not listen"; return; }
	timeout "$TMO" "$PING" -c -a 127.0.0.1 -p "$port" -V -C 20 "${ca[@]}" >"$W/c.out" 2>&1
	crc=$?
	wait "$spid"; src=$?; spid=
	if [ $crc -eq 0 ] && [ $src -eq 0 ] && grep -q '^20 pings' "$W/c.out"; then
		ok "$name"
	else
		bad "$name (client $crc, server $src)"
		tail -5 "$W/c.out" "$W/s.out" | sed 's/^/  /'
	fi
}

# bw_pair NAME SIZE ARGS...: both roles with ARGS; a result row for SIZE.
bw_pair() {
	local name=$1 size=$2 crc src
	shift 2
	start_server "$BW" "$@" "${SRV_CERT[@]}" ||
		{ bad "$name: server did not listen"; return; }
	timeout "$TMO" "$BW" -p "$port" "$@" --tls-ca "$C/ca.pem" 127.0.0.1 >"$W/c.out" 2>&1
	crc=$?
	wait "$spid"; src=$?; spid=
	if [ $crc -eq 0 ] && [ $src -eq 0 ] && grep -Eq "^ $size +[0-9]+ " "$W/c.out"; then
		ok "$name"
	else
		bad "$name (client $crc, server $src)"
		tail -5 "$W/c.out" "$W/s.out" | sed 's/^/  /'
	fi
}

ping_pair "ping mutual certificates" \
	"${SRV_CERT[*]} --tls-ca $C/ca.pem" "${CLI_MUTUAL[*]}"
ping_pair "ping PSK" "--tls-psk-file $C/psk.hex" "--tls-psk-file $C/psk.hex"
ping_pair "ping server cert, MPA CRC" "${SRV_CERT[*]} --crc=require" \
	"--tls-ca $C/ca.pem --crc=require"
bw_pair "bw write --tls" 65536 --test write -n 300
bw_pair "bw read --tls" 4096 --test read -s 4096 -n 300
bw_pair "bw send --tls -q 2" 4096 --test send -s 4096 -n 300 -q 2

# ---- refusals against one persistent server ----
if start_server "$PING" -s -P -a 127.0.0.1 -V -C 3 "${SRV_CERT[@]}" --tls-ca "$C/ca.pem"; then
	if timeout "$TMO" "$PING" -c -a 127.0.0.1 -p "$port" -C 3 --timeout 10000 >"$W/r1" 2>&1; then
		bad "a plain client got through a TLS server"
	else
		ok "plain client refused ($(tail -1 "$W/r1"))"
	fi
	if timeout "$TMO" "$PING" -c -a 127.0.0.1 -p "$port" -C 3 \
		--tls-cert "$C/rogue.pem" --tls-key "$C/rogue.key" --tls-ca "$C/ca.pem" >"$W/r2" 2>&1; then
		bad "a client of another CA got through"
	elif grep -q 'Permission denied' "$W/r2"; then
		ok "client of another CA refused: permission denied"
	else
		bad "client of another CA: unclear error: $(tail -2 "$W/r2")"
	fi
	if timeout 20 openssl s_client -connect "127.0.0.1:$port" -tls1_2 \
		</dev/null >"$W/r3" 2>&1; then
		bad "a TLS 1.2 client completed a handshake"
	else
		ok "TLS 1.2 client refused (no downgrade)"
	fi
	if timeout "$TMO" "$PING" -c -a 127.0.0.1 -p "$port" -V -C 3 "${CLI_MUTUAL[@]}" >"$W/r4" 2>&1; then
		ok "the refusing server still serves a good client"
	else
		bad "good client after refusals: $(tail -3 "$W/r4")"
	fi
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	spid=
else
	bad "persistent server did not listen"
fi

# TLS client, plain server: a clear error, the client does not hang
if start_server "$PING" -s -a 127.0.0.1 -C 3; then
	if timeout "$TMO" "$PING" -c -a 127.0.0.1 -p "$port" -C 3 --tls-ca "$C/ca.pem" >"$W/r5" 2>&1; then
		bad "a TLS client connected to a plain server"
	elif grep -q 'Protocol error' "$W/r5"; then
		ok "TLS client to plain server: protocol error"
	else
		bad "TLS client to plain server: unclear error: $(tail -2 "$W/r5")"
	fi
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	spid=
fi

# ---- capture: only TLS records on the wire ----
capture() { # NAME BW-ARGS...: captures one bw run into $W/NAME.pcapng
	local name=$1 i
	shift
	local kport
	kport=$(free_port)
	start_server "$BW" --test send -s 4096 -n 200 "$@" || return 1
	"$DUMPCAP" -i lo -f "tcp port $port or tcp port $kport" -w "$W/$name.pcapng" >"$W/$name.dc" 2>&1 &
	dpid=$!
	for i in $(seq 100); do
		grep -q 'Capturing on' "$W/$name.dc" && [ -s "$W/$name.pcapng" ] && break
		sleep 0.1
	done
	dumpcap_knock "$W/$name.dc" "$kport"
	local cargs=("$@")
	[ "${cargs[0]:-}" = "--tls-cert" ] && cargs=(--tls-ca "$C/ca.pem")
	timeout "$TMO" "$BW" -p "$port" --test send -s 4096 -n 200 "${cargs[@]}" 127.0.0.1 >"$W/$name.c" 2>&1
	wait "$spid"; spid=
	sleep 1.5 # dumpcap retires its ring block within 250 ms
	kill -INT "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	dpid=
	[ -s "$W/$name.pcapng" ]
}
TS=(-n --disable-heuristic rpcrdma_iwarp -o tcp.try_heuristic_first:TRUE)
if [ -z "$TSHARK" ] || [ -z "$DUMPCAP" ] || ! timeout 20 "$DUMPCAP" -i lo -L >/dev/null 2>&1; then
	echo "SKIP: capture part (no tshark/dumpcap or no capture permission)"
else
	if capture plain && capture tls "${SRV_CERT[@]}"; then
		mpa_plain=$("$TSHARK" "${TS[@]}" -r "$W/plain.pcapng" -Y iwarp_mpa 2>/dev/null | wc -l)
		mpa_tls=$("$TSHARK" "${TS[@]}" -r "$W/tls.pcapng" -Y iwarp_mpa 2>/dev/null | wc -l)
		# TLS on a random port: tell tshark (Decode As) for every port
		dec=()
		for p in $("$TSHARK" -n -r "$W/tls.pcapng" -T fields -e tcp.srcport 2>/dev/null | sort -u); do
			dec+=(-d "tcp.port==$p,tls")
		done
		appdata=$("$TSHARK" -n "${dec[@]}" -r "$W/tls.pcapng" -Y 'tls.record.opaque_type == 23 || tls.record.content_type == 23' 2>/dev/null | wc -l)
		hello=$("$TSHARK" -n "${dec[@]}" -r "$W/tls.pcapng" -Y 'tls.handshake.type == 1' 2>/dev/null | wc -l)
		echo "     capture: plain run $mpa_plain iwarp_mpa frames; TLS run $mpa_tls iwarp_mpa frames, $hello ClientHello, $appdata frames of TLS application data"
		[ "$mpa_plain" -gt 0 ] && ok "plain capture shows MPA (control)" || bad "plain capture shows no MPA: the check below proves nothing"
		[ "$mpa_tls" -eq 0 ] && ok "TLS capture: no iwarp_mpa frame" || bad "TLS capture: $mpa_tls iwarp_mpa frames"
		[ "$hello" -ge 2 ] && [ "$appdata" -gt 0 ] && ok "TLS capture: handshakes and application data records" ||
			bad "TLS capture: $hello ClientHello, $appdata application data frames"
	else
		bad "capture runs failed: $(tail -3 "$W"/*.c 2>/dev/null)"
	fi
fi

echo "tls_tools: $pass passed, $fail failed"
[ $fail -eq 0 ]
