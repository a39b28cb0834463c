#!/usr/bin/env bash
# scripts/abi-check.sh [--update] [BUILDDIR]: the ABI of libiwarp.so against
# the committed baseline abi/libiwarp.abi, with libabigail (abidw, abidiff;
# Debian package abigail-tools). The rules it enforces: docs/abi.md.
#
# BUILDDIR (default build/) holds the built library, compiled with -g (the
# default CFLAGS are "-g -O2"); when it has no libiwarp.so yet,
# scripts/build.sh builds it. The library's ABI is dumped with the same
# options as the baseline and compared with abidiff, the full report
# printed. Added functions pass (reported); anything else fails: a removed
# or re-versioned function, a changed parameter or return type, a struct
# whose size or layout changed (except members appended to the objects only
# the library allocates: abi/libiwarp.suppr), a new SONAME.
#
# --update writes the baseline from the built library instead: after an
# intended change (new functions, or a SONAME bump with its reasons in
# docs/abi.md), run it and commit abi/libiwarp.abi with the change.
#
# Exit: 0 compatible, 1 incompatible, 77 abigail-tools not installed,
# 99 no library or a library without debug information.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
update=0
if [ "${1:-}" = --update ]; then update=1; shift; fi
dir=${1:-$top/build}
baseline=$top/abi/libiwarp.abi
suppr=$top/abi/libiwarp.suppr

for t in abidw abidiff; do
	command -v $t >/dev/null 2>&1 ||
		{ echo "abi-check: SKIP: $t not found (apt-get install abigail-tools; scripts/deps.sh does)"; exit 77; }
done
lib=$dir/.libs/libiwarp.so
if [ ! -e "$lib" ] && [ "$dir" = "$top/build" ]; then
	"$top/scripts/build.sh" build || exit 99
fi
[ -e "$lib" ] || { echo "abi-check: $lib not built"; exit 99; }
lib=$(readlink -f "$lib")
if ! readelf -S "$lib" | grep '\.debug_info' >/dev/null; then
	echo "abi-check: $lib has no debug information: build with -g (the default CFLAGS)"
	exit 99
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/abi-check.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
# The dump: public types only (those of the installed header), stable type
# ids, no build paths, so that dumps of the same ABI from any tree are equal.
dump() {
	abidw --headers-dir "$top/include/iwarp" --drop-private-types \
		--type-id-style hash --no-corpus-path --no-comp-dir-path --no-show-locs \
		"$lib" >"$1.raw" || return 1
	sed "s|$top/||g" "$1.raw" >"$1"
}
if [ $update = 1 ]; then
	dump "$tmp/new.abi" || { echo "abi-check: abidw failed on $lib"; exit 99; }
	mkdir -p "$(dirname "$baseline")"
	if [ -f "$baseline" ] && cmp -s "$tmp/new.abi" "$baseline"; then
		echo "abi-check: baseline unchanged ($baseline)"
	else
		cp "$tmp/new.abi" "$baseline"
		echo "abi-check: wrote $baseline from $lib; review and commit it"
	fi
	exit 0
fi
[ -f "$baseline" ] || { echo "abi-check: no baseline $baseline (scripts/abi-check.sh --update writes it)"; exit 99; }
dump "$tmp/cur.abi" || { echo "abi-check: abidw failed on $lib"; exit 99; }
opts=()
[ -f "$suppr" ] && opts+=(--suppressions "$suppr")
# The report shows everything, additions included; the verdict ignores
# additions. abidiff's exit status is a bit set: 1 error, 2 usage error,
# 4 ABI change, 8 incompatible ABI change.
abidiff "${opts[@]}" "$baseline" "$tmp/cur.abi" >"$tmp/report"
rrc=$?
abidiff "${opts[@]}" --no-added-syms "$baseline" "$tmp/cur.abi" >/dev/null
vrc=$?
if [ $rrc -ne 0 ]; then
	echo "abi-check: abidiff $(basename "$baseline") $lib (exit $rrc):"
	sed 's/^/  /' "$tmp/report"
fi
if [ $((vrc & 3)) -ne 0 ]; then
	echo "abi-check: abidiff failed (exit $vrc)"
	exit 99
fi
if [ $vrc -ne 0 ]; then
	echo "abi-check: FAIL: ABI changes other than additions (exit bits $vrc: 4 change, 8 incompatible)."
	echo "abi-check: if intended (docs/abi.md), run scripts/abi-check.sh --update and commit abi/libiwarp.abi"
	exit 1
fi
if [ $rrc -ne 0 ]; then
	echo "abi-check: ok: additions only (scripts/abi-check.sh --update records them in the baseline)"
else
	echo "abi-check: ok: the ABI equals the baseline ($(grep -c '<elf-symbol ' "$baseline") symbols)"
fi
exit 0
