#!/usr/bin/env bash
# scripts/stress.sh [ITERS]: the stress suite (tests/stress/, ITERS
# iterations of each scenario, default $IWARP_STRESS_ITERS or 1000) under
# ASan + UBSan (build-asan/) and under ThreadSanitizer (build-tsan/,
# --enable-tsan). Prints each scenario's summary line (or its failure) and
# ends with one line per build; exits 1 when any scenario failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
iters=${1:-${IWARP_STRESS_ITERS:-1000}}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# no suppressions: every report is a finding
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:second_deadlock_stack=1}
rc=0
summary=()
run() { # DIR CONFIGURE-OPTIONS...
	local dir=$1 r=0
	shift
	scripts/build.sh "$dir" --enable-werror "$@" || { summary+=("$dir: build failed"); rc=1; return; }
	echo "== $dir ($*): stress suite, $iters iterations each"
	make -s -C "$dir" -j1 stress STRESS_ITERS="$iters" || r=$?
	summary+=("$dir: $(if [ $r -eq 0 ]; then echo passed; else echo FAILED; fi)")
	[ $r -eq 0 ] || rc=1
}
run build-asan --enable-asan --enable-ubsan
run build-tsan --enable-tsan
for s in "${summary[@]}"; do echo "stress: $s"; done
exit $rc
