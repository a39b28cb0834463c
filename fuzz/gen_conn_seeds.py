#!/usr/bin/env python3
"""fuzz/gen_conn_seeds.py: writes the seed corpus of fuzz/fuzz_conn.c
(fuzz/corpus/fuzz_conn/): valid FPDU streams for the regions and WQEs the
target sets up, with CRC off (octet 0 bit 0 clear), no markers.

FPDU (RFC 5044 §4): ULPDU_Length (2), ULPDU, pad to 4, CRC field (4, zero
without CRC). DDP (RFC 5041 §4): tagged 14 octets (ctrl, rdmap ctrl, STag,
TO), untagged 18 (ctrl, rdmap ctrl, RsvdULP, QN, MSN, MO). RDMAP ctrl
(RFC 5040 §4.2): RV 1 in bits 7-6, opcode in bits 3-0.
"""
import os
import struct
import sys

T, L, DV = 0x80, 0x40, 0x01
RV = 0x40


def fpdu(ulpdu):
    body = struct.pack(">H", len(ulpdu)) + ulpdu
    body += b"\0" * ((4 - len(body) % 4) % 4)
    return body + b"\0\0\0\0"


def tagged(op, stag, to, payload, last=True):
    return bytes([T | (L if last else 0) | DV, RV | op]) + \
        struct.pack(">IQ", stag, to) + payload


def untagged(op, qn, msn, payload=b"", mo=0, rsvdulp=0, last=True):
    return bytes([(L if last else 0) | DV, RV | op]) + \
        struct.pack(">IIII", rsvdulp, qn, msn, mo) + payload


def rreq(msn, sink_stag, sink_to, size, src_stag, src_to):
    return untagged(1, 1, msn, struct.pack(">IQIIQ", sink_stag, sink_to,
                                            size, src_stag, src_to))


def pattern(n, k):
    return bytes((i * 7 + k) & 0xFF for i in range(n))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_conn")
    os.makedirs(out, exist_ok=True)
    # flags: 0x04 initiator (sends its Read, Send and Write first)
    write = fpdu(tagged(0, 0x100, 0x100000, pattern(64, 1)))
    write2 = fpdu(tagged(0, 0x100, 0x100040, pattern(600, 2), last=False)) + \
        fpdu(tagged(0, 0x100, 0x100298, pattern(40, 3)))
    send = fpdu(untagged(3, 0, 1, pattern(20, 4)))
    send_se_inv = fpdu(untagged(6, 0, 1, pattern(8, 5), rsvdulp=0x400))
    send_multi = fpdu(untagged(3, 0, 1, pattern(500, 6), last=False)) + \
        fpdu(untagged(3, 0, 1, pattern(300, 7), mo=500))
    read_req = fpdu(rreq(1, 0x9, 0x0, 64, 0x200, 0x200000))
    read_resp = fpdu(tagged(2, 0x100, 0x101000, pattern(1024, 8)))
    term = fpdu(untagged(7, 2, 1, struct.pack(">I", 0x11000000)))
    seeds = {
        "write": (0x04, write),
        "write_multi": (0x04, write2),
        "send": (0x04, send),
        "send_inv": (0x04, send_se_inv),
        "send_multi": (0x04, send_multi),
        "read_request": (0x04, read_req),
        "read_response": (0x04, read_resp),
        "terminate": (0x04, term),
        "mixed": (0x04, write + send + read_req + read_resp +
                  fpdu(untagged(6, 0, 2, pattern(8, 5), rsvdulp=0x400))),
        "mixed_prefill_revoke": (0xC4, write2 + read_resp + send),
        "responder_write_rtr": (0x10, fpdu(tagged(0, 1, 0, b"")) + write),
        "responder_read": (0x00, read_req + send),
        "big_fpdu": (0x24, fpdu(tagged(0, 0x100, 0x100000,
                                       pattern(8192, 9)))),
    }
    # RFC 7306 (octet 1 bit 7: extensions on): Immediate Data (QN 0, 8
    # octets), Atomic Request (QN 3, 52 octets: opcode word, request id,
    # STag, TO, add/swap, add/swap mask, compare, compare mask), Atomic
    # Response (QN 4: request id, original value)
    imm = fpdu(untagged(8, 0, 1, struct.pack(">II", 0x01020304, 0)))
    imm_se = fpdu(untagged(9, 0, 2, struct.pack(">II", 0x05060708, 0)))
    fadd = fpdu(untagged(0xA, 3, 1, struct.pack(
        ">IIIQQQQQ", 0, 1, 0x100, 0x100008, 5, 0, 0, 0)))
    cas = fpdu(untagged(0xA, 3, 2, struct.pack(
        ">IIIQQQQQ", 2, 2, 0x100, 0x100008, 9, 2 ** 64 - 1, 0,
        2 ** 64 - 1)))
    aresp = fpdu(untagged(0xB, 4, 1, struct.pack(">IQ", 1, 42)))
    ext_seeds = {
        "ext_imm": (0x04, write + imm + imm_se),
        "ext_atomic": (0x00, fadd + cas + send),
        "ext_atomic_response": (0x04, aresp),
        "ext_off_atomic": (0x00, fadd),
    }
    for name, (flags, stream) in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([flags, len(name)]) + stream)
    for name, (flags, stream) in ext_seeds.items():
        ext = 0 if name.startswith("ext_off") else 0x80
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([flags, ext | len(name)]) + stream)


if __name__ == "__main__":
    main()
