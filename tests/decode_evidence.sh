#!/bin/sh
# tests/decode_evidence.sh: iwarp_decode against the real siw captures in
# tests/data (what they show: docs/interop-notes.md §10):
#   mpa-lo.pcapng / mpa-guest.pcap  25 MPA probes of the host against siw
#                                   (loopback side / guest NIC side)
#   client-lo.pcapng / client-guest.pcap  rping client on siw -> host probe
#   decode-*.pcap                   client-guest.pcap in other link types,
#                                   IPv6, reordered, cut by the snap length
# Asserts the exit status, the verdict line, each connection's error count
# and state, the siw Terminate, and the RDMAP message counts; cross-checks
# opcode and CRC counts with tshark when $TSHARK is set.
# Exit 77 (skip) when the tool or the captures are missing.

top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
DEC=$top_builddir/tools/iwarp_decode
DATA=$top_srcdir/tests/data
[ -x "$DEC" ] || { echo "SKIP: $DEC not built"; exit 77; }
[ -r "$DATA/mpa-lo.pcapng" ] || { echo "SKIP: no captures"; exit 77; }

TMP=${TMPDIR:-/tmp}/decode_evidence.$$
mkdir -p "$TMP" || exit 99
trap 'rm -rf "$TMP"' EXIT
fail=0

die() {
	echo "FAIL: $*"
	fail=1
}

# expect_grep FILE PATTERN: a line of FILE matches the fixed string PATTERN
expect_grep() {
	grep -F -q -- "$2" "$1" || die "$(basename "$1"): no line with '$2'"
}

# conn_errors FILE: "N:E" per connection (E errors, "-" for not iWARP)
conn_errors() {
	awk '
	/^conn [0-9]+: / { if (c != "") printf "%s:%s ", c, e;
			   c = $2; sub(":", "", c); e = "-"; next }
	/^  [0-9]+ errors?, / { e = $1 }
	END { if (c != "") printf "%s:%s\n", c, e }' "$1"
}

# run FILE EXPECTED_RC: decodes into $TMP/FILE.txt (units) and .q (-q)
run() {
	f=$1
	"$DEC" "$DATA/$f" > "$TMP/$f.txt" 2> "$TMP/$f.err"
	rc=$?
	[ "$rc" = "$2" ] || die "$f: exit $rc, expected $2"
	"$DEC" -q "$DATA/$f" > "$TMP/$f.q" 2>&1
	rcq=$?
	[ "$rcq" = "$2" ] || die "$f -q: exit $rcq, expected $2"
	if grep -q '^conn [0-9]* [AB]->[AB] off [0-9]*: [FM]' "$TMP/$f.q"; then
		die "$f -q: unit lines printed"
	fi
	"$DEC" --json "$DATA/$f" > "$TMP/$f.json" 2>&1
	if command -v python3 > /dev/null 2>&1; then
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); \
assert "units" in d and "connections" in d and "errors" in d' \
			"$TMP/$f.json" || die "$f --json: not valid JSON"
	fi
}

# count FILE PATTERN: unit lines containing PATTERN
count() {
	grep -F -- "$2" "$1" | grep -c '^conn [0-9]* [AB]->[AB] off [0-9]*: FPDU'
}

