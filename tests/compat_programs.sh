#!/bin/sh
# tests/compat_programs.sh ROW: one row of "unmodified RDMA programs on
# libiwarp": a Debian binary run through iwarp_run(1) over the compat
# librdmacm/libibverbs of this build tree, on loopback.
#
# Rows (tests/compat/ROW.sh calls this script with its name):
#   rping_self        rping server + client, -v -V, several -C counts and
#                     sizes; the client must print every ping and both exit 0
#   rping_iwarp_ping  rping client against iwarp_ping -s, and iwarp_ping -c
#                     against an rping server
#   ib_send_bw ib_write_bw ib_read_bw ib_send_lat ib_write_lat ib_read_lat
#                     perftest -R (RDMA CM) server and client against
#                     themselves; both exit 0 and the client reports a result;
#                     ib_read_bw, ib_send_lat and ib_read_lat once more with
#                     -e (completion events)
#   perftest_iwarp_bw each of those six -R against libiwarp's iwarp_bw
#                     (not under iwarp_run) in both roles: the stock client
#                     against an iwarp_bw server of the same test, an
#                     iwarp_bw client against the stock server; both exit 0,
#                     the client's result row and the server's (perftest's
#                     Read latency server prints none, iwarp_bw's neither)
#                     show the requested #bytes and #iterations
#   qperf_rc_bw       qperf rc_bw over RDMA CM (-cm1) against a qperf server
#                     under iwarp_run; the client exits 0 and reports bw
#   fi_pingpong_msg   libfabric's fi_pingpong, provider verbs, MSG endpoints
#   fi_pingpong_rdm   the same, provider "verbs;ofi_rxm", RDM endpoints
#                     (both: every size up to 1 MiB, data checked with -c;
#                     both exit 0 and the client reports every size)
#   mpi_pingpong      Open MPI (openmpi-bin; built with mpicc from
#                     libopenmpi-dev): 2 ranks, pml cm + mtl ofi over
#                     FI_PROVIDER="verbs;ofi_rxm", btl self only (no shared
#                     memory, no TCP); every octet checked
#   qperf_rc_lat      qperf rc_lat over RDMA CM (-cm1), three runs; each
#                     client exits 0 and reports a latency
#                     (the ping-pong waits in ibv_get_cq_event and ends on
#                     qperf's SIGALRM: the wait must return EINTR)
# A row whose program is not installed exits 77 with the reason. Every run
# is bounded by timeout(1); the server's port comes from free_port and is
# replaced when another program took it meanwhile.
#
# Captures: every row captures its traffic with dumpcap on lo and checks it
# with tests/interop/verify-capture.sh (CRC mode any: no row asks for CRC;
# no Bad CRC32, nothing malformed, only the known expert items, at least one
# MPA Request/Reply, and tools/iwarp_decode -q calls it valid). To make the
# capture exact whatever else runs on the machine (make check -j2), the row
# re-executes itself in a network namespace of its own (unshare -n, lo up):
# every TCP segment on that lo is the row's, whatever port qperf's RDMA CM,
# libfabric's verbs endpoints or Open MPI picked (none of those can be
# pinned from the command line). The capture filter is "tcp"; the streams
# that are not iWARP by design are then removed by port before the check:
# qperf's control connection (-lp), fi_pingpong's out-of-band connection
# (-B/-P) and the connection attempts that prove the capture is live. One
# capture holds a whole row (qperf_rc_bw's: its first 3000 packets, see
# cap_start); when dumpcap counted drops or iwarp_decode finds a gap that
# never filled after a passing run, the row runs again (at most 3 runs).
# Without root, dumpcap, tshark, unshare or ip, or
# with COMPAT_CAPTURE=no, the row runs unchanged and says "capture skipped:
# REASON". A capture that fails its check fails the row; it is kept in
# BUILDDIR/compat-captures/.

