#!/usr/bin/env bash
# tests/deb_install.sh: the Debian packages build, install and work.
#
# 1. Copies the source tree (what git sees: tracked and untracked files that
#    are not ignored; no build trees) and builds it with
#    `dpkg-buildpackage -b -us -uc` (DEB_BUILD_OPTIONS=nocheck: the suites
#    run in CI's own build tree).
# 2. Runs lintian on the .changes when lintian is installed: no errors.
# 3. Checks what each package holds and that dpkg-shlibdeps made iwarp-tools
#    depend on libiwarp1.
# 4. Installs the three packages with dpkg into a throwaway root (its status
#    database starts as a copy of this system's, so dpkg checks the packages'
#    dependencies against what is really installed here; triggers are not
#    run: the root has no ldconfig).
# 5. Compiles the iwarp.7 example against the installed header, pkg-config
#    file and library; runs iwarp_decode on a capture; runs iwarp_ping server
#    and client from the root (its library dir first in LD_LIBRARY_PATH,
#    checked with ldd) over 127.0.0.1, without and with CRC: both exit 0 and
#    the client reports every ping.
# 6. Purges the packages and checks that nothing of them is left in the root.
#
# Needs root (dpkg installs as root). Exit 77 (skip) without root, without
# dpkg-buildpackage/debhelper, or when iwarp_ping reports io_uring
# unavailable (its exit status 3). Every step is bounded by timeout(1).
# IWARP_DEB_KEEP=1 keeps the work directory (printed).
set -uo pipefail
top=$(cd "${top_srcdir:-$(dirname "$0")/..}" && pwd)
BUILD_T=${IWARP_DEB_BUILD_TIMEOUT:-1800} # bound of the package build, s
T=60                                     # bound of one tool run, s
COUNT=10
start=$(date +%s)
say() { echo "[$(($(date +%s) - start)) s] $*"; }

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (dpkg --root installs files as root)"; exit 77; }
for tool in dpkg-buildpackage dh dpkg-deb timeout python3 cc; do
	command -v $tool >/dev/null 2>&1 ||
		{ echo "SKIP: $tool not found (scripts/deps.sh installs debhelper and the rest)"; exit 77; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/deb_install.XXXXXX") || exit 99
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	if [ "${IWARP_DEB_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail=0
die() { echo "FAIL: $*"; exit 1; }
check() { # check WHAT COMMAND...: a failed COMMAND fails the test, the rest goes on
	local what=$1
	shift
	if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; return 1; fi
}

# ---- 1. a clean copy of the tree, built into packages -------------------
src=$work/src
mkdir -p "$src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
		done | tar --null -T - -cf -) | tar -xf - -C "$src" ||
		die "could not copy the git tree"
else
	# not a git checkout (a release tarball): everything but build output
	tar -C "$top" --exclude='./build*' --exclude=./debian/build \
		--exclude=./debian/.debhelper -cf - . | tar -xf - -C "$src" ||
		die "could not copy $top"
fi
[ -f "$src/debian/control" ] || die "no debian/control in $top"
say "building packages (log: build.log)"
nproc=$(nproc 2>/dev/null || echo 1)
if ! (cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$nproc" \
	timeout "$BUILD_T" dpkg-buildpackage -b -us -uc) >"$work/build.log" 2>&1; then
	tail -60 "$work/build.log"
	die "dpkg-buildpackage failed (last lines above)"
fi
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
debs=()
for p in libiwarp1 libiwarp-dev iwarp-tools iwarp-compat; do
	d=$(ls "$work"/${p}_*.deb 2>/dev/null | head -n 1)
	[ -n "$d" ] || die "package $p was not built"
	debs+=("$d")
done
changes=$(ls "$work"/*.changes | head -n 1)
say "built: $(cd "$work" && ls ./*.deb | tr '\n' ' ')"
grep -E '^dpkg-gensymbols: warning' "$work/build.log" && {
	echo "FAIL dpkg-gensymbols: debian/libiwarp1.symbols differs from the library"
	fail=1
}

# ---- 2. lintian -----------------------------------------------------------
if command -v lintian >/dev/null 2>&1; then
	timeout 600 lintian --fail-on error --display-info "$changes" >"$work/lintian.out" 2>&1
	lrc=$?
	grep -v 'running with root privileges' "$work/lintian.out" | sed 's/^/  lintian: /' 
	check "lintian: no errors ($(grep -c '^E:' "$work/lintian.out") E, $(grep -c '^W:' "$work/lintian.out") W, $(grep -c '^I:' "$work/lintian.out") I)" \
		test $lrc -eq 0
else
	echo "     lintian not installed: skipped"
fi

# ---- 3. contents and dependencies ----------------------------------------
has() { dpkg-deb -c "$1" | awk '{ print $6 }' | grep -x "./$2" >/dev/null; }
check "libiwarp1 holds libiwarp.so.1" has "${debs[0]}" "usr/lib/$ma/libiwarp.so.1"
check "libiwarp-dev holds the header, pkg-config file, man pages" eval \
	'has "${debs[1]}" usr/include/iwarp/iwarp.h &&
	 has "${debs[1]}" "usr/lib/$ma/pkgconfig/libiwarp.pc" &&
	 has "${debs[1]}" usr/share/man/man3/iwarp_post_send.3.gz &&
	 has "${debs[1]}" usr/share/man/man7/iwarp.7.gz'
check "iwarp-tools holds the tools and their pages" eval \
	'for t in iwarp_ping iwarp_bw iwarp_decode; do
	   has "${debs[2]}" usr/bin/$t && has "${debs[2]}" usr/share/man/man1/$t.1.gz || exit 1
	 done'
tdeps=$(dpkg-deb -f "${debs[2]}" Depends)
check "iwarp-tools depends on libiwarp1 ($tdeps)" eval '[[ "$tdeps" == *"libiwarp1 (>= "* ]]'
check "iwarp-compat holds iwarp_run and the private compat libraries" eval \
	'has "${debs[3]}" usr/bin/iwarp_run && has "${debs[3]}" usr/share/man/man1/iwarp_run.1.gz &&
	 has "${debs[3]}" "usr/lib/$ma/libiwarp/compat/libibverbs.so.1" &&
	 has "${debs[3]}" "usr/lib/$ma/libiwarp/compat/librdmacm.so.1" &&
	 ! dpkg-deb -c "${debs[3]}" | grep "usr/lib/$ma/lib[ir][bd]" >/dev/null'
check "libiwarp1 has a symbols file" eval \
	'dpkg-deb --ctrl-tarfile "${debs[0]}" | tar -tf - | grep -x ./symbols >/dev/null'

# ---- 4. install into a throwaway root --------------------------------------
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
cp /var/lib/dpkg/status "$root/var/lib/dpkg/status"
touch "$root/var/lib/dpkg/available"
dpkg_root() { timeout 300 dpkg --root="$root" --force-bad-path --no-triggers "$@"; }
if ! dpkg_root -i "${debs[@]}" >"$work/dpkg-i.out" 2>&1; then
	cat "$work/dpkg-i.out"
	die "dpkg -i into $root failed"
fi
for p in libiwarp1 libiwarp-dev iwarp-tools iwarp-compat; do
	check "$p installed" eval \
		"dpkg-query --admindir='$root/var/lib/dpkg' -W -f='\${Status}' $p | grep 'ok \(installed\|triggers-pending\)' >/dev/null"
done
say "installed into $root"

# ---- 5. use it ------------------------------------------------------------
lib=$root/usr/lib/$ma
bin=$root/usr/bin
export LD_LIBRARY_PATH=$lib
check "iwarp_ping loads libiwarp.so.1 from the root" eval \
	"ldd '$bin/iwarp_ping' | grep >/dev/null 'libiwarp.so.1 => $lib/libiwarp.so.1'"
# the iwarp.7 example, built as a user of libiwarp-dev would
sed -n '/^\.EX$/,/^\.EE$/p' "$top/man/iwarp.7" | sed '1d;$d' |
	sed -e 's/\\e/\\/g' -e 's/\\-/-/g' -e 's/^\\&//' >"$work/hello.c"
if command -v pkg-config >/dev/null 2>&1; then
	pc() { PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_LIBDIR=$lib/pkgconfig \
		PKG_CONFIG_SYSROOT_DIR=$root pkg-config "$@" libiwarp; }
	check "iwarp.7 example builds with pkg-config libiwarp ($(pc --cflags --libs | tr -s ' '))" eval \
		'cc -std=gnu11 -Wall -Wextra -Werror $(pc --cflags) "$work/hello.c" -o "$work/hello" $(pc --libs) &&
		 ldd "$work/hello" | grep >/dev/null "libiwarp.so.1 => $lib/libiwarp.so.1"'
fi
check "iwarp_decode validates a capture (tests/data/client-guest.pcap)" \
	eval 'timeout $T "$bin/iwarp_decode" "$top/tests/data/client-guest.pcap" >"$work/decode.out" 2>&1' 

. "$top/tests/testlib.sh" # free_port, wait_listen, port_taken
# ping NAME OPTS...: server and client from the root over loopback
ping_pair() {
	local name=$1 tries=0 port src crc
	shift
	while :; do
		port=$(free_port)
		timeout $T "$bin/iwarp_ping" -s -a 127.0.0.1 -p "$port" -C $COUNT -V \
			--listen-timeout 30000 "$@" >"$work/$name.s.out" 2>"$work/$name.s.err" &
		spid=$!
		wait_listen "$port" "$spid" && break
		kill "$spid" 2>/dev/null
		wait "$spid"
		src=$?
		spid=
		[ $src -eq 3 ] && { echo "SKIP: iwarp_ping reports io_uring unavailable"; cat "$work/$name.s.err"; exit 77; }
		tries=$((tries + 1))
		port_taken "$work/$name.s.err" && [ $tries -lt 5 ] && continue
		echo "FAIL $name: server not listening (exit $src)"
		cat "$work/$name.s.err"
		fail=1
		return
	done
	timeout $T "$bin/iwarp_ping" -c -a 127.0.0.1 -p "$port" -C $COUNT -V -S 4096 "$@" \
		>"$work/$name.c.out" 2>"$work/$name.c.err"
	crc=$?
	wait "$spid"
	src=$?
	spid=
	if [ $crc -ne 0 ] || [ $src -ne 0 ] || ! grep -q "^$COUNT pings of 4096 bytes" "$work/$name.c.out"; then
		echo "FAIL $name: client exit $crc, server exit $src"
		sed 's/^/  client: /' "$work/$name.c.out" "$work/$name.c.err"
		sed 's/^/  server: /' "$work/$name.s.out" "$work/$name.s.err"
		fail=1
		return
	fi
	echo "ok   $name: $(cat "$work/$name.c.out")"
}
ping_pair ping-installed
ping_pair ping-installed-crc --crc
# the compat libraries as iwarp_run(1) puts them on the path (its compiled-in
# directory is the real /usr one, so the root's is named here)
compat=$lib/libiwarp/compat
check "iwarp_run names the packaged compat directory" \
	grep -q "^compatdir='/usr/lib/$ma/libiwarp/compat'" "$bin/iwarp_run"
if [ -x /usr/bin/rping ]; then
	# (ldd's whole output first: grep -q closing the pipe early would make
	# pipefail report ldd's SIGPIPE)
	rldd=$(LD_LIBRARY_PATH=$compat:$lib ldd /usr/bin/rping)
	check "rping loads the packaged compat libibverbs/librdmacm" eval \
		"grep -q 'librdmacm.so.1 => $compat/librdmacm.so.1' <<<\"\$rldd\" &&
		 grep -q 'libibverbs.so.1 => $compat/libibverbs.so.1' <<<\"\$rldd\""
	port=$(free_port)
	LD_LIBRARY_PATH=$compat:$lib timeout $T rping -s -a 127.0.0.1 -p "$port" -C 10 -S 4096 -V >"$work/rping.s.out" 2>&1 &
	spid=$!
	if wait_listen "$port" "$spid"; then
		check "rping over the packaged compat libraries, data verified" eval \
			"LD_LIBRARY_PATH=$compat:$lib timeout $T rping -c -a 127.0.0.1 -p $port -C 10 -V -S 4096 >'$work/rping.c.out' 2>&1 && wait $spid" ||
			sed 's/^/  rping: /' "$work/rping.s.out" "$work/rping.c.out"
	else
		echo "     rping server did not listen on $port: compat run skipped"
		kill "$spid" 2>/dev/null
		wait "$spid"
	fi
	spid=
else
	echo "     rping (rdmacm-utils) not installed: compat run skipped"
fi
unset LD_LIBRARY_PATH

# ---- 6. purge ---------------------------------------------------------------
if dpkg_root --purge iwarp-compat iwarp-tools libiwarp-dev libiwarp1 >"$work/dpkg-r.out" 2>&1; then
	left=$(find "$root/usr" -type f 2>/dev/null)
	check "purge leaves no file of the packages" test -z "$left"
	[ -z "$left" ] || echo "$left"
else
	cat "$work/dpkg-r.out"
	echo "FAIL purge"
	fail=1
fi

say "deb_install: $([ $fail -eq 0 ] && echo passed || echo FAILED)"
exit $fail
