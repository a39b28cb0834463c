#!/usr/bin/env bash
# scripts/sanitize.sh: build and run the test suite under ASan + UBSan
# (-fno-sanitize-recover=undefined) in build-asan/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
scripts/build.sh build-asan --enable-werror --enable-asan --enable-ubsan
rc=0
make -C build-asan -j"$(nproc)" check >build-asan/check.out 2>&1 || rc=$?
grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' build-asan/check.out || true
if [ $rc -ne 0 ]; then
	grep -E '^(FAIL|ERROR):' build-asan/check.out || true
	for f in $(grep -lE '^:test-result: (FAIL|ERROR)' $(find build-asan -name '*.trs')); do
		echo "== ${f%.trs}.log"; tail -60 "${f%.trs}.log"
	done
fi
echo -n "sanitizers: "; scripts/summarize-checks.sh build-asan
exit $rc
