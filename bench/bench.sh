#!/bin/sh
# bench/bench.sh: iwarp_bw against raw TCP (bench/tcp_raw) on loopback, with
# the same TCP congestion control for both. A benchmark, not a test: it
# prints a table and the project's two goal lines (PASS/MISS) and exits 0
# unless a tool is missing. See bench/README.md.
#
# Environment:
#   top_builddir         build tree with bench/tcp_raw and tools/iwarp_bw (.)
#   BENCH_IWARP_BW       another iwarp_bw binary to measure
#   BENCH_RUNS           runs per figure; the median is reported (3)
#   BENCH_ONLY           bw, lat, rows, tls or compat: only that part
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
#   BENCH_QUICK          1: one run per figure, fewer sizes and QP counts,
#                        no 10,000-QP run (about 3 minutes)
#   BENCH_TLS            0: skip the TLS rows (iwarp_bw --tls against raw
#                        TCP+TLS, OpenSSL, same cipher); BENCH_ONLY=tls:
#                        only them
#   BENCH_COMPAT         0: skip the compat rows (perftest over iwarp_run
#                        against iwarp_bw native); BENCH_ONLY=compat: only them
#   BENCH_COMPAT_RUNS    rounds of the compat rows (5; 3 with BENCH_QUICK)
#   BENCH_COMPAT_PROGRESS engine mode of both tools in them (adaptive)
#   BENCH_OUT            output directory ($top_builddir/bench/out): the
#                        rows table, data files and gnuplot pictures
set -u
B=${top_builddir:-.}
RAW=$B/bench/tcp_raw
BW=${BENCH_IWARP_BW:-$B/tools/iwarp_bw}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then RUNS=${BENCH_RUNS:-1}; else RUNS=${BENCH_RUNS:-3}; fi
OUT=${BENCH_OUT:-$B/bench/out}
mkdir -p "$OUT" || exit 1
ONLY=${BENCH_ONLY:-}
RAW_SECS=${BENCH_RAW_SECS:-1.5}
LAT_ITERS=${BENCH_LAT_ITERS:-2000}
BW_SECS=${BENCH_BW_SECS:-0.7}
LAT_SECS=${BENCH_LAT_SECS:-1}
T=${BENCH_TIMEOUT:-60}
SIZES="64 4096 65536 1048576"
[ "$QUICK" = 1 ] && SIZES="64 4096 65536"
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

