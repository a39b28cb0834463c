#!/usr/bin/env bash
# scripts/summarize-checks.sh DIR: add up the Check assertions ("Checks: N,
# Failures: F, Errors: E") and shell-test results of a `make check` in DIR.
set -uo pipefail
dir=${1:-build}
passed=0 failed=0 skipped=0
while read -r n f e; do
	passed=$((passed + n - f - e)); failed=$((failed + f + e))
done < <(cat $(find "$dir" -name '*.log' -path '*tests*') 2>/dev/null |
	sed -n 's/^[0-9]*%: Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p')
# shell tests (no Check output) count as one test each
for trs in $(find "$dir" -name '*.trs' 2>/dev/null); do
	log=${trs%.trs}.log
	grep -q '^[0-9]*%: Checks:' "$log" 2>/dev/null && continue
	case $(sed -n 's/^:test-result: //p' "$trs") in
	PASS|XFAIL) passed=$((passed + 1)) ;;
	SKIP) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
done
# the siw interop matrix (scripts/check.sh runs it after make check)
if [ -f "$dir/interop/summary.txt" ]; then
	read -r ipass ifail < <(sed -n 's/^total: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$dir/interop/summary.txt")
	passed=$((passed + ${ipass:-0})); failed=$((failed + ${ifail:-0}))
fi
# the network tests (scripts/check.sh runs make check-net last): one each
if [ -f "$dir/check-net.out" ]; then
	passed=$((passed + $(grep -c '^check-net: .* PASSED$' "$dir/check-net.out")))
	failed=$((failed + $(grep -c '^check-net: .* FAILED' "$dir/check-net.out")))
	skipped=$((skipped + $(grep -c '^check-net: .* SKIPPED' "$dir/check-net.out")))
fi
echo "checks: $passed passed, $failed failed, $skipped skipped"
