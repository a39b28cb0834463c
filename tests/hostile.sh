#!/bin/sh
# tests/hostile.sh: the hostile-peer suite (tests/hostile/hostile_peer.py)
# against tests/hostile/hostile_server over 127.0.0.1. Every case is
# bounded (20 s per wait), the whole run by timeout(1). Exit 77 (skip)
# without python3 or io_uring.
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
SERVER=$top_builddir/tests/hostile/hostile_server
T=${HOSTILE_TIMEOUT:-280}

if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP: python3 not found"
	exit 77
fi
if ! command -v timeout >/dev/null 2>&1; then
	echo "SKIP: timeout(1) not found"
	exit 77
fi
if [ ! -x "$SERVER" ]; then
	echo "FAIL: $SERVER not built"
	exit 99
fi
timeout -k 10 $T python3 "$top_srcdir/tests/hostile/hostile_peer.py" \
	--server "$SERVER" "$@"
rc=$?
[ $rc -eq 124 ] && echo "FAIL: the suite did not finish within $T s"
exit $rc
