#!/usr/bin/env python3
"""tests/interop/split-pcap.py - split one classic pcap (QEMU filter-dump of
the guest NIC: Ethernet, IPv4) into one pcap per TCP port, in one pass.

    split-pcap.py IN.pcap PORT:OUT.pcap [PORT:OUT.pcap ...]

A frame goes to OUT when its TCP source or destination port is PORT. Every
OUT is written (with the pcap header) even when no frame matched.
"""
import struct
import sys


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    outs = {}
    for spec in argv[2:]:
        port, path = spec.split(":", 1)
        outs[int(port)] = open(path, "wb")
    with open(argv[1], "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            sys.stderr.write("split-pcap: %s: no pcap header\n" % argv[1])
            return 1
        magic = struct.unpack("<I", hdr[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            e = "<"
        elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
            e = ">"
        else:
            sys.stderr.write("split-pcap: %s: not a classic pcap\n" % argv[1])
            return 1
        linktype = struct.unpack(e + "I", hdr[20:24])[0]
        for o in outs.values():
            o.write(hdr)
        counts = dict.fromkeys(outs, 0)
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            incl = struct.unpack(e + "IIII", rec)[2]
            data = f.read(incl)
            if len(data) < incl:
                break
            off = 0
            if linktype == 1:  # Ethernet
                if len(data) < 14:
                    continue
                etype = struct.unpack(">H", data[12:14])[0]
                off = 14
                if etype == 0x8100 and len(data) >= 18:
                    etype = struct.unpack(">H", data[16:18])[0]
                    off = 18
                if etype != 0x0800:
                    continue
            elif linktype not in (101, 228):  # raw IPv4
                continue
            if len(data) < off + 20 or data[off] >> 4 != 4:
                continue
            ihl = (data[off] & 15) * 4
            if data[off + 9] != 6 or len(data) < off + ihl + 4:
                continue
            sport, dport = struct.unpack(">HH", data[off + ihl:off + ihl + 4])
            for p in (sport, dport):
                if p in outs:
                    outs[p].write(rec + data)
                    counts[p] += 1
                    break
    for p, o in outs.items():
        o.close()
    print(" ".join("%d:%d" % (p, c) for p, c in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
