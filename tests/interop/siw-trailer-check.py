#!/usr/bin/env python3
"""tests/interop/siw-trailer-check.py - did siw misread an MPA trailer that a
TCP segment boundary split?

    siw-trailer-check.py GUEST.pcap IN OWN

IN and OWN are the two values of the guest kernel's
"siw: crc error. in: IN, own OWN, op N" (hex, as siw prints a 32-bit word
read from memory; on the x86 guest that is the little-endian load of the
four CRC octets).

Linux 6.1's siw receives the trailer of an FPDU (pad + CRC, RFC 5044 §4.1)
with one copy per socket buffer, and every copy goes to the start of its
trailer buffer. When a socket-buffer boundary falls inside the trailer, the
second part overwrites the first and the CRC siw compares is a mix of the
two parts and stale octets. slirp re-cuts our stream into 1440-octet
segments toward the guest wherever its reads ended, so such a boundary is a
matter of timing, not of our octets.

The check walks every connection toward the guest (10.0.2.15) in the
capture, frames it with the MPA lengths, and looks for an FPDU whose CRC
field on the wire equals OWN (siw computed the same CRC we sent) and whose
trailer a segment boundary splits so that siw's copies give IN. It prints
what it found and exits 0 when such an FPDU exists, 1 when not, 2 on bad
input. (Segment boundaries on the guest NIC are the only places where the
guest's socket buffers can end.)
"""
import struct
import sys

from pcapio import frame_bounds, ipv4_tcp, open_pcap, records

GUEST = bytes([10, 0, 2, 15])


def streams(path):
    """{(sport, dport): (stream octets, [segment end offsets])} of the TCP
    payload toward the guest, in sequence order, up to the first gap."""
    conns = {}
    with open(path, "rb") as f:
        head = open_pcap(f)
        if head is None:
            return None
        _, e, _, linktype = head
        for rec, data in records(f, e):
            off = ipv4_tcp(linktype, data)
            if off is None or data[off + 16:off + 20] != GUEST:
                continue
            ihl = (data[off] & 15) * 4
            tot = struct.unpack(">H", data[off + 2:off + 4])[0]
            t = off + ihl
            if len(data) < t + 20:
                continue
            doff = (data[t + 12] >> 4) * 4
            payload = data[t + doff:off + tot]
            if payload:
                sport, dport, seq = struct.unpack(">HHI", data[t:t + 8])
                conns.setdefault((sport, dport), []).append((seq, payload))
    out = {}
    for key, segs in conns.items():
        base = min(s for s, _ in segs)
        stream = bytearray()
        ends = []
        for seq, payload in sorted(segs, key=lambda s: s[0]):
            o = (seq - base) & 0xFFFFFFFF
            if o + len(payload) <= len(stream):
                continue          # retransmission
            if o > len(stream):
                break             # capture gap: stop here
            stream += payload[len(stream) - o:]
            ends.append(len(stream))
        out[key] = (bytes(stream), ends)
    return out


def siw_reads(trailer, cuts):
    """The trailer buffer siw 6.1 ends with: each part (split at |cuts|,
    offsets into the trailer) copied to the start. None = stale octet."""
    buf = [None] * len(trailer)
    start = 0
    for end in list(cuts) + [len(trailer)]:
        part = trailer[start:end]
        buf[:len(part)] = list(part)
        start = end
    return buf


def check(stream, seg_ends, want_in, want_own):
    """(FPDU offset, cuts into its trailer, pad) of the FPDU explaining
    siw's error, or None."""
    ends, markers = frame_bounds(stream)
    if ends is None or markers:
        return None               # not MPA, or markers: not framed here
    cut_set = set(seg_ends)
    for pos, tr1 in zip(ends, ends[1:]):
        tr0 = pos + 2 + struct.unpack(">H", stream[pos:pos + 2])[0]
        pad = tr1 - tr0 - 4       # trailer: pad + CRC (RFC 5044 §4.1)
        if pad != -(tr0 - pos) % 4:
            break                 # the stream ends inside this FPDU
        if stream[tr1 - 4:tr1] == want_own:
            cuts = [c - tr0 for c in range(tr0 + 1, tr1) if c in cut_set]
            if cuts:
                got = siw_reads(stream[tr0:tr1], cuts)[pad:pad + 4]
                if all(g is None or g == w for g, w in zip(got, want_in)):
                    return (pos, cuts, pad)
    return None


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    try:
        want_in = struct.pack("<I", int(argv[2], 16))
        want_own = struct.pack("<I", int(argv[3], 16))
    except ValueError:
        sys.stderr.write("siw-trailer-check: IN and OWN are hex words\n")
        return 2
    conns = streams(argv[1])
    if conns is None:
        sys.stderr.write("siw-trailer-check: %s: not a classic pcap\n" % argv[1])
        return 2
    for (sport, dport), (stream, ends) in conns.items():
        hit = check(stream, ends, want_in, want_own)
        if hit:
            print("siw misread a split MPA trailer: the FPDU at octet %d of "
                  "%d->%d carries CRC %s (= siw's own), segment boundaries "
                  "cut its %d-octet trailer at %s, and siw's per-buffer "
                  "copies give %s (= siw's in)"
                  % (hit[0], sport, dport, want_own.hex(), hit[2] + 4,
                     ",".join(map(str, hit[1])), want_in.hex()))
            return 0
    print("no FPDU toward the guest explains siw's CRC error "
          "(in %s, own %s)" % (want_in.hex(), want_own.hex()))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
