#!/usr/bin/env bash
# tests/soak.sh: the soak. tests/net/soak_peer server in namespace A, client
# in B (tests/net/netns.sh, MTU 1500, IPv4), 1 % random loss of TCP segments
# both ways (nftables numgen) and a tbf rate limit (SOAK_RATE, default
# 100mbit: keeps the CPU modest on a shared machine). The client churns
# SOAK_QPS (16) connections for SOAK_MINUTES (30): connect, RDMA Writes,
# RDMA Read back, compare, disconnect, repeat (see soak_peer.c).
#
# Every SOAK_INTERVAL seconds (60) one line per sample: for the server (s)
# and the client (c), RSS in KiB, open fds, io_uring instances (fds that are
# anon_inode:[io_uring]) and threads. Table in $SOAK_TABLE when set.
#
# Asserts: the client verified every established iteration (no WR error,
# no data difference, no hang; its exit status), the server kept running,
# and after warm-up (the first SOAK_WARMUP samples, default 2; 1 when there
# are fewer than 6 samples) nothing grew: the largest value of the second
# half of the samples is at most the largest of the first half plus a
# tolerance (RSS: 10 % + 8 MiB; fds: 16, one socket per QP that happens to
# be open at the sample; io_uring instances: 0; threads: 2).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}
PEER=$top_builddir/tests/net/soak_peer
[ -x "$PEER" ] || { echo "SKIP: $PEER not built (make tests/net/soak_peer)"; exit 77; }
. "$top_srcdir/tests/net/netns.sh"
netns_require
command -v nft >/dev/null 2>&1 || { echo "SKIP: nft missing (loss)"; exit 77; }
MIN=${SOAK_MINUTES:-30}
INT=${SOAK_INTERVAL:-60}
QPS=${SOAK_QPS:-16}
RATE=${SOAK_RATE:-100mbit}
LOSS=${SOAK_LOSS_PERMILLE:-10}
PAUSE=${SOAK_PAUSE_MS:-200}
TMP=$(mktemp -d) || exit 99
NETNS_EXIT_HOOK='rm -rf "$TMP"'
PORT=18600

netns_setup 1500 || { echo "FAIL: namespace setup"; exit 1; }
netns_loss "$LOSS" both || { echo "FAIL: loss rule"; exit 1; }
[ "$RATE" = none ] || netns_rate "$RATE" || { echo "FAIL: rate"; exit 1; }

# sample PID: "rss_kib fds io_uring threads"
sample() {
	local pid=$1 rss thr fds ur
	rss=$(awk '/^VmRSS:/{print $2}' /proc/"$pid"/status 2>/dev/null)
	thr=$(awk '/^Threads:/{print $2}' /proc/"$pid"/status 2>/dev/null)
	fds=$(ls /proc/"$pid"/fd 2>/dev/null | wc -l)
	ur=$(find /proc/"$pid"/fd -lname 'anon_inode:\[io_uring\]' 2>/dev/null | wc -l)
	echo "${rss:-0} $fds $ur ${thr:-0}"
}

ip netns exec "$NS_A" "$PEER" -s -b "$NS_A4" -p $PORT >"$TMP/s.out" 2>"$TMP/s.err" &
SPID=$!
netns_track $SPID
i=0
while [ $i -lt 100 ] && ! grep -q '^port ' "$TMP/s.out"; do sleep 0.1; i=$((i + 1)); done
grep -q '^port ' "$TMP/s.out" || { echo "FAIL: server did not listen"; cat "$TMP/s.err"; exit 1; }
ip netns exec "$NS_B" "$PEER" -c "$NS_A4" -p $PORT -q "$QPS" -t $((MIN * 60)) -i "$PAUSE" >"$TMP/c.out" 2>"$TMP/c.err" &
CPID=$!
netns_track $CPID

echo "soak: $QPS QPs, ${MIN} min, loss $LOSS/1000 both ways, rate $RATE, MTU 1500"
hdr="  min  s_rss_kib s_fds s_uring s_thr  c_rss_kib c_fds c_uring c_thr  drops"
echo "$hdr"
: >"$TMP/table"
t0=$(date +%s)
n=0
# (ip netns exec execs the program: $! is its PID)
# the client ends on its own after MIN minutes (plus the last iterations);
# bound: MIN minutes + 5
while kill -0 $CPID 2>/dev/null; do
	now=$(date +%s)
	if [ $((now - t0)) -gt $((MIN * 60 + 300)) ]; then
		echo "FAIL: the client did not end within $MIN + 5 minutes"
		exit 1
	fi
	if [ $((now - t0)) -ge $(((n + 1) * INT)) ]; then
		n=$((n + 1))
		ss=$(sample $SPID)
		cs=$(sample $CPID)
		kill -0 $CPID 2>/dev/null || break
		line=$(printf "%5.1f  %9s %5s %7s %5s  %9s %5s %7s %5s  %s" \
			"$(echo "$n * $INT / 60" | bc -l)" $ss $cs "$(netns_loss_count | tr ' ' '+')")
		echo "$line"
		echo "$line" >>"$TMP/table"
	fi
	sleep 1
done
wait $CPID
crc=$?
kill -0 $SPID 2>/dev/null
salive=$?
kill $SPID 2>/dev/null
wait $SPID 2>/dev/null
cat "$TMP/c.out"
head -20 "$TMP/c.err"
cat "$TMP/s.out" | grep -v '^port '
if [ -n "${SOAK_TABLE:-}" ]; then
	{
		echo "soak: $QPS QPs, ${MIN} min, loss $LOSS/1000 both ways, rate $RATE, MTU 1500 ($(date -u +%FT%TZ))"
		echo "$hdr"
		cat "$TMP/table"
		cat "$TMP/c.out"
	} >"$SOAK_TABLE"
fi
fail=0
[ $crc -eq 0 ] || { echo "FAIL: client exit $crc"; fail=1; }
[ $salive -eq 0 ] || { echo "FAIL: the server died"; head "$TMP/s.err"; fail=1; }
rows=$(wc -l <"$TMP/table")
warm=${SOAK_WARMUP:-2}
[ "$rows" -ge 6 ] || warm=1
if [ $((rows - warm)) -lt 2 ]; then
	echo "FAIL: only $rows samples (SOAK_INTERVAL too long for SOAK_MINUTES)"
	fail=1
else
	# columns 2..9: s_rss s_fds s_uring s_thr c_rss c_fds c_uring c_thr
	if ! awk -v warm="$warm" '
		{ for (c = 2; c <= 9; c++) v[NR, c] = $c }
		END {
			n = NR - warm; h = warm + int(n / 2); bad = 0
			split("s_rss s_fds s_uring s_thr c_rss c_fds c_uring c_thr", name, " ")
			for (c = 2; c <= 9; c++) {
				a = 0; b = 0
				for (r = warm + 1; r <= h; r++) if (v[r, c] > a) a = v[r, c]
				for (r = h + 1; r <= NR; r++) if (v[r, c] > b) b = v[r, c]
				k = (c - 2) % 4
				tol = k == 0 ? a * 0.10 + 8192 : (k == 1 ? 16 : (k == 2 ? 0 : 2))
				printf "soak: %s first half max %d, second half max %d (tolerance %d)\n", name[c - 1], a, b, tol
				if (b > a + tol) { print "FAIL: " name[c - 1] " grew"; bad = 1 }
			}
			exit bad
		}' "$TMP/table"; then
		fail=1
	fi
fi
[ $fail -eq 0 ] && echo "PASS: soak ($rows samples)"
exit $fail