row=${1:?usage: compat_programs.sh ROW}
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
T=60 # bound of one program run, seconds
. "$top_srcdir/tests/testlib.sh"

skip() {
	echo "SKIP $row: $*"
	exit 77
}

command -v timeout >/dev/null 2>&1 || skip "timeout(1) not found"
builddir=$(cd "$top_builddir" && pwd)
RUN="$builddir/tools/iwarp_run"
[ -x "$RUN" ] || { echo "FAIL: $RUN not built"; exit 99; }
for l in librdmacm.so.1 libibverbs.so.1; do
	[ -e "$builddir/compat/.libs/$l" ] || skip "compat $l not built (--disable-compat or no rdma-core headers)"
done
# Debian's programs are not built with ASan: the dynamic loader refuses an
# ASan-instrumented library under them ("ASan runtime does not come first");
# the sanitizer build covers the compat libraries with compat_*_test
libs=$(ldd "$builddir/compat/.libs/libibverbs.so.1" 2>/dev/null)
case $libs in
*libasan* | *libubsan* | *libtsan*)
	skip "compat libraries built with a sanitizer; stock programs cannot load them" ;;
esac
export IWARP_RUN_BUILD_DIR="$builddir"

# capture_unavailable: prints why this row cannot capture (nothing if it can)
capture_unavailable() {
	[ "${COMPAT_CAPTURE:-yes}" != no ] || { echo "COMPAT_CAPTURE=no"; return; }
	[ "$(id -u)" -eq 0 ] || { echo "not root (dumpcap and unshare -n need it)"; return; }
	for _t in dumpcap tshark editcap bash python3 unshare ip; do
		command -v $_t >/dev/null 2>&1 || { echo "$_t not installed"; return; }
	done
	[ -x "$builddir/tools/iwarp_decode" ] || { echo "tools/iwarp_decode not built"; return; }
	timeout 30 unshare -n sh -c 'ip link set lo up && timeout 20 dumpcap -i lo -L' >/dev/null 2>&1 ||
		echo "dumpcap cannot capture on lo in a new network namespace"
}
if [ "${COMPAT_CAPTURE_NETNS:-}" != 1 ]; then
	cap_skip=$(capture_unavailable)
	if [ -z "$cap_skip" ]; then
		COMPAT_CAPTURE_NETNS=1
		export COMPAT_CAPTURE_NETNS
		# the tap device (no carrier, never used: every run connects to
		# 127.0.0.1) is there for libfabric's verbs provider, whose
		# fi_getinfo finds no interface (ENODATA) when only lo has an address
		exec unshare -n sh -c 'ip link set lo up &&
			{ ip tuntap add iwc0 mode tap && ip addr add 192.0.2.1/24 dev iwc0 &&
				ip link set iwc0 up || :; } && exec "$@"' sh "$0" "$@"
	fi
else
	cap_skip=
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compat_programs.XXXXXX") || exit 99
DPID=
trap '[ -z "$DPID" ] || kill "$DPID" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0

need() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 not installed (Debian package $2)"
}

# start_server NAME CMD...: runs CMD under timeout $T (every @PORT@ in it
# replaced by a free port) in the background until it listens
# (start_listener of testlib.sh, which replaces a port taken meanwhile;
# logs in $tmp/NAME.s.out and .s.err); sets PORT and SPID.
start_server() {
	_name=$1
	shift
	if start_listener "$tmp/$_name.s" timeout $T "$@"; then
		PORT=$LISTEN_PORT SPID=$LISTEN_PID
		return 0
	fi
	echo "FAIL $_name: server not listening"
	sed 's/^/  server: /' "$tmp/$_name.s.out" "$tmp/$_name.s.err"
	fail=1
	return 1
}

