#!/usr/bin/env bash
# scripts/build.sh [DIR [configure options...]]: bootstrap, configure and build
# libiwarp out of tree (default DIR: build, configured with --enable-werror).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-build}
shift || true
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--enable-werror)
cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
fi
mkdir -p "$dir"
cd "$dir"
stamp=.configure-options
if [ ! -f Makefile ] || [ "$(cat "$stamp" 2>/dev/null)" != "${opts[*]}" ]; then
	"$top/configure" "${opts[@]}" >configure.out 2>&1 || { tail -30 configure.out; exit 1; }
	echo "${opts[*]}" >"$stamp"
fi
make -j"$(nproc)" >make.out 2>&1 || { grep -E -B2 -A8 'error|Error' make.out | head -80; exit 1; }
echo "build: $dir ok (${opts[*]})"
