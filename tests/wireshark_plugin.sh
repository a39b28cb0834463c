#!/usr/bin/env bash
# tests/wireshark_plugin.sh: our Lua dissector (wireshark/iwarp.lua) decodes
# the project's own captures with tshark:
#  - synth_capture's three connections (rev 1 markers, rev 2 CRC on/off):
#    exactly the opcodes and ULPDU lengths we sent, every CRC good;
#  - ws_plugin_capture's: FPDUs coalesced in a segment and split across
#    segments with markers on, MPA rev 2 with the RFC 6581 P2P bits,
#    RFC 7306 Immediate Data and Atomic Request/Response;
#  - the checked-in captures of tests/data (real loopback runs);
# in every case no frame is malformed and no error/warning expert item
# comes from the plugin, and Wireshark's own iwarp_mpa never decodes a
# frame the plugin owns (no double decoding);
#  - a capture with a corrupted CRC gets the plugin's CRC error, one with a
#    wrong marker FPDUPTR a marker error.
# Skips (77) when tshark is not installed.
set -euo pipefail
TSHARK=${TSHARK:-$(command -v tshark || true)}
if [ -z "$TSHARK" ]; then echo "SKIP: tshark not installed"; exit 77; fi
builddir=${top_builddir:-.}
srcdir=${top_srcdir:-.}
LUA=$srcdir/wireshark/iwarp.lua
# RPC-over-RDMA guesses at Send payloads of Wireshark's own iWARP dissector;
# keep it out (see tests/tshark_roundtrip.sh). Heuristics first, so that a
# random port registered to some other protocol does not take the stream.
TS=("$TSHARK" -n -X "lua_script:$LUA" -o tcp.try_heuristic_first:TRUE
	--disable-heuristic rpcrdma_iwarp)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# tshark with the plugin; its "running as root" chatter dropped
ts() { "${TS[@]}" "$@" 2> >(grep -v "^Running as user" >&2); }

# clean CAP: fields decode, nothing malformed, no plugin error or warning,
# no frame decoded by both our plugin and Wireshark's iwarp_mpa
clean() {
	local cap=$1 name=$2
	timeout 300 "${TS[@]}" -r "$cap" -V >"$work/$name.v" 2>"$work/$name.err" ||
		fail "$name: tshark failed: $(cat "$work/$name.err")"
	grep -q -i 'lua error\|Lua: Error' "$work/$name.v" "$work/$name.err" &&
		{ grep -i -m5 'lua' "$work/$name.v" "$work/$name.err"; fail "$name: Lua error"; }
	grep -q -i 'malformed' "$work/$name.v" && fail "$name: malformed frames"
	timeout 300 "${TS[@]}" -r "$cap" -q -z expert,warn >"$work/$name.x" 2>&1 || true
	if grep -E '^\s+[0-9]+\s+libiwarp' "$work/$name.x"; then
		fail "$name: plugin warnings/errors"
	fi
	local both
	both=$(ts -r "$cap" -Y 'libiwarp && iwarp_mpa' | wc -l)
	[ "$both" -eq 0 ] || fail "$name: $both frames decoded twice"
}

# 1. synth_capture: the same expectations as tests/tshark_roundtrip.sh
"$builddir/tests/synth_capture" "$work/synth.pcap" "$work/expect.txt"
clean "$work/synth.pcap" synth
ts -r "$work/synth.pcap" -Y libiwarp.mpa.ulpdu_length -T fields -E separator=' ' \
	-E occurrence=a -E aggregator=' ' \
	-e tcp.stream -e tcp.srcport -e libiwarp.rdmap.opcode -e libiwarp.mpa.ulpdu_length \
	>"$work/f.txt"
# one line per frame with N opcodes and N lengths -> N lines
awk '{n=(NF-2)/2; for(i=1;i<=n;i++) printf "%d %d %d %d\n", $1+1, ($2==7174), $(2+i), $(2+n+i)}' \
	"$work/f.txt" >"$work/got.txt"