# finish NAME CLIENT_RC CHECK: waits for the server (or takes its status
# from SRC_KNOWN when the caller waited already); the pair passes when
# both exit 0 and the client's output matches the extended regex CHECK.
finish() {
	if [ -n "${SRC_KNOWN:-}" ]; then
		_src=$SRC_KNOWN
		SRC_KNOWN=
	else
		wait "$SPID"
		_src=$?
	fi
	if [ "$2" -ne 0 ] || [ $_src -ne 0 ] || ! grep -Eq "$3" "$tmp/$1.c.out"; then
		echo "FAIL $1: client exit $2, server exit $_src (want 0, 0 and /$3/)"
		sed 's/^/  client: /' "$tmp/$1.c.out" "$tmp/$1.c.err" | tail -n 30
		sed 's/^/  server: /' "$tmp/$1.s.out" "$tmp/$1.s.err" | tail -n 30
		fail=1
		return 1
	fi
	return 0
}

# rping_pair NAME COUNT SIZE SERVER... -- CLIENT...: the client must print
# COUNT verified pings ("ping data: rdma-ping-<n>: ...").
rping_pair() {
	_n=$1 _count=$2 _size=$3
	shift 3
	_srv=
	while [ "$1" != -- ]; do _srv="$_srv $1"; shift; done
	shift
	# shellcheck disable=SC2086
	start_server "$_n" $_srv -p @PORT@ -C "$_count" -S "$_size" -V || return
	timeout $T "$@" -p "$PORT" -C "$_count" -S "$_size" -V -v >"$tmp/$_n.c.out" 2>"$tmp/$_n.c.err"
	_crc=$?
	finish "$_n" $_crc 'ping data' || return
	_got=$(grep -c 'ping data: rdma-ping-' "$tmp/$_n.c.out")
	if [ "$_got" -ne "$_count" ]; then
		echo "FAIL $_n: $_got pings shown, want $_count"
		fail=1
		return
	fi
	echo "ok   $_n: $_got pings of $_size bytes verified"
}

# clock_failed NAME: true when a perftest program of pair NAME could not
# calibrate its cycle counter ("Correlation coefficient r^2: ... < 0.9"):
# its figures are then "inf" (latency tests, exit 0) or it gives up before
# its report (exit 1). Seen in CI under load, on a pair whose connection
# and transfers were fine; a property of perftest's clock, not of the run.
clock_failed() {
	grep -q 'Correlation coefficient r^2: .* < 0.9' "$tmp/$1.c.out" \
		"$tmp/$1.c.err" "$tmp/$1.s.out" "$tmp/$1.s.err" 2>/dev/null
}

# clock_rerun NAME TRY MAX CLIENT_RC REGEX: after run TRY of pair NAME,
# waits for its server (status in SRC_KNOWN, for finish); true (and the
# pair is to run again) when TRY < MAX, the pair did not pass (a non-zero
# exit, or no client line matching REGEX) and perftest's clock failed.
clock_rerun() {
	wait "$SPID"
	SRC_KNOWN=$?
	if [ "$2" -lt "$3" ] && clock_failed "$1" &&
		{ [ "$4" -ne 0 ] || [ "$SRC_KNOWN" -ne 0 ] ||
			! grep -Eq "$5" "$tmp/$1.c.out"; }; then
		echo "     $1: perftest could not calibrate its clock (r^2 < 0.9), once more"
		SRC_KNOWN=
		return 0
	fi
	return 1
}

