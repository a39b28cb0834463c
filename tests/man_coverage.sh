#!/usr/bin/env bash
# tests/man_coverage.sh: every function declared IWARP_EXPORT in the public
# header has its section-3 man page, every page is installed (listed in
# man/local.mk) and renders without warnings, the page that documents each
# function (itself or the target of its .so alias) says how it may be used
# from several threads (a THREAD SAFETY section), and each tool has its
# section-1 page.
set -euo pipefail
src=${top_srcdir:-.}
hdr=$src/include/iwarp/iwarp.h
fail=0
funcs=$(tr '\n' ' ' <"$hdr" | grep -oE 'IWARP_EXPORT [^;(#]*\(' |
	sed -E 's/.*[ *]([a-z_0-9]+)\($/\1/' | grep '^iwarp_' | sort -u)
n=0
for f in $funcs; do
	n=$((n + 1))
	page=$src/man/$f.3
	if [ ! -f "$page" ]; then echo "missing man page: man/$f.3"; fail=1; continue; fi
	grep -q "man/$f.3" "$src/man/local.mk" || { echo "not installed: man/$f.3"; fail=1; }
	# the page that documents it (an alias page is ".so man3/<page>.3")
	doc=$page
	if head -1 "$page" | grep -q '^\.so '; then
		doc=$src/man/$(head -1 "$page" | sed -E 's|^\.so +man3/||')
	fi
	grep -q '^\.SH THREAD SAFETY$' "$doc" ||
		{ echo "no THREAD SAFETY section for $f in man/${doc##*/}"; fail=1; }
done
for t in iwarp_decode iwarp_ping iwarp_bw iwarp_run; do
	[ -f "$src/man/$t.1" ] || { echo "missing man page: man/$t.1"; fail=1; }
done
if command -v groff >/dev/null; then
	for p in "$src"/man/*.[137]; do
		head -1 "$p" | grep -q '^\.so ' && continue # alias page
		out=$(cd "$src" && groff -man -ww -z "man/${p##*/}" 2>&1 || true)
		[ -z "$out" ] || { echo "groff warnings in $p:"; echo "$out"; fail=1; }
	done
fi
echo "checked $n public functions"
exit $fail