diff -u "$work/expect.txt" "$work/got.txt" || fail "synth: opcodes/lengths differ"
ncrc=$(awk '$1 != 3' "$work/expect.txt" | wc -l)
good=$(ts -r "$work/synth.pcap" -T fields -E occurrence=a -E aggregator=' ' \
	-e libiwarp.mpa.crc.good | tr ' ' '\n' | grep -c -x -i 'true\|1' || true)
echo "synth: $(wc -l <"$work/expect.txt") FPDUs, $good good CRCs (want $ncrc)"
[ "$good" -eq "$ncrc" ] || fail "synth: CRC count"
mk=$(ts -r "$work/synth.pcap" -Y 'tcp.stream == 0 && libiwarp.mpa.marker' | wc -l)
mk23=$(ts -r "$work/synth.pcap" -Y 'tcp.stream != 0 && libiwarp.mpa.marker' | wc -l)
[ "$mk" -gt 0 ] && [ "$mk23" -eq 0 ] || fail "synth: markers in $mk / $mk23 frames"
ird=$(ts -r "$work/synth.pcap" -Y 'tcp.stream == 1 && libiwarp.mpa.rr == 1' \
	-T fields -e libiwarp.mpa.rev -e libiwarp.mpa.ird -e libiwarp.mpa.ord)
[ "$ird" = "$(printf '2\t1\t1')" ] || fail "synth: rev 2 request decoded as '$ird'"

# 2. ws_plugin_capture good: markers with coalesced/split FPDUs, P2P, RFC 7306
"$builddir/tests/ws_plugin_capture" good "$work/good.pcap"
clean "$work/good.pcap" good
ts -r "$work/good.pcap" -T fields -E occurrence=a -E aggregator=' ' \
	-e tcp.stream -e tcp.srcport -e libiwarp.rdmap.opcode >"$work/ops.txt"
ops() { awk -v s="$1" -v p="$2" '$1==s && $2==p {for(i=3;i<=NF;i++) printf "%s ", $i}' "$work/ops.txt"; }
# initiator, conn 1: Send, Send SE, Write x3, Send Inv, Read Request, 6 Sends
want1="3 5 0 0 0 4 1 3 3 3 3 3 3 "
[ "$(ops 0 40101)" = "$want1" ] || fail "conn 1 initiator opcodes '$(ops 0 40101)'"
# responder: Read Response x2, Send, 6 Sends, Terminate
want1r="2 2 3 3 3 3 3 3 3 7 "
[ "$(ops 0 7174)" = "$want1r" ] || fail "conn 1 responder opcodes '$(ops 0 7174)'"
want2="1 8 9 10 10 "
[ "$(ops 1 40102)" = "$want2" ] || fail "conn 2 initiator opcodes '$(ops 1 40102)'"
[ "$(ops 1 7174)" = "2 11 11 " ] || fail "conn 2 responder opcodes '$(ops 1 7174)'"
# coalesced: some frame carries several FPDUs; split: some FPDU reassembled
multi=$(awk '$1==0 && NF>3' "$work/ops.txt" | wc -l)
reasm=$(ts -r "$work/good.pcap" -Y 'tcp.stream == 0 && libiwarp && tcp.reassembled.length' | wc -l)
nmk=$(ts -r "$work/good.pcap" -T fields -E occurrence=a -E aggregator=' ' \
	-e libiwarp.mpa.marker.fpduptr | tr ' ' '\n' | grep -c . || true)
echo "good: $multi frames with several FPDUs, $reasm reassembled, $nmk markers"
[ "$multi" -gt 0 ] || fail "no coalesced FPDUs decoded"
[ "$reasm" -gt 0 ] || fail "no FPDU reassembled across segments"
# initiator stream of conn 1: 16 + 1 + 3000 + 513 + 28 + 6 Sends of payload
# with headers... every 512th octet is a marker: at least 8 of them
[ "$nmk" -ge 8 ] || fail "only $nmk markers decoded"
good2=$(ts -r "$work/good.pcap" -T fields -E occurrence=a -E aggregator=' ' \
	-e libiwarp.mpa.crc.good | tr ' ' '\n' | grep -c -x -i 'true\|1' || true)
