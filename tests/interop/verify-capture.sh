#!/usr/bin/env bash
# tests/interop/verify-capture.sh - check one capture of an interop case.
#
#   verify-capture.sh CAPTURE CRC [EXTRA_EXPERT_REGEX] [DECODE]
#
# tshark checks run on CAPTURE.aligned.pcap, a copy whose TCP segments
# realign-pcap.py re-cut at MPA frame boundaries (same octets, same
# sequence numbers): Wireshark 4.0's iwarp_mpa loses FPDU sync where a
# segment ends fewer than 8 octets into an FPDU that ends in the next one,
# and slirp / the host TCP cut segments anywhere (realign-pcap.py explains).
# INTEROP_TSHARK_ORIGINAL=1 records tshark's figures for the original too.
# CRC: on  = every FPDU shows "Good CRC32" in tshark -V,
#      off = no FPDU carries a CRC check and every CRC field is 0,
#      any = no constraint besides "no Bad CRC32".
# Always: zero "Bad CRC32", nothing malformed, iWARP expert items only
# Wireshark 4.0's two known warnings about MPA rev 2 frames ("Rev field is
# NOT set to one", "Res field is NOT set to zero") plus EXTRA_EXPERT_REGEX
# (e.g. "Reject bit set by Responder"), at least one MPA frame decoded.
# DECODE: valid (default) = iwarp_decode must call the original capture
# valid (exit 0); allow:TAGS = invalid only through errors whose [tag] is
# in the |-separated TAGS (e.g. allow:mpa-reject); any = its verdict is
# recorded only.
# Details go to CAPTURE.verify.txt; one summary line on stdout; exit 0 pass,
# 1 fail.
# Env: TSHARK (default tshark), IWARP_DECODE (path of tools/iwarp_decode).
set -uo pipefail
cap=$1 crc=$2 extra=${3:-} decode_mode=${4:-valid}
TSHARK=${TSHARK:-tshark}
DECODE=${IWARP_DECODE:-}
# RPC-over-RDMA's heuristic misreads short Send payloads as RPC and reports
# malformed packets inside its own dissector (see tests/tshark_roundtrip.sh);
# iwarp_mpa is a TCP heuristic in Wireshark 4.0: try it first.
TOPTS=(-n --disable-heuristic rpcrdma_iwarp -o tcp.try_heuristic_first:TRUE)
det=$cap.verify.txt
fail=()

if [ ! -s "$cap" ]; then
	echo "missing or empty capture"
	echo "missing or empty capture: $cap" >"$det"
	exit 1
fi
{
	echo "== $cap (crc=$crc extra='$extra' decode=$decode_mode)"
} >"$det"

# the copy for tshark (classic pcap: editcap converts dumpcap's pcapng)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
aligned=$cap.aligned.pcap
src=$cap
if [ "$(head -c 4 "$cap" | od -An -tx1 | tr -d ' ')" = 0a0d0d0a ]; then
	src=$cap.classic.pcap
	editcap -F pcap "$cap" "$src" >>"$det" 2>&1 || fail+=("editcap failed")
fi
if ! python3 "$HERE/realign-pcap.py" "$src" "$aligned" >>"$det" 2>&1; then
	fail+=("realign-pcap failed")
	aligned=$cap
fi
[ "$src" = "$cap" ] || rm -f "$src"

# tshark_counts FILE: one tshark -V pass, counted as it streams (bulk
# captures are large): fpdus good bad malformed mpa_frames nonzero_crc
tshark_counts() {
	"$TSHARK" "${TOPTS[@]}" -r "$1" -V 2>>"$det" | awk '
		/^ +ULPDU length: /            { f++ }
		/\(Good CRC32\)/               { g++ }
		/Bad CRC32/                    { b++; if (nb++ < 5) print "BAD: " $0 > "/dev/stderr" }
		/[Mm]alformed/                 { m++; if (nm++ < 5) print "MALFORMED: " $0 > "/dev/stderr" }
		/(Request|Reply) frame header/ { r++ }
		/^ +CRC: 0x/ && $2 != "0x00000000" { z++ }
		END { printf "%d %d %d %d %d %d\n", f, g, b, m, r, z }' 2>>"$det"
}
obad=- omal=-
if [ "${INTEROP_TSHARK_ORIGINAL:-0}" = 1 ]; then
	read -r ofpdus _ obad omal _ _ < <(tshark_counts "$cap")
	echo "tshark -V, original segments: fpdus=$ofpdus bad_crc=$obad malformed=$omal (not judged)" >>"$det"
