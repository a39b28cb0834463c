#!/bin/sh
# tests/tool_signals.sh: iwarp_ping and iwarp_bw stop on SIGINT and SIGTERM
# in every state, over 127.0.0.1.
#
# For each tool, each state and each signal the signalled process must be
# gone within $T seconds (waited for, polled every 0.1 s) and be reported by
# the shell as killed by that signal (130 for SIGINT, 143 for SIGTERM,
# iwarp_ping(1) and iwarp_bw(1) EXIT STATUS). Where a peer is connected,
# the peer must notice the disconnect and exit too within $T seconds (its
# status is not checked: a run cut short fails, 1). States:
#   iwarp_ping: idle server (-s -P); server with a client pinging (-C 0);
#     client mid-run; client mid-handshake (a TCP listener that never
#     answers the MPA Request);
#   iwarp_bw: idle server; server and client of a Write BW run (-D 60, the
#     signal to either side); Send BW; Write latency (INLINE progress, a
#     busy-poll on memory); and a Send BW sender waiting for a credit
#     (credits come as RDMA Writes, no completion tells the sender of the
#     peer's end): the server is stopped (SIGSTOP) until the octets it
#     has not read stop changing, then killed (SIGKILL).
# A process is signalled only once it is in the state (its output, a
# listening port or the server's receive queue shows it), never after a
# fixed sleep. Exit 77 (skip) when
# io_uring is unavailable.

top_builddir=${top_builddir:-.}
PING=${IWARP_PING:-$top_builddir/tools/iwarp_ping}
BW=${IWARP_BW:-$top_builddir/tools/iwarp_bw}
T=45            # bound of an exit after a signal, seconds (generous: a loaded 2-core CI)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tool_signals.XXXXXX") || exit 99
pids=""
cleanup() {
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

for t in "$PING" "$BW"; do
	if [ ! -x "$t" ]; then
		echo "FAIL: $t not built"
		exit 99
	fi
done
if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP: python3 not found (silent listener)"
	exit 77
fi

. "${top_srcdir:-.}/tests/testlib.sh"

# gone PID SECS: polls every 0.1 s until process PID is gone (at most
# SECS); kills it and fails if it is still there.
gone() {
	_n=0
	while kill -0 "$1" 2>/dev/null; do
		if [ $_n -ge $(($2 * 10)) ]; then
			kill -KILL "$1" 2>/dev/null
			return 1
		fi
		sleep 0.1
		_n=$((_n + 1))
	done
	return 0
}

# wait_output FILE PATTERN PID: waits (at most $T s) until FILE has a line
# matching PATTERN; fails early if PID is gone.
wait_output() {
	_n=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		kill -0 "$3" 2>/dev/null || return 1
		[ $_n -ge $((T * 10)) ] && return 1
		sleep 0.1
		_n=$((_n + 1))
	done
	return 0
}

# status SIG: the exit status the shell reports for a process killed by SIG.
status() {
	case $1 in
	INT) echo 130 ;;
	TERM) echo 143 ;;
	esac
}

# show NAME FILE...: prints the logs of a failed case.
show() {
	_name=$1
	shift
	for _f in "$@"; do
		[ -f "$_f" ] && sed "s|^|  $_name $(basename "$_f"): |" "$_f"
	done
}

# skip_if_no_uring STATUS LOG: iwarp_ping (status 3) and iwarp_bw (2) say
# "io_uring ... unavailable" on stderr when there is no io_uring.
skip_if_no_uring() {
	if grep -q "io_uring" "$2" 2>/dev/null; then
		echo "SKIP: io_uring unavailable:"
		cat "$2"
		exit 77
	fi
}

# expect_stop NAME PID SIG LOGS...: sends SIG to PID, which must be gone
# within $T s with status 128 + SIG.
expect_stop() {
	_name=$1 _pid=$2 _sig=$3
	shift 3
	kill -"$_sig" "$_pid"
	if ! gone "$_pid" $T; then
		echo "FAIL $_name: still running $T s after SIG$_sig"
		show "$_name" "$@"
		fail=1
		return 1
	fi
	wait "$_pid"
	_rc=$?
	if [ "$_rc" -ne "$(status "$_sig")" ]; then
		echo "FAIL $_name: exit $_rc after SIG$_sig (want $(status "$_sig"))"
		show "$_name" "$@"
		fail=1
		return 1
	fi
	return 0
}

