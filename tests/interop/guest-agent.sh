# tests/interop/guest-agent.sh - the guest side of the interop matrix (busybox
# ash; run by run-guest.sh -s). One guest boot serves many cases: the host
# (run-matrix.sh) writes one command per line into the guest console (QEMU's
# stdin, run-guest.sh -i FIFO); the agent answers with markers on the console.
#
# Commands (fields separated by one space; CMD is the rest of the line):
#   RUN ID PORT TMO CMD   run "sh -c CMD" in the background, bounded by TMO s;
#                         PORT != "-": wait until a TCP listener on PORT
#                         exists, then print "AGENT-LISTENING ID PORT" (or
#                         "AGENT-NOLISTEN ID" when CMD ended or 60 s passed)
#   KILL ID SIG           send SIG to job ID's command (and its children)
#   HOLD ID PORT          until job ID (the next RUN ID) ends, drop SYNs to
#                         PORT that no listening socket would take, instead
#                         of answering them with RST (nftables, socket
#                         lookup); "AGENT-HOLD ID PORT" or "AGENT-NOHOLD ID
#                         <reason>". At the job's end the agent prints
#                         "G[ID] hold: port PORT: N SYN(s) dropped" and lifts it
#   QUIT                  stop; the guest powers off (SIW-PEER-EXIT 0)
# Markers (start of line):
#   AGENT-READY                     ready for the first command
#   AGENT-STARTED ID                job started
#   G[ID] <line>                    job output (stdout + stderr), after it ends
#   AGENT-DONE ID RC                job ended with status RC (124: timeout)
#   AGENT-KILLED ID                 KILL delivered
#   AGENT-HOLD ID PORT              HOLD in place (AGENT-NOHOLD ID <why>: not)
stty -echo 2>/dev/null
# siw checks RLIMIT_MEMLOCK on every ibv_reg_mr, even for root (no
# CAP_IPC_LOCK exception); the 8 MiB default fails perftest -a (2 x 8 MiB).
ulimit -l unlimited

listening() {   # listening PORT: a TCP listener on PORT exists (any address)
	hex=$(printf '%04X' "$1")
	grep -q ":$hex 00000000:0000 0A" /proc/net/tcp 2>/dev/null
}

# The port hold: a stock perftest server (-R) listens on its port for the
# parameter exchange, closes that listener and only then listens again for
# the test connection. A client SYN that arrives in between would be
# answered with RST (RFC 9293 §3.10.7.1: no socket, the connection is
# refused), which perftest's client does not survive (README,
# "perftest's two listens").
# Held, such a SYN is dropped as if lost: the connecting TCP (slirp's, for
# a host client) sends it again after its retransmission timeout and meets
# the new listener. A SYN that a socket takes passes untouched, so the
# connections the job makes or accepts see nothing of the hold.
HOLD_TABLE=siw_peer_hold   # family ip: the guest has IPv6 off
hold_init() {   # the table (once): a map from held port to its chain
	nft list table ip "$HOLD_TABLE" >/dev/null 2>&1 && return 0
	nft -f - <<-EOF
	table ip $HOLD_TABLE {
		map ports { type inet_service : verdict; }
		chain input {
			type filter hook input priority filter; policy accept;
			tcp dport vmap @ports
		}
	}
	EOF
}
hold() {        # hold PORT: SYNs to PORT that no socket takes are dropped
	# "socket transparent 0": the kernel found a socket for the packet
	# (for a SYN, a listener) and it is an ordinary one; without a
	# socket the expression does not match and the drop rule follows
	hold_init || return 1
	nft -f - <<-EOF
	add chain ip $HOLD_TABLE port_$1
	add rule ip $HOLD_TABLE port_$1 tcp flags & (fin|syn|rst|ack) == syn socket transparent 0 return
	add rule ip $HOLD_TABLE port_$1 tcp flags & (fin|syn|rst|ack) == syn counter drop
	add element ip $HOLD_TABLE ports { $1 : jump port_$1 }
	EOF
}
unhold() {      # unhold PORT: prints how many SYNs the hold dropped
	n=$(nft list chain ip "$HOLD_TABLE" "port_$1" 2>/dev/null |
		sed -n 's/.*counter packets \([0-9]*\) .*/\1/p')
	nft -f - <<-EOF
	delete element ip $HOLD_TABLE ports { $1 }
	flush chain ip $HOLD_TABLE port_$1
	delete chain ip $HOLD_TABLE port_$1
	EOF
	echo "hold: port $1: ${n:-?} SYN(s) dropped while nothing listened"
}

