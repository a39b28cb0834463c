#!/usr/bin/env bash
# tests/net_matrix.sh: iwarp_bw and iwarp_ping between two network
# namespaces joined by a veth pair (tests/net/netns.sh), under real link
# conditions instead of loopback: MTU 1500 and 9000, IPv4 and IPv6, random
# loss (0.1 %, 1 %, 5 % of the TCP segments, dropped on input in both
# namespaces), rate limits (tbf, 100 Mbit and 1 Gbit) and a user-space relay
# adding 20 ms one-way delay (tests/net/relay.c).
#
# Per condition: iwarp_bw write / read / send BW, each with --crc and with
# --markers (server in namespace A, client in namespace B), captured with
# dumpcap on A's veth; then iwarp_ping -V (data validated end to end: RDMA
# Read, RDMA Write and Send of 64 KiB, CRC required). Each bw run asserts:
#   - both processes exit 0 and the client prints its result row;
#   - iwarp_decode finds the capture valid (CRC-32C of every FPDU with
#     --crc, markers with --markers, DDP/RDMAP sequencing) and no Terminate;
#   - every FPDU fits the path's MSS: at most MTU - IP header - 20 octets
#     on the wire (RFC 5044 §8: an FPDU should fit one TCP segment).
# iwarp_bw has no option to check the data it moved, so the bw runs rely on
# CRC-32C (checked by the receiver and again by iwarp_decode) and the
# iwarp_ping runs compare the data.
#
# NET_MATRIX_QUICK=1: only the clean MTU 1500 IPv4 condition;
# NET_MATRIX_ONLY=GLOB: only the conditions whose name matches (loss*).
# Needs root and "ip netns" (else exit 77); nft for loss, dumpcap for the
# captures (missing: the FPDU checks are skipped, said so).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}
BW=$top_builddir/tools/iwarp_bw
PING=$top_builddir/tools/iwarp_ping
DECODE=$top_builddir/tools/iwarp_decode
RELAY=$top_builddir/tests/net/relay
for b in "$BW" "$PING" "$DECODE" "$RELAY"; do
	[ -x "$b" ] || { echo "SKIP: $b not built"; exit 77; }
done
. "$top_srcdir/tests/net/netns.sh"
netns_require
DUMPCAP=$(command -v dumpcap || true)
TMP=$(mktemp -d) || exit 99
NETNS_EXIT_HOOK='rm -rf "$TMP"'
trap 'netns_teardown; eval "$NETNS_EXIT_HOOK"' EXIT
trap 'netns_teardown; eval "$NETNS_EXIT_HOOK"; exit 124' INT TERM HUP
PORT=18515
pass=0 fail=0 xfail=0
RESULTS=$TMP/results