# expect_peer_gone NAME PID LOGS...: the peer PID must exit within $T s.
expect_peer_gone() {
	_name=$1 _pid=$2
	shift 2
	if ! gone "$_pid" $T; then
		echo "FAIL $_name: the peer still runs $T s after the disconnect"
		show "$_name" "$@"
		fail=1
		return 1
	fi
	wait "$_pid"
	echo "ok   $_name (peer exit $?)"
}

# start_server NAME TOOL ARGS...: starts a server in the background (pid
# in $spid) on a free port ($port; every @PORT@ in ARGS stands for it) and
# waits until it listens there (start_listener of testlib.sh; logs in
# $tmp/NAME.s.out and .s.err); reports a server that does not listen.
start_server() {
	_name=$1
	shift
	if start_listener "$tmp/$_name.s" "$@"; then
		port=$LISTEN_PORT spid=$LISTEN_PID
		pids="$pids $spid"
		return 0
	fi
	skip_if_no_uring "$LISTEN_RC" "$tmp/$_name.s.err"
	echo "FAIL $_name: server not listening (exit $LISTEN_RC)"
	show "$_name" "$tmp/$_name.s.out" "$tmp/$_name.s.err"
	fail=1
	return 1
}

# client_start NAME PATTERN WHAT CMD...: runs the client CMD in the
# background (pid in $cpid; the pair's logs, $tmp/NAME.[sc].{out,err}, in
# $logs) and waits until its output has a line matching PATTERN; fails the
# case ("WHAT within $T s") otherwise.
client_start() {
	_cname=$1 _pat=$2 _what=$3
	shift 3
	"$@" >"$tmp/$_cname.c.out" 2>"$tmp/$_cname.c.err" &
	cpid=$!
	pids="$pids $cpid"
	logs="$tmp/$_cname.s.out $tmp/$_cname.s.err $tmp/$_cname.c.out $tmp/$_cname.c.err"
	if ! wait_output "$tmp/$_cname.c.out" "$_pat" "$cpid"; then
		echo "FAIL $_cname: $_what within $T s"
		show "$_cname" $logs
		fail=1
		return 1
	fi
	return 0
}

# ---- iwarp_ping ----

ping_idle() {
	name=ping-idle-$1
	start_server "$name" "$PING" -s -P -a 127.0.0.1 -p @PORT@ || return
	expect_stop "$name" "$spid" "$1" "$tmp/$name.s.out" "$tmp/$name.s.err" &&
		echo "ok   $name"
}

# ping_pair SIG WHO: a server (-P when WHO is server) and a client pinging
# without end (-C 0, -v prints each ping); SIG goes to WHO (server or
# client) once pings flow.
ping_pair() {
	name=ping-$2-$1
	persistent=
	[ "$2" = server ] && persistent=-P
	start_server "$name" "$PING" -s $persistent -a 127.0.0.1 -p @PORT@ || return
	client_start "$name" "^ping data:" "no ping" \
		"$PING" -c -a 127.0.0.1 -p "$port" -C 0 -v || return
	if [ "$2" = server ]; then
		expect_stop "$name" "$spid" "$1" $logs &&
			expect_peer_gone "$name" "$cpid" $logs
	else
		# without -P the server ends with its one session
		expect_stop "$name" "$cpid" "$1" $logs &&
			expect_peer_gone "$name" "$spid" $logs
	fi
}

