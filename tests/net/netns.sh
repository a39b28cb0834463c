# tests/net/netns.sh: a pair of network namespaces joined by a veth pair,
# for tests and benchmarks over a real (non-loopback) link. Source it from
# bash; needs root, iproute2 ("ip netns"), and nftables (nft) for the loss
# conditions.
#
#   netns_require              exit 77 (skip) when not root or no "ip netns"
#   netns_setup MTU            create $NS_A (server side) and $NS_B (client
#                              side), veth $NS_IF_A <-> $NS_IF_B, MTU 1500 or
#                              9000, addresses $NS_A4/$NS_B4 (IPv4) and
#                              $NS_A6/$NS_B6 (IPv6, no DAD); cleanup on exit
#                              (the trap then also evals $NETNS_EXIT_HOOK)
#   netns_loss PERMILLE [both|a|b]
#                              drop PERMILLE/1000 of the TCP segments at
#                              random (nftables numgen) on input of both
#                              namespaces (default) or of A (segments toward
#                              the server) or B (toward the client) only;
#                              GSO is limited to one segment per packet so
#                              the drops are per TCP segment
#   netns_rate RATE            tc tbf on both veth ends (e.g. 100mbit, 1gbit)
#   netns_clear                remove loss and rate conditions
#   netns_teardown             delete both namespaces now (also on exit)
#   netns_track PID            kill PID (and its children) at teardown
#   in_a CMD... / in_b CMD...  run CMD in namespace A / B
#
# Namespace names carry the PID of the shell that made them
# ("iwn-PID-RANDOM-a"), so parallel runs do not collide; a later run
# deletes namespaces left behind by a shell that no longer exists (a run
# killed by SIGKILL gets no trap).

NS_A="" NS_B="" NS_IF_A=iwa0 NS_IF_B=iwb0
NS_A4=10.77.0.1 NS_B4=10.77.0.2 NS_A6=fd00:77::1 NS_B6=fd00:77::2
NS_PIDS=""

netns_require() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: network namespaces need root"
		exit 77
	fi
	if ! command -v ip >/dev/null 2>&1 || ! ip netns list >/dev/null 2>&1; then
		echo "SKIP: ip netns unavailable"
		exit 77
	fi
}

in_a() { ip netns exec "$NS_A" "$@"; }
in_b() { ip netns exec "$NS_B" "$@"; }

netns_track() { NS_PIDS="$NS_PIDS $1"; }

# Deletes namespaces of earlier runs whose shell is gone.
netns_reap_stale() {
	local n pid
	for n in $(ip netns list 2>/dev/null | awk '{print $1}'); do
		case $n in
		iwn-*-*-[ab]) ;;
		*) continue ;;
		esac
		pid=${n#iwn-}
		pid=${pid%%-*}
		kill -0 "$pid" 2>/dev/null || ip netns del "$n" 2>/dev/null
	done
}