[ "$good2" -eq 31 ] || fail "good: $good2 good CRCs, want 31 (23 + 8 FPDUs)"
# RFC 6581: Request A, C, D, IRD 16, ORD 8; Reply A, D, IRD 8, ORD 16
rr=$(ts -r "$work/good.pcap" -Y 'tcp.stream == 1 && libiwarp.mpa.rr' -T fields \
	-E separator=, -e libiwarp.mpa.rr -e libiwarp.mpa.p2p -e libiwarp.mpa.rtr.send \
	-e libiwarp.mpa.rtr.write -e libiwarp.mpa.rtr.read -e libiwarp.mpa.ird -e libiwarp.mpa.ord |
	sed 's/True/1/g; s/False/0/g')
want_rr=$(printf '1,1,0,1,1,16,8\n2,1,0,0,1,8,16')
[ "$rr" = "$want_rr" ] || fail "P2P fields: got '$rr'"
imm=$(ts -r "$work/good.pcap" -T fields -E occurrence=a -E aggregator=' ' \
	-e libiwarp.rdmap.immediate | grep .)
[ "$imm" = "0x1122334455667788 0x00000000cafef00d" ] || fail "immediate data '$imm'"
at=$(ts -r "$work/good.pcap" -Y libiwarp.rdmap.atomic.req_id -T fields -E occurrence=a \
	-E aggregator=' ' -e libiwarp.rdmap.atomic.opcode -e libiwarp.rdmap.atomic.req_id \
	-e libiwarp.rdmap.atomic.stag -e libiwarp.ddp.qn -e libiwarp.ddp.msn)
echo "atomic request frame: $at"
echo "$at" | grep -q '^0 2	0x00000077 0x00000078	0x00006601 0x00006601	0 0 3 3	1 2 1 2$' ||
	fail "atomic requests decoded as '$at'"
ar=$(ts -r "$work/good.pcap" -Y libiwarp.rdmap.atomic.orig_req_id -T fields -E occurrence=a \
	-E aggregator=' ' -e libiwarp.rdmap.atomic.orig_req_id -e libiwarp.rdmap.atomic.orig_value \
	-e libiwarp.ddp.qn)
[ "$ar" = "$(printf '0x00000077 0x00000078\t0x0000000000000000 0x0000000000000005\t4 4')" ] ||
	fail "atomic responses decoded as '$ar'"
term=$(ts -r "$work/good.pcap" -Y libiwarp.rdmap.term.layer -T fields \
	-e libiwarp.rdmap.term.layer -e libiwarp.rdmap.term.etype -e libiwarp.rdmap.term.ecode)
[ "$term" = "$(printf '2\t0\t0x01')" ] || fail "terminate decoded as '$term'"

