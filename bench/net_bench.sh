#!/usr/bin/env bash
# bench/net_bench.sh: iwarp_bw 64 KiB RDMA Write bandwidth against raw TCP
# (bench/tcp_raw) between two network namespaces joined by a veth pair
# (tests/net/netns.sh), under each link condition: MTU 1500 / 9000, IPv4 /
# IPv6, random loss 0.1 % / 1 % (both directions), tbf 100 Mbit / 1 Gbit.
# Prints MB/sec (2^20 B/s) and the ratio iwarp / raw TCP per condition.
#
# Knobs: BENCH_CC congestion control for both tools [cubic if the kernel
# has it, else the system's], NET_BENCH_RAW_SECS raw TCP run [2],
# NET_BENCH_BW_SECS target length of an iwarp_bw run [2], NET_BENCH_CRC=1
# adds --crc to iwarp_bw, BENCH_TIMEOUT per run [60 s].
# A benchmark, not a test: exit 0 whatever the figures, 77 without root.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}
BW=$top_builddir/tools/iwarp_bw
RAW=$top_builddir/bench/tcp_raw
for b in "$BW" "$RAW"; do
	[ -x "$b" ] || { echo "net_bench: $b not built"; exit 1; }
done
. "$top_srcdir/tests/net/netns.sh"
netns_require
TMP=$(mktemp -d) || exit 1
NETNS_EXIT_HOOK='rm -rf "$TMP"'
trap 'netns_teardown; eval "$NETNS_EXIT_HOOK"' EXIT
trap 'netns_teardown; eval "$NETNS_EXIT_HOOK"; exit 124' INT TERM HUP
RAW_SECS=${NET_BENCH_RAW_SECS:-2}
BW_SECS=${NET_BENCH_BW_SECS:-2}
TMO=${BENCH_TIMEOUT:-60}
PORT=18515
CRCARG=""
[ "${NET_BENCH_CRC:-0}" = 1 ] && CRCARG=--crc
modprobe tcp_cubic 2>/dev/null
CC=${BENCH_CC:-cubic}
if ! "$RAW" lat -n 10 --lat-warmup 1 --cc "$CC" --json >/dev/null 2>&1; then
	echo "net_bench: congestion control $CC unusable; using the system's"
	CC=""
fi
CCARG=${CC:+--cc $CC}
echo "net_bench: iwarp_bw --test write -s 65536 ${CRCARG} vs tcp_raw bw -s 65536; cc ${CC:-system default}"

wait_port() {
	local i=0
	while [ $i -lt 300 ]; do
		[ -n "$(ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null)" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# iw_run ITERS: prints iwarp_bw's BW average (MB/sec) or nothing.
iw_run() {
	in_a timeout "$TMO" "$BW" -p $PORT --bind "$SADDR" --test write -s 65536 -n "$1" \
		$CRCARG $CCARG >/dev/null 2>"$TMP/s.err" &
	local spid=$!
	wait_port "$NS_A" $PORT || { wait $spid; return; }
	in_b timeout "$TMO" "$BW" -p $PORT --test write -s 65536 -n "$1" $CRCARG $CCARG "$SADDR" \
		>"$TMP/c.out" 2>"$TMP/c.err"
	local rc=$?
	wait $spid
	[ $rc -eq 0 ] || { echo "net_bench: iwarp_bw failed: $(tail -n 2 "$TMP/c.err" | tr '\n' ' ')" >&2; return; }
	awk -v n="$1" '$1 == 65536 && $2 == n { print $4 }' "$TMP/c.out" | head -1
}

# bench NAME MTU FAMILY [SETUP...]
bench() {
	local name=$1 mtu=$2 fam=$3 raw iw n ratio
	shift 3
	netns_setup "$mtu" || { echo "net_bench: $name: setup failed"; return; }
	if [ "$fam" = 6 ]; then SADDR=$NS_A6; else SADDR=$NS_A4; fi
	[ $# -eq 0 ] || "$@" || { echo "net_bench: $name: $* failed"; return; }
	raw=$(timeout "$TMO" "$RAW" bw -s 65536 -D "$RAW_SECS" --addr "$SADDR" \
		--netns-server "$NS_A" --netns-client "$NS_B" $CCARG --json 2>"$TMP/raw.err" |
		sed -n 's/.*"bw_average":\([0-9.]*\).*/\1/p')
	if [ -z "$raw" ]; then
		echo "net_bench: $name: tcp_raw failed: $(tail -n 1 "$TMP/raw.err")" >&2
		raw=0
	fi
	# iterations for about BW_SECS at the raw rate (at least 20)
	n=$(awk -v r="$raw" -v s="$BW_SECS" 'BEGIN { n = int(r * s * 16); print n < 20 ? 20 : n }')
	iw=$(iw_run "$n")
	ratio=$(awk -v a="${iw:-0}" -v b="$raw" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }')
	printf '%-18s %10s %10s %7s  (%s iterations)\n' "$name" "$raw" "${iw:-n/a}" "$ratio" "$n"
	netns_teardown
}

printf '%-18s %10s %10s %7s\n' condition "TCP MB/s" "iWARP MB/s" ratio
bench clean-1500-v4 1500 4
bench clean-1500-v6 1500 6
bench clean-9000-v4 9000 4
bench clean-9000-v6 9000 6
if command -v nft >/dev/null 2>&1; then
	bench loss-0.1%-v4 1500 4 netns_loss 1
	bench loss-1%-v4 1500 4 netns_loss 10
fi
bench rate-100M-v4 1500 4 netns_rate 100mbit
bench rate-1G-v4 1500 4 netns_rate 1gbit
bench rate-1G-9000-v4 9000 4 netns_rate 1gbit
exit 0