# tshark_check FILE: opcode and CRC counts agree with tshark
tshark_check() {
	f=$1
	[ -n "$TSHARK" ] && [ -x "$TSHARK" ] || return 0
	echo "tshark cross-check: $f"
	for op in "0x00:RDMAP Write " "0x01:RDMAP Read Request" \
		  "0x02:RDMAP Read Response" "0x03:RDMAP Send " \
		  "0x07:RDMAP Terminate"; do
		code=${op%%:*}
		name=${op#*:}
		t=$("$TSHARK" -r "$DATA/$f" -T fields -e iwarp_rdma.opcode \
			2>/dev/null | grep -c "^$code\$")
		o=$(count "$TMP/$f.txt" "$name")
		[ "$t" = "$o" ] ||
			die "$f: tshark counts $t of opcode $code, we $o"
	done
	t=$("$TSHARK" -r "$DATA/$f" -V 2>/dev/null | grep -c 'Bad CRC32')
	o=$(count "$TMP/$f.txt" "crc BAD")
	[ "$t" = "$o" ] || die "$f: tshark: $t bad CRCs, we $o"
	t=$("$TSHARK" -r "$DATA/$f" -V 2>/dev/null | grep -c 'Good CRC32')
	o=$(count "$TMP/$f.txt" "crc ok")
	[ "$t" = "$o" ] || die "$f: tshark: $t good CRCs, we $o"
}

# The 25 probes (outcomes: docs/interop-notes.md §10), in order:
#  1 rev1            2 rev1-crc         3 rev1-markers (rejected)
#  4 rev1-crc-markers (rejected)        5 rev2 16/16    6 rev2 0/0
#  7 rev2 1/200      8-10 p2p, no RTR sent            11 p2p + Write RTR
# 12 rev2 without 0x10                 13 0x10 without IRD/ORD (rejected;
#    Request and Reply both lack the IRD/ORD header)
# 14 rev 0 (pre-RFC, both frames)      15 rev 3 (no Reply)
# 16 bad key        17 siw GSO bit 0x08 (reserved bit, both frames)
# 18 TCP only (siw closes after 5 s)   19 silence after the Reply
# 20 rev1 Send      21 rping x2        22 rping x2 with CRC
# 23 rev1+CRC rping (siw's Read fails locally, no Terminate)
# 24 bad CRC -> siw Terminate (a warning unless -T)         25 no CRC, non-zero CRC fields
PROBES="1:0 2:0 3:1 4:1 5:0 6:0 7:0 8:0 9:0 10:0 11:0 12:0 13:3 14:2 15:1 \
16:1 17:2 18:- 19:0 20:0 21:0 22:0 23:0 24:1 25:3"

for f in mpa-lo.pcapng mpa-guest.pcap; do
	run "$f" 1
	q=$TMP/$f.q
	t=$TMP/$f.txt
	if [ "$f" = mpa-lo.pcapng ]; then
		expect_grep "$q" "25 connections (24 iWARP), 15 errors, 3 warnings: INVALID"
		want="$PROBES"
	else
		# the guest side also shows the nc trigger on port 7199
		expect_grep "$q" "26 connections (24 iWARP), 15 errors, 3 warnings: INVALID"
		want="$PROBES 26:-"
	fi
	got=$(conn_errors "$q")
	[ "$got" = "$(echo $want)" ] ||
		die "$f: errors per connection: got '$got', want '$(echo $want)'"
	for c in 3 4 13; do
		grep -q "^conn $c: .*iWARP, rejected, closed" "$q" ||
			die "$f: conn $c not reported as rejected"
		grep -q "^conn $c .*error \[mpa-reject\]" "$q" ||
			die "$f: conn $c: no mpa-reject error"
	done
	grep -q '^conn 15: .*invalid MPA Request, no Reply' "$q" ||
		die "$f: conn 15 (rev 3) state"
	expect_grep "$q" "error [mpa-rev]: unknown MPA revision 3"
	grep -q '^conn 16: .*invalid MPA key' "$q" || die "$f: conn 16 state"
	expect_grep "$q" 'invalid MPA Request/Reply key "MPA_ID_Bad_Frame"'
	grep -q '^conn 18: .*not iWARP (no data)' "$q" || die "$f: conn 18"
	grep -q '^conn 24 A->B off 24: error \[crc\]: CRC error: field 0xb01b51ed, computed 0xb11b51ed' "$q" ||
		die "$f: conn 24 bad CRC not reported"
	grep -q '^conn 24 B->A off 24: FPDU len 22 DDP untagged QN 2 MSN 1 MO 0 L RDMAP Terminate LLP/MPA: CRC error .*(siw nibble-swapped control word) crc ok' "$t" ||
		die "$f: conn 24 Terminate not decoded as siw LLP/MPA CRC error"
	grep -q '^conn 24: .*established, terminated by B, closed' "$q" ||
		die "$f: conn 24 state"
	[ "$(grep -c '^conn 25 A->B .*error \[crc-field\]' "$q")" = 3 ] ||
		die "$f: conn 25: expected 3 non-zero CRC fields"
	# rping x2 (with and without CRC): Sends, Reads, Writes counted
	for c in 21 22; do
		sed -n "/^conn $c: /,/^conn /p" "$q" > "$TMP/c$c"
		expect_grep "$TMP/c$c" "A->B: 352 B, 6 FPDUs, messages: Read Response 2 (128 B), Send 4 (64 B)"
		expect_grep "$TMP/c$c" "B->A: 456 B, 8 FPDUs, messages: Write 2 (128 B), Read Request 2 (56 B), Send 4 (64 B)"
	done
	grep -q '^conn 22: .*$' "$q" && sed -n '/^conn 22: /,/^conn 23: /p' "$q" |
		grep -q 'negotiated: crc on' || die "$f: conn 22 CRC not on"
	[ "$(count "$t" "crc ok")" = 16 ] || die "$f: expected 16 good CRCs"
	[ "$(count "$t" "RDMAP Send ")" = 23 ] || die "$f: expected 23 Sends"
	tshark_check "$f"
done

for f in client-lo.pcapng client-guest.pcap; do
	run "$f" 0
	q=$TMP/$f.q
	expect_grep "$q" "1 connection (1 iWARP), 0 errors, 1 warning: valid"
	expect_grep "$q" "warning [mpa-ird]: Reply ORD 8 exceeds the Request's IRD 1"
	expect_grep "$TMP/$f.txt" "off 0: MPA Request rev 2 enhanced crc=0 markers=0 ird=1 ord=1 pd=4"
	expect_grep "$TMP/$f.txt" "off 24: FPDU len 34 DDP untagged QN 0 MSN 1 MO 0 L RDMAP Send len 16"
	expect_grep "$q" "A->B: 64 B, 1 FPDUs, messages: Send 1 (16 B)"
	expect_grep "$q" "established, closed (FIN both ways)"
	tshark_check "$f"
done

# client-guest.pcap rewritten (once, with a Python script) to the other
# link types and to IPv6 (with a hop-by-hop header), with the Request
# retransmitted and the Send cut into 3 overlapping segments sent out of
# order, and with a 60-octet snap length.
for v in sll sll2 raw null vlan ipv6 reorder; do
	f=decode-$v.pcap
	run "$f" 0
	q=$TMP/$f.q
	expect_grep "$q" "1 connection (1 iWARP), 0 errors, 1 warning: valid"
	expect_grep "$q" "A->B: 64 B, 1 FPDUs, messages: Send 1 (16 B)"
	expect_grep "$TMP/$f.txt" "off 24: FPDU len 34 DDP untagged QN 0 MSN 1 MO 0 L RDMAP Send len 16"
done
expect_grep "$TMP/decode-ipv6.pcap.q" "A [fd00::a00:20f]:35938 <-> B [fd00::a00:202]:7175"
expect_grep "$TMP/decode-reorder.pcap.q" "39 B retransmitted, 1 segments out of order"
run decode-snaplen.pcap 1
expect_grep "$TMP/decode-snaplen.pcap.q" "error [snaplen]: capture cut by its snap length"

# -T: a well-formed Terminate counts as an error (conn 24 of mpa-lo: 2 errors)
"$DEC" -q -T "$DATA/mpa-lo.pcapng" > "$TMP/mpa-lo.T" 2>&1
expect_grep "$TMP/mpa-lo.T" "25 connections (24 iWARP), 16 errors, 2 warnings: INVALID"

# usage and file errors: exit 2
"$DEC" > /dev/null 2>&1
[ $? = 2 ] || die "no argument: exit status not 2"
"$DEC" "$TMP/does-not-exist.pcap" > /dev/null 2>&1
[ $? = 2 ] || die "missing file: exit status not 2"
"$DEC" --version | grep -q '^iwarp_decode ' || die "--version"
"$DEC" -h | grep -q -- '--json' || die "-h"

[ $fail = 0 ] && echo "PASS: decode_evidence"
exit $fail