netns_teardown() {
	local p k
	for p in $NS_PIDS; do
		# children first (a tool under timeout(1)), by PID
		for k in $(pgrep -P "$p" 2>/dev/null); do kill -9 "$k" 2>/dev/null; done
		kill -9 "$p" 2>/dev/null
	done
	NS_PIDS=""
	# processes still inside (started by in_a/in_b and not tracked)
	for n in $NS_A $NS_B; do
		for p in $(ip netns pids "$n" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
		ip netns del "$n" 2>/dev/null
	done
	NS_A="" NS_B=""
}

netns_setup() {
	local mtu=${1:-1500} tag
	netns_teardown
	netns_reap_stale
	tag="iwn-$$-$RANDOM"
	NS_A="$tag-a" NS_B="$tag-b"
	trap 'netns_teardown; eval "${NETNS_EXIT_HOOK:-}"' EXIT
	trap 'netns_teardown; eval "${NETNS_EXIT_HOOK:-}"; exit 124' INT TERM HUP
	ip netns add "$NS_A" || return 1
	ip netns add "$NS_B" || return 1
	ip link add "$NS_IF_A" netns "$NS_A" type veth peer name "$NS_IF_B" netns "$NS_B" || return 1
	for side in a b; do
		if [ $side = a ]; then ns=$NS_A if=$NS_IF_A a4=$NS_A4 a6=$NS_A6
		else ns=$NS_B if=$NS_IF_B a4=$NS_B4 a6=$NS_B6; fi
		ip -n "$ns" link set lo up || return 1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0 >/dev/null 2>&1
		ip -n "$ns" link set "$if" mtu "$mtu" || return 1
		ip -n "$ns" addr add "$a4/24" dev "$if" || return 1
		ip -n "$ns" addr add "$a6/64" dev "$if" nodad || return 1
		ip -n "$ns" link set "$if" up || return 1
	done
	# both ends carry (operstate UP) and no address is tentative
	local i=0
	while [ $i -lt 100 ]; do
		if ip -n "$NS_A" -br link show "$NS_IF_A" | grep -qw UP &&
			ip -n "$NS_B" -br link show "$NS_IF_B" | grep -qw UP &&
			! ip -n "$NS_A" addr show tentative | grep -q inet &&
			! ip -n "$NS_B" addr show tentative | grep -q inet; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "netns: $NS_A <-> $NS_B link not up" >&2
	return 1
}

# netns_loss PERMILLE [both|a|b]: random loss of TCP segments on input.
netns_loss() {
	local pm=$1 where=${2:-both} ns
	command -v nft >/dev/null 2>&1 || { echo "netns: nft missing" >&2; return 1; }
	for ns in $NS_A $NS_B; do
		ip netns exec "$ns" nft delete table inet iwloss 2>/dev/null
	done
	[ "$pm" -gt 0 ] || return 0
	# one TCP segment per packet: veth hands whole GSO packets (up to 64
	# KiB, ~44 segments at MTU 1500) to the peer, so a drop would take a
	# burst of segments at once and the rate would be per GSO packet
	ip -n "$NS_A" link set dev "$NS_IF_A" gso_max_segs 1 || return 1
	ip -n "$NS_B" link set dev "$NS_IF_B" gso_max_segs 1 || return 1
	case $where in
	both) set -- "$NS_A" "$NS_B" ;;
	a) set -- "$NS_A" ;;
	b) set -- "$NS_B" ;;
	esac
	for ns in "$@"; do
		ip netns exec "$ns" nft -f - <<NFT || return 1
table inet iwloss {
	chain in {
		type filter hook input priority 0; policy accept;
		meta l4proto tcp numgen random mod 1000 < $pm counter drop
	}
}
NFT
	done
}

# netns_loss_count: drops so far (both namespaces), "a b".
netns_loss_count() {
	local ns out=""
	for ns in $NS_A $NS_B; do
		out="$out $(ip netns exec "$ns" nft list table inet iwloss 2>/dev/null |
			sed -n 's/.*counter packets \([0-9]*\).*/\1/p' | head -1)"
	done
	echo $out
}

# netns_rate RATE: token bucket on both veth ends. GSO packets larger than
# the burst are segmented by tbf, so the burst only bounds the queue.
netns_rate() {
	local rate=$1 burst
	case $rate in
	*gbit) burst=1mb ;;
	*) burst=256kb ;;
	esac
	ip -n "$NS_A" link set "$NS_IF_A" up
	tc -n "$NS_A" qdisc replace dev "$NS_IF_A" root tbf rate "$rate" burst "$burst" latency 50ms || return 1
	tc -n "$NS_B" qdisc replace dev "$NS_IF_B" root tbf rate "$rate" burst "$burst" latency 50ms || return 1
}

netns_clear() {
	netns_loss 0
	tc -n "$NS_A" qdisc del dev "$NS_IF_A" root 2>/dev/null
	tc -n "$NS_B" qdisc del dev "$NS_IF_B" root 2>/dev/null
	return 0
}
