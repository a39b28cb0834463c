#!/usr/bin/env bash
# scripts/check.sh: the whole test suite (README's test command).
# Installs what is missing (as root), builds, runs `make check`, then the
# siw interop matrix (`make check-interop`: a QEMU guest with the Linux
# kernel's siw; needs root, skipped with a message otherwise or with
# IWARP_SKIP_INTEROP=1), and prints one closing line
# "checks: N passed, N failed, N skipped" (interop cases included).
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
scripts/summarize-checks.sh build
[ $rc -ne 0 ] && exit $rc
exit $irc
