#!/usr/bin/env bash
# scripts/demo.sh [DIR]: the main job on an already built tree: iwarp_ping
# and iwarp_bw against themselves over loopback TCP (127.0.0.1), each run
# bounded; exits non-zero if any run fails.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-build}
cd "$top"
PING=$dir/tools/iwarp_ping
BW=$dir/tools/iwarp_bw
fail=0

. "$top/tests/testlib.sh"

# pair NAME SERVER_CMD... -- CLIENT_CMD...: server in the background, then the client.
pair() {
	local name=$1; shift
	local srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	echo
	echo "== $name"
	timeout 60 "${srv[@]}" >/tmp/iwarp-demo-server.$$ 2>&1 &
	local spid=$!
	wait_listen "$port" "$spid"
	timeout 60 "${cli[@]}"
	local crc=$?
	wait $spid
	local src=$?
	if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
		echo "FAILED: $name (client exit $crc, server exit $src); server said:"
		cat /tmp/iwarp-demo-server.$$
		fail=1
	fi
	rm -f /tmp/iwarp-demo-server.$$
}

port=$(free_port)
pair "iwarp_ping: 10 pings of 1000 bytes, validated (rping protocol)" \
	"$PING" -s -a 127.0.0.1 -p "$port" -C 10 -- \
	"$PING" -c -a 127.0.0.1 -p "$port" -C 10 -S 1000 -V
port=$(free_port)
pair "iwarp_ping with MPA CRC32c and markers" \
	"$PING" -s -a 127.0.0.1 -p "$port" -C 10 -- \
	"$PING" -c -a 127.0.0.1 -p "$port" -C 10 -S 4096 -V --crc --markers
for t in write read send; do
	port=$(free_port)
	pair "iwarp_bw --test $t (64 KiB, 2000 iterations)" \
		"$BW" --test $t -p "$port" -n 2000 -- \
		"$BW" --test $t -p "$port" -n 2000 127.0.0.1
done
port=$(free_port)
pair "iwarp_bw --test write --latency (8 bytes)" \
	"$BW" --test write --latency -s 8 -n 500 -p "$port" -- \
	"$BW" --test write --latency -s 8 -n 500 -p "$port" 127.0.0.1
echo
[ $fail -eq 0 ] && echo "main job: all runs succeeded" || echo "main job: FAILED"
exit $fail