# wait_port NS PORT: until something in namespace NS listens on TCP PORT
# (the namespace is ours alone: no other program can take the port).
wait_port() {
	local i=0
	while [ $i -lt 300 ]; do
		[ -n "$(ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null)" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

cap_start() {
	CAP=$TMP/cap.pcapng
	rm -f "$CAP"
	[ -n "$DUMPCAP" ] || return 0
	ip netns exec "$NS_A" "$DUMPCAP" -B 64 -i "$NS_IF_A" -f "tcp port $PORT" -w "$CAP" >"$TMP/dumpcap.log" 2>&1 &
	DPID=$!
	netns_track $DPID
	# live once it has seen a packet: knock (SYN, RST) on the closed port
	local k=0
	while [ $k -lt 100 ] && ! grep -q 'Packets' "$TMP/dumpcap.log" 2>/dev/null; do
		in_b timeout 1 bash -c "exec 3<>/dev/tcp/$SADDR/$PORT" 2>/dev/null
		sleep 0.1
		[ -s "$CAP" ] && [ "$(stat -c %s "$CAP")" -gt 300 ] && break
		k=$((k + 1))
	done
}

# cap_stop: stops dumpcap; CAP_OK=1 when it dropped nothing. The kernel
# hands dumpcap packets a block at a time, when a block fills or its timer
# runs out; a block still open when dumpcap stops is lost (a run of a few
# milliseconds was once missing from its capture, only the knocks in it).
# So knock until the file grows: the knock's block, and every block before
# it, has been written then.
cap_stop() {
	CAP_OK=0
	[ -n "$DUMPCAP" ] || return 0
	local k=0 size
	size=$(stat -c %s "$CAP" 2>/dev/null || echo 0)
	while [ $k -lt 100 ]; do
		in_b timeout 1 bash -c "exec 3<>/dev/tcp/$SADDR/$PORT" 2>/dev/null
		sleep 0.1
		[ "$(stat -c %s "$CAP" 2>/dev/null || echo 0)" -gt "$size" ] && break
		k=$((k + 1))
	done
	kill -TERM "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	grep -Eq "dropped on interface .*: [0-9]+/0 " "$TMP/dumpcap.log" && CAP_OK=1
	[ -s "$CAP" ] || CAP_OK=0
}

# bw_run COND TEST OPTS ITERS: one iwarp_bw run, checked and reported.
bw_run() {
	local cond=$1 t=$2 opts=$3 n=$4 name caddr cport src crc ok=1 why="" bwv fit=""
	name="$cond $t $opts"
	cap_start
	in_a timeout 90 "$BW" -p $PORT --bind "$SADDR" --test "$t" $opts -n "$n" \
		>"$TMP/s.out" 2>"$TMP/s.err" &
	local spid=$!
	netns_track $spid
	if ! wait_port "$NS_A" $PORT; then
		why="server not listening"
		ok=0
	fi
	caddr=$SADDR cport=$PORT
	[ -n "$RPORT" ] && caddr=$RADDR cport=$RPORT
	if [ $ok -eq 1 ]; then
		in_b timeout 90 "$BW" -p "$cport" --test "$t" $opts -n "$n" "$caddr" \
			>"$TMP/c.out" 2>"$TMP/c.err"
		crc=$?
	else
		crc=99
	fi
	wait $spid
	src=$?
	cap_stop
	if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
		ok=0 why="exit client=$crc server=$src"
	fi
	grep -Eq "^ 65536 +$n " "$TMP/c.out" || { ok=0; why="$why; no result row"; }
	if grep -qi 'terminate' "$TMP/c.err" "$TMP/s.err"; then
		ok=0 why="$why; Terminate reported"
	fi
	bwv=$(awk -v n="$n" '$1 == 65536 && $2 == n { print $4 }' "$TMP/c.out" | head -1)
	# the FPDU size check: directions the server's MSS applies to (through
	# the relay, the client's FPDUs were sized for loopback: only B->A)
	if [ -z "$DUMPCAP" ]; then
		fit="no dumpcap"
	elif [ $CAP_OK -ne 1 ]; then
		fit="capture incomplete, not checked"
	else
		"$DECODE" --json "$CAP" >"$TMP/dec.json" 2>/dev/null
		local dirs="A->B,B->A"
		[ -n "$RPORT" ] && dirs="B->A"
		if python3 "$top_srcdir/tests/net/fpdu_fit.py" "$TMP/dec.json" "$MSSMAX" "$dirs" \
			>"$TMP/fit.out"; then
			fit="$(head -1 "$TMP/fit.out") <= $MSSMAX"
		else
			fit="$(head -1 "$TMP/fit.out") (limit $MSSMAX)"
			ok=0 why="$why; capture: $(sed -n 2,3p "$TMP/fit.out" | tr '\n' ' ')"
		fi
	fi
	# A TCP stream has no holes: a gap that never filled is a segment the
	# capture missed (seen once at MTU 9000 with dumpcap reporting no drop),
	# not the library's. Such a run, otherwise clean, runs once more.
	if [ $ok -eq 0 ] && [ -z "${BW_RERUN:-}" ] && [ $crc -eq 0 ] && [ $src -eq 0 ] &&
		[ -s "$TMP/fit.out" ] && grep -q 'capture not valid: 1 errors' "$TMP/fit.out" &&
		grep -q '^error: gap of .* never filled' "$TMP/fit.out"; then
		echo "     $name: the capture missed a segment ($(grep '^error: gap' "$TMP/fit.out")); once more"
		rm -f "$TMP/fit.out"
		BW_RERUN=1 bw_run "$@"
		return
	fi
	if [ $ok -eq 1 ]; then
		pass=$((pass + 1))
		echo "PASS: $name: ${bwv:-?} MB/s, FPDU $fit"
		printf '%-16s %-5s %-10s %-6s %10s  %s\n' "$cond" "$t" "$opts" PASS "${bwv:-?}" "$fit" >>"$RESULTS"
	else
		fail=$((fail + 1))
		echo "FAIL: $name:$why"
		printf '%-16s %-5s %-10s %-6s %10s  %s\n' "$cond" "$t" "$opts" FAIL "${bwv:-?}" "$why" >>"$RESULTS"
		sed 's/^/  client: /' "$TMP/c.out" "$TMP/c.err" | tail -8
		sed 's/^/  server: /' "$TMP/s.err" | tail -6
		[ -s "$TMP/fit.out" ] && sed 's/^/  decode: /' "$TMP/fit.out"
	fi
	rm -f "$TMP/fit.out"
}

# ping_run COND COUNT: iwarp_ping -V with 64 KiB data, CRC required.
ping_run() {
	local cond=$1 cnt=$2 ok=1 caddr cport crc src
	in_a timeout 90 "$PING" -s -V -a "$SADDR" -p $PORT --crc=require >"$TMP/ps.out" 2>&1 &
	local spid=$!
	netns_track $spid
	wait_port "$NS_A" $PORT || ok=0
	caddr=$SADDR cport=$PORT
	[ -n "$RPORT" ] && caddr=$RADDR cport=$RPORT
	in_b timeout 90 "$PING" -c -V -a "$caddr" -p "$cport" -S 65535 -C "$cnt" --crc=require \
		>"$TMP/pc.out" 2>&1
	crc=$?
	wait $spid
	src=$?
	[ $crc -eq 0 ] && [ $src -eq 0 ] || ok=0
	grep -qi 'mismatch\|bogus\|terminate' "$TMP/pc.out" "$TMP/ps.out" && ok=0
	grep -q "^$cnt pings of 65535 bytes" "$TMP/pc.out" || ok=0
	if [ $ok -eq 1 ]; then
		pass=$((pass + 1))
		echo "PASS: $cond ping -V 64 KiB x $cnt"
		printf '%-16s %-5s %-10s %-6s %10s  %s\n' "$cond" ping "-V -S 65535" PASS - "$cnt validated" >>"$RESULTS"
	else
		fail=$((fail + 1))
		echo "FAIL: $cond ping -V (client rc=$crc, server rc=$src)"
		printf '%-16s %-5s %-10s %-6s %10s  %s\n' "$cond" ping "-V" FAIL - "rc $crc/$src" >>"$RESULTS"
		sed 's/^/  client: /' "$TMP/pc.out" | tail -6
		sed 's/^/  server: /' "$TMP/ps.out" | tail -6
	fi
}

# condition NAME MTU FAMILY ITERS SETUP...: fresh namespaces, SETUP, runs.
condition() {
	local cond=$1 mtu=$2 fam=$3 n=$4 t o
	shift 4
	case $cond in
	${NET_MATRIX_ONLY:-*}) ;;
	*) return ;;
	esac
	if ! netns_setup "$mtu"; then
		fail=$((fail + 1))
		echo "FAIL: $cond: namespace setup"
		return
	fi
	if [ "$fam" = 6 ]; then
		SADDR=$NS_A6 MSSMAX=$((mtu - 40 - 20)) RADDR=::1
	else
		SADDR=$NS_A4 MSSMAX=$((mtu - 20 - 20)) RADDR=127.0.0.1
	fi
	RPORT=""
	if [ $# -gt 0 ] && [ "$1" = relay ]; then
		shift
		in_b "$RELAY" -l "$RADDR" -t "$SADDR" -P $PORT "$@" >"$TMP/relay.out" 2>"$TMP/relay.err" &
		netns_track $!
		local i=0
		while [ $i -lt 100 ] && ! grep -q '^port ' "$TMP/relay.out"; do
			sleep 0.1
			i=$((i + 1))
		done
		RPORT=$(awk '/^port /{ print $2 }' "$TMP/relay.out")
		[ -n "$RPORT" ] || { fail=$((fail + 1)); echo "FAIL: $cond: relay"; return; }
	elif [ $# -gt 0 ]; then
		if ! "$@"; then
			fail=$((fail + 1))
			echo "FAIL: $cond: $*"
			return
		fi
	fi
	echo "== $cond (MTU $mtu, IPv$fam, server $SADDR${RPORT:+, relay $RADDR:$RPORT})"
	for t in write read send; do
		for o in --crc --markers; do
			bw_run "$cond" $t "$o" "$n"
		done
	done
	ping_run "$cond" 10
	case $cond in
	loss*) echo "   dropped segments (A B): $(netns_loss_count)" ;;
	esac
	netns_teardown
}

condition clean-1500-v4 1500 4 100
if [ "${NET_MATRIX_QUICK:-0}" != 1 ]; then
	condition clean-1500-v6 1500 6 100
	condition clean-9000-v4 9000 4 100
	condition clean-9000-v6 9000 6 100
	if command -v nft >/dev/null 2>&1; then
		condition loss-0.1%-v4 1500 4 50 netns_loss 1
		condition loss-1%-v6 1500 6 20 netns_loss 10
		condition loss-5%-v4 1500 4 5 netns_loss 50
	else
		echo "SKIP: loss conditions (nft not installed)"
	fi
	condition rate-100M-v4 1500 4 50 netns_rate 100mbit
	condition rate-1G-v6 9000 6 100 netns_rate 1gbit
	condition relay-20ms-v4 1500 4 50 relay -d 20
	condition relay-20ms-v6 1500 6 50 relay -d 20
fi

echo
echo "condition        test  options    result  MB/s        FPDU (max wire octets <= MSS bound)"
cat "$RESULTS"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
