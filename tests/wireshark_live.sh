#!/usr/bin/env bash
# tests/wireshark_live.sh: capture REAL loopback runs of iwarp_ping -V and
# iwarp_bw (write / read / send) with dumpcap and check them with Wireshark's
# iwarp_mpa / iwarp_ddp_rdmap dissectors (tshark -V) and with iwarp_decode:
#  - every FPDU decodes, every CRC is "Good CRC32" (count = FPDUs), no
#    "Bad CRC32", nothing malformed, and the only IWARP/DDP/RDMA expert
#    items are Wireshark 4.0's two warnings about MPA rev 2 Requests;
#  - every TCP segment with payload is an MPA Request/Reply, carries
#    FPDUs, or is part of a PDU that tshark reassembled in another frame;
#  - the opcodes, in stream order (opcode and DDP L bit of every FPDU),
#    are the ones iwarp_decode sees, and the messages (FPDUs with L=1)
#    per opcode and direction are exactly what the run must put on the
#    wire (derivations next to each case below);
#  - markers are negotiated (M=1 in Request and Reply) and tshark shows
#    exactly iwarp_decode's number of markers when markers are on, and
#    none otherwise;
#  - iwarp_decode calls the capture valid.
#
# Wireshark 4.0 and markers (docs/interop-notes.md §2.1, §11): its MPA
# dissector assumes markers in BOTH directions as soon as either side asked for
# them (so marker cases turn them on at both ends), and it assumes exactly
# one FPDU per TCP segment, starting at the segment start: it derives the
# ULPDU_Length it expects from the segment length. A bulk run on loopback
# (64 KiB MSS, many FPDUs per send) breaks that assumption through no fault
# of ours: tshark then silently leaves those segments undecoded (no error,
# no CRC line). So, per connection with markers:
#  - if every FPDU sits alone in its TCP segment (iwarp_decode tells where
#    each FPDU starts; tshark gives each segment's sequence number and
#    length), all the strict checks apply, markers included;
#  - otherwise tshark can only be held to: no Bad CRC32 where an FPDU is
#    alone in its segment and no shared segment came before it in its
#    direction (in shared segments it may misframe and print a Bad CRC32
#    for bytes that are no FPDU, and it stays out of step for the rest of
#    that direction: seen when the RTR Write and the first Send shared a
#    segment), nothing malformed,
#    no unexpected expert item, M=1 both ways, and no more FPDUs than
#    iwarp_decode found; iwarp_decode does the full validation (CRC,
#    every marker, DDP/RDMAP) and its message counts must be exact.
# The iwarp_bw marker case is run twice: in bulk (the partial case above),
# and with one small Write outstanding at a time (-s 1024 -t 1) so that
# each FPDU is a segment of its own and tshark must decode all of it.
#
# Skips (exit 77) only when a capture is impossible: no tshark or dumpcap,
# or no permission to capture on lo. On failure the capture and the logs
# are kept in $top_builddir/wireshark-live/<case>.*.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"   # dumpcap_knock

builddir=${top_builddir:-.}
TSHARK=${TSHARK:-$(command -v tshark || true)}
DUMPCAP=${DUMPCAP:-$(command -v dumpcap || true)}
PING=$builddir/tools/iwarp_ping
BW=$builddir/tools/iwarp_bw
DECODE=$builddir/tools/iwarp_decode
# See tests/tshark_roundtrip.sh: Wireshark's RPC-over-RDMA heuristic claims
# short Send payloads that are not RPC and flags them malformed itself.
# iwarp_mpa is a TCP heuristic dissector in Wireshark 4.0, and by default
# TCP hands a segment to the dissector registered for either port before
# any heuristic: a live run's ports are random (ours) or ephemeral (the
# kernel's), and when one is registered (44818 EtherNet/IP, 34980 EtherCAT,
# 48898 ADS, ...; `tshark -G decodes`) that dissector takes the whole
# connection and tshark sees no MPA at all. Try heuristics first (as
# tests/interop/verify-capture.sh does).
TSHARK_OPTS=(-n --disable-heuristic rpcrdma_iwarp -o tcp.try_heuristic_first:TRUE)
RUN_TIMEOUT=${WIRESHARK_LIVE_TIMEOUT:-60}
keepdir=$builddir/wireshark-live

