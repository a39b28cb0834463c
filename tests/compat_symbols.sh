#!/bin/sh
# tests/compat_symbols.sh: every IBVERBS_* symbol that Debian's RDMA
# programs import from libibverbs.so.1 (rping, perftest, qperf, libfabric,
# the system librdmacm) is exported by the compat libibverbs.so.1 with the
# same version node, so the dynamic linker loads them against it; so is
# the provider interface (IBVERBS_PRIVATE_34) that the direct-verbs
# libraries perftest and libfabric link (libmlx5, libefa...) import. Skips
# (77) when none of those binaries is installed.
builddir=${top_builddir:-.}
lib=$builddir/compat/.libs/libibverbs.so.1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/compat_symbols.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

command -v objdump >/dev/null 2>&1 || { echo "SKIP: objdump (binutils) not found"; exit 77; }
[ -f "$lib" ] || { echo "FAIL: $lib not built"; exit 99; }

# NAME@NODE of the defined, versioned dynamic symbols of a library
objdump -T "$lib" | awk 'NF >= 2 && $0 !~ /\*UND\*/ && $(NF-1) ~ /IBVERBS_/ {
	v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v }' | sort -u >"$tmp/exported"
[ -s "$tmp/exported" ] || { echo "FAIL: $lib exports no IBVERBS_* symbol"; exit 1; }

fail=0
checked=0
for b in /usr/bin/rping /usr/bin/ib_write_bw /usr/bin/ib_write_lat /usr/bin/ib_read_bw \
	/usr/bin/ib_read_lat /usr/bin/ib_send_bw /usr/bin/ib_send_lat /usr/bin/ib_atomic_bw \
	/usr/bin/ib_atomic_lat /usr/bin/qperf /usr/bin/fi_pingpong /usr/bin/fi_info \
	/usr/lib/x86_64-linux-gnu/libfabric.so.1 /usr/lib/x86_64-linux-gnu/librdmacm.so.1 \
	/usr/lib/x86_64-linux-gnu/libfabric/*.so /usr/lib/x86_64-linux-gnu/libmlx5.so.1 \
	/usr/lib/x86_64-linux-gnu/libmlx4.so.1 /usr/lib/x86_64-linux-gnu/libefa.so.1 \
	/usr/lib/x86_64-linux-gnu/libmana.so.1; do
	[ -f "$b" ] || continue
	checked=$((checked + 1))
	objdump -T "$b" | awk 'NF >= 2 && $0 ~ /\*UND\*/ && $(NF-1) ~ /IBVERBS_/ {
		v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v }' | sort -u >"$tmp/imported"
	missing=$(comm -23 "$tmp/imported" "$tmp/exported")
	if [ -n "$missing" ]; then
		echo "FAIL: $b imports what the compat libibverbs does not export:"
		echo "$missing" | sed 's/^/  /'
		fail=1
	else
		echo "ok: $b ($(wc -l <"$tmp/imported") IBVERBS symbols)"
	fi
done
if [ "$checked" -eq 0 ]; then
	echo "SKIP: none of the RDMA programs is installed"
	exit 77
fi
exit $fail
