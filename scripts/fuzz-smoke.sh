#!/usr/bin/env bash
# scripts/fuzz-smoke.sh [SECONDS]: build the libFuzzer targets with clang
# under ASan+UBSan (build-fuzz/) and run each for SECONDS (default 30).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
secs=${1:-30}
CC=clang scripts/build.sh build-fuzz --enable-fuzzing --enable-asan --enable-ubsan CC=clang
make -C build-fuzz fuzz-smoke FUZZ_SECONDS="$secs"