if [ -z "$TSHARK" ] || [ -z "$DUMPCAP" ]; then
	echo "SKIP: tshark or dumpcap not installed"
	exit 77
fi
for t in "$PING" "$BW" "$DECODE"; do
	[ -x "$t" ] || { echo "FAIL: $t not built"; exit 1; }
done
# Opening lo needs root or the capture capabilities dumpcap may carry.
if ! timeout 20 "$DUMPCAP" -i lo -L >/dev/null 2>&1; then
	echo "SKIP: dumpcap cannot capture on lo (not root, no CAP_NET_RAW?)"
	exit 77
fi

work=$(mktemp -d)
dump_pid=
srv_pid=
cleanup() {
	# only the processes this script started, by pid
	if [ -n "$srv_pid" ]; then kill "$srv_pid" 2>/dev/null || true; fi
	if [ -n "$dump_pid" ]; then kill "$dump_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

failed_cases=()
case_failed=0
cfail() {
	echo "  FAIL: $*"
	case_failed=1
}

# A TCP port nobody listens on or uses (from /proc, no ss/netstat needed).
port_in_use() {
	local hex
	hex=$(printf ':%04X ' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '{print $2 " "}' |
		grep -q -- "$hex"
}
port_listening() {
	local hex
	hex=$(printf ':%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v h="$hex" 'substr($2, length($2) - 4) == h && $4 == "0A" { f = 1 } END { exit !f }'
}
# A free TCP port that a Wireshark 4.0 dissector claims by port number
# (see TSHARK_OPTS; without the heuristic-first option each of these
# leaves the whole connection undecoded as MPA: 44818 EtherNet/IP, 48898
# ADS, 57000 IRC, 34980 EtherCAT): the server port of the cases that set
# SERVER_PORT_KIND=registered, so that every run proves tshark still finds
# MPA there (kernel-chosen client ports land on such ports too, rarely).
registered_port() {
	local p
	for p in 44818 48898 57000 34980; do
		port_in_use "$p" || { echo "$p"; return 0; }
	done
	return 1
}
free_port() {
	local i p
	if [ "${1:-}" = registered ]; then
		registered_port
		return
	fi
	for i in $(seq 50); do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		port_in_use "$p" || { echo "$p"; return 0; }
	done
	return 1
}

# Polls "$@" every 50 ms for at most $1 seconds.
wait_for() {
	local secs=$1 i
	shift
	for i in $(seq $((secs * 20))); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

dumpcap_gone() {
	! kill -0 "$dump_pid" 2>/dev/null
}

capture_running() {
	grep -q 'Capturing on' "$1" 2>/dev/null && [ -s "$2" ]
}

stop_capture() {
	[ -n "$dump_pid" ] || return 0
	kill -INT "$dump_pid" 2>/dev/null || true
	if ! wait_for 10 dumpcap_gone; then
		kill -KILL "$dump_pid" 2>/dev/null || true
	fi
	wait "$dump_pid" 2>/dev/null || true
	dump_pid=
}

# run_capture NAME -- SERVER ARGS -- CLIENT ARGS: captures one run into
# $work/NAME.pcapng. The server/client arguments may use @PORT@.
run_capture() {
	local name=$1 port kport i rc
	shift 2
	local -a srv=() cli=()
	while [ "$1" != "--" ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	local -a srv0=("${srv[@]}") cli0=("${cli[@]}")
	local try
	# the server's port was free when chosen; should another program
	# take it before the server binds it, the server says so and the
	# capture starts again on another port
	for try in 1 2 3 4 5; do
		port=$(free_port "${SERVER_PORT_KIND:-}") || { cfail "no free TCP port"; return 1; }
		echo "  server port $port${SERVER_PORT_KIND:+ ($SERVER_PORT_KIND)}"
		srv=("${srv0[@]//@PORT@/$port}")
		cli=("${cli0[@]//@PORT@/$port}")
		cap=$work/$name.pcapng
		# a second, closed port in the filter to knock on (testlib.sh
		# dumpcap_knock; SYN, RST: iwarp_decode's "no_data")
		kport=$(free_port) || { cfail "no free TCP port"; return 1; }
		"$DUMPCAP" -i lo -f "tcp port $port or tcp port $kport" -w "$cap" >"$work/$name.dumpcap" 2>&1 &
		dump_pid=$!
		if ! wait_for 20 capture_running "$work/$name.dumpcap" "$cap"; then
			cfail "dumpcap did not start: $(cat "$work/$name.dumpcap")"
			stop_capture
			return 1
		fi
		dumpcap_knock "$work/$name.dumpcap" "$kport"
		timeout "$RUN_TIMEOUT" "${srv[@]}" >"$work/$name.server" 2>&1 &
		srv_pid=$!
		# the server itself listens (testlib.sh), not just anyone
		wait_listen "$port" "$srv_pid" && break
		kill "$srv_pid" 2>/dev/null || true
		wait "$srv_pid" 2>/dev/null || true
		srv_pid=
		stop_capture
		if [ "$try" -lt 5 ] && port_taken "$work/$name.server"; then
			echo "  port $port taken meanwhile, another one"
			continue
		fi
		cfail "server not listening on port $port: $(cat "$work/$name.server")"
		return 1
	done
	rc=0
	timeout "$RUN_TIMEOUT" "${cli[@]}" >"$work/$name.client" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || cfail "client exited with $rc: $(tail -5 "$work/$name.client")"
	rc=0
	wait "$srv_pid" || rc=$?
	srv_pid=
	[ "$rc" -eq 0 ] || cfail "server exited with $rc: $(tail -5 "$work/$name.server")"
	# a kernel without io_uring is a skip, not a failure: the tools say so
	if grep -qE 'io_uring (is )?unavailable' "$work/$name.server" "$work/$name.client"; then
		stop_capture
		echo "SKIP: io_uring unavailable: $(cat "$work/$name.client")"
		exit 77
	fi
	# Everything is on the wire once both have exited, but libpcap hands
	# packets to dumpcap a ring block at a time (a block is retired when
	# full or after the read timeout, 250 ms in dumpcap): wait until the
	# file stops growing for 1 s (at most 15 s), then stop. check_capture
	# verifies that the capture reaches every connection's FIN/RST.
	local size last=-1 still=0
	for i in $(seq 60); do
		size=$(stat -c %s "$cap" 2>/dev/null || echo 0)
		if [ "$size" = "$last" ]; then
			still=$((still + 1))
			[ "$still" -ge 4 ] && break
		else
			still=0
			last=$size
		fi
		sleep 0.25
	done
	stop_capture
	echo "  run + capture settle: $((i / 4)) s"
	[ -s "$cap" ] || { cfail "no capture written"; return 1; }
	return 0
}

# Wireshark 4.0 opcodes: 0 Write, 1 Read Request, 2 Read Response, 3 Send.
# check_capture NAME MARKERS NCONN EXPECT: EXPECT holds lines
# "CONN DIR OPCODE MESSAGES" (CONN = 1-based order of the MPA connections,
# DIR = A->B from the MPA initiator); unlisted opcodes must be absent.
check_capture() {
	local name=$1 markers=$2 nconn=$3 expect=$4
	local cap=$work/$name.pcapng v=$work/$name.v good bad malformed
	printf '%s\n' "$expect" >"$work/$name.expect"

	if ! timeout 120 "$TSHARK" "${TSHARK_OPTS[@]}" -r "$cap" -V >"$v" 2>"$work/$name.tshark.err"; then
		cfail "tshark -V failed: $(cat "$work/$name.tshark.err")"
		return
	fi
	good=$(grep -c 'Good CRC32' "$v" || true)
	bad=$(grep -c 'Bad CRC32' "$v" || true)
	malformed=$(grep -ci 'malformed' "$v" || true)
	# with markers, tshark may also misframe a segment that holds several
	# FPDUs and then print a Bad CRC32 for bytes that are no FPDU: the awk
	# pass below fails a Bad CRC32 only where an FPDU is alone in its
	# segment (the frames of the Bad CRC32 lines go to $name.badfr)
	awk '/^Frame [0-9]+:/ { f = $2; sub(/:/, "", f) } /Bad CRC32/ { print f }' "$v" >"$work/$name.badfr"
	[ "$bad" -eq 0 ] || [ "$markers" = 1 ] || cfail "$bad Bad CRC32"
	[ "$malformed" -eq 0 ] || cfail "$malformed malformed"

	timeout 120 "$TSHARK" "${TSHARK_OPTS[@]}" -r "$cap" -q -z expert >"$work/$name.expert" 2>&1 ||
		cfail "tshark -z expert failed"
	local unexpected
	unexpected=$(grep -E '^\s+[0-9]+\s+' "$work/$name.expert" | grep -E 'IWARP|DDP|RDMA' |
		grep -v -e 'Rev field is NOT set to one' -e 'Res field is NOT set to zero' || true)
	grep -q '^Errors' "$work/$name.expert" && unexpected="$unexpected (errors section)"
	[ -z "$unexpected" ] || cfail "unexpected expert items: $unexpected"

	if ! timeout 120 "$TSHARK" "${TSHARK_OPTS[@]}" -r "$cap" -T fields \
		-E separator=/t -E occurrence=a -E aggregator=, \
		-e frame.number -e tcp.stream -e tcp.srcport -e tcp.seq -e tcp.len \
		-e iwarp_mpa.ulpdulength -e iwarp_rdma.opcode -e iwarp_ddp.last_flag \
		-e iwarp_mpa.marker_fpduptr -e tcp.reassembled_in \
		-e iwarp_mpa.key.req -e iwarp_mpa.key.rep -e iwarp_mpa.marker_flag \
		-e iwarp_mpa.crc_flag >"$work/$name.fields" 2>"$work/$name.tshark.err"; then
		cfail "tshark -T fields failed: $(cat "$work/$name.tshark.err")"
		return
	fi

	# TCP retransmissions happen on loopback too (a window probe, a tail
	# loss probe): tshark does not hand their payload to MPA again
	if ! timeout 120 "$TSHARK" "${TSHARK_OPTS[@]}" -r "$cap" -T fields -e frame.number \
		-Y 'tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.spurious_retransmission' \
		>"$work/$name.retrans" 2>"$work/$name.tshark.err"; then
		cfail "tshark retransmission list failed: $(cat "$work/$name.tshark.err")"
		return
	fi

	local drc=0
	timeout 120 "$DECODE" --json "$cap" >"$work/$name.json" 2>"$work/$name.decode.err" || drc=$?
	if [ "$drc" -ne 0 ]; then
		timeout 120 "$DECODE" -q "$cap" >"$work/$name.decode.txt" 2>&1 || true
		cfail "iwarp_decode exit $drc: $(grep -v '^conn .* off ' "$work/$name.decode.txt" | tail -15)"
	fi

	# Everything else: one awk pass over the tshark fields, iwarp_decode's
	# JSON (one unit / connection object per line) and the expectation.
	if ! awk -v markers="$markers" -v nconn="$nconn" -v good="$good" -f - \
		"$work/$name.retrans" "$work/$name.fields" "$work/$name.json" \
		"$work/$name.expect" "$work/$name.badfr" <<'AWK'; then
function hexval(s,   c, v, i) {
	s = tolower(s); sub(/^0x/, "", s); v = 0
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
function jget(line, key,   re, m) {
	re = "\"" key "\":(\"[^\"]*\"|[^,}]*)"
	if (!match(line, re))
		return ""
	m = substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
	gsub(/"/, "", m)
	return m
}
function fail(msg) { print "  FAIL: " msg; bad = 1 }
BEGIN { FS = "\t" }
# file = position of the current file on the command line (an empty
# file has no FNR == 1)
FNR == 1 { for (i = 1; i < ARGC; i++) if (ARGV[i] == FILENAME) file = i }
file == 1 { retrans[$1] = 1; nre++; next }
file == 2 {
	fr = $1; st = $2; sport = $3
	seqof[fr] = $4; lenof[fr] = $5
	if ($11 != "") {               # MPA Request: a new MPA connection
		ord[st] = ++nts; aport[st] = sport; port_ord[sport] = nts
		reqm[nts] = $13; reqc[nts] = $14
		next
	}
	if ($12 != "") { repm[ord[st]] = $13; repc[ord[st]] = $14; next }
	if ($5 == 0)
		next
	if (!(st in ord)) { fail("frame " fr ": TCP data outside an MPA connection"); next }
	o = ord[st]; dir = sport == aport[st] ? "A->B" : "B->A"
	if ($6 == "") {
		if ($10 == "" && !($1 in retrans))
			undecoded[o]++     # data tshark did not take as MPA at all
		next
	}
	n = split($6, ul, ","); split($7, op, ","); split($8, lf, ",")
	for (i = 1; i <= n; i++) {
		k = o SUBSEP dir
		tsf[k]++; tsall++
		opn = hexval(op[i]); last = lf[i] == "1" || lf[i] == "True"
		tsseq[k] = tsseq[k] " " opn (last ? "L" : "")
		if (last)
			tsmsg[k SUBSEP opn]++
	}
	if ($9 != "")
		tsptr[o] += split($9, pp, ",")
	next
}
file == 3 && /"kind":"fpdu"/ {
	nu++
	uc[nu] = jget($0, "conn"); ud[nu] = jget($0, "dir")
	uoff[nu] = jget($0, "off"); ufr[nu] = jget($0, "frame")
	uul[nu] = jget($0, "ulpdu_length"); umk[nu] = jget($0, "markers")
	uop[nu] = jget($0, "opcode"); ulast[nu] = jget($0, "last") == "true"
	if (jget($0, "crc") != "ok")
		fail("iwarp_decode: FPDU at " ud[nu] " off " uoff[nu] " crc " jget($0, "crc"))
	next
}
file == 3 && /"kind":"iwarp"/ {
	c = jget($0, "conn"); a = jget($0, "a"); sub(/.*:/, "", a)
	dport[c] = a; ndc++
	if (jget($0, "state") !~ /(fin|reset|closed)/ && $0 !~ /"(fin|rst)":true/)
		fail("iwarp_decode conn " c ": capture does not reach the close")
	next
}
file == 5 { badfr[$1]++; next }
file == 4 && NF == 0 { next }
file == 4 {
	split($0, e, " ")
	exp_msg[e[1] SUBSEP e[2] SUBSEP e[3]] = e[4]
	next
}
END {
	if (nts != nconn)
		fail("tshark sees " nts + 0 " MPA connections, expected " nconn)
	if (ndc != nconn)
		fail("iwarp_decode sees " ndc + 0 " iWARP connections, expected " nconn)
	for (o = 1; o <= nts; o++) {
		if (reqm[o] != markers || repm[o] != markers)
			fail("conn " o ": marker flags Request " reqm[o] " Reply " repm[o] ", expected " markers)
		if (reqc[o] != 1 || repc[o] != 1)
			fail("conn " o ": CRC flags Request " reqc[o] " Reply " repc[o] ", expected 1")
	}
	# iwarp_decode's FPDUs, per connection (tshark numbering by A port)
	for (u = 1; u <= nu; u++) {
		if (!(dport[uc[u]] in port_ord)) {
			fail("iwarp_decode conn " uc[u] " unknown to tshark")
			continue
		}
		o = port_ord[dport[uc[u]]]; k = o SUBSEP ud[u]
		df[k]++; dall++; dmk[o] += umk[u]
		dseq[k] = dseq[k] " " uop[u] (ulast[u] ? "L" : "")
		if (ulast[u])
			dmsg[k SUBSEP uop[u]]++
		# alone in its segment: starts it (relative seq 1 = offset 0)
		# and fills it (length + ULPDU + pad + CRC + markers)
		w = 2 + uul[u] + (4 - (2 + uul[u]) % 4) % 4 + 4 + 4 * umk[u]
		if (seqof[ufr[u]] - 1 != uoff[u] || lenof[ufr[u]] != w) {
			shared[o]++
			if (!(k in firstsh) || ufr[u] + 0 < firstsh[k] + 0)
				firstsh[k] = ufr[u] + 0
		} else {
			alone[ufr[u]] = 1
			alonek[ufr[u]] = k
		}
	}
	# once tshark misframed a shared segment it stays out of step for
	# the rest of that direction: a later lone FPDU may show a Bad CRC32
	# for bytes it framed wrongly (iwarp_decode still checks every CRC)
	for (f in alone)
		if ((alonek[f] in firstsh) && f + 0 > firstsh[alonek[f]])
			delete alone[f]
	for (f in badfr) {
		if (!markers || (f in alone))
			fail("frame " f ": Bad CRC32 on an FPDU alone in its TCP segment")
		else
			misframed += badfr[f]
	}
	for (o = 1; o <= nts; o++) {
		strict = !markers || !shared[o]
		for (d = 0; d < 2; d++) {
			dir = d ? "B->A" : "A->B"; k = o SUBSEP dir
			for (q = 0; q < 16; q++) {
				want = (k SUBSEP q) in exp_msg ? exp_msg[k SUBSEP q] : 0
				if (dmsg[k SUBSEP q] + 0 != want)
					fail("conn " o " " dir " opcode " q ": iwarp_decode " dmsg[k SUBSEP q] + 0 " messages, expected " want)
				if (strict && tsmsg[k SUBSEP q] + 0 != want)
					fail("conn " o " " dir " opcode " q ": tshark " tsmsg[k SUBSEP q] + 0 " messages, expected " want)
				if (!strict && tsmsg[k SUBSEP q] + 0 > want)
					fail("conn " o " " dir " opcode " q ": tshark " tsmsg[k SUBSEP q] + 0 " messages, more than " want)
			}
			if (strict && tsseq[k] != dseq[k])
				fail("conn " o " " dir ": FPDU opcode sequence differs (tshark" tsseq[k] " | iwarp_decode" dseq[k] ")")
			if (!strict && tsf[k] + 0 > df[k] + 0)
				fail("conn " o " " dir ": tshark " tsf[k] + 0 " FPDUs > iwarp_decode " df[k] + 0)
			printf "  conn %d %s: %d FPDUs (tshark decoded %d)", o, dir, df[k], tsf[k]
			for (q = 0; q < 16; q++)
				if (dmsg[k SUBSEP q])
					printf ", op%d x%d", q, dmsg[k SUBSEP q]
			printf "\n"
		}
		if (strict && undecoded[o])
			fail("conn " o ": " undecoded[o] " data frames tshark did not decode as MPA")
		if (markers && strict && (tsptr[o] + 0 != dmk[o] || !dmk[o]))
			fail("conn " o ": tshark shows " tsptr[o] + 0 " markers, iwarp_decode " dmk[o] + 0)
		if (!markers && (tsptr[o] || dmk[o]))
			fail("conn " o ": markers found (tshark " tsptr[o] + 0 ", iwarp_decode " dmk[o] + 0 ") but none negotiated")
		if (markers && !strict)
			printf "  conn %d: %d of its FPDUs share a TCP segment: Wireshark 4.0 cannot place markers there (%d data frames undecoded); iwarp_decode validated all %d markers\n", o, shared[o], undecoded[o], dmk[o]
		if (markers && strict)
			printf "  conn %d: markers: tshark %d, iwarp_decode %d\n", o, tsptr[o], dmk[o]
	}
	if (good + misframed != tsall)
		fail("tshark: " good " Good CRC32 for " tsall + 0 " FPDUs decoded")
	if (misframed)
		printf "  tshark misframed segments holding several FPDUs: %d Bad CRC32 on bytes that are no FPDU (iwarp_decode checked every CRC)\n", misframed
	if (!markers && tsall != dall)
		fail("tshark decoded " tsall + 0 " FPDUs, iwarp_decode found " dall + 0)
	printf "  total: %d FPDUs (iwarp_decode), tshark decoded %d, Good CRC32 %d, TCP retransmissions %d\n", dall, tsall, good, nre
	exit bad
}
AWK
		case_failed=1
	fi
}

# run_case NAME MARKERS NCONN EXPECT -- SERVER... -- CLIENT...
run_case() {
	local name=$1 markers=$2 nconn=$3 expect=$4 t0 t1
	shift 4
	# WIRESHARK_LIVE_CASES='ping-*' runs a subset (shell glob)
	# shellcheck disable=SC2053
	[[ $name == ${WIRESHARK_LIVE_CASES:-*} ]] || return 0
	case_failed=0
	t0=$(date +%s.%N)
	echo "== $name"
	if run_capture "$name" "$@"; then
		check_capture "$name" "$markers" "$nconn" "$expect"
	fi
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "  runtime %.1f s\n", b - a }'
	if [ "$case_failed" -ne 0 ]; then
		mkdir -p "$keepdir"
		for f in "$work/$name".*; do
			[ -e "$f" ] && cp "$f" "$keepdir/"
		done
		echo "  FAILED: capture and logs kept in $keepdir/$name.*"
		failed_cases+=("$name")
	else
		echo "  ok"
	fi
}

# iwarp_ping -C N (tools/ping: client.c, server.c; rping's protocol): per
# ping the client Sends its start_buf advertisement, the server RDMA-Reads
# it (Read Request B->A, Read Response A->B), Sends "go ahead", the client
# Sends its rdma_buf advertisement, the server RDMA-Writes it and Sends
# "go ahead": A->B 2N Sends + N Read Responses, B->A 2N Sends + N Read
# Requests + N Writes. The client's disconnect sends no FPDU. With MPA
# rev 2 (|rtr| 1, the default) the client's first FPDU is the RFC 6581
# zero-length Write RTR the default P2P offer ends up with (RFC 6581 §7).
ping_expect() {
	local n=$1 rtr=${2:-1}
	printf '1 A->B 3 %d\n1 A->B 2 %d\n1 B->A 3 %d\n1 B->A 1 %d\n1 B->A 0 %d\n' \
		$((2 * n)) "$n" $((2 * n)) "$n" "$n"
	[ "$rtr" = 1 ] && printf '1 A->B 0 1\n'
	return 0
}

# iwarp_bw (tools/bw; perftest's rdma_cm mode, one QP, no -a/-b/-D): MPA
# connection 1 is the control QP, 2 the data QP (a refused early data
# connect, retried as perftest does, carries no MPA and is ignored). Each
# control exchange (bw_comm_xchg) is one Send each way, client first:
#   bw_comm_preamble: version, cycle buffer, cache line, MTU        4
#   bw_data_connect: handshake before and after the data connect     2
#   pre_handshakes: write/read: per QP, per QP (remote), one      3
#                   send: per QP, one, per QP (remote)              3
#   run_rdma_bw (client, not duplex): handshake, 5 report
#               exchanges (size, iters, peak, avg, msg rate), close  7
#   run_send_bw: one handshake per size, one to close               2
# => 16 Sends each way for write and read, 11 for send.
# Data QP: write: n Writes A->B; read: n Read Requests A->B and n Read
# Responses B->A; send: n Sends A->B, and B->A the receiver's credit
# Writes (reap_recvs): one each time rcnt in 1..n has
# (rcnt % rx_depth) % max(rx_depth / 3, 1) == 0.
# Each connection (MPA rev 2, default P2P offer) starts A->B with a
# zero-length Write RTR (RFC 6581 §7), counted with opcode 0.
bw_expect() {
	local test=$1 n=$2 rx=${3:-0} ctl=16 r c=0 cc
	[ "$test" = send ] && ctl=11
	printf '1 A->B 3 %d\n1 B->A 3 %d\n1 A->B 0 1\n' "$ctl" "$ctl"
	case $test in
	write) printf '2 A->B 0 %d\n' $((n + 1)) ;;
	read) printf '2 A->B 1 %d\n2 B->A 2 %d\n2 A->B 0 1\n' "$n" "$n" ;;
	send)
		cc=$((rx / 3)); [ "$cc" -gt 0 ] || cc=1
		for r in $(seq "$n"); do
			[ $(((r % rx) % cc)) -eq 0 ] && c=$((c + 1))
		done
		printf '2 A->B 3 %d\n2 A->B 0 1\n' "$n"
		[ "$c" -gt 0 ] && printf '2 B->A 0 %d\n' "$c"
		;;
	esac
	return 0
}

A=127.0.0.1
N=10
SERVER_PORT_KIND=registered run_case ping-crc 0 1 "$(ping_expect $N)" -- \
	"$PING" -s -a $A -p @PORT@ -C $N --crc -- \
	"$PING" -c -a $A -p @PORT@ -C $N -S 1000 -V --crc
# markers at both ends: Wireshark 4.0 assumes them both ways (see top)
run_case ping-crc-markers 1 1 "$(ping_expect $N)" -- \
	"$PING" -s -a $A -p @PORT@ -C $N --crc --markers -- \
	"$PING" -c -a $A -p @PORT@ -C $N -S 2000 -V --crc --markers
run_case ping-rev1 0 1 "$(ping_expect $N 0)" -- \
	"$PING" -s -a $A -p @PORT@ -C $N --crc --mpa-rev 1 -- \
	"$PING" -c -a $A -p @PORT@ -C $N -S 1000 -V --crc --mpa-rev 1

n=50
for t in write read; do
	run_case bw-$t 0 2 "$(bw_expect $t $n)" -- \
		"$BW" --test $t -p @PORT@ -s 4096 -n $n --crc -- \
		"$BW" --test $t -p @PORT@ -s 4096 -n $n --crc $A
done
# rx depth 30: credit Writes every 10 receives (send_bw's credit scheme)
run_case bw-send 0 2 "$(bw_expect send $n 30)" -- \
	"$BW" --test send -p @PORT@ -s 4096 -n $n -r 30 --crc -- \
	"$BW" --test send -p @PORT@ -s 4096 -n $n -r 30 --crc $A
# bulk: many FPDUs per TCP segment, tshark decodes only part of it
run_case bw-write-markers 1 2 "$(bw_expect write $n)" -- \
	"$BW" --test write -p @PORT@ -s 4096 -n $n --crc --markers -- \
	"$BW" --test write -p @PORT@ -s 4096 -n $n --crc --markers $A
# one 1 KiB Write in flight: one FPDU per segment, tshark decodes it all
run_case bw-write-markers-seg 1 2 "$(bw_expect write $n)" -- \
	"$BW" --test write -p @PORT@ -s 1024 -n $n -t 1 --crc --markers -- \
	"$BW" --test write -p @PORT@ -s 1024 -n $n -t 1 --crc --markers $A

if [ ${#failed_cases[@]} -ne 0 ]; then
	echo "FAIL: ${failed_cases[*]}"
	exit 1
fi
echo "PASS"
