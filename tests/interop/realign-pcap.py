#!/usr/bin/env python3
"""tests/interop/realign-pcap.py - copy an iWARP capture with every TCP
segment re-cut at MPA frame boundaries, for tshark.

    realign-pcap.py IN.pcap OUT.pcap

Why: Wireshark 4.0's iwarp_mpa dissector is a TCP heuristic that reassembles
FPDUs with tcp_dissect_pdus (8-octet minimum). When a segment ends fewer than
8 octets into an FPDU that ends in the next segment, it drops those octets
and decodes the next segment from its first octet, i.e. from the middle of
an FPDU: from there on it shows random "FPDUs", Bad CRC32 and malformed
packets that are not in the stream. Senders do not control this: slirp
(QEMU user networking) and the host's TCP cut the stream into segments
wherever they like. The copy carries the same payload octets, in the same
order, with the same sequence numbers; only the segment boundaries move.

How: for each direction of each IPv4 TCP connection the payload is put back
together by sequence number (retransmissions collapse). A stream that starts
with an MPA Request or Reply ("MPA ID Req Frame" / "MPA ID Rep Frame", RFC
5044 §7.1) is walked frame by frame: the Request/Reply (20 octets + Private
Data length) gets a segment of its own, then FPDUs of 2 + ULPDU_Length +
pad to 4 + 4 (CRC field) octets (RFC 5044 §4) are packed whole into
segments of at most PACK octets and PACK_FPDUS FPDUs. The walk trusts the ULPDU_Length fields;
a wrong one shows in tshark as a bad or malformed FPDU, as it would in the
original. Not re-cut (original segments kept): connections that negotiated
markers (RFC 5044 §5: markers sit inside FPDUs), streams that are not MPA,
and everything after a gap in the capture. Segments without payload that
carry SYN, FIN or RST are kept; pure ACKs are dropped.

Prints one line: connections, directions re-cut, gaps. Exit 0, or 1 when
the input is not a classic pcap with Ethernet / raw IPv4 frames.
"""
import bisect
import struct
import sys

from pcapio import LINKTYPES, frame_bounds, ipv4_tcp, open_pcap, records

PACK = 16384
# at most this many FPDUs per segment: tshark stops at its tree depth
# (prefs gui.max_tree_depth) with a "malformed" assertion otherwise
PACK_FPDUS = 8
F_SYN, F_RST, F_FIN, F_ACK, F_PSH = 0x02, 0x04, 0x01, 0x10, 0x08


