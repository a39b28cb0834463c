#!/usr/bin/env python3
"""tests/interop/split-pcap.py - split one classic pcap (QEMU filter-dump of
the guest NIC: Ethernet, IPv4) into one pcap per TCP port, in one pass.

    split-pcap.py IN.pcap PORT:OUT.pcap [PORT:OUT.pcap ...]

A frame goes to OUT when its TCP source or destination port is PORT. Every
OUT is written (with the pcap header) even when no frame matched.
"""
import struct
import sys

from pcapio import ipv4_tcp, open_pcap, records


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    outs = {}
    for spec in argv[2:]:
        port, path = spec.split(":", 1)
        outs[int(port)] = open(path, "wb")
    with open(argv[1], "rb") as f:
        head = open_pcap(f)
        if head is None:
            sys.stderr.write("split-pcap: %s: not a classic pcap\n" % argv[1])
            return 1
        hdr, e, _, linktype = head
        for o in outs.values():
            o.write(hdr)
        counts = dict.fromkeys(outs, 0)
        for rec, data in records(f, e):
            off = ipv4_tcp(linktype, data)
            if off is None:
                continue
            ihl = (data[off] & 15) * 4
            if len(data) < off + ihl + 4:
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
