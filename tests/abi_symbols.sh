#!/bin/sh
# tests/abi_symbols.sh: the public functions are named alike in the four
# places that list them: the header (IWARP_EXPORT declarations), the
# version script libiwarp.map, the Debian symbols file and the dynamic
# symbol table of the built libiwarp.so, where each one must carry a
# version node (docs/abi.md). A function added to the header but not to
# the map would be hidden by the map's "local: *" and fail to link.
src=${top_srcdir:-.}
builddir=${top_builddir:-.}
lib=$builddir/.libs/libiwarp.so
tmp=$(mktemp -d "${TMPDIR:-/tmp}/abi_symbols.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

if ! command -v nm >/dev/null 2>&1; then
	echo "SKIP: nm (binutils) not found"
	exit 77
fi
[ -f "$lib" ] || { echo "FAIL: $lib not built"; exit 99; }

# header: the first iwarp_NAME( of each IWARP_EXPORT declaration (the
# name may start the next line when the return type is long, as
# clang-format breaks it)
awk '/IWARP_EXPORT/ && !/#/ { d = $0; if (d !~ /\(/) { getline n; d = d " " n }; print d }' \
	"$src/include/iwarp/iwarp.h" |
	sed -n 's/^[^(]*[^a-z0-9_]\(iwarp_[a-z0-9_]*\)(.*/\1/p' | sort >"$tmp/header"
# libiwarp.map: "    iwarp_NAME;" lines of the global parts
sed -n 's/^[[:space:]]*\(iwarp_[a-z0-9_]*\);[[:space:]]*$/\1/p' "$src/libiwarp.map" |
	sort >"$tmp/map"
# debian/libiwarp1.symbols: " iwarp_NAME@NODE VERSION"
sed -n 's/^ \(iwarp_[a-z0-9_]*\)@IWARP_[0-9.]* .*/\1/p' "$src/debian/libiwarp1.symbols" |
	sort >"$tmp/symbols"
# the library: defined dynamic symbols, NAME@@NODE
nm -D --defined-only "$lib" | awk '{ print $3 }' >"$tmp/dynsym"
sed -n 's/^\(iwarp_[a-z0-9_]*\)@@IWARP_[0-9.]*$/\1/p' "$tmp/dynsym" | sort >"$tmp/lib"

if [ ! -s "$tmp/header" ]; then
	echo "FAIL: found no IWARP_EXPORT function in iwarp.h"
	exit 1
fi
for where in map symbols lib; do
	if ! diff -u "$tmp/header" "$tmp/$where" >"$tmp/diff"; then
		echo "FAIL: the header and $where list different functions ('-': only in the header, '+': only in $where):"
		sed -n '/^[-+]iwarp_/p' "$tmp/diff"
		fail=1
	fi
done
# nothing else is exported, and nothing without a version node
if grep -v -e '^iwarp_[a-z0-9_]*@@IWARP_[0-9.]*$' -e '^IWARP_[0-9.]*$' "$tmp/dynsym" >"$tmp/other"; then
	echo "FAIL: libiwarp.so exports symbols outside the iwarp_* version nodes:"
	cat "$tmp/other"
	fail=1
fi
[ $fail -eq 0 ] && echo "ok: $(wc -l <"$tmp/header") functions, each in the header, libiwarp.map, debian/libiwarp1.symbols and libiwarp.so ($(grep -c '^IWARP_' "$tmp/dynsym") version node(s))"
exit $fail
