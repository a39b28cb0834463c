#!/bin/sh
# tests/ping_loopback.sh: iwarp_ping server and client over 127.0.0.1.
#
# For each ping size (64, 1000, 4096, 65535) and each connection variant
# (defaults, --crc, --markers, --mpa-rev 1) a server (-s -C 20 -V) and a
# client (-c -C 20 -V) must both exit 0 and the client must report 20
# pings. Then a few failure cases must fail cleanly. Every run is bounded
# by timeout(1). Exit 77 (skip) when iwarp_ping reports that io_uring is
# unavailable (its exit status 3).

top_builddir=${top_builddir:-.}
PING=${IWARP_PING:-$top_builddir/tools/iwarp_ping}
COUNT=20
T=60            # bound of one iwarp_ping run, seconds
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ping_loopback.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

if ! command -v timeout >/dev/null 2>&1; then
	echo "SKIP: timeout(1) not found"
	exit 77
fi
if [ ! -x "$PING" ]; then
	echo "FAIL: $PING not built"
	exit 99
fi

. "${top_srcdir:-.}/tests/testlib.sh"

skip_if_no_uring() {
	if [ "$1" -eq 3 ]; then
		echo "SKIP: iwarp_ping reports io_uring unavailable:"
		cat "$2"
		exit 77
	fi
}

# run_pair NAME SIZE OPTS...: one server + one client run. The server's
# port comes from free_port; should another program take it first, the
# server says so and the pair starts again on another port.
run_pair() {
	name=$1 size=$2
	shift 2
	log="$tmp/$name"
	tries=0
	while :; do
		port=$(free_port)
		timeout $T "$PING" -s -a 127.0.0.1 -p "$port" -C $COUNT -V \
			--listen-timeout 30000 "$@" >"$log.s.out" 2>"$log.s.err" &
		spid=$!
		wait_listen "$port" "$spid" && break
		kill "$spid" 2>/dev/null
		wait "$spid"
		src=$?
		skip_if_no_uring $src "$log.s.err"
		tries=$((tries + 1))
		if port_taken "$log.s.err" && [ $tries -lt 5 ]; then
			echo "     $name: port $port taken meanwhile, another one"
			continue
		fi
		echo "FAIL $name: server not listening (exit $src)"
		cat "$log.s.err"
		fail=1
		return
	done
	timeout $T "$PING" -c -a 127.0.0.1 -p "$port" -C $COUNT -V -S "$size" \
		"$@" >"$log.c.out" 2>"$log.c.err"
	crc=$?
	wait "$spid"
	src=$?
	skip_if_no_uring $crc "$log.c.err"
	if [ $crc -ne 0 ] || [ $src -ne 0 ] ||
	   ! grep -q "^$COUNT pings of $size bytes" "$log.c.out"; then
		echo "FAIL $name: client exit $crc, server exit $src"
		sed 's/^/  client: /' "$log.c.out" "$log.c.err"
		sed 's/^/  server: /' "$log.s.out" "$log.s.err"
		fail=1
		return
	fi
	echo "ok   $name: $(cat "$log.c.out")"
}

for size in 64 1000 4096 65535; do
	run_pair "default-$size" $size
	run_pair "crc-$size" $size --crc
	run_pair "markers-$size" $size --markers
	run_pair "mpa-rev1-$size" $size --mpa-rev 1
done
# INLINE progress (no library thread): the tool's own loop drives both ends
export IWARP_PROGRESS=inline
run_pair "inline-4096" 4096 --crc
unset IWARP_PROGRESS

# Failure cases: each must end non-zero, and not by timeout(1) (124).
expect_fail() {
	name=$1 want=$2
	shift 2
	timeout $T "$PING" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	skip_if_no_uring $rc "$tmp/$name.err"
	if [ $rc -eq 0 ] || [ $rc -eq 124 ] ||
	   { [ "$want" != any ] && [ $rc -ne "$want" ]; }; then
		echo "FAIL $name: exit $rc (want ${want})"
		cat "$tmp/$name.out" "$tmp/$name.err"
		fail=1
		return
	fi
	echo "ok   $name: exit $rc: $(head -n 1 "$tmp/$name.err")"
}

expect_fail size-too-small 2 -c -a 127.0.0.1 -S 25
expect_fail size-too-big 2 -c -a 127.0.0.1 -S 65536
expect_fail no-role 2 -a 127.0.0.1
# a port bound by another process but not listening: refused, and nobody
# can listen there meanwhile
if reserve_port "$tmp/refused.port"; then
	expect_fail refused 1 -c -a 127.0.0.1 -p "$(cat "$tmp/refused.port")" \
		-C 1 --timeout 5000
else
	echo "FAIL refused: could not reserve a port"
	fail=1
fi
kill "$RESERVE_PID" 2>/dev/null
wait "$RESERVE_PID" 2>/dev/null
# nobody connects: the listen timeout ends the server with exit 1 (on
# another port if the first one was taken before the server bound it)
for _ in 1 2 3 4 5; do
	timeout $T "$PING" -s -a 127.0.0.1 -p "$(free_port)" \
		--listen-timeout 200 >"$tmp/no-client.out" 2>"$tmp/no-client.err"
	rc=$?
	port_taken "$tmp/no-client.err" || break
done
skip_if_no_uring $rc "$tmp/no-client.err"
if [ $rc -ne 1 ] || ! grep -q 'no connection request' "$tmp/no-client.err"
then
	echo "FAIL no-client: exit $rc (want 1, ended by the listen timeout)"
	cat "$tmp/no-client.out" "$tmp/no-client.err"
	fail=1
else
	echo "ok   no-client: exit $rc: $(head -n 1 "$tmp/no-client.err")"
fi

exit $fail