# perftest NAME PROGRAM ARGS...: server and client of one perftest
# program over RDMA CM (-R); prints the client's result line. perftest's
# server closes the listener of its parameter exchange and listens anew for
# the test QP, and a client that connects in between is refused (REJECTED,
# also on kernel iWARP); such a pair runs again on a fresh port (at most
# six runs: under load the race was lost three times in a row), as does a
# pair whose perftest could not calibrate its clock (clock_rerun).
perftest() {
	_n=$1 _prog=$2
	shift 2
	for _try in 1 2 3 4 5 6; do
		start_server "$_n" "$RUN" "$_prog" -R -p @PORT@ "$@" || return
		timeout $T "$RUN" "$_prog" -R -p "$PORT" "$@" 127.0.0.1 >"$tmp/$_n.c.out" 2>"$tmp/$_n.c.err"
		_crc=$?
		if [ $_crc -ne 0 ] && [ $_try -lt 6 ] &&
			grep -q 'RDMA_CM_EVENT_REJECTED' "$tmp/$_n.c.out" "$tmp/$_n.c.err"; then
			echo "     $_n: refused between perftest's two listeners, once more"
			kill "$SPID" 2>/dev/null
			wait "$SPID"
			continue
		fi
		clock_rerun "$_n" $_try 6 $_crc '^ *[0-9]+ +[0-9]+ +[0-9.]+' || break
	done
	# the result line: "<bytes> <iterations> <numbers...>"
	finish "$_n" $_crc '^ *[0-9]+ +[0-9]+ +[0-9.]+' || return
	echo "ok   $_n: $(grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$tmp/$_n.c.out" | tail -n 1 | tr -s ' \t' ' ')"
}

# cross_pair NAME SIZE ITERS SERVER_ROW SERVER... -- CLIENT...: a perftest
# test between a stock program and iwarp_bw, one of them under iwarp_run;
# both get "-p PORT -s SIZE -n ITERS" (the client then 127.0.0.1). Both must
# exit 0 and the client print its result row "SIZE ITERS <numbers...>";
# with SERVER_ROW 1 the server too (the Read latency servers print none).
# iwarp_bw's server listens for the data connections before it answers
# the first handshake, so a perftest client finds it listening; against
# perftest's server, which listens anew for the data connection after that
# handshake (the race of the perftest pairs below), iwarp_bw's client
# retries a refused data connection itself, 10 times 100 ms apart. The one
# re-run: a stock program that could not calibrate its clock (see
# clock_rerun), at most three runs.
cross_pair() {
	_n=$1 _size=$2 _iters=$3 _srow=$4
	shift 4
	_srv=
	while [ "$1" != -- ]; do _srv="$_srv $1"; shift; done
	shift
	_re="^ *$_size +$_iters +[0-9.]+"
	for _try in 1 2 3; do
		# shellcheck disable=SC2086
		start_server "$_n" $_srv -p @PORT@ -s "$_size" -n "$_iters" || return
		timeout $T "$@" -p "$PORT" -s "$_size" -n "$_iters" 127.0.0.1 \
			>"$tmp/$_n.c.out" 2>"$tmp/$_n.c.err"
		_crc=$?
		clock_rerun "$_n" $_try 3 $_crc "$_re" || break
	done
	finish "$_n" $_crc "$_re" || return
	if [ "$_srow" = 1 ] && ! grep -Eq "$_re" "$tmp/$_n.s.out"; then
		echo "FAIL $_n: the server printed no result row of $_size bytes x $_iters"
		sed 's/^/  server: /' "$tmp/$_n.s.out" "$tmp/$_n.s.err" | tail -n 30
		fail=1
		return 1
	fi
	# iwarp_bw names each refusal it retried (" iwarp_bw: CM event ...REJECTED")
	_ref=$(grep -c 'CM event [A-Z_]*REJECTED' "$tmp/$_n.c.err")
	[ "$_ref" -gt 0 ] && _ref=" (client refused $_ref times, retried)" || _ref=
	echo "ok   $_n: $(grep -E "$_re" "$tmp/$_n.c.out" | tail -n 1 | tr -s ' \t' ' ')$_ref"
}

