# gen.py: builds mac-control.pcap, four IEEE 802.3 MAC Control frames
# (EtherType 0x8808, to 01-80-C2-00-00-01): PAUSE (Annex 31B, opcode
# 0x0001) with pause_time 0xffff, PFC (802.1Qbb, opcode 0x0101) pausing
# priority 3 for 0xffff quanta, PFC with priorities 3 and 4 enabled and
# 0x1234 quanta on 4 (0 on 3: resume), PAUSE 0 (resume). Then gen.sh
# records tshark's macc.* fields of them in macc.tsv.
import struct
def eth(src, payload):
    f = bytes.fromhex('0180c2000001') + bytes.fromhex(src) + struct.pack('>H', 0x8808) + payload
    return f + b'\x00' * (60 - len(f))
frames = [
    eth('525400000201', struct.pack('>HH', 0x0001, 0xffff)),
    eth('525400000201', struct.pack('>HH', 0x0101, 0x0008) + struct.pack('>8H', 0, 0, 0, 0xffff, 0, 0, 0, 0)),
    eth('525400000202', struct.pack('>HH', 0x0101, 0x0018) + struct.pack('>8H', 0, 0, 0, 0, 0x1234, 0, 0, 0)),
    eth('525400000202', struct.pack('>HH', 0x0001, 0x0000)),
]
out = struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
for i, f in enumerate(frames):
    out += struct.pack('<IIII', 1700000000 + i, 0, len(f), len(f)) + f
open('mac-control.pcap', 'wb').write(out)
