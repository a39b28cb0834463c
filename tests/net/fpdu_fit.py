#!/usr/bin/env python3
"""tests/net/fpdu_fit.py DECODE_JSON LIMIT [DIRS]: checks an iwarp_decode
--json report of a capture: valid, no Terminate, and every FPDU of the
directions DIRS (default "A->B,B->A") at most LIMIT octets on the wire.

An FPDU on the wire (RFC 5044 section 4) is the 2-octet ULPDU_Length, the
ULPDU, a pad to a multiple of 4 octets, the 4-octet CRC field (zero when
CRC is off) and a 4-octet marker per marker position it spans (section
5). Prints "max WIRE fpdus N" and exits 0, or prints why and exits 1.
"""
import json
import sys


def main():
    rep = json.load(open(sys.argv[1]))
    limit = int(sys.argv[2])
    dirs = (sys.argv[3] if len(sys.argv) > 3 else "A->B,B->A").split(",")
    bad = []
    if not rep["result"].get("valid"):
        bad.append("capture not valid: %d errors" % rep["result"].get("errors", -1))
    for e in rep.get("errors", []):
        bad.append("error: " + e.get("text", e.get("what", "?")))
    for w in rep.get("warnings", []):
        if "erminate" in w.get("text", "") + w.get("what", ""):
            bad.append("Terminate: " + w.get("text", ""))
    wmax, n, over = 0, 0, 0
    for u in rep.get("units", []):
        if u.get("kind") != "fpdu" or u.get("dir") not in dirs:
            continue
        ulen = u["ulpdu_length"]
        wire = 2 + ulen + (-(2 + ulen)) % 4 + 4 + 4 * u.get("markers", 0)
        n += 1
        if u.get("op") == "Terminate":
            bad.append("Terminate FPDU: " + u.get("text", ""))
        if wire > wmax:
            wmax = wire
        if wire > limit:
            over += 1
    print("max %d fpdus %d" % (wmax, n))
    if over:
        bad.append("%d of %d FPDUs exceed the MSS %d (largest %d octets on the wire)"
                   % (over, n, limit, wmax))
    if n == 0:
        bad.append("no FPDU in the capture")
    for b in bad[:10]:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