# qperf_run NAME REGEX ARGS...: a qperf server under iwarp_run and one
# client "qperf 127.0.0.1 -lp PORT -cm1 ARGS"; the client must exit 0 and
# print REGEX. qperf 0.4.11 sends its RDMA CM port to the client before it
# calls rdma_listen, so a client that connects in between is refused
# (REJECTED, on kernel iWARP too; its server child then waits for ever for
# the connection): such a pair runs again, with a new server, at most six
# times in all. So does a pair whose client saw its Sends flushed: a
# qperf server reposts its receives as it reaps them and stops at its own
# clock, and on iWARP a Send with no receive posted ends the connection
# with a TERMINATE (DDP untagged buffer error, invalid MSN: no buffer; RFC
# 5041 §7.2), as it does on kernel siw, where InfiniBand's sender would
# wait (RNR retry). The library now waits for the receive instead, up to
# IWARP_RNR_WAIT_MS (docs/receive-wait.md); before that, a server that
# fell 1,024 receives behind or stopped first failed 7 of 16 runs beside
# an emulated siw guest, and three CI runs out of retries.
qperf_run() {
	_n=$1 _re=$2
	shift 2
	for _try in 1 2 3 4 5 6; do
		# the server serves requests until it is stopped
		start_server qperf "$RUN" qperf -lp @PORT@ || return 1
		echo "$PORT" >>"$tmp/ctlports" # qperf's control TCP, not iWARP
		timeout $T "$RUN" qperf 127.0.0.1 -lp "$PORT" -cm1 "$@" \
			>"$tmp/qperf.c.out" 2>"$tmp/qperf.c.err"
		_crc=$?
		kill "$SPID" 2>/dev/null
		wait "$SPID"
		if [ $_crc -ne 0 ] && [ $_try -lt 6 ] &&
			grep -q 'unexpected event from RDMA CM: Event rejected' \
				"$tmp/qperf.c.out" "$tmp/qperf.c.err"; then
			echo "     $_n: connected before qperf's rdma_listen, once more"
			continue
		fi
		if [ $_crc -ne 0 ] && [ $_try -lt 6 ] &&
			grep -q 'failed: WR flush failure' \
				"$tmp/qperf.c.out" "$tmp/qperf.c.err"; then
			echo "     $_n: the server's clock ended the test first, once more"
			continue
		fi
		break
	done
	if [ $_crc -ne 0 ] || ! grep -Eq "$_re" "$tmp/qperf.c.out"; then
		echo "FAIL $_n: client exit $_crc (want 0 and /$_re/)"
		sed 's/^/  client: /' "$tmp/qperf.c.out" "$tmp/qperf.c.err"
		sed 's/^/  server: /' "$tmp/qperf.s.out" "$tmp/qperf.s.err" | tail -n 20
		fail=1
		return 1
	fi
	echo "ok   $_n: $(grep -E "$_re" "$tmp/qperf.c.out" | tr -s ' ')"
	return 0
}

# the row's programs, before any capture starts
case $row in
rping_self) need rping rdmacm-utils ;;
rping_iwarp_ping)
	need rping rdmacm-utils
	PING=$top_builddir/tools/iwarp_ping
	[ -x "$PING" ] || { echo "FAIL: $PING not built"; exit 99; }
	;;
ib_send_bw | ib_write_bw | ib_read_bw | ib_send_lat | ib_write_lat | ib_read_lat)
	need "$row" perftest ;;
perftest_iwarp_bw)
	BW=$top_builddir/tools/iwarp_bw
	[ -x "$BW" ] || { echo "FAIL: $BW not built"; exit 99; }
	for p in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat; do
		need "$p" perftest
	done
	;;
qperf_rc_bw | qperf_rc_lat) need qperf qperf ;;
fi_pingpong_msg | fi_pingpong_rdm) need fi_pingpong libfabric-bin ;;
mpi_pingpong)
	need mpirun openmpi-bin
	need mpicc libopenmpi-dev
	mpicc -O2 -o "$tmp/mpi_pingpong" "$top_srcdir/tests/compat/mpi_pingpong.c" \
		>"$tmp/mpicc.out" 2>&1 || skip "mpicc cannot build an MPI program: $(head -n 3 "$tmp/mpicc.out")"
	;;
*)
	echo "unknown row $row"
	exit 99
	;;
