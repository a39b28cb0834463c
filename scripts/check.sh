#!/usr/bin/env bash
# scripts/check.sh: the whole test suite (README's test command).
# Installs what is missing (as root), builds, runs `make check`, and prints
# one closing line "checks: N passed, N failed".
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
scripts/summarize-checks.sh build
exit $rc
