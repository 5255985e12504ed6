import socket, struct, sys
d = open(sys.argv[1], 'rb').read()
off = 24
payloads = []
while off + 16 <= len(d):
    _, _, incl, _ = struct.unpack('<IIII', d[off:off+16]); p = d[off+16:off+16+incl]; off += 16 + incl
    if len(p) > 42 and p[12:14] == b'\x08\x00' and p[23] == 17 and p[36:38] == b'\x12\xb7':
        payloads.append(p[42:])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('127.0.0.1', 49152))
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(('127.0.0.1', 4791))
for p in payloads[:24]:
    s.sendto(p, ('127.0.0.1', 4791))
print(len(payloads[:24]), 'datagrams sent')
