#!/bin/sh
# iwarp_bw loopback test: server + client on 127.0.0.1 for write/read/send,
# BW and latency, plain and with --crc / --markers. Every run is bounded with
# timeout(1). Exit 77 (skip) when the tool reports that io_uring is missing.
set -u
BW=${top_builddir:-.}/tools/iwarp_bw
[ -x "$BW" ] || { echo "SKIP: $BW not built"; exit 77; }
TMP=$(mktemp -d) || exit 99
trap 'rm -rf "$TMP"' EXIT
fail=0 pass=0

. "${top_srcdir:-.}/tests/testlib.sh"

# run NAME EXPECTED_SIZES ITERS ARGS... (ITERS "any": a -D run's count).
# The server's port comes from free_port; should another program take it
# first, the server says so and the run starts again on another port.
run() {
	name=$1 sizes=$2 iters=$3
	shift 3
	tries=0
	while :; do
		port=$(free_port)
		timeout "${RUN_TMO:-60}" "$BW" -p "$port" "$@" >"$TMP/s.out" 2>"$TMP/s.err" &
		spid=$!
		wait_listen "$port" "$spid" && break
		kill "$spid" 2>/dev/null
		wait "$spid"
		tries=$((tries + 1))
		port_taken "$TMP/s.err" && [ $tries -lt 5 ] || break
		echo "     $name: port $port taken meanwhile, another one"
	done
	timeout "${RUN_TMO:-60}" "$BW" -p "$port" "$@" 127.0.0.1 >"$TMP/c.out" 2>"$TMP/c.err"
	crc=$?
	wait $spid
	src=$?
	if grep -q 'io_uring unavailable' "$TMP/s.err" "$TMP/c.err"; then
		echo "SKIP: io_uring unavailable"
		exit 77
	fi
	ok=1
	[ $crc -eq 0 ] && [ $src -eq 0 ] || ok=0
	it=$iters
	[ "$it" = any ] && it='[1-9][0-9]*'
	for s in $sizes; do
		# a result row starts with the size then the iteration count
		grep -Eq "^ $s +$it " "$TMP/c.out" || ok=0
	done
	if [ $ok -eq 1 ]; then
		pass=$((pass + 1))
		echo "PASS: $name"
	else
		fail=$((fail + 1))
		echo "FAIL: $name (client rc=$crc, server rc=$src)"
		sed 's/^/  client: /' "$TMP/c.out" "$TMP/c.err" | tail -20
		sed 's/^/  server: /' "$TMP/s.err" | tail -10
	fi
}

for t in write read send; do
	run "$t bw" 65536 200 --test $t -n 200
	run "$t lat" 2 100 --test $t --latency -n 100
	run "$t bw -s 1024 --crc" 1024 100 --test $t -s 1024 -n 100 --crc
	run "$t lat --markers" 2 50 --test $t --latency -n 50 --markers
done
run "write bw -q 2 -b" 4096 100 --test write -s 4096 -n 100 -q 2 -b
run "send bw -b --report_gbits" 4096 100 --test send -s 4096 -n 100 -b --report_gbits
# INLINE progress (no engine thread; the latency tests above use it by
# default): CM waits, handshakes and BW loops must all drive the engine
run "write bw --progress inline" 65536 200 --test write -n 200 --progress inline
run "read bw --progress inline" 4096 100 --test read -s 4096 -n 100 --progress inline
run "send bw --progress inline --crc" 64 500 --test send -s 64 -n 500 --progress inline --crc
run "write lat --progress latency" 8 100 --test write --latency -s 8 -n 100 --progress latency
# how the BW loops wait for completions: perftest's -e (completion channel
# only) and pure spinning besides the default (spin, then the channel)
run "send bw -e" 4096 300 --test send -s 4096 -n 300 -e
run "read bw --cq-wait=spin" 4096 300 --test read -s 4096 -n 300 --cq-wait=spin
# -D: a timed run (5 s > 2 x the 2 s margin) ends and drains its queue
run "write bw -D 5 --crc" 65536 any --test write -D 5 --crc
# post lists (-l), CPU utilization, many QPs (-n is per QP, as perftest)
run "write bw -q 4 -l 8 --cpu_util" 4096 200 --test write -s 4096 -n 200 -q 4 -l 8 --cpu_util
grep -q '^ CPU util: [0-9.]*%' "$TMP/c.out" || { fail=$((fail + 1)); echo "FAIL: no CPU util line"; }
grep -q '^ Connection setup: 4 QPs in ' "$TMP/c.out" || { fail=$((fail + 1)); echo "FAIL: no set-up line"; }
run "send bw -l 4 -q 3" 1024 100 --test send -s 1024 -n 100 -l 4 -q 3
run "send lat -e --cpu_util -q 4" 8 100 --test send --latency -s 8 -n 100 -e --cpu_util -q 4
grep -q '^ CPU per iteration: ' "$TMP/c.out" || { fail=$((fail + 1)); echo "FAIL: no CPU per iteration"; }
# --json carries the set-up and CPU figures; the peak is at least the
# average (the report raises a lower interval figure to it)
run "write bw --json" '' '' --test write -s 65536 -n 300 --json --cpu_util
if grep -q '"connect_rate":[0-9.]*,.*"cpu_util":[0-9.]*' "$TMP/c.out" &&
	awk -F'"bw_peak":' '{ split($2, a, ","); split($0, b, "\"bw_average\":"); split(b[2], c, ",")
		if (a[1] + 0 < c[1] + 0) exit 1 }' "$TMP/c.out"; then
	echo "PASS: json figures"
