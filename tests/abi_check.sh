#!/bin/sh
# tests/abi_check.sh: scripts/abi-check.sh on this build tree's libiwarp.so:
# its ABI is the committed baseline abi/libiwarp.abi, or that plus added
# functions (docs/abi.md). Skips (77) without abigail-tools, and in
# sanitizer builds (the baseline describes the ordinary build).
src=${top_srcdir:-.}
builddir=${top_builddir:-.}
if [ -n "${SANCFLAGS:-}" ]; then
	echo "SKIP: sanitizer build ($SANCFLAGS); the ABI is checked in the ordinary build"
	exit 77
fi
exec "$src/scripts/abi-check.sh" "$builddir"