# 3. the checked-in captures of real runs. mpa-*: 25 MPA probes against
# siw (tests/decode_evidence.sh), some invalid on purpose: exactly these
# plugin errors and warnings, each once per probe that earns it.
want_x=$(cat <<'X'
Checksum LIBIWARP CRC 0xb01b51ed, computed 0xb11b51ed 1
Malformed LIBIWARP enhanced mode without IRD/ORD (RFC 6581 §9.1) 2
Malformed LIBIWARP unknown MPA revision 3 1
Protocol LIBIWARP CRC field not zero although CRC is off (RFC 5044 §4.1) 3
Protocol LIBIWARP MPA Res bits not zero 2
Protocol LIBIWARP Terminate control word in siw's nibble-swapped layout (RFC 5040 §4.8 differs) 1
X
)
for cap in "$srcdir"/tests/data/mpa-*.pcap*; do
	name=$(basename "$cap")
	ts -r "$cap" -q -z expert,warn 2>/dev/null |
		awk '$3 == "LIBIWARP" {n=$1; $1=""; sub(/^ +/, ""); print $0, n}' |
		sort >"$work/$name.x"
	diff -u <(echo "$want_x") "$work/$name.x" || fail "$name: expert items differ"
	# probe 24: siw answers a bad CRC with its nibble-swapped Terminate
	term=$(ts -r "$cap" -Y libiwarp.rdmap.term.layer -T fields -e libiwarp.rdmap.term.layer \
		-e libiwarp.rdmap.term.etype -e libiwarp.rdmap.term.ecode)
	[ "$term" = "$(printf '2\t0\t0x02')" ] || fail "$name: siw Terminate decoded as '$term'"
	n=$(ts -r "$cap" -Y 'libiwarp.mpa.rr' 2>/dev/null | wc -l)
	echo "$name: $n MPA Requests/Replies"
	[ "$n" -ge 40 ] || fail "$name: only $n MPA frames decoded"
done
for cap in "$srcdir"/tests/data/*.pcap*; do
	name=$(basename "$cap")
	case $name in mpa-*) continue ;; esac
	clean "$cap" "$name"
	n=$(ts -r "$cap" -Y libiwarp.rdmap.opcode | wc -l)
	echo "$name: $n frames with RDMAP"
	case $name in decode-*) ;; *) [ "$n" -gt 0 ] || fail "$name: nothing decoded" ;; esac
done

# 4. a corrupted CRC is an expert error
"$builddir/tests/ws_plugin_capture" badcrc "$work/bad.pcap"
ts -r "$work/bad.pcap" -q -z expert,error >"$work/bad.x" 2>&1
grep -q 'Checksum *LIBIWARP *CRC 0x' "$work/bad.x" || { cat "$work/bad.x"; fail "no CRC error reported"; }
bad=$(ts -r "$work/bad.pcap" -Y 'libiwarp.mpa.crc.good == 0' | wc -l)
[ "$bad" -eq 1 ] || fail "$bad frames with a bad CRC, want 1"
# 5. a wrong FPDUPTR (CRC still good) is a marker error, in each direction
"$builddir/tests/ws_plugin_capture" badmarker "$work/mk.pcap"
ts -r "$work/mk.pcap" -q -z expert,warn >"$work/mk.x"
nbad=$(grep -c 'Malformed *LIBIWARP *FPDUPTR' "$work/mk.x" || true)
grep -q 'Checksum *LIBIWARP' "$work/mk.x" && fail "bad marker capture: CRC errors"
[ "$nbad" -eq 2 ] || { cat "$work/mk.x"; fail "$nbad marker errors, want 2"; }
fr=$(ts -r "$work/mk.pcap" -Y libiwarp.expert.bad_marker | wc -l)
[ "$fr" -eq 2 ] || fail "$fr frames match libiwarp.expert.bad_marker, want 2"

# iwarp_decode agrees: the byte-level captures are valid iWARP (RFC 7306
# included), and the corrupted CRC is an error
if [ -x "$builddir/tools/iwarp_decode" ]; then
	"$builddir/tools/iwarp_decode" -q "$work/good.pcap" >"$work/dec.txt" 2>&1 ||
		{ cat "$work/dec.txt"; fail "iwarp_decode rejects good.pcap"; }
	grep -q 'Atomic Request 2 (104 B)' "$work/dec.txt" || { cat "$work/dec.txt"; fail "iwarp_decode counts"; }
	if "$builddir/tools/iwarp_decode" -q "$work/bad.pcap" >"$work/decb.txt" 2>&1; then
		fail "iwarp_decode accepts bad.pcap"
	fi
	grep -q 'error \[crc\]' "$work/decb.txt" || { cat "$work/decb.txt"; fail "iwarp_decode: no CRC error"; }
	echo "iwarp_decode: good.pcap valid, bad.pcap CRC error"
fi
echo "PASS"