else
	fail=$((fail + 1))
	echo "FAIL: json figures: $(cat "$TMP/c.out")"
fi
# 1,000 QPs each way (connections are set up 64 at a time)
RUN_TMO=180 run "write bw -q 1000" 4096 5 --test write -s 4096 -n 5 -q 1000
RUN_TMO=180 run "send lat -q 1000" 8 50 --test send --latency -s 8 -n 50 -q 1000
# RFC 7306 (rdmap_ext on both sides): atomics check every fetched value
# (latency), the counters (BW, both sides), Immediate Data its sequence
for op in FETCH_AND_ADD CMP_AND_SWAP; do
	run "atomic $op bw" 8 300 --test atomic -A $op -n 300
	run "atomic $op bw -q 2 -o 4" 8 200 --test atomic -A $op -n 200 -q 2 -o 4
	run "atomic $op lat" 8 100 --test atomic -A $op --latency -n 100
done
run "write_with_imm bw" 4096 300 --test write --write_with_imm -s 4096 -n 300
run "write_with_imm lat" 2 100 --test write --write_with_imm --latency -n 100
run "send_with_imm bw -q 2" 8 300 --test send --send_with_imm -n 300 -q 2
run "send_with_imm bw -b" 8 200 --test send --send_with_imm -n 200 -b
run "send_with_imm lat" 8 100 --test send --send_with_imm --latency -n 100
# the server's counter check can fail: a server told to expect 50 atomics
# from a client that sends 40 must report it and exit 1 (BW and latency)
for mode in "" "--latency"; do
	port=$(free_port)
	timeout 60 "$BW" -p "$port" --test atomic $mode -n 50 >"$TMP/s.out" 2>"$TMP/s.err" &
	spid=$!
	crc=x src=x
	if wait_listen "$port" "$spid"; then
		timeout 60 "$BW" -p "$port" --test atomic $mode -n 40 127.0.0.1 >"$TMP/c.out" 2>"$TMP/c.err"
		crc=$?
	else
		kill "$spid" 2>/dev/null
	fi
	wait $spid
	src=$?
	if [ "$crc" = 0 ] && [ $src -eq 1 ] &&
		grep -q 'data check failed: QP 0 target counter is 40 after FETCH_AND_ADD, expected 50' "$TMP/s.err"; then
		pass=$((pass + 1))
		echo "PASS: atomic ${mode:-bw} counter mismatch detected"
	else
		fail=$((fail + 1))
		echo "FAIL: atomic ${mode:-bw} counter mismatch (client rc=$crc, server rc=$src)"
		cat "$TMP/c.err" "$TMP/s.err"
	fi
done
# against a peer that does not offer the extensions: a clear failure, no hang
port=$(free_port)
timeout 60 "$BW" -p "$port" --test read -s 8 -n 50 >"$TMP/s.out" 2>"$TMP/s.err" &
spid=$!
if wait_listen "$port" "$spid"; then
	timeout 60 "$BW" -p "$port" --test atomic -n 50 127.0.0.1 >"$TMP/c.out" 2>"$TMP/c.err"
	crc=$?
	wait $spid
	src=$?
	if [ $crc -eq 1 ] && [ $src -ne 124 ] && [ $src -ne 0 ] &&
		grep -q 'did not negotiate the RFC 7306 extensions' "$TMP/c.err"; then
		pass=$((pass + 1))
		echo "PASS: atomic against a peer without rdmap_ext fails clearly"
	else
		fail=$((fail + 1))
		echo "FAIL: atomic without rdmap_ext (client rc=$crc, server rc=$src)"
		cat "$TMP/c.err" "$TMP/s.err"
	fi
else
	kill "$spid" 2>/dev/null
	wait "$spid"
	fail=$((fail + 1))
	echo "FAIL: atomic without rdmap_ext: server did not listen"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
