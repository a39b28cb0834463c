# tests/testlib.sh: helpers for the shell tests and scripts/demo.sh (source it).

# free_port: prints a TCP port that is free on 127.0.0.1 right now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
		echo $((20000 + $$ % 20000))
}

# listen_inodes PORT: socket inodes of the TCP listeners on PORT (IPv4 and
# IPv6), from /proc/net.
listen_inodes() {
	awk -v p="$(printf ':%04X' "$1")" \
		'$4 == "0A" && substr($2, length($2) - 4) == p { print $10 }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# pid_tree PID: PID and its descendants (a tool under timeout(1) is a
# child of the pid the shell knows).
pid_tree() {
	echo "$1"
	if command -v pgrep >/dev/null 2>&1; then
		_kids=$(pgrep -P "$1" 2>/dev/null || true)
	else
		_kids=$(awk -v pp="$1" '$4 == pp { print $1 }' /proc/[0-9]*/stat 2>/dev/null)
	fi
	for _kid in $_kids; do
		pid_tree "$_kid"
	done
}

# pid_listens PORT PID: true when PID or one of its descendants holds a
# TCP listener on PORT (not merely "someone listens there": another
# program may have taken a port that was free a moment ago).
pid_listens() {
	_inos=$(listen_inodes "$1")
	[ -n "$_inos" ] || return 1
	for _p in $(pid_tree "$2"); do
		for _fd in /proc/"$_p"/fd/*; do
			_lnk=$(readlink "$_fd" 2>/dev/null) || continue
			for _ino in $_inos; do
				[ "$_lnk" = "socket:[$_ino]" ] && return 0
			done
		done
	done
	return 1
}

# wait_listen PORT PID: waits (at most ~30 s) until process PID (or its
# child) listens on TCP port PORT; fails as soon as PID is gone.
wait_listen() {
	_i=0
	while [ $_i -lt 300 ]; do
		pid_listens "$1" "$2" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# port_taken FILE...: true when a tool's output says its port was in use
# (free_port's port was taken before the tool bound it: pick another).
port_taken() {
	grep -q 'Address already in use' "$@" 2>/dev/null
}

# start_listener LOG CMD...: starts CMD in the background (stdout in
# LOG.out, stderr in LOG.err) on a TCP port that free_port found free: every
# @PORT@ in CMD's words stands for it. Waits (wait_listen) until CMD or its
# child listens there, then sets LISTEN_PORT and LISTEN_PID (CMD itself:
# signals sent to it reach the program). A port that another program took
# between free_port and CMD's bind (make check -j runs tests side by side,
# port_taken) is replaced, at most 5 times. When CMD does not listen it is
# stopped (SIGTERM) and waited for: returns 1 with its exit status in
# LISTEN_RC and its output left in LOG.out and LOG.err for the caller to
# report. The variables of this helper are _sl_*: callers may loop on any
# other name around it.
start_listener() {
	_sl_log=$1
	shift
	_sl_tries=0
	while :; do
		LISTEN_PORT=$(free_port)
		(
			for _sl_a; do
				shift
				case $_sl_a in
				*@PORT@*) _sl_a=$(printf '%s\n' "$_sl_a" | sed "s/@PORT@/$LISTEN_PORT/g") ;;
				esac
				set -- "$@" "$_sl_a"
			done
			exec "$@"
		) >"$_sl_log.out" 2>"$_sl_log.err" &
		LISTEN_PID=$!
		wait_listen "$LISTEN_PORT" "$LISTEN_PID" && return 0
		kill "$LISTEN_PID" 2>/dev/null
		wait "$LISTEN_PID"
		LISTEN_RC=$?
		_sl_tries=$((_sl_tries + 1))
		if port_taken "$_sl_log.out" "$_sl_log.err" && [ $_sl_tries -lt 5 ]; then
			echo "     ${_sl_log##*/}: port $LISTEN_PORT was taken meanwhile, another"
			continue
		fi
		return 1
	done
}

# reserve_port FILE: binds (without listening) a TCP port on 127.0.0.1 in
# a background process, so connects to it are refused and nobody else can
# take it; waits until the port number is in FILE and sets RESERVE_PID
# (kill it when done).
reserve_port() {
	python3 -c 'import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
sys.stdin.close()
time.sleep(600)' >"$1" </dev/null &
	RESERVE_PID=$!
	_i=0
	while [ ! -s "$1" ] && [ $_i -lt 300 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	[ -s "$1" ]
}

# dumpcap_knock LOG PORT: dumpcap prints "Capturing on" before its capture
# is live (a capture once began after the MPA exchange it was meant to
# hold). Knocks on 127.0.0.1:PORT (a port in the capture filter: SYN and
# RST or an empty connection, no data) until dumpcap's LOG counts a packet,
# at most ~5 s.
dumpcap_knock() {
	_k=0
	while [ $_k -lt 50 ] && ! grep -q 'Packets: [1-9]' "$1" 2>/dev/null; do
		timeout 1 bash -c ": </dev/tcp/127.0.0.1/$2" 2>/dev/null || true
		sleep 0.1
		_k=$((_k + 1))
	done
}
