#!/usr/bin/env bash
# tests/net_long.sh: the long variants of the loopback fault tests, for
# make check-net (make check runs short ones):
#   tests/net/zero_window with a NET_LONG_STALL_S (30) second zero window;
#   tests/net/mixed_cut with MIXED_CUT_STRIDE (default 8: of every 8th
#   offset one cut, FIN and RST in turn: about 1,600 runs and 7 minutes;
#   MIXED_CUT_STRIDE=1 runs all ~25,000, about 1.5 hours).
# Loopback only, no root needed.
set -u
top_builddir=${top_builddir:-.}
ZW=$top_builddir/tests/net/zero_window
MC=$top_builddir/tests/net/mixed_cut
for b in "$ZW" "$MC"; do
	[ -x "$b" ] || { echo "SKIP: $b not built (make check builds it)"; exit 77; }
done
rc=0
ZW_STALL_S=${NET_LONG_STALL_S:-30} "$ZW" || rc=1
MIXED_CUT_STRIDE=${MIXED_CUT_STRIDE:-8} "$MC" || rc=1
exit $rc
