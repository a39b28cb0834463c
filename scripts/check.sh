#!/usr/bin/env bash
# scripts/check.sh: the whole test suite (README's test command).
# Installs what is missing (as root), builds, runs `make check`, then the
# siw interop matrix (`make check-interop`: a QEMU guest with the Linux
# kernel's siw; needs root, skipped with a message otherwise or with
# IWARP_SKIP_INTEROP=1), then the network tests (`make check-net`: links
# with loss, rate limits and MTUs between network namespaces, connections
# cut at FPDU boundaries, a 30 s zero window, a 2-minute soak under 1 %
# loss; needs root, skipped otherwise or with IWARP_SKIP_NET=1), and prints
# one closing line "checks: N passed, N failed, N skipped" (interop cases
# and network tests included).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/deps.sh
scripts/build.sh build
rc=0
make -C build -j"$(nproc)" check >build/check.out 2>&1 || rc=$?
grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' build/check.out || true
grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' build/check.out || true
if [ $rc -ne 0 ]; then
	echo "---- failing logs ----"
	for f in $(grep -lE '^:test-result: (FAIL|ERROR)' $(find build -name '*.trs') 2>/dev/null); do
		echo "== ${f%.trs}.log"; tail -40 "${f%.trs}.log"
	done
fi
irc=0
rm -f build/interop/summary.txt
if [ "$(id -u)" != 0 ]; then
	echo "interop: SKIPPED (the siw matrix needs root: apt-get, chroot, dumpcap; run 'make -C build check-interop' as root)"
elif [ "${IWARP_SKIP_INTEROP:-0}" = 1 ]; then
	echo "interop: SKIPPED (IWARP_SKIP_INTEROP=1)"
else
	make -C build check-interop >build/interop.out 2>&1 || irc=$?
	if [ -f build/interop/summary.txt ]; then
		cat build/interop/summary.txt
	else
		tail -30 build/interop.out
	fi
	[ $irc -eq 0 ] || echo "interop: FAILED (logs and captures under build/interop/)"
fi
nrc=0
rm -f build/check-net.out
if [ "$(id -u)" != 0 ]; then
	echo "check-net: SKIPPED (network namespaces need root; run 'make -C build check-net' as root)"
elif [ "${IWARP_SKIP_NET:-0}" = 1 ]; then
	echo "check-net: SKIPPED (IWARP_SKIP_NET=1)"
else
	# every 16th cut offset of tests/net/mixed_cut here (about 800 runs);
	# make check-net alone takes every 8th
	MIXED_CUT_STRIDE=${MIXED_CUT_STRIDE:-16} make -C build check-net >build/check-net.out 2>&1 || nrc=$?
	grep -E '^check-net: ' build/check-net.out || tail -30 build/check-net.out
	if [ $nrc -ne 0 ]; then
		echo "---- check-net failures ----"
		grep -E '^(FAIL|not ok)|FAIL' build/check-net.out | head -40
	fi
fi
scripts/summarize-checks.sh build
[ $rc -ne 0 ] && exit $rc
[ $irc -ne 0 ] && exit $irc
exit $nrc