esac

# row_body: the row's runs; sets fail=1 when one of them fails
row_body() {
case $row in
rping_self)
	for c in 1 10 100; do
		for s in 64 4096; do
			rping_pair "rping-C$c-S$s" $c $s "$RUN" rping -s -a 127.0.0.1 -- \
				"$RUN" rping -c -a 127.0.0.1
		done
	done
	;;
rping_iwarp_ping)
	for c in 1 20; do
		rping_pair "rping-to-iwarp_ping-C$c" $c 1000 "$PING" -s -a 127.0.0.1 -- \
			"$RUN" rping -c -a 127.0.0.1
		rping_pair "iwarp_ping-to-rping-C$c" $c 1000 "$RUN" rping -s -a 127.0.0.1 -- \
			"$PING" -c -a 127.0.0.1
	done
	;;
ib_send_bw | ib_write_bw | ib_read_bw)
	perftest "$row" "$row" -n 2000 -s 65536
	perftest "$row-small" "$row" -n 2000 -s 64
	# -e: the client sleeps in ibv_get_cq_event between its posts (this
	# perftest refuses -e for Writes, and its Send test can stall with
	# more than one poll batch pending at an event, on any device)
	[ "$row" = ib_read_bw ] && perftest "$row-events" "$row" -n 20000 -s 4096 -e
	;;
ib_send_lat | ib_write_lat | ib_read_lat)
	perftest "$row" "$row" -n 1000 -s 2
	perftest "$row-4k" "$row" -n 500 -s 4096
	[ "$row" = ib_write_lat ] || perftest "$row-events" "$row" -n 500 -s 2 -e
	;;
perftest_iwarp_bw)
	for p in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat; do
		t=${p#ib_}
		t=${t%_*}
		case $p in
		*_bw) lat= size=65536 iters=2000 ;;
		*) lat=--latency size=2 iters=1000 ;;
		esac
		srow=1
		[ "$p" = ib_read_lat ] && srow=0
		# shellcheck disable=SC2086
		cross_pair "$p-to-iwarp_bw" $size $iters $srow "$BW" --test $t $lat -- \
			"$RUN" "$p" -R
		# shellcheck disable=SC2086
		cross_pair "iwarp_bw-to-$p" $size $iters $srow "$RUN" "$p" -R -- \
			"$BW" --test $t $lat
	done
	;;
qperf_rc_bw)
	qperf_run "qperf rc_bw -cm1" 'bw += +[0-9.]+ [KMG]B/sec' -t 2 rc_bw || return 1
	;;
qperf_rc_lat)
	for i in 1 2 3; do
		qperf_run "qperf rc_lat -cm1 run $i" 'latency += +[0-9.]+ [a-z]+' -t 1 rc_lat || break
	done
	;;
fi_pingpong_msg | fi_pingpong_rdm)
	if [ "$row" = fi_pingpong_msg ]; then
		prov=verbs ep=msg
	else
		prov="verbs;ofi_rxm" ep=rdm
	fi
	# -B/-P: fi_pingpong's own control connection (TCP), over which it
	# exchanges the libfabric addresses; -c checks every byte received.
	# The RDM server sometimes dies inside libfabric's RxM while closing
	# its endpoint after a complete, verified run (docs/compat.md, "RxM
	# teardown crash"): such a run is named and the pair runs again, at
	# most three times; the row passes only on a run where both exit 0.
	for try in 1 2 3; do
		start_server "$row" "$RUN" fi_pingpong -p "$prov" -e "$ep" -c -B @PORT@ || return 1
		echo "$PORT" >>"$tmp/ctlports" # fi_pingpong's out-of-band TCP
		timeout $T "$RUN" fi_pingpong -p "$prov" -e "$ep" -c -P "$PORT" 127.0.0.1 \
			>"$tmp/$row.c.out" 2>"$tmp/$row.c.err"
		crc=$?
		[ "$ep" = rdm ] && [ $try -lt 3 ] && [ $crc -eq 0 ] || break
		wait "$SPID"
		src=$?
		if [ $src -ne 0 ] && grep -Eq '^1m +10 += *10 ' "$tmp/$row.c.out" "$tmp/$row.s.out"; then
			echo "     $row: server exit $src after a verified run (RxM teardown), once more"
			continue
		fi
		SRC_KNOWN=$src # the server was waited for: finish takes this
		break
	done
	# the result lines: "<size> <sent> =<acked> ...", the last one 1m
	finish "$row" $crc '^1m +10 += *10 ' || return 1
	echo "ok   $row ($prov): $(grep -cE '^[0-9]+[km]? +10 += *10 ' "$tmp/$row.c.out") sizes, data checked; 1m: $(grep -E '^1m ' "$tmp/$row.c.out" | tr -s ' ')"
	;;