# ping_handshake SIG: the client waits for an MPA Reply that never comes.
ping_handshake() {
	name=ping-handshake-$1
	port=$(free_port)
	python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(4)
c, _ = s.accept()
time.sleep(float(sys.argv[2]))
' "$port" $((T * 3)) >/dev/null 2>&1 &
	lpid=$!
	pids="$pids $lpid"
	if ! wait_listen "$port" "$lpid"; then
		echo "FAIL $name: silent listener not up"
		fail=1
		return
	fi
	# -d traces the steps; "created pd" comes right before the connect
	"$PING" -c -a 127.0.0.1 -p "$port" -d --timeout 60000 \
		>"$tmp/$name.c.out" 2>"$tmp/$name.c.err" &
	cpid=$!
	pids="$pids $cpid"
	if ! wait_output "$tmp/$name.c.out" "^created pd" "$cpid"; then
		echo "FAIL $name: client did not reach the connect"
		show "$name" "$tmp/$name.c.out" "$tmp/$name.c.err"
		fail=1
		return
	fi
	expect_stop "$name" "$cpid" "$1" "$tmp/$name.c.out" "$tmp/$name.c.err" &&
		echo "ok   $name"
	kill "$lpid" 2>/dev/null
}

# ---- iwarp_bw ----

bw_idle() {
	name=bw-idle-$1
	start_server "$name" "$BW" -p @PORT@ --bind 127.0.0.1 || return
	expect_stop "$name" "$spid" "$1" "$tmp/$name.s.out" "$tmp/$name.s.err" &&
		echo "ok   $name"
}

# bw_start NAME OPTS...: server and client of a run with OPTS (pids in
# $spid and $cpid, logs in $logs), once the client printed the table
# header (the run starts right after); fails the case otherwise.
bw_start() {
	_name=$1
	shift
	start_server "$_name" "$BW" -p @PORT@ --bind 127.0.0.1 "$@" || return 1
	client_start "$_name" "#bytes" "the run did not start" \
		"$BW" -p "$port" "$@" 127.0.0.1
}

# bw_pair SIG WHO OPTS...: a run between server and client; SIG goes to WHO
# once the client has printed the table header (the run starts right after).
bw_pair() {
	sig=$1 who=$2
	shift 2
	name=bw-$who-$sig-$(echo "$*" | tr -d -- '-' | tr ' ' '_')
	bw_start "$name" "$@" || return
	if [ "$who" = server ]; then
		expect_stop "$name" "$spid" "$sig" $logs &&
			expect_peer_gone "$name" "$cpid" $logs
	else
		expect_stop "$name" "$cpid" "$sig" $logs &&
			expect_peer_gone "$name" "$spid" $logs
	fi
}

# recvq PORT: octets queued unread on the established sockets of local
# port PORT (ss(8) Recv-Q, summed).
recvq() {
	ss -Htn state established "( sport = :$1 )" 2>/dev/null |
		awk '{ n += $1 } END { print n + 0 }'
}

# bw_credit_wait: a Send BW client whose server stopped granting credits
# (SIGSTOP) and then died (SIGKILL) must exit within $T s.
bw_credit_wait() {
	name=bw-credit-wait
	bw_start "$name" --test send -s 64 -D 60 || return
	kill -STOP "$spid"
	# the client used the credits it had: what it sent lies unread (or,
	# when the server had read everything, nothing comes any more)
	_n=0 _prev=-1
	while :; do
		_q=$(recvq "$port")
		[ "$_q" = "$_prev" ] && break
		if [ $_n -ge $((T * 2)) ]; then
			echo "FAIL $name: the stopped server's receive queue did not settle within $T s ($_q)"
			kill -KILL "$spid"
			show "$name" $logs
			fail=1
			return
		fi
		_prev=$_q
		sleep 0.5
		_n=$((_n + 1))
	done
	kill -KILL "$spid"
	wait "$spid" 2>/dev/null
	expect_peer_gone "$name" "$cpid" $logs
}

for sig in INT TERM; do
	ping_idle $sig
	ping_pair $sig server
	ping_pair $sig client
	ping_handshake $sig
	bw_idle $sig
	bw_pair $sig server -D 60
	bw_pair $sig client -D 60
done
bw_pair INT client --test send -D 60
bw_pair TERM server --test send -D 60
bw_pair INT server --latency -n 10000000
bw_pair TERM client --latency -n 10000000
bw_credit_wait

exit $fail
