# tests/testlib.sh: helpers for the shell tests and scripts/demo.sh (source it).

# free_port: prints a TCP port that is free on 127.0.0.1 right now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
		echo $((20000 + $$ % 20000))
}

# wait_listen PORT PID: waits (at most ~10 s) until something listens on
# TCP port PORT; fails early if process PID is gone. Without ss(8) it
# waits one second and hopes.
wait_listen() {
	command -v ss >/dev/null 2>&1 || { sleep 1; return 0; }
	_i=0
	while [ $_i -lt 100 ]; do
		[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
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
