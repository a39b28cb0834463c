"""tests/interop/pcapio.py - the classic pcap reading (Ethernet or raw IPv4
link types) and MPA stream framing shared by split-pcap.py, realign-pcap.py
and siw-trailer-check.py."""
import struct

LINKTYPES = (1, 101, 228)  # Ethernet, raw IP, raw IPv4
KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"


def open_pcap(f):
    """Reads the pcap header of the open file |f|: (header, endian, nano,
    linktype), or None when it is no classic pcap."""
    hdr = f.read(24)
    if len(hdr) < 24:
        return None
    magic = struct.unpack("<I", hdr[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        e = ">"
    else:
        return None
    nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
    return hdr, e, nano, struct.unpack(e + "I", hdr[20:24])[0]


def records(f, e):
    """Yields (record header, frame bytes) until the end of |f|."""
    while True:
        rec = f.read(16)
        if len(rec) < 16:
            return
        incl = struct.unpack(e + "IIII", rec)[2]
        data = f.read(incl)
        if len(data) < incl:
            return
        yield rec, data


def ipv4_tcp(linktype, data):
    """Offset of the IPv4 header of a TCP frame, or None."""
    off = 0
    if linktype == 1:
        if len(data) < 14:
            return None
        etype = struct.unpack(">H", data[12:14])[0]
        off = 14
        if etype == 0x8100 and len(data) >= 18:
            etype = struct.unpack(">H", data[16:18])[0]
            off = 18
        if etype != 0x0800:
            return None
    elif linktype not in LINKTYPES:
        return None
    if len(data) < off + 20 or data[off] >> 4 != 4 or data[off + 9] != 6:
        return None
    return off


def frame_bounds(stream):
    """(MPA frame end offsets of |stream|, M flag of its first frame); the
    last offset is cut at the end of |stream|. (None, False) when |stream|
    does not start with an MPA Request or Reply. With markers (M) the
    offsets are not right: they do not skip the markers."""
    if len(stream) < 20 or stream[:16] not in (KEY_REQ, KEY_REP):
        return None, False
    flags = stream[16]
    pd_len = struct.unpack(">H", stream[18:20])[0]
    ends = [20 + pd_len]
    pos = ends[0]
    while pos + 2 <= len(stream):
        ulpdu = struct.unpack(">H", stream[pos:pos + 2])[0]
        n = 2 + ulpdu
        n += (-n) % 4
        n += 4
        pos += n
        ends.append(min(pos, len(stream)))
    return ends, bool(flags & 0x80)