def ip_checksum(h):
    s = 0
    for i in range(0, len(h), 2):
        s += (h[i] << 8) + h[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


class Pkt:
    __slots__ = ("idx", "ts", "l2", "ip", "tcp", "payload", "key", "seq",
                 "ack", "flags")


def read_pcap(path):
    with open(path, "rb") as f:
        head = open_pcap(f)
        if head is None or head[3] not in LINKTYPES:
            return None, None, None
        hdr, e, nano, linktype = head
        pkts = []
        idx = 0
        for rec, data in records(f, e):
            sec, frac = struct.unpack(e + "II", rec[:8])
            idx += 1
            off = ipv4_tcp(linktype, data)
            if off is None:
                continue
            ihl = (data[off] & 15) * 4
            tot = struct.unpack(">H", data[off + 2:off + 4])[0]
            if len(data) < off + ihl + 20:
                continue
            t = off + ihl
            doff = (data[t + 12] >> 4) * 4
            end = min(len(data), off + tot) if tot else len(data)
            p = Pkt()
            p.idx = idx
            p.ts = sec + frac / (1e9 if nano else 1e6)
            p.l2 = data[:off]
            p.ip = bytearray(data[off:t])
            p.tcp = bytearray(data[t:t + doff])
            p.payload = data[t + doff:end]
            sport, dport, p.seq, p.ack = struct.unpack(">HHII", data[t:t + 12])
            p.flags = data[t + 13]
            p.key = (bytes(data[off + 12:off + 16]), sport,
                     bytes(data[off + 16:off + 20]), dport)
            pkts.append(p)
        return hdr, e, pkts


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    hdr, e, pkts = read_pcap(argv[1])
    if pkts is None:
        sys.stderr.write("realign-pcap: %s: not a classic Ethernet/IPv4 pcap\n"
                         % argv[1])
        return 1
    dirs = {}
    for p in pkts:
        dirs.setdefault(p.key, []).append(p)
    out = []   # (ts, idx, sub, bytes of the frame)
    recut = gaps = 0
    markers = set()
    streams = {}
    for key, ps in dirs.items():
        syn = [p for p in ps if p.flags & F_SYN]
        base = (syn[0].seq + 1) & 0xFFFFFFFF if syn else \
            min((p.seq for p in ps if p.payload), default=0)
        segs = {}
        for p in ps:
            if p.payload:
                rel = (p.seq - base) & 0xFFFFFFFF
                if rel >= 0x80000000:
                    continue  # before the ISN: ignore
                if rel not in segs or len(segs[rel].payload) < len(p.payload):
                    segs[rel] = p
        buf = bytearray()
        order = []   # (start, end, pkt) of the contiguous prefix
        gap = None
        for rel in sorted(segs):
            p = segs[rel]
            end = rel + len(p.payload)
            if rel > len(buf):
                gap = len(buf)
                break
            if end > len(buf):
                buf += p.payload[len(buf) - rel:]
                order.append((rel, end, p))
        ends, m = frame_bounds(buf)
        streams[key] = (base, bytes(buf), order, gap, ps, ends)
        if m:
            markers.add(key)
            markers.add((key[2], key[3], key[0], key[1]))
    for key, (base, buf, order, gap, ps, ends) in streams.items():
        tmpl = next((p for p in ps if p.payload), None)
        aligned = ends is not None and key not in markers and tmpl is not None
        if gap is not None:
            gaps += 1
        if aligned:
            recut += 1
            starts = [o[0] for o in order]
            cuts = [ends[0]]
            size = count = 0
            for a, b in zip(ends, ends[1:]):
                if size and (size + (b - a) > PACK or count == PACK_FPDUS):
                    cuts.append(a)
                    size = count = 0
                size += b - a
                count += 1
            if cuts[-1] != len(buf):
                cuts.append(len(buf))
            a = 0
            for b in cuts:
                while a < b:
                    c = min(b, a + 65000)
                    i = bisect.bisect_right(starts, c - 1) - 1
                    src = order[max(i, 0)][2]
                    out.append((src.ts, src.idx, c,
                                build(src, tmpl, base + a, buf[a:c], F_PSH | F_ACK)))
                    a = c
            kept = [p for p in ps if p.payload and gap is not None and
                    ((p.seq - base) & 0xFFFFFFFF) >= gap]
        else:
            kept = [p for p in ps if p.payload]
        for p in kept:
            out.append((p.ts, p.idx, 0, build(p, p, p.seq, p.payload, p.flags)))
        for p in ps:
            if p.flags & (F_SYN | F_FIN | F_RST):
                if p.payload and aligned:
                    seq = p.seq + len(p.payload)
                    out.append((p.ts, p.idx, 1 << 40,
                                build(p, p, seq, b"", p.flags & ~F_PSH)))
                elif not p.payload:
                    out.append((p.ts, p.idx, 0, build(p, p, p.seq, b"", p.flags)))
    out.sort(key=lambda x: (x[0], x[1], x[2]))
    with open(argv[2], "wb") as f:
        f.write(hdr[:20] + struct.pack(e + "I", 1 if pkts and pkts[0].l2 else 101))
        # the pcap header's time resolution is kept (hdr[:4])
        nano = struct.unpack(e + "I", hdr[:4])[0] in (0xA1B23C4D,)
        for ts, _, _, frame in out:
            sec = int(ts)
            frac = int(round((ts - sec) * (1e9 if nano else 1e6)))
            if frac >= (1e9 if nano else 1e6):
                sec, frac = sec + 1, 0
            f.write(struct.pack(e + "IIII", sec, frac, len(frame), len(frame)))
            f.write(frame)
    print("connections %d, directions re-cut %d, with markers (kept) %d, gaps %d"
          % (len(dirs) // 2 or len(dirs), recut, len(markers) // 2, gaps))
    return 0


def build(src, tmpl, seq, payload, flags):
    """A frame with src's link/IP/TCP headers (tmpl's TCP options), |seq|,
    |payload| and |flags|."""
    ip = bytearray(src.ip)
    tcp = bytearray(tmpl.tcp)
    tcp[0:4] = src.tcp[0:4]
    struct.pack_into(">II", tcp, 4, seq & 0xFFFFFFFF, src.ack)
    tcp[13] = flags & 0xFF
    tcp[14:16] = src.tcp[14:16]
    tcp[16:18] = b"\0\0"
    struct.pack_into(">H", ip, 2, len(ip) + len(tcp) + len(payload))
    ip[10:12] = b"\0\0"
    struct.pack_into(">H", ip, 10, ip_checksum(ip))
    return bytes(src.l2) + bytes(ip) + bytes(tcp) + bytes(payload)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