mpi_pingpong)
	# both ranks under iwarp_run; Open MPI refuses root without the flag
	FI_PROVIDER="verbs;ofi_rxm" timeout $T mpirun --allow-run-as-root --oversubscribe \
		-np 2 --mca pml cm --mca mtl ofi --mca btl self \
		-x FI_PROVIDER -x IWARP_RUN_BUILD_DIR \
		"$RUN" "$tmp/mpi_pingpong" >"$tmp/mpi.c.out" 2>"$tmp/mpi.c.err"
	crc=$?
	if [ $crc -ne 0 ] || ! grep -q 'data verified' "$tmp/mpi.c.out"; then
		echo "FAIL mpi_pingpong: mpirun exit $crc"
		sed 's/^/  mpirun: /' "$tmp/mpi.c.out" "$tmp/mpi.c.err" | tail -n 30
		fail=1
	else
		echo "ok   $(cat "$tmp/mpi.c.out")"
	fi
	;;
esac
}

# cap_start N: dumpcap on lo (this row's namespace: every TCP segment is
# the row's) into $CAP, run N; returns once dumpcap has counted a packet
# of a knock on a port nobody listens on (dumpcap_knock: "Capturing on" is
# printed before the capture is live)
cap_start() {
	CAP=$tmp/$row.$1.pcapng
	: >"$tmp/ctlports"
	# -B 512: a bandwidth run writes faster than dumpcap drains (88 of 3449
	# packets were dropped with 64 MiB); qperf rc_bw sends for a fixed time
	# (about 1.5 GB in 2 s here, more than any buffer or tshark pass
	# takes): its capture holds the first 3000 packets, the MPA exchange
	# and the first ~190 MB of FPDUs (iwarp_decode: a capture that ends
	# inside an FPDU is a warning, not an error)
	_lim=
	[ "$row" = qperf_rc_bw ] && _lim="-c 3000"
	# shellcheck disable=SC2086
	dumpcap -i lo -B 512 $_lim -f tcp -w "$CAP" >"$CAP.dumpcap" 2>&1 &
	DPID=$!
	_i=0
	while [ $_i -lt 400 ] && ! { grep -q 'Capturing on' "$CAP.dumpcap" && [ -s "$CAP" ]; }; do
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.05
		_i=$((_i + 1))
	done
	_kp=$(free_port)
	echo "$_kp" >>"$tmp/ctlports"
	dumpcap_knock "$CAP.dumpcap" "$_kp"
}

# cap_stop: lets libpcap hand over the last block (the file stops
# growing), then stops dumpcap with SIGINT and waits for it
cap_stop() {
	[ -n "$DPID" ] || return 0
	_last=-1 _still=0 _i=0
	while [ $_i -lt 60 ] && [ $_still -lt 4 ]; do
		_size=$(stat -c %s "$CAP" 2>/dev/null || echo 0)
		if [ "$_size" = "$_last" ]; then
			_still=$((_still + 1))
		else
			_still=0 _last=$_size
		fi
		sleep 0.25
		_i=$((_i + 1))
	done
	kill -INT "$DPID" 2>/dev/null
	_i=0
	while [ $_i -lt 200 ] && kill -0 "$DPID" 2>/dev/null; do
		sleep 0.05
		_i=$((_i + 1))
	done
	kill -KILL "$DPID" 2>/dev/null
	wait "$DPID"
	DPID=
}