# lowest of the numbers on stdin; "n/a" if none
lowest() {
	sort -g | awk 'NR == 1 { printf "%.2f\n", $1; f = 1 } END { if (!f) print "n/a" }'
}
# the numbers on stdin on one line
listed() {
	paste -sd' ' | sed 's/^$/none/'
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

# verdict VALUE OP LIMIT: PASS, MISS or n/a
verdict() { # VALUE OP LIMIT
	awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN {
		if (v == "n/a") { print "n/a"; exit }
		ok = (op == ">=") ? (v + 0 >= l + 0) : (v + 0 <= l + 0)
		print ok ? "PASS" : "MISS" }'
}

# row_head: the header line of a rows table (tls, compat, rows)
row_head() {
	printf '%-58s %8s %4s %-5s %s\n' "row" "ratio" "" "target" "verdict"
}

# row LABEL VALUE OP TARGET NOTE: one line of a rows table, the verdict of
# VALUE OP TARGET followed by NOTE
row() {
	printf '%-58s %8s %4s %-5s %s\n' "$1" "$2" "$3" "$4" "$(verdict "$2" "$3" "$4") ${5:-}"
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

# stop_server PID: the server of a run ends by itself after its client; a
# failed client may leave it waiting: give it 3 s, then stop it.
stop_server() {
	_i=0
	while kill -0 "$1" 2>/dev/null && [ $_i -lt 30 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# iw_run ARGS...: one iwarp_bw server + client on 127.0.0.1; the client's
# JSON line on stdout (nothing on error). The server is bounded too.
# SRV_PIN / CLI_PIN: a command prefix (taskset -c N) that places that end.
SRV_PIN=
CLI_PIN=
iw_run() {
	[ $have_bw -eq 1 ] || return 1
	port=$(free_port)
	# shellcheck disable=SC2086
	$SRV_PIN timeout -k 2 "$T" "$BW" -p "$port" --json "$@" >"$TMP/s.out" 2>"$TMP/s.err" &
	spid=$!
	wait_listen "$port" $spid
	# shellcheck disable=SC2086
	$CLI_PIN timeout -k 2 "$T" "$BW" -p "$port" --json "$@" 127.0.0.1 >"$TMP/c.out" 2>"$TMP/c.err"
	crc_rc=$?
	stop_server $spid
	grep -h "cc " "$TMP/c.err" | sed -n 's/.*cc \([^,]*\),.*/\1/p' | head -n 1 >"$TMP/iw.cc"
	if [ $crc_rc -ne 0 ] || ! grep -q '^{' "$TMP/c.out"; then
		echo "  iwarp_bw $* failed (rc $crc_rc): $(grep -v '^iwarp_bw:' "$TMP/c.err" | tail -n 1)" >&2
		return 1
	fi
	grep '^{' "$TMP/s.out" | head -n 1 >"$TMP/iw.srv"
	grep '^{' "$TMP/c.out" | head -n 1
}

# ---- TLS rows: iwarp_bw --tls against raw TCP + TLS (tcp_raw tls) ----
# Both sides use OpenSSL with its default TLS 1.3 suite
# (TLS_AES_256_GCM_SHA384; iwarp_bw with an external PSK, whose session
# uses the same suite), one connection, the same run window. No target in
# the project's goals: the ratio is printed against 0.70 for information.
tls_rows() {
TPSK=$TMP/tls.psk
python3 -c 'import os; print(os.urandom(32).hex())' >"$TPSK" 2>/dev/null ||
	od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$TPSK"
echo
echo "TLS rows (ratio = iwarp_bw --tls / raw TCP+TLS, OpenSSL in user space both; medians of $RUNS runs)"
row_head
for s in 65536 4096; do
	: >"$TMP/tls.raw.$s"
	: >"$TMP/tls.iw.$s"
	r=0
	while [ $r -lt "$RUNS" ]; do
		# shellcheck disable=SC2086
		line=$(raw_run tls -s "$s" -D "$RAW_SECS" $CCARG)
		rb=$(echo "$line" | json_get bw_average)
		cipher=$(echo "$line" | sed -n 's/.*"cipher":"\([^"]*\)".*/\1/p')
		echo "$rb" | grep . >>"$TMP/tls.raw.$s"
		n=$(iters_for "$rb" "$s" "$BW_SECS" 200 200000)
		# shellcheck disable=SC2086
		iw_run --test write -s "$s" -n "$n" --tls-psk-file "$TPSK" $CCARG |
			json_get bw_average | grep . >>"$TMP/tls.iw.$s"
		r=$((r + 1))
	done
	iw=$(median <"$TMP/tls.iw.$s")
	raw=$(median <"$TMP/tls.raw.$s")
	q=$(ratio "$iw" "$raw")
	row "$(size_name "$s") Write, TLS / raw TCP+TLS (${cipher:-?})" "$q" ">=" 0.70 \
		"informational ($iw vs $raw MB/sec)"
done
}

# ---- compat rows: what the compat libraries cost against native libiwarp ----
# Debian's perftest (ib_write_bw -R, ib_write_lat -R) unmodified over the
# compat libibverbs/librdmacm (tools/iwarp_run), against iwarp_bw on the
# native API; each against a server of its own kind, the same size,
# iterations and configuration: perftest busy-polls its CQ (iwarp_bw
# --cq-wait=spin), and both get the engine mode and congestion control from
# the environment (IWARP_PROGRESS, IWARP_CC), which the compat contexts and
# iwarp_bw read alike. The progress mode is adaptive (an engine thread) for
# both rows: ib_write_lat waits for the peer's Write by spinning on its
# buffer without entering the library, so in the inline mode nothing moves
# its engine and both ends spin for ever (docs/compat.md). Rounds alternate
# which tool runs first, BENCH_COMPAT_RUNS rounds. The bandwidth rows
# compare medians; the latency row compares the best round of each tool
# (the lowest typical latency), with the medians beside: both tools'
# latency is bimodal on 2 cores with the
# progress threads (2 B Write typical about 20 or about 65 us, the same
# tool, round to round: whether the two spinning application threads and
# the two engine threads fall into step), so a median compares whichever
# mode each tool hit in 3 of 5 rounds (ratios 0.32-2.77 seen for the same
# build), while the compat layer's own cost is in every round. The judged
# bandwidth row compares like with like: ib_write_bw's client and
# iwarp_bw's client, each against the same iwarp_bw server. The pair of
# perftest's own client and server is an informational context row:
# perftest's server spins through the client's run where iwarp_bw's
# sleeps, which on 2 cores is a difference of the programs, not of the
# library.

# pt_run PROGRAM ARGS...: one perftest -R server + client under iwarp_run on
# 127.0.0.1; the client's result row on stdout (nothing on error). A client
# refused between perftest's two listeners (its server listens anew for the
# test QP after the parameter exchange; RDMA_CM_EVENT_REJECTED) runs again
# on a fresh port, at most three runs, as tests/compat_programs.sh does.
pt_run() {
	_prog=$1
	shift
	for _try in 1 2 3; do
		port=$(free_port)
		timeout -k 2 "$T" "$RUN" "$_prog" -R -p "$port" "$@" >"$TMP/ps.out" 2>"$TMP/ps.err" &
		spid=$!
		wait_listen "$port" $spid
		timeout -k 2 "$T" "$RUN" "$_prog" -R -p "$port" "$@" 127.0.0.1 \
			>"$TMP/pc.out" 2>"$TMP/pc.err"
		_rc=$?
		stop_server $spid
		if [ $_rc -ne 0 ] && [ $_try -lt 3 ] &&
			grep -q RDMA_CM_EVENT_REJECTED "$TMP/pc.out" "$TMP/pc.err"; then
			echo "  $_prog: refused between perftest's two listeners, once more" >&2
			continue
		fi
		break
	done
	if [ $_rc -ne 0 ] || ! grep -Eq '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$TMP/pc.out"; then
		echo "  $_prog $* over iwarp_run failed (rc $_rc): $(cat "$TMP/pc.out" "$TMP/pc.err" | grep . | tail -n 1)" >&2
		return 1
	fi
	grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$TMP/pc.out" | tail -n 1
}

# px_run ARGS...: ib_write_bw -R over iwarp_run against an iwarp_bw server
# (ARGS to both, the server gets --cq-wait=spin too); the client's row.
px_run() {
	port=$(free_port)
	timeout -k 2 "$T" "$BW" -p "$port" --cq-wait=spin "$@" >"$TMP/xs.out" 2>"$TMP/xs.err" &
	spid=$!
	wait_listen "$port" $spid
	timeout -k 2 "$T" "$RUN" ib_write_bw -R -p "$port" "$@" 127.0.0.1 >"$TMP/xc.out" 2>"$TMP/xc.err"
	_rc=$?
	stop_server $spid
	if [ $_rc -ne 0 ] || ! grep -Eq '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$TMP/xc.out"; then
		echo "  ib_write_bw $* against iwarp_bw failed (rc $_rc): $(cat "$TMP/xc.out" "$TMP/xc.err" | grep . | tail -n 1)" >&2
		return 1
	fi
	grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$TMP/xc.out" | tail -n 1
}

compat_rows() {
CRUNS=${BENCH_COMPAT_RUNS:-5}
[ "$QUICK" = 1 ] && CRUNS=${BENCH_COMPAT_RUNS:-3}
CPROG=${BENCH_COMPAT_PROGRESS:-adaptive}
RUN=$B/tools/iwarp_run
echo
echo "Compat rows (Debian's perftest over iwarp_run / iwarp_bw on the native API; $CRUNS alternating rounds: bandwidth medians, latency best; progress $CPROG, cc ${CC:-system})"
why=
[ $have_bw -eq 1 ] || why="iwarp_bw not built"
[ -x "$RUN" ] || why="$RUN not built (make)"
[ -e "$B/compat/.libs/libibverbs.so.1" ] && [ -e "$B/compat/.libs/librdmacm.so.1" ] ||
	why="compat libraries not built (make; --disable-compat or no rdma-core headers?)"
for p in ib_write_bw ib_write_lat; do
	command -v $p >/dev/null 2>&1 || why="$p not installed (Debian package perftest)"
done
if [ -n "$why" ]; then
	echo "compat rows: n/a, $why"
	return 0
fi
IWARP_RUN_BUILD_DIR=$(cd "$B" && pwd)
IWARP_PROGRESS=$CPROG
export IWARP_RUN_BUILD_DIR IWARP_PROGRESS
if [ -n "$CC" ]; then IWARP_CC=$CC; export IWARP_CC; fi
for f in cbw nbw xbw clat nlat; do : >"$TMP/compat.$f"; done
# iterations: about BENCH_BW_SECS of 64 KiB Writes (native warm-up run),
# about BENCH_LAT_SECS of 2 B round trips, at most BENCH_LAT_ITERS; one
# uncounted run of each tool first
v=$(iw_run --test write -s 65536 -n 500 --cq-wait=spin | json_get bw_average)
CBW_N=$(iters_for "$v" 65536 "$BW_SECS" 1000 200000)
v=$(iw_run --test write --latency -s 2 -n 200 | json_get t_typical)
CLAT_N=$(awk -v v="$v" -v t="$LAT_SECS" -v hi="$LAT_ITERS" 'BEGIN {
	n = (v == "" ? 1000 : int(t * 1e6 / (2 * v))); if (n < 200) n = 200
	if (n > hi) n = hi; print n }')
pt_run ib_write_bw -s 65536 -n 500 >/dev/null
pt_run ib_write_lat -s 2 -n 200 >/dev/null
r=0
while [ $r -lt "$CRUNS" ]; do
	if [ $((r % 2)) -eq 0 ]; then order="c n"; else order="n c"; fi
	for w in $order; do
		if [ $w = c ]; then
			# ib_write_bw row: #bytes #iterations peak average msg-rate;
			# against perftest's own server (the context row)
			pt_run ib_write_bw -s 65536 -n "$CBW_N" | awk '{ print $4 }' | grep . >>"$TMP/compat.cbw"
			# the same client against iwarp_bw's server (the judged row)
			px_run -s 65536 -n "$CBW_N" | awk '{ print $4 }' | grep . >>"$TMP/compat.xbw"
			# ib_write_lat row: #bytes #iterations min max typical ...
			pt_run ib_write_lat -s 2 -n "$CLAT_N" | awk '{ print $5 }' | grep . >>"$TMP/compat.clat"
		else
			iw_run --test write -s 65536 -n "$CBW_N" --cq-wait=spin | json_get bw_average |
				grep . >>"$TMP/compat.nbw"
			iw_run --test write --latency -s 2 -n "$CLAT_N" | json_get t_typical |
				grep . >>"$TMP/compat.nlat"
		fi
	done
	r=$((r + 1))
done
cbw=$(median <"$TMP/compat.cbw")
nbw=$(median <"$TMP/compat.nbw")
xbw=$(median <"$TMP/compat.xbw")
clat=$(lowest <"$TMP/compat.clat")
nlat=$(lowest <"$TMP/compat.nlat")
{
row_head
row "compat cost: 64 KiB Write BW, ib_write_bw / iwarp_bw" "$(ratio "$xbw" "$nbw")" ">=" 0.95 \
	"($xbw vs $nbw MB/sec, both clients against iwarp_bw's server, $CBW_N iterations)"
row "  context: ib_write_bw against perftest's own server" "$(ratio "$cbw" "$nbw")" ">=" 0.95 \
	"informational ($cbw vs $nbw MB/sec)"
row "compat cost: 2 B Write latency, ib_write_lat / iwarp_bw" "$(ratio "$clat" "$nlat")" "<=" 1.05 \
	"($clat vs $nlat us typical best, $CLAT_N iterations; medians $(median <"$TMP/compat.clat") vs $(median <"$TMP/compat.nlat"))"
echo "(context row not judged: perftest's server busy-polls through the run where iwarp_bw's sleeps; on 2 cores that measures the programs, not the compat layer)"
echo "(rounds, MB/sec: ib_write_bw $(listed <"$TMP/compat.xbw"); iwarp_bw $(listed <"$TMP/compat.nbw"); us typical: ib_write_lat $(listed <"$TMP/compat.clat"); iwarp_bw $(listed <"$TMP/compat.nlat"))"
} | tee "$OUT/compat.txt"
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
if [ "$ONLY" = tls ]; then
	tls_rows
	exit 0
fi
if [ "$ONLY" = compat ]; then
	(compat_rows)
	exit 0
fi

# ---- bandwidth: raw TCP and iwarp_bw interleaved ----

# For each size: one uncounted warm-up run per iwarp_bw configuration sizes
# its runs to about BENCH_BW_SECS; then each round runs raw TCP once and
# every configuration once, so that the ratios compare figures measured in
# the same time window (other load on the machine hits both alike).
CONFIGS="write.0 write.1 read.0 read.1 send.0 send.1"
if [ "$ONLY" != lat ] && [ "$ONLY" != rows ]; then
echo "Measuring bandwidth: raw TCP and iwarp_bw write/read/send x CRC off/on, interleaved ..."
# cfg_flag CONFIG: the iwarp_bw flag of a configuration (.1 CRC, .m markers)
cfg_flag() {
	case ${1#*.} in
	1) echo --crc ;;
	m) echo --markers ;;
	esac
}
# configs_for SIZE: the configurations measured at SIZE
configs_for() {
	if [ "$1" = 65536 ]; then echo "$CONFIGS write.m"; else echo "$CONFIGS"; fi
}
# cpu_gb: CPU seconds per GB (1e9 B) of the last iw_run, client + server
cpu_gb() {
	cl=$(cat "$TMP/c.out" | grep '^{' | head -n 1)
	awk -v cc="$(echo "$cl" | json_get cpu_s)" -v w="$(echo "$cl" | json_get wall_s)" \
		-v bw="$(echo "$cl" | json_get bw_average)" -v sc="$(json_get cpu_s <"$TMP/iw.srv")" \
		'BEGIN { if (cc == "" || sc == "" || bw + 0 == 0 || w + 0 == 0) exit
			printf "%.4f\n", (cc + sc) / (bw * 1048576 * w / 1e9) }'
}
for s in $SIZES; do
	: >"$TMP/raw.bw.$s"
	: >"$TMP/raw.cpugb.$s"
	: >"$TMP/iw.cpugb.$s"
	for c in $(configs_for "$s"); do
		t=${c%.*}
		cflag=$(cfg_flag "$c")
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
		echo "$line" | json_get cpu_s_per_gb >>"$TMP/raw.cpugb.$s"
		echo "$line" | sed -n 's/.*"cc":"\([^"]*\)".*/\1/p' >>"$ccseen"
		for c in $(configs_for "$s"); do
			t=${c%.*}
			cflag=$(cfg_flag "$c")
			eval "n=\$N_${t}_${c#*.}"
			[ -n "$n" ] || continue
			# shellcheck disable=SC2086
			if line=$(iw_run --test "$t" -s "$s" -n "$n" $cflag $CCARG); then
				echo "$line" | json_get bw_average >>"$TMP/iw.bw.$c.$s"
				cat "$TMP/iw.cc" >>"$ccseen"
				[ "$c" = write.0 ] && cpu_gb >>"$TMP/iw.cpugb.$s"
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

if [ "$ONLY" != bw ] && [ "$ONLY" != rows ]; then
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

# ---- rows: message rate, event-mode latency, many QPs, memory, connect rate ----

# Each round runs the raw TCP baseline and the iwarp_bw figure next to each
# other (BENCH_RUNS rounds, medians), so that a ratio compares figures of
# the same time window.
if [ "$ONLY" != lat ] && [ "$ONLY" != bw ] || [ "$ONLY" = rows ]; then
echo "Measuring the rows: 64 B message rate, event-mode ping-pong, many QPs, memory, connect rate ..."
for f in raw.mr iw.mr rg.mr raw.pp.med raw.pp.p99 raw.pp.cpu iw.ev.med iw.ev.p99 iw.ev.cpu \
	rg.ev.med rg.ev.p99 rg.ev.cpu raw.pp1.med raw.pp1.p99 raw.pp1.cpu \
	iw.ev1.med iw.ev1.p99 iw.ev1.cpu; do
	: >"$TMP/$f"
done
# placement of the ping-pong ends: CPUs 0 and 1 (one CPU: both on 0;
# without taskset: unpinned, said in the rows' heading)
PIN_A=0
PIN_B=1
[ "$(nproc 2>/dev/null || echo 1)" -lt 2 ] && PIN_B=0
PIN_CMD="taskset -c "
PLACEMENT="server end CPU $PIN_A, client end CPU $PIN_B"
if ! command -v taskset >/dev/null 2>&1; then
	PIN_CMD=
	PIN_A=
	PIN_B=
	PLACEMENT="unpinned: no taskset"
fi
# ev_record LINE PREFIX: an event-mode run's round trip median, p99 and
# CPU per round trip of both processes (raw: both ends)
ev_record() {
	scale "$(echo "$1" | json_get t_typical)" 2 >>"$TMP/$2.med"
	scale "$(echo "$1" | json_get p99)" 2 >>"$TMP/$2.p99"
	awk -v a="$(echo "$1" | json_get cpu_per_iter_us)" \
		-v b="$(json_get cpu_per_iter_us <"$TMP/iw.srv")" \
		'BEGIN { if (a != "" && b != "") printf "%.3f\n", a + b }' >>"$TMP/$2.cpu"
}
r=0
while [ $r -lt "$RUNS" ]; do
	# 64 B records: one send(2) per record, Nagle on (bench/README.md)
	# shellcheck disable=SC2086
	raw_run msgrate -s 64 -D "$RAW_SECS" $CCARG | json_get msg_rate_mpps >>"$TMP/raw.mr"
	# shellcheck disable=SC2086
	iw_run --test write -s 64 -n 100000 $CCARG | json_get msg_rate_mpps >>"$TMP/iw.mr"
	# shellcheck disable=SC2086
	(IWARP_SOCKET_IO=ring && export IWARP_SOCKET_IO &&
		iw_run --test write -s 64 -n 100000 $CCARG) | json_get msg_rate_mpps >>"$TMP/rg.mr"
	# blocking ping-pong vs iwarp_bw Send latency sleeping on CQ events
	# (-e, default progress mode; iwarp_bw reports half round trips),
	# both as two processes with the same placement: where the scheduler
	# puts the two ends decides the round trip (on one CPU they hand over
	# without waking an idle CPU: 13 us against 48 us for raw TCP here),
	# so each pair runs pinned, the row with each end on its own CPU (as
	# two hosts), the context row with both on one CPU (bench/README.md)
	for pl in split shared; do
		if [ $pl = split ]; then a=$PIN_A; b=$PIN_B; p=; else a=$PIN_A; b=$PIN_A; p=1; fi
		ropt=
		[ -n "$PIN_CMD" ] && ropt="--cpus $a,$b"
		# shellcheck disable=SC2086
		line=$(raw_run pingpong -s 8 -n 5000 --procs $ropt $CCARG)
		echo "$line" | json_get rtt_median >>"$TMP/raw.pp$p.med"
		echo "$line" | json_get rtt_p99 >>"$TMP/raw.pp$p.p99"
		echo "$line" | json_get cpu_per_rtt_us >>"$TMP/raw.pp$p.cpu"
		SRV_PIN="$PIN_CMD$a"
		CLI_PIN="$PIN_CMD$b"
		# shellcheck disable=SC2086
		if line=$(iw_run --test send --latency -e -s 8 -n 5000 $CCARG); then
			ev_record "$line" iw.ev$p
		fi
		# the same with io_uring sockets (IWARP_SOCKET_IO=ring; the
		# default with one engine is direct sockets, where the waiting
		# thread reads its own message): the progress thread receives
		# and hands it over
		# shellcheck disable=SC2086
		if [ $pl = split ] && line=$(IWARP_SOCKET_IO=ring && export IWARP_SOCKET_IO &&
			iw_run --test send --latency -e -s 8 -n 5000 $CCARG); then
			ev_record "$line" rg.ev
		fi
		SRV_PIN=
		CLI_PIN=
	done
	r=$((r + 1))
done

# aggregate 64 KiB Write bandwidth against the QP count (and raw TCP
# streams); -n is per QP (perftest), 100,000 messages in all (AGG_MSGS):
# about a second of data, as long as the raw streams run, where 10,000
# (0.1-0.4 s) measured mostly the start of 1,000 streams. The two
# counts of the row (1 and the largest) run $RUNS times (medians; one run
# of the largest count varied 2.5x between runs), the others once.
if [ "$QUICK" = 1 ]; then QPS="1 10 100"; else QPS="1 10 100 1000"; fi
QP_LAST=$(echo "$QPS" | awk '{ print $NF }')
: >"$OUT/aggregate.dat"
: >"$TMP/agg.conn"
AGG_MSGS=${BENCH_AGG_MSGS:-100000}
for q in $QPS; do
	n=$((AGG_MSGS / q))
	[ $n -lt 5 ] && n=5
	runs=1
	if [ "$q" = 1 ] || [ "$q" = "$QP_LAST" ]; then runs=$RUNS; fi
	: >"$TMP/agg.$q"
	k=0
	while [ $k -lt "$runs" ]; do
		T0=$T
		T=300
		# shellcheck disable=SC2086
		iline=$(iw_run --test write -s 65536 -n "$n" -q "$q" $CCARG)
		T=$T0
		v=$(echo "$iline" | json_get bw_average)
		[ -n "$v" ] && echo "$v" >>"$TMP/agg.$q"
		if [ "$q" = "$QP_LAST" ]; then
			# both ends established: the slower of the two rates
			# (the responder's ESTABLISHED waits for the
			# initiator's first FPDU in RFC 6581 mode)
			v=$(echo "$iline" | json_get connect_rate)
			vs=$(json_get connect_rate <"$TMP/iw.srv")
			v=$(awk -v c="$v" -v s="$vs" 'BEGIN { if (c == "") exit
				if (s != "" && s + 0 < c + 0) c = s; print c }')
			[ -n "$v" ] && echo "$v" >>"$TMP/agg.conn"
		fi
		k=$((k + 1))
	done
	iv=$(median <"$TMP/agg.$q")
	eval "AGG_$q=\$iv"
	if [ "$q" = "$QP_LAST" ]; then
		IW_CONN=$(median <"$TMP/agg.conn")
		IW_CONN_Q=$q
		# the last run's set-up (its server's figures are in iw.srv)
		IW_RSS=$(awk -v cb="$(echo "$iline" | json_get rss_before_kib)" \
			-v ca="$(echo "$iline" | json_get rss_after_kib)" \
			-v sb="$(json_get rss_before_kib <"$TMP/iw.srv")" \
			-v sa="$(json_get rss_after_kib <"$TMP/iw.srv")" -v q="$q" \
			'BEGIN { if (cb == "" || sa == "") print "n/a"
				else printf "%.1f\n", (ca - cb + sa - sb) / q }')
		IW_RSS_Q=$q
	fi
	# shellcheck disable=SC2086
	rv=$(raw_run streams -P "$q" -s 65536 -D "$RAW_SECS" $CCARG | json_get bw_average)
	iv=${iv#n/a}
	echo "$q ${iv:-NaN} ${rv:-NaN}" >>"$OUT/aggregate.dat"
done
# shellcheck disable=SC2086
RAW_CONN=$(raw_run connrate -P "$IW_CONN_Q" $CCARG | json_get connect_rate)
# the largest count again with more engines per context (IWARP_ENGINES,
# docs/engine-threads.md): BENCH_ENGINES, default 2; the default of the
# library (1) is what the rows above measured
ENG_N=${BENCH_ENGINES:-2}
n=$((AGG_MSGS / IW_CONN_Q))
[ $n -lt 5 ] && n=5
T0=$T
T=300
# shellcheck disable=SC2086
AGG_ENG=$(IWARP_ENGINES=$ENG_N && export IWARP_ENGINES &&
	iw_run --test write -s 65536 -n "$n" -q "$IW_CONN_Q" $CCARG | json_get bw_average)
# the connection rate again without the initiator's MPA Reply grace
# (IWARP_MPA_REPLY_GRACE_MS=0): the wait after each Reply that siw's
# responder needs (tests/interop/README.md) and a libiwarp peer does not;
# stretched to the time the Reply took, it is part of every set-up here
: >"$TMP/agg.conn.ng"
k=0
while [ $k -lt "$RUNS" ]; do
	# shellcheck disable=SC2086
	if iline=$(IWARP_MPA_REPLY_GRACE_MS=0 && export IWARP_MPA_REPLY_GRACE_MS &&
		iw_run --test write -s 65536 -n "$n" -q "$IW_CONN_Q" $CCARG); then
		v=$(echo "$iline" | json_get connect_rate)
		vs=$(json_get connect_rate <"$TMP/iw.srv")
		awk -v c="$v" -v s="$vs" 'BEGIN { if (c == "") exit
			if (s != "" && s + 0 < c + 0) c = s; print c }' >>"$TMP/agg.conn.ng"
	fi
	k=$((k + 1))
done
IW_CONN_NG=$(median <"$TMP/agg.conn.ng")
T=$T0

# memory per idle connected QP: 10,000 QPs (a latency run, QP 0 measured,
# the others idle), RSS growth of server + client across the set-up
RSS_NOTE=
if [ "$QUICK" != 1 ]; then
	T0=$T
	T=400
	# shellcheck disable=SC2086
	if line=$(iw_run --test send --latency -s 8 -n 100 -q 10000 $CCARG); then
		IW_RSS=$(awk -v cb="$(echo "$line" | json_get rss_before_kib)" \
			-v ca="$(echo "$line" | json_get rss_after_kib)" \
			-v sb="$(json_get rss_before_kib <"$TMP/iw.srv")" \
			-v sa="$(json_get rss_after_kib <"$TMP/iw.srv")" \
			'BEGIN { printf "%.1f\n", (ca - cb + sa - sb) / 10000 }')
		IW_RSS_Q=10000
		IW_CONN10K=$(echo "$line" | json_get connect_rate)
	else
		RSS_NOTE=$(grep -h 'QPs connected\|iwarp_bw:' "$TMP/c.err" "$TMP/s.err" | grep -v '^iwarp_bw: ' | head -n 1)
	fi
	T=$T0
fi
fi

# ---- report ----

raw=n/a

echo
echo "Congestion control reported by the tools: $(sort -u "$ccseen" | grep . | tr '\n' ' ')"
echo
GOAL_BW=n/a
if [ "$ONLY" != lat ] && [ "$ONLY" != rows ]; then
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
if [ "$ONLY" != bw ] && [ "$ONLY" != rows ]; then
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
echo "Goal: 64 KiB RDMA Write with CRC >= 0.70 x raw TCP: ratio $GOAL_BW  $(verdict "$GOAL_BW" ">=" 0.70)"
echo "Goal: 8 B RDMA Write RTT <= 2.0 x raw TCP busy-poll RTT: ratio $GOAL_LAT  $(verdict "$GOAL_LAT" "<=" 2.0)"

# ---- rows: ratio against the target, PASS/MISS ----

if [ "$ONLY" != lat ] && [ "$ONLY" != bw ] || [ "$ONLY" = rows ]; then
ROWS=$OUT/rows.txt
# med NAME: median of $TMP/NAME, n/a when it was not measured
med() {
	if [ -f "$TMP/$1" ]; then median <"$TMP/$1"; else echo n/a; fi
}
# msg rate from MB/sec at 64 B
IW_MR=$(med iw.mr)
{
echo
echo "Rows (ratio = iwarp / raw TCP unless stated; medians of $RUNS runs; cc ${CC:-system})"
row_head
row "64 KiB Write aggregate, ${IW_CONN_Q:-?} QPs / 1 QP" "$(ratio "$(eval echo "\${AGG_${IW_CONN_Q:-1}:-n/a}")" "${AGG_1:-n/a}")" ">=" 0.80
row "  context: the same with IWARP_ENGINES=$ENG_N" "$(ratio "${AGG_ENG:-n/a}" "${AGG_1:-n/a}")" ">=" 0.80 "(${AGG_ENG:-n/a} MB/s)"
row "64 B Write message rate / raw TCP 64 B records" "$(ratio "$IW_MR" "$(med raw.mr)")" ">=" 0.25 "($IW_MR vs $(med raw.mr) Mpps)"
row "  context: the same with IWARP_SOCKET_IO=ring" "$(ratio "$(med rg.mr)" "$(med raw.mr)")" ">=" 0.25 "($(med rg.mr) Mpps)"
row "4 KiB Write / raw" "$(ratio "$(med "iw.bw.write.0.4096")" "${RAWBW_4096:-n/a}")" ">=" 0.70
row "4 KiB Send / raw" "$(ratio "$(med "iw.bw.send.0.4096")" "${RAWBW_4096:-n/a}")" ">=" 0.60
row "64 KiB Write + CRC / raw" "$(ratio "$(med "iw.bw.write.1.65536")" "${RAWBW_65536:-n/a}")" ">=" 0.85
if [ -f "$TMP/iw.bw.write.0.1048576" ]; then
	row "1 MiB Write / raw" "$(ratio "$(med iw.bw.write.0.1048576)" "${RAWBW_1048576:-n/a}")" ">=" 0.85
else
	row "1 MiB Write / raw" n/a ">=" 0.85 "(not measured: BENCH_QUICK)"
fi
row "64 KiB Write, markers / no markers" "$(ratio "$(med "iw.bw.write.m.65536")" "$(med "iw.bw.write.0.65536")")" ">=" 0.85
echo "  event-mode ping-pong rows: both ends as processes, $PLACEMENT; context: both ends on CPU ${PIN_A:-?}"
row "event-mode 8 B RTT p99 / raw blocking RTT p99" "$(ratio "$(med iw.ev.p99)" "$(med raw.pp.p99)")" "<=" 2.0 "($(med iw.ev.p99) vs $(med raw.pp.p99) us)"
row "  context: the same with IWARP_SOCKET_IO=ring" "$(ratio "$(med rg.ev.p99)" "$(med raw.pp.p99)")" "<=" 2.0 "($(med rg.ev.p99) us)"
row "  context: both ends on one CPU" "$(ratio "$(med iw.ev1.p99)" "$(med raw.pp1.p99)")" "<=" 2.0 "($(med iw.ev1.p99) vs $(med raw.pp1.p99) us)"
row "CPU per round trip, event mode / raw blocking" "$(ratio "$(med iw.ev.cpu)" "$(med raw.pp.cpu)")" "<=" 1.5 "($(med iw.ev.cpu) vs $(med raw.pp.cpu) us)"
row "  context: the same with IWARP_SOCKET_IO=ring" "$(ratio "$(med rg.ev.cpu)" "$(med raw.pp.cpu)")" "<=" 1.5 "($(med rg.ev.cpu) us)"
row "  context: both ends on one CPU" "$(ratio "$(med iw.ev1.cpu)" "$(med raw.pp1.cpu)")" "<=" 1.5 "($(med iw.ev1.cpu) vs $(med raw.pp1.cpu) us)"
row "event-mode 8 B RTT median / raw blocking median" "$(ratio "$(med iw.ev.med)" "$(med raw.pp.med)")" "<=" 1.3 "($(med iw.ev.med) vs $(med raw.pp.med) us)"
row "  context: the same with IWARP_SOCKET_IO=ring" "$(ratio "$(med rg.ev.med)" "$(med raw.pp.med)")" "<=" 1.3 "($(med rg.ev.med) us)"
row "  context: both ends on one CPU" "$(ratio "$(med iw.ev1.med)" "$(med raw.pp1.med)")" "<=" 1.3 "($(med iw.ev1.med) vs $(med raw.pp1.med) us)"
row "memory (RSS) per idle connected QP, ${IW_RSS_Q:-?} QPs, KiB (absolute)" "${IW_RSS:-n/a}" "<=" 64 "${RSS_NOTE:+(10,000 QPs failed: $RSS_NOTE)}"
row "connections per second / raw TCP connect+accept (${IW_CONN_Q:-?})" "$(ratio "${IW_CONN:-n/a}" "${RAW_CONN:-n/a}")" ">=" 0.3 "(${IW_CONN:-n/a} vs ${RAW_CONN:-n/a} /s)"
row "  context: the same without the MPA Reply grace (siw's)" "$(ratio "${IW_CONN_NG:-n/a}" "${RAW_CONN:-n/a}")" ">=" 0.3 "(${IW_CONN_NG:-n/a} /s)"
row "CPU seconds per GB, 64 KiB Write / raw" "$(ratio "$(med "iw.cpugb.65536")" "$(med "raw.cpugb.65536")")" "<=" 1.3 "($(med "iw.cpugb.65536") vs $(med "raw.cpugb.65536") s/GB)"
echo
echo "Aggregate 64 KiB bandwidth, MB/sec, against the QP count (iwarp Write / raw TCP streams):"
awk '{ printf "  %6s QPs: %10s %10s\n", $1, $2, $3 }' "$OUT/aggregate.dat"
} | tee "$ROWS"

# ---- pictures (gnuplot) ----
: >"$OUT/ratio.dat"
for s in $SIZES; do
	line="$s"
	for c in write.0 write.1 read.0 send.0; do
		eval "raw=\${RAWBW_$s:-n/a}"
		q=$(ratio "$(med "iw.bw.$c.$s")" "$raw")
		[ "$q" = n/a ] && q=NaN
		line="$line $q"
	done
	echo "$line" >>"$OUT/ratio.dat"
done
if command -v gnuplot >/dev/null 2>&1; then
	gnuplot <<GP 2>"$TMP/gp.err" || echo "bench.sh: gnuplot failed: $(tail -n 1 "$TMP/gp.err")"
set terminal pngcairo size 900,560 noenhanced
set output "$OUT/ratio.png"
set title "iwarp_bw / raw TCP bandwidth against message size (cc ${CC:-system})"
set logscale x 2
set xrange [32:2097152]
set xtics ("64 B" 64, "256 B" 256, "1 KiB" 1024, "4 KiB" 4096, "16 KiB" 16384, "64 KiB" 65536, "256 KiB" 262144, "1 MiB" 1048576)
set xlabel "message size"
set ylabel "ratio iwarp / raw TCP"
set yrange [0:*]
set key top left
set grid
plot "$OUT/ratio.dat" using 1:2 with linespoints title "Write", \
     "" using 1:3 with linespoints title "Write + CRC", \
     "" using 1:4 with linespoints title "Read", \
     "" using 1:5 with linespoints title "Send", \
     0.85 with lines dashtype 2 title "0.85"
set output "$OUT/aggregate.png"
set title "Aggregate 64 KiB bandwidth against the number of QPs / TCP streams"
set xlabel "QPs (iwarp) or TCP streams (raw)"
set ylabel "MB/sec"
set logscale x 10
set xrange [0.7:*]
set xtics auto
plot "$OUT/aggregate.dat" using 1:2 with linespoints title "iwarp Write", \
     "" using 1:3 with linespoints title "raw TCP streams"
GP
	echo "Pictures: $OUT/ratio.png $OUT/aggregate.png (data: $OUT/ratio.dat $OUT/aggregate.dat)"
else
	echo "bench.sh: gnuplot not installed (Debian: gnuplot-nox): no pictures; data in $OUT/ratio.dat $OUT/aggregate.dat"
fi
fi
# in a subshell: the rows export IWARP_PROGRESS and IWARP_CC for both tools
[ -z "$ONLY" ] && [ "${BENCH_COMPAT:-1}" != 0 ] && (compat_rows)
[ -z "$ONLY" ] && [ "${BENCH_TLS:-1}" != 0 ] && tls_rows
exit 0
