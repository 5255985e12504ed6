#!/usr/bin/env python3
"""Writes macc-edge.pcap: MAC Control frames at the edges of what tshark 4.0
dissects, for the macc.* differential test (cmd/ibdump/macc_test.go).

1 PFC, vector 0x0018 (C3 65535, C4 0)   2 PAUSE 65535 quanta
3 PFC in an 802.1Q tag (PRI 3), vector 0x0108 (upper bits set), times 1..8
4 MPCP Report (opcode 3) to 01:80:c2:00:00:02   5 PFC cut after its vector
6 PAUSE to 01:80:c2:00:00:02 (wrong destination)   7 unknown opcode 7
8 PFC to 01:80:c2:00:00:03 (wrong destination)
"""
import struct
import sys

SRC = bytes.fromhex("020000000001")
DST = bytes.fromhex("0180c2000001")


def pad(b, n=60):
    return b.ljust(n, b"\0")


frames = [
    pad(DST + SRC + b"\x88\x08" + struct.pack(">HH8H", 0x0101, 0x0018, 0, 0, 0, 65535, 0, 0, 0, 0)),
    pad(DST + SRC + b"\x88\x08" + struct.pack(">HH", 0x0001, 65535)),
    pad(DST + SRC + b"\x81\x00" + struct.pack(">H", (3 << 13) | 100) + b"\x88\x08" +
        struct.pack(">HH8H", 0x0101, 0x0108, 1, 2, 3, 4, 5, 6, 7, 8), 64),
    pad(bytes.fromhex("0180c2000002") + SRC + b"\x88\x08" + struct.pack(">H", 0x0003)),
    DST + SRC + b"\x88\x08" + struct.pack(">HH", 0x0101, 0x0008),
    pad(bytes.fromhex("0180c2000002") + SRC + b"\x88\x08" + struct.pack(">HH", 0x0001, 5)),
    pad(DST + SRC + b"\x88\x08" + struct.pack(">HH", 0x0007, 5)),
    pad(bytes.fromhex("0180c2000003") + SRC + b"\x88\x08" + struct.pack(">HH8H", 0x0101, 0x0008, 0, 0, 0, 9, 0, 0, 0, 0)),
]

out = sys.argv[1] if len(sys.argv) > 1 else "macc-edge.pcap"
with open(out, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
    for i, fr in enumerate(frames):
        f.write(struct.pack("<IIII", 1700000000, i * 1000, len(fr), len(fr)))
        f.write(fr)
