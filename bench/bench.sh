#!/bin/sh
# bench/bench.sh: iwarp_bw against raw TCP (bench/tcp_raw) on loopback, with
# the same TCP congestion control for both. A benchmark, not a test: it
# prints a table and the project's two goal lines (PASS/MISS) and exits 0
# unless a tool is missing. See bench/README.md.
#
# Environment:
#   top_builddir         build tree with bench/tcp_raw and tools/iwarp_bw (.)
#   BENCH_IWARP_BW       another iwarp_bw binary to measure
#   BENCH_RUNS           runs per figure; the median is reported (5)
#   BENCH_ONLY           bw or lat: only that half
#   BENCH_CC             congestion control (default cubic if available,
#                        else the system's)
#   BENCH_RAW_SECS       raw TCP bandwidth run length in seconds (1.5)
#   BENCH_BW_SECS        iwarp_bw bandwidth run length target (0.7); the
#                        iteration count comes from a warm-up run
#   BENCH_LAT_ITERS      round trips per latency run (2000; iwarp_bw runs
#                        use fewer if they would last over BENCH_LAT_SECS)
#   BENCH_LAT_SECS       iwarp_bw latency run length bound (1)
#   BENCH_LAT_PROGRESS   iwarp_bw --progress mode for latency (default: the
#                        fastest of BENCH_LAT_CANDIDATES in a short probe)
#   BENCH_LAT_CANDIDATES modes probed ("inline latency adaptive")
#   BENCH_TIMEOUT        seconds before one run is abandoned (60)
set -u
B=${top_builddir:-.}
RAW=$B/bench/tcp_raw
BW=${BENCH_IWARP_BW:-$B/tools/iwarp_bw}
RUNS=${BENCH_RUNS:-5}
ONLY=${BENCH_ONLY:-}
RAW_SECS=${BENCH_RAW_SECS:-1.5}
LAT_ITERS=${BENCH_LAT_ITERS:-2000}
BW_SECS=${BENCH_BW_SECS:-0.7}
LAT_SECS=${BENCH_LAT_SECS:-1}
T=${BENCH_TIMEOUT:-60}
SIZES="64 4096 65536 1048576"
LAT_SIZES="8 4096"

[ -x "$RAW" ] || { echo "bench.sh: $RAW not built (make bench)"; exit 1; }
have_bw=1
[ -x "$BW" ] || { echo "bench.sh: $BW not built: iwarp figures n/a"; have_bw=0; }
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM

# ---- helpers ----

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
		echo $((20000 + ($$ + ${port_seq:=0}) % 20000))
	port_seq=$((${port_seq:-0} + 1))
}

# json_get KEY < line: the numeric value of "KEY"
json_get() {
	sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" | head -n 1
}

# median of the numbers on stdin (one a line); "n/a" if none
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "n/a"; exit }
		if (NR % 2) printf "%.2f\n", v[(NR + 1) / 2]
		else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B with 2 decimals, n/a when either is missing
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "n/a" || b == "n/a" || b + 0 == 0) print "n/a"
		else printf "%.2f\n", a / b }'
}

# scale A K: A * K, n/a kept
scale() {
	awk -v a="$1" -v k="$2" 'BEGIN {
		if (a == "n/a") print "n/a"; else printf "%.2f\n", a * k }'
}

size_name() {
	case $1 in
	1048576) echo "1 MiB" ;;
	65536) echo "64 KiB" ;;
	4096) echo "4 KiB" ;;
	*) echo "$1 B" ;;
	esac
}

# iters_for MBPS SIZE SECS MIN MAX: iterations of SIZE bytes that take about
# SECS at MBPS MB/sec (2^20), clamped to [MIN, MAX]
iters_for() {
	awk -v bw="$1" -v s="$2" -v t="$3" -v lo="$4" -v hi="$5" 'BEGIN {
		n = (bw == "" ? lo : int(bw * 1048576 * t / s))
		if (n < lo) n = lo
		if (n > hi) n = hi
		print n }'
}

