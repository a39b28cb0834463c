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

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
timeout 20 "$work/hello" -s "$port" >"$work/server.out" 2>&1 &
spid=$!
# the client retries until the server listens (bounded)
ok=0
for _ in $(seq 1 50); do
	if timeout 20 "$work/hello" 127.0.0.1 "$port" >"$work/client.out" 2>&1; then ok=1; break; fi
	grep -q "io_uring\|not implemented" "$work/client.out" && { echo "SKIP: no io_uring"; exit 77; }
	grep -q UNREACHABLE "$work/client.out" || break # only "not listening yet" is retried
	sleep 0.1
done
wait $spid && src=0 || src=$?
spid=
cat "$work/client.out" "$work/server.out"
[ $ok -eq 1 ] || { echo "FAIL: client"; exit 1; }
[ $src -eq 0 ] || { echo "FAIL: server exit $src"; exit 1; }
grep -q 'server got: "hello, written by RDMA Write" then "done"' "$work/server.out" ||
	{ echo "FAIL: server output"; exit 1; }
echo PASS
