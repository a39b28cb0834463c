"""tests/interop/pcapio.py - the classic pcap reading shared by
split-pcap.py and realign-pcap.py (Ethernet or raw IPv4 link types)."""
import struct

LINKTYPES = (1, 101, 228)  # Ethernet, raw IP, raw IPv4


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
