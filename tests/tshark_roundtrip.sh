#!/usr/bin/env bash
# tests/tshark_roundtrip.sh: a capture built by our encoders (MPA rev 1 with
# markers and CRC; rev 2 without markers, CRC on and off) must decode
# cleanly in Wireshark's iwarp_mpa / iwarp_ddp_rdmap dissectors, with every
# CRC good, nothing malformed, markers found, and exactly the opcodes and
# ULPDU lengths we put on the wire; iwarp_decode must call it valid too.
set -euo pipefail
TSHARK=${TSHARK:-$(command -v tshark || true)}
if [ -z "$TSHARK" ]; then echo "SKIP: tshark not installed"; exit 77; fi
builddir=${top_builddir:-.}
# Wireshark's RPC-over-RDMA heuristic claims arbitrary short Send payloads
# (ours are not RPC) and then throws "Malformed Packet: RPCoRDMA" inside
# its own dissector; the iWARP dissectors are not involved. Turn off only
# that upper-layer guess so "malformed" counts iWARP problems.
TSHARK_OPTS=(-n --disable-heuristic rpcrdma_iwarp)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$builddir/tests/synth_capture" "$work/synth.pcap" "$work/expect.txt"
nfpdu=$(wc -l <"$work/expect.txt")
ncrc=$(awk '$1 != 3' "$work/expect.txt" | wc -l)
echo "capture: $nfpdu FPDUs ($ncrc with CRC)"

timeout 120 "$TSHARK" "${TSHARK_OPTS[@]}" -r "$work/synth.pcap" -V >"$work/v.txt" 2>"$work/v.err" || fail "tshark -V failed: $(cat "$work/v.err")"
good=$(grep -c 'Good CRC32' "$work/v.txt" || true)
bad=$(grep -c 'Bad CRC32' "$work/v.txt" || true)
malformed=$(grep -ci 'malformed' "$work/v.txt" || true)
echo "tshark: Good CRC32 $good, Bad CRC32 $bad, malformed $malformed"
[ "$bad" -eq 0 ] || fail "bad CRCs"
[ "$malformed" -eq 0 ] || fail "malformed packets"
[ "$good" -eq "$ncrc" ] || fail "expected $ncrc good CRCs, got $good"

# opcode and ULPDU length of every FPDU, in order, per connection
timeout 120 "$TSHARK" "${TSHARK_OPTS[@]}" -r "$work/synth.pcap" -Y iwarp_mpa.fpdu -T fields -E separator=' ' \
	-e tcp.stream -e tcp.srcport -e iwarp_rdma.opcode -e iwarp_mpa.ulpdulength >"$work/f.txt"
while read -r stream sport op ulen; do
	printf '%d %d %d %d\n' $((stream + 1)) $([ "$sport" = 7174 ] && echo 1 || echo 0) $((op)) "$ulen"
done <"$work/f.txt" >"$work/got.txt"
if ! diff -u "$work/expect.txt" "$work/got.txt"; then fail "opcodes/lengths differ from what we sent"; fi

# markers: conn 1 (tcp.stream 0) carries them, conns 2 and 3 do not
m1=$("$TSHARK" "${TSHARK_OPTS[@]}" -r "$work/synth.pcap" -Y 'tcp.stream == 0 && iwarp_mpa.marker_fpduptr' | wc -l)
m23=$("$TSHARK" "${TSHARK_OPTS[@]}" -r "$work/synth.pcap" -Y 'tcp.stream != 0 && iwarp_mpa.marker_fpduptr' | wc -l)
echo "frames with markers: conn 1: $m1, conns 2-3: $m23"
[ "$m1" -gt 0 ] || fail "no markers decoded in the rev 1 marker connection"
[ "$m23" -eq 0 ] || fail "markers decoded where none were negotiated"

# expert items: only Wireshark 4.0's two warnings about MPA rev 2 frames
"$TSHARK" "${TSHARK_OPTS[@]}" -r "$work/synth.pcap" -q -z expert >"$work/expert.txt" 2>&1
unexpected=$(grep -E '^\s+[0-9]+\s+' "$work/expert.txt" | grep -E 'IWARP|DDP|RDMA' |
	grep -v -e 'Rev field is NOT set to one' -e 'Res field is NOT set to zero' || true)
grep -q '^Errors' "$work/expert.txt" && unexpected="$unexpected errors section"
if [ -n "$unexpected" ]; then cat "$work/expert.txt"; fail "unexpected expert items"; fi

if [ -x "$builddir/tools/iwarp_decode" ]; then
	"$builddir/tools/iwarp_decode" -q "$work/synth.pcap" >"$work/decode.txt" 2>&1 ||
		{ cat "$work/decode.txt"; fail "iwarp_decode rejects our capture"; }
	echo "iwarp_decode: valid"
fi
echo "PASS"
