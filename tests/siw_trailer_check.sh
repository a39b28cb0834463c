#!/bin/sh
# tests/siw_trailer_check.sh - tests/interop/siw-trailer-check.py on
# synthetic guest NIC captures: it must explain siw's "crc error. in: IN,
# own OWN" exactly when a segment boundary splits the trailer of an FPDU
# whose wire CRC is OWN so that siw 6.1's per-buffer copies give IN, and
# refuse everything else (the interop matrix re-runs only what it proves).
set -eu
: "${top_srcdir:=.}"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CHECK=$top_srcdir/tests/interop/siw-trailer-check.py

# gen.py OUT CUTS...: an MPA Reply (4 octets of private data) and three
# tagged FPDUs (1002, 1000 and 1002 octets of ULPDU: the second has 2 pad
# octets) toward 10.0.2.15, cut into segments at the given stream offsets.
# Prints each FPDU's trailer offset and its CRC as siw would print it.
cat >"$TMP/gen.py" <<'EOF'
import struct, sys

def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

stream = bytearray(b"MPA ID Rep Frame" + bytes([0x40, 0, 0, 4]) + bytes(4))
for i, n in enumerate((1002, 1000, 1002)):
    fpdu = struct.pack(">H", n) + bytes([0x80 | 0x40 | 1, 0x02]) + \
        bytes(12) + bytes((i * 7 + k) & 0xFF for k in range(n - 14))
    fpdu += bytes(-len(fpdu) % 4)
    # the CRC octets as siw's crc32c hands them over; siw prints the
    # little-endian word it loads from them
    crc = struct.pack("<I", crc32c(fpdu))
    print(len(stream) + len(fpdu), "%08x" % crc32c(fpdu))
    stream += fpdu + crc
cuts = sorted(set(int(c) for c in sys.argv[2:]) | {0, len(stream)})
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for a, b in zip(cuts, cuts[1:]):
        tcp = struct.pack(">HHIIBBHHH", 7174, 40000, 1000 + a, 0, 0x50, 0x18,
                          65535, 0, 0)
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 20 + b - a, 0, 0, 64,
                         6, 0, bytes([10, 0, 2, 2]), bytes([10, 0, 2, 15]))
        frame = bytes(6) + bytes(6) + b"\x08\x00" + ip + tcp + stream[a:b]
        f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)))
        f.write(frame)
EOF

fail=0
expect() {   # expect RC WHAT CMD...
	want=$1 what=$2
	shift 2
	set +e
	out=$("$@" 2>&1)
	rc=$?
	set -e
	if [ "$rc" = "$want" ]; then
		echo "ok: $what"
	else
		echo "FAIL: $what: exit $rc, wanted $want: $out"
		fail=1
	fi
}

# the layout, with no cut inside any trailer
python3 "$TMP/gen.py" "$TMP/whole.pcap" 600 1600 >"$TMP/layout"
t1=$(sed -n 1p "$TMP/layout" | cut -d' ' -f1)   # 1st trailer offset
c1=$(sed -n 1p "$TMP/layout" | cut -d' ' -f2)   # 1st FPDU's CRC word
t2=$(sed -n 2p "$TMP/layout" | cut -d' ' -f1)   # 2nd trailer (after 2 pad)
c2=$(sed -n 2p "$TMP/layout" | cut -d' ' -f2)

# siw_mix CRCWORD K [PAD]: the word siw compares for a trailer of PAD
# (default 0) zero octets and the CRC, cut K octets into the trailer: each
# part copied to the start of the buffer; a stale octet stays "00"
siw_mix() {
	python3 -c '
import struct, sys
w = struct.pack("<I", int(sys.argv[1], 16)); k = int(sys.argv[2])
pad = int(sys.argv[3]); tr = bytes(pad) + w
buf = bytearray(len(tr))
buf[:k] = tr[:k]; buf[:len(tr) - k] = tr[k:]
print("%08x" % struct.unpack("<I", bytes(buf[pad:pad + 4]))[0])' "$1" "$2" "${3:-0}"
}

for k in 1 2 3; do
	python3 "$TMP/gen.py" "$TMP/cut$k.pcap" 600 $((t1 + k)) 2500 >/dev/null
	expect 0 "CRC cut after $k octets is explained" \
		python3 "$CHECK" "$TMP/cut$k.pcap" "$(siw_mix "$c1" "$k")" "$c1"
	expect 1 "the same error without the cut is not" \
		python3 "$CHECK" "$TMP/whole.pcap" "$(siw_mix "$c1" "$k")" "$c1"
done
expect 1 "a cut whose mix does not give siw's in is not" \
	python3 "$CHECK" "$TMP/cut2.pcap" "$(siw_mix "$c1" 1)" "$c1"
expect 1 "an own CRC that is not on the wire is not" \
	python3 "$CHECK" "$TMP/cut2.pcap" "$(siw_mix "$c1" 2)" 0badc0de
# 2nd FPDU: 2 pad octets, cut between pad and CRC (t2 is the CRC's
# offset): siw copies the pad to the start of its 6-octet trailer buffer,
# then the CRC over it, so the word it compares (the 4 octets after the
# pad's place) is the CRC's last 2 octets and 2 stale ones
python3 "$TMP/gen.py" "$TMP/pad.pcap" "$t2" >/dev/null
mix=$(siw_mix "$c2" 2 2)
expect 0 "a cut between pad and CRC is explained" \
	python3 "$CHECK" "$TMP/pad.pcap" "$mix" "$c2"
expect 2 "bad arguments" python3 "$CHECK" "$TMP/pad.pcap" xyz "$c2"
exit $fail