job() {         # job ID TMO CMD: runs in the background
	timeout -s KILL "$2" sh -c "$3" >"/tmp/job.$1.out" 2>&1 &
	echo $! >"/tmp/job.$1.pid"
	wait $!
	rc=$?
	if [ -e "/tmp/job.$1.hold" ]; then
		unhold "$(cat "/tmp/job.$1.hold")" >>"/tmp/job.$1.out" 2>&1
		rm -f "/tmp/job.$1.hold"
	fi
	sed "s/^/G[$1] /" "/tmp/job.$1.out"
	# what the kernel said meanwhile (siw's "crc error. in: ..., own ...",
	# iw_cm warnings), so a failed case shows siw's view next to ours
	dmesg -c 2>/dev/null | sed "s/^/G[$1] kernel: /"
	[ "$rc" = 137 ] && [ ! -e "/tmp/job.$1.killed" ] && rc=124
	echo "AGENT-DONE $1 $rc"
}

children() {    # children PID: the PIDs whose parent is PID (no pgrep in busybox-static)
	grep -l "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2>/dev/null | cut -d/ -f3
}

kill_tree() {   # kill_tree SIG PID: PID's descendants first, then PID
	for c in $(children "$2"); do kill_tree "$1" "$c"; done
	kill -s "$1" "$2" 2>/dev/null
}

dmesg -c >/dev/null 2>&1   # boot messages: jobs report only their own
echo "AGENT-READY"
while IFS= read -r line; do
	set -f
	# shellcheck disable=SC2086
	set -- $line
	set +f
	op=${1:-}
	case $op in
	RUN)
		id=$2 port=$3 tmo=$4
		cmd=${line#RUN "$id" "$port" "$tmo" }
		rm -f "/tmp/job.$id.pid" "/tmp/job.$id.killed"
		job "$id" "$tmo" "$cmd" &
		echo "AGENT-STARTED $id"
		if [ "$port" != - ]; then
			i=0
			while [ $i -lt 600 ]; do
				listening "$port" && break
				# the job's pid file vanishes never; its output ends it
				if [ -e "/tmp/job.$id.pid" ] &&
				   ! kill -0 "$(cat "/tmp/job.$id.pid")" 2>/dev/null; then
					break
				fi
				sleep 0.1
				i=$((i + 1))
			done
			if listening "$port"; then
				echo "AGENT-LISTENING $id $port"
			else
				echo "AGENT-NOLISTEN $id"
			fi
		fi
		;;
	KILL)
		id=$2 sig=$3
		if [ -e "/tmp/job.$id.pid" ]; then
			: >"/tmp/job.$id.killed"
			# busybox timeout execs the command in its own PID (the
			# pid file) and watches it from a child: kill them all
			kill_tree "$sig" "$(cat "/tmp/job.$id.pid")"
		fi
		echo "AGENT-KILLED $id"
		;;
	HOLD)
		id=$2 port=$3
		if err=$(hold "$port" 2>&1); then
			echo "$port" >"/tmp/job.$id.hold"
			echo "AGENT-HOLD $id $port"
		else
			echo "AGENT-NOHOLD $id $(echo "$err" | tr '\n' ' ')"
		fi
		;;
	QUIT)
		break
		;;
	"")
		;;
	*)
		echo "AGENT-ERROR unknown command: $op"
		;;
	esac
done
wait
exit 0