# wait_listen PORT PID: until something listens on TCP PORT (max 5 s) or
# PID is gone
wait_listen() {
	hex=$(printf '%04X' "$1")
	i=0
	while [ $i -lt 100 ] && kill -0 "$2" 2>/dev/null; do
		awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 }
			END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# raw_run ARGS...: one tcp_raw run, its JSON line on stdout (nothing on error)
raw_run() {
	timeout "$T" "$RAW" "$@" --json 2>"$TMP/raw.err" || {
		sed 's/^/  tcp_raw: /' "$TMP/raw.err" >&2
		return 1
	}
}

# iw_run ARGS...: one iwarp_bw server + client on 127.0.0.1; the client's
# JSON line on stdout (nothing on error). The server is bounded too.
iw_run() {
	[ $have_bw -eq 1 ] || return 1
	port=$(free_port)
	timeout -k 2 "$T" "$BW" -p "$port" --json "$@" >"$TMP/s.out" 2>"$TMP/s.err" &
	spid=$!
	wait_listen "$port" $spid
	timeout -k 2 "$T" "$BW" -p "$port" --json "$@" 127.0.0.1 >"$TMP/c.out" 2>"$TMP/c.err"
	crc_rc=$?
	# a failed client may leave the server waiting: give it 3 s
	i=0
	while kill -0 $spid 2>/dev/null && [ $i -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
	grep -h "cc " "$TMP/c.err" | sed -n 's/.*cc \([^,]*\),.*/\1/p' | head -n 1 >"$TMP/iw.cc"
	if [ $crc_rc -ne 0 ] || ! grep -q '^{' "$TMP/c.out"; then
		echo "  iwarp_bw $* failed (rc $crc_rc): $(grep -v '^iwarp_bw:' "$TMP/c.err" | tail -n 1)" >&2
		return 1
	fi
	grep '^{' "$TMP/c.out" | head -n 1
}

# ---- congestion control: the same for both tools ----

avail=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null)
sysdef=$(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null)
if [ -n "${BENCH_CC+x}" ]; then
	CC=$BENCH_CC
else
	case " $avail " in
	*" cubic "*) ;;
	*) modprobe tcp_cubic 2>/dev/null
	   avail=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null) ;;
	esac
	case " $avail " in
	*" cubic "*) CC=cubic ;;
	*) CC= ;;
	esac
fi
# usable by this user? (TCP_CONGESTION outside tcp_allowed_congestion_control
# needs CAP_NET_ADMIN)
if [ -n "$CC" ] && ! "$RAW" lat -n 10 --lat-warmup 1 --cc "$CC" --json >/dev/null 2>"$TMP/cc.err"; then
	echo "bench.sh: congestion control $CC unusable ($(tail -n 1 "$TMP/cc.err")); using the system's"
	CC=
fi
if [ -n "$CC" ]; then
	CCARG="--cc $CC"
	echo "TCP congestion control: $CC (passed as --cc to tcp_raw and iwarp_bw; system default $sysdef)"
else
	CCARG=
	echo "TCP congestion control: system default $sysdef (no --cc passed)"
fi
echo "Runs per figure: $RUNS (median reported); $(nproc 2>/dev/null || echo ?) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
ccseen=$TMP/ccseen
: >"$ccseen"

# ---- bandwidth: raw TCP and iwarp_bw interleaved ----