# cap_verify: removes the streams that are not iWARP by design (the ports
# in ctlports) and runs verify-capture.sh on the rest, CRC mode any; sets
# VRES (its summary line) and VRC (its exit status), 2 when the filter failed
cap_verify() {
	CHK=$CAP
	PORTS=$(sort -u "$tmp/ctlports" | tr '\n' ' ' | sed 's/ $//')
	if [ -n "$PORTS" ]; then
		CHK=$tmp/$row.iwarp.pcapng
		_f=$(echo $PORTS | sed 's/\([0-9]*\)/tcp.port == \1/g; s/ tcp/ || tcp/g')
		if ! timeout 600 tshark -n -r "$CAP" -Y "!($_f)" -w "$CHK" \
			>"$tmp/filter.err" 2>&1; then
			VRES="tshark cannot filter out ports $PORTS: $(grep -v '^Running as' "$tmp/filter.err" | head -n 3)"
			VRC=2
			return
		fi
	fi
	VRES=$(IWARP_DECODE="$builddir/tools/iwarp_decode" timeout 1200 \
		bash "$top_srcdir/tests/interop/verify-capture.sh" "$CHK" any)
	VRC=$?
}

# cap_lost: the capture lost packets, proven either by dumpcap (it counted
# drops: the kernel's capture buffer overflowed) or by iwarp_decode (a gap
# in a stream that never filled: a segment the capture never saw; the
# capture starts before the server, so none may be missing). tshark's
# "Previous segment(s) not captured" alone proves nothing here: on lo under
# load TCP itself drops, reorders and retransmits (qperf rc_bw showed it
# with dumpcap's count 0 and every stream complete for iwarp_decode).
# With -c (qperf_rc_bw) dumpcap also counts the packets the kernel dropped
# after it stopped reading (3000/9497 in one run): only the gap proves then.
cap_lost() {
	[ -z "$_lim" ] && LOST=$(grep -m1 -E 'received/dropped.*/[1-9][0-9]* \(' "$CAP.dumpcap") &&
		return 0
	[ "${VRC:-0}" -eq 1 ] && LOST=$(grep -m1 'error \[gap\]' "$CHK.decode.txt" 2>/dev/null)
}

if [ -n "$cap_skip" ]; then
	row_body
	echo "     capture skipped: $cap_skip"
	exit $fail
fi
for try in 1 2 3; do
	fail=0 VRC=
	cap_start $try
	row_body
	cap_stop
	cap_lost || { cap_verify; cap_lost; } && {
		# a failing run is judged as it is; a passing one runs again
		if [ $fail -eq 0 ] && [ $try -lt 3 ]; then
			echo "     $row: the capture lost packets ($LOST), run $try again"
			continue
		fi
		echo "FAIL $row capture: lost packets in run $try: $LOST"
		fail=1
		break
	}
	if [ "$VRC" -eq 0 ]; then
		echo "ok   $row capture: $VRES (without $(grep -c . "$tmp/ctlports") non-iWARP port(s): $PORTS)"
		break
	fi
	echo "FAIL $row capture: $VRES"
	[ "$VRC" -eq 2 ] || sed 's/^/  verify: /' "$CHK.verify.txt" | tail -n 40
	mkdir -p "$builddir/compat-captures" &&
		cp "$CAP" "$CAP.dumpcap" "$CHK" "$CHK".*.txt "$builddir/compat-captures/" 2>/dev/null
	echo "  capture kept in $builddir/compat-captures/"
	fail=1
	break
done
exit $fail