fi
read -r fpdus good bad malformed mpa crcnz < <(tshark_counts "$aligned")
echo "tshark -V, re-cut copy: fpdus=$fpdus good_crc=$good bad_crc=$bad malformed=$malformed mpa_frames=$mpa nonzero_crc_fields=$crcnz" >>"$det"
[ "$bad" -eq 0 ] || fail+=("$bad Bad CRC32")
[ "$malformed" -eq 0 ] || fail+=("$malformed malformed")
[ "$mpa" -gt 0 ] || fail+=("no MPA Request/Reply decoded")
case $crc in
on) [ "$good" -eq "$fpdus" ] || fail+=("CRC on but only $good of $fpdus FPDUs Good CRC32") ;;
off)
	[ "$good" -eq 0 ] || fail+=("CRC off but $good CRC checks")
	[ "$crcnz" -eq 0 ] || fail+=("CRC off but $crcnz non-zero CRC fields")
	;;
esac

# expert items of the iWARP dissectors
"$TSHARK" "${TOPTS[@]}" -r "$aligned" -q -z expert >"$cap.expert.txt" 2>&1
known='Rev field is NOT set to one|Res field is NOT set to zero'
[ -n "$extra" ] && known="$known|$extra"
unexpected=$(grep -E '^ +[0-9]+ ' "$cap.expert.txt" | grep -E 'IWARP|DDP|RDMA|MPA' |
	grep -vE "$known" || true)
if grep -q '^Errors' "$cap.expert.txt"; then
	unexpected="$unexpected $(sed -n '/^Errors/,/^$/p' "$cap.expert.txt" | grep -E '^ +[0-9]+ ')"
fi
{
	echo "expert items:"
	grep -E '^ +[0-9]+ ' "$cap.expert.txt" | grep -vE ' TCP +' || true
} >>"$det"
[ -z "${unexpected// /}" ] || fail+=("unexpected expert items: $(echo "$unexpected" | tr -s ' ' | head -c 300)")

# iwarp_decode
dverdict="-"
if [ -n "$DECODE" ]; then
	"$DECODE" -q "$cap" >"$cap.decode.txt" 2>&1
	drc=$?
	dverdict=$([ $drc = 0 ] && echo valid || echo "invalid(rc=$drc)")
	{ echo "iwarp_decode -q: exit $drc"; head -n 60 "$cap.decode.txt"; } >>"$det"
	case $decode_mode in
	valid)
		[ $drc = 0 ] ||
			fail+=("iwarp_decode: $(grep -m1 -E 'error \[' "$cap.decode.txt" | head -c 200)")
		;;
	allow:*)
		tags=${decode_mode#allow:}
		other=$(grep -E ': error \[' "$cap.decode.txt" | grep -vE "error \[($tags)\]" || true)
		[ $drc -le 1 ] && [ -z "$other" ] ||
			fail+=("iwarp_decode: $(echo "$other" | head -n1 | head -c 200)")
		[ $drc = 0 ] || dverdict="invalid-as-expected($tags)"
		;;
	esac
fi

sum="fpdus=$fpdus good_crc=$good bad_crc=$bad malformed=$malformed decode=$dverdict"
[ "$obad" = - ] || sum="$sum (original segments: bad_crc=$obad malformed=$omal)"
if [ ${#fail[@]} -eq 0 ]; then
	echo "ok $sum"
	echo "RESULT ok" >>"$det"
	exit 0
fi
echo "FAIL $sum: ${fail[*]}"
echo "RESULT FAIL: ${fail[*]}" >>"$det"
exit 1