# For each size: one uncounted warm-up run per iwarp_bw configuration sizes
# its runs to about BENCH_BW_SECS; then each round runs raw TCP once and
# every configuration once, so that the ratios compare figures measured in
# the same time window (other load on the machine hits both alike).
CONFIGS="write.0 write.1 read.0 read.1 send.0 send.1"
if [ "$ONLY" != lat ]; then
echo "Measuring bandwidth: raw TCP and iwarp_bw write/read/send x CRC off/on, interleaved ..."
for s in $SIZES; do
	: >"$TMP/raw.bw.$s"
	for c in $CONFIGS; do
		t=${c%.*}
		cflag=
		[ "${c#*.}" = 1 ] && cflag=--crc
		: >"$TMP/iw.bw.$c.$s"
		# shellcheck disable=SC2086
		v=$(iw_run --test "$t" -s "$s" -n "$(iters_for 64 "$s" 0.25 200 20000)" \
			$cflag $CCARG | json_get bw_average)
		n=
		[ -n "$v" ] && n=$(iters_for "$v" "$s" "$BW_SECS" 200 1000000)
		eval "N_${t}_${c#*.}=\$n"
	done
	r=0
	while [ $r -lt "$RUNS" ]; do
		# shellcheck disable=SC2086
		line=$(raw_run bw -s "$s" -D "$RAW_SECS" $CCARG)
		echo "$line" | json_get bw_average >>"$TMP/raw.bw.$s"
		echo "$line" | sed -n 's/.*"cc":"\([^"]*\)".*/\1/p' >>"$ccseen"
		for c in $CONFIGS; do
			t=${c%.*}
			cflag=
			[ "${c#*.}" = 1 ] && cflag=--crc
			eval "n=\$N_${t}_${c#*.}"
			[ -n "$n" ] || continue
			# shellcheck disable=SC2086
			if line=$(iw_run --test "$t" -s "$s" -n "$n" $cflag $CCARG); then
				echo "$line" | json_get bw_average >>"$TMP/iw.bw.$c.$s"
				cat "$TMP/iw.cc" >>"$ccseen"
			else
				eval "N_${t}_${c#*.}="	# failed: skip it from now on
			fi
		done
		r=$((r + 1))
	done
	eval "RAWBW_$s=\$(median <\"\$TMP/raw.bw.\$s\")"
done
fi

# ---- latency ----

if [ "$ONLY" != bw ]; then
echo "Measuring raw TCP busy-poll ping-pong ..."
for s in $LAT_SIZES; do
	for p in uring uring-ipi recv; do
		: >"$TMP/raw.lat.$p.$s"
		r=0
		while [ $r -lt "$RUNS" ]; do
			# shellcheck disable=SC2086
			line=$(raw_run lat -s "$s" -n "$LAT_ITERS" --poll $p $CCARG)
			echo "$line" | json_get rtt_median >>"$TMP/raw.lat.$p.$s"
			r=$((r + 1))
		done
	done
done

