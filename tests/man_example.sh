#!/usr/bin/env bash
# tests/man_example.sh: the client/server example in iwarp.7 is real code:
# extract it from the page (as a reader would see it), build it against the
# public header and the library, and run server and client on loopback.
set -euo pipefail
src=${top_srcdir:-.}
builddir=${top_builddir:-.}
CC=${CC:-cc}
work=$(mktemp -d)
trap 'kill $spid 2>/dev/null || true; rm -rf "$work"' EXIT
spid=

# between .EX and .EE, undo the troff escapes used in the page
sed -n '/^\.EX$/,/^\.EE$/p' "$src/man/iwarp.7" | sed '1d;$d' |
	sed -e 's/\\e/\\/g' -e 's/\\-/-/g' -e 's/^\\&//' >"$work/hello.c"
[ -s "$work/hello.c" ] || { echo "FAIL: no example in iwarp.7"; exit 1; }
libdir=$builddir/.libs
# sanitizer builds: the program must carry the same runtime as the library
# shellcheck disable=SC2086
$CC -std=gnu11 -Wall -Wextra -Werror ${SANCFLAGS:-} -I"$src/include" "$work/hello.c" -o "$work/hello" \
	-L"$libdir" -liwarp -Wl,-rpath,"$(cd "$libdir" && pwd)" ||
	{ echo "FAIL: the iwarp.7 example does not compile"; exit 1; }

. "$src/tests/testlib.sh" # free_port, wait_listen, port_taken
# the server on a free port (another one if that port is taken before the
# server binds it), then the client once the server itself listens
for _ in 1 2 3 4 5; do
	port=$(free_port)
	timeout 60 "$work/hello" -s "$port" >"$work/server.out" 2>&1 &
	spid=$!
	wait_listen "$port" "$spid" && break
	kill "$spid" 2>/dev/null || true
	wait "$spid" || true
	spid=
	grep -q "io_uring\|not implemented" "$work/server.out" && { echo "SKIP: no io_uring"; exit 77; }
	port_taken "$work/server.out" || break
done
[ -n "$spid" ] || { cat "$work/server.out"; echo "FAIL: server did not listen"; exit 1; }
ok=0
if timeout 60 "$work/hello" 127.0.0.1 "$port" >"$work/client.out" 2>&1; then ok=1; fi
wait $spid && src=0 || src=$?
spid=
cat "$work/client.out" "$work/server.out"
[ $ok -eq 1 ] || { echo "FAIL: client"; exit 1; }
[ $src -eq 0 ] || { echo "FAIL: server exit $src"; exit 1; }
grep -q 'server got: "hello, written by RDMA Write" then "done"' "$work/server.out" ||
	{ echo "FAIL: server output"; exit 1; }
echo PASS