LATP=${BENCH_LAT_PROGRESS:-}
if [ -z "$LATP" ] && [ $have_bw -eq 1 ]; then
	best=
	for m in ${BENCH_LAT_CANDIDATES:-inline latency adaptive}; do
		T0=$T
		T=10
		# shellcheck disable=SC2086
		v=$(iw_run --test write --latency -s 8 -n 100 --progress "$m" $CCARG | json_get t_typical)
		T=$T0
		echo "  probe: iwarp_bw --latency --progress $m: ${v:-failed} us (half RTT, 100 iterations)"
		[ -n "$v" ] || continue
		if [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$v
			LATP=$m
		fi
	done
	[ -n "$LATP" ] || LATP=latency
fi
echo "Measuring iwarp_bw latency (--progress ${LATP:-n/a}) ..."
for t in write send read; do
	for s in $LAT_SIZES; do
		f=$TMP/iw.lat.$t.$s
		: >"$f"
		# warm-up run (not counted): at most BENCH_LAT_SECS per run
		# shellcheck disable=SC2086
		v=$(iw_run --test $t --latency -s "$s" -n 100 --progress "$LATP" $CCARG |
			json_get t_typical)
		[ -n "$v" ] || continue
		n=$(awk -v v="$v" -v t="$LAT_SECS" -v hi="$LAT_ITERS" 'BEGIN {
			n = int(t * 1e6 / (2 * v)); if (n < 100) n = 100
			if (n > hi) n = hi; print n }')
		r=0
		while [ $r -lt "$RUNS" ]; do
			# shellcheck disable=SC2086
			line=$(iw_run --test $t --latency -s "$s" -n "$n" --progress "$LATP" $CCARG) || break
			echo "$line" | json_get t_typical >>"$f"
			cat "$TMP/iw.cc" >>"$ccseen"
			r=$((r + 1))
		done
	done
done

fi

# ---- report ----

raw=n/a

echo
echo "Congestion control reported by the tools: $(sort -u "$ccseen" | grep . | tr '\n' ' ')"
echo
GOAL_BW=n/a
if [ "$ONLY" != lat ]; then
echo "Bandwidth, MB/sec (2^20 bytes/s), median of $RUNS runs; (x.xx) = iwarp / raw TCP"
printf '%-18s' ""
for s in $SIZES; do printf '%18s' "$(size_name "$s")"; done
echo
printf '%-18s' "raw TCP"
for s in $SIZES; do eval "printf '%18s' \"\$RAWBW_$s\""; done
echo
for t in write read send; do
	for crc in 0 1; do
		label="iwarp $t"
		[ $crc -eq 1 ] && label="$label +crc"
		printf '%-18s' "$label"
		for s in $SIZES; do
			v=$(median <"$TMP/iw.bw.$t.$crc.$s")
			eval "raw=\$RAWBW_$s"
			q=$(ratio "$v" "$raw")
			printf '%18s' "$v ($q)"
			[ "$t.$crc.$s" = "write.1.65536" ] && GOAL_BW=$q
		done
		echo
	done
done

fi
GOAL_LAT=n/a
if [ "$ONLY" != bw ]; then
echo
echo "Latency, microseconds, median of $RUNS runs of each tool's median."
echo "perftest (and iwarp_bw) report half the round trip for write and send"
echo "latency and the full round trip for read: below, RTT = 2 x reported for"
echo "write/send, = reported for read; ratio = iwarp RTT / raw TCP io_uring RTT."
printf '%-26s' ""
for s in $LAT_SIZES; do printf '%24s' "$(size_name "$s")"; done
echo
for p in uring uring-ipi recv; do
	printf '%-26s' "raw TCP RTT ($p poll)"
	for s in $LAT_SIZES; do
		v=$(median <"$TMP/raw.lat.$p.$s")
		[ "$p" = uring ] && eval "RAWLAT_$s=\$v"
		printf '%24s' "$v"
	done
	echo
done
for t in write send read; do
	printf '%-26s' "iwarp $t RTT"
	for s in $LAT_SIZES; do
		v=$(median <"$TMP/iw.lat.$t.$s")
		if [ "$t" = read ]; then rtt=$v; else rtt=$(scale "$v" 2); fi
		eval "raw=\$RAWLAT_$s"
		q=$(ratio "$rtt" "$raw")
		printf '%24s' "$rtt ($q)"
		[ "$t.$s" = "write.8" ] && GOAL_LAT=$q
	done
	echo
done
echo "(iwarp_bw latency runs used --progress ${LATP:-n/a}. Raw TCP rows: both ends spin;"
echo " uring = io_uring with COOP_TASKRUN as the engine's threaded modes, the"
echo " reference for the ratios; uring-ipi = default ring flags as the engine's"
echo " INLINE mode; recv = recv(MSG_DONTWAIT) + send(2), no io_uring.)"

fi
echo
verdict() { # VALUE OP LIMIT
	awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN {
		if (v == "n/a") { print "n/a"; exit }
		ok = (op == ">=") ? (v + 0 >= l + 0) : (v + 0 <= l + 0)
		print ok ? "PASS" : "MISS" }'
}
echo "Goal: 64 KiB RDMA Write with CRC >= 0.70 x raw TCP: ratio $GOAL_BW  $(verdict "$GOAL_BW" ">=" 0.70)"
echo "Goal: 8 B RDMA Write RTT <= 2.0 x raw TCP busy-poll RTT: ratio $GOAL_LAT  $(verdict "$GOAL_LAT" "<=" 2.0)"
exit 0
