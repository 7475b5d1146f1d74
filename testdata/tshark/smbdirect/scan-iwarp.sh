#!/bin/sh
# tshark 4.0 dissects no SMB Direct on iWARP (KD-SMBD-IWARP). As an
# independent count for ulp/smbdirect's iWARP test, this takes the TCP
# payloads of siw-smbdirect.pcap as tshark reassembles nothing of them
# (first transmissions only, in sequence order per direction) and counts
# the SMB2 headers in the byte streams (ProtocolId FE 'S' 'M' 'B',
# StructureSize 64: [MS-SMB2] 2.2.1) by command and request/response,
# final responses only (not STATUS_PENDING). The MPA/DDP/RDMAP framing
# around them is skipped over, not decoded: Linux's siw sends no MPA
# markers, so a header is never split by one.
set -e
P=../../pcaps/ulp/siw-smbdirect.pcap
tshark -r $P -Y 'tcp.len > 0 && !tcp.analysis.retransmission && !tcp.analysis.out_of_order' \
  -T fields -e tcp.stream -e tcp.srcport -e tcp.seq -e tcp.payload 2>/dev/null |
python3 -c '
import sys, collections
streams = collections.defaultdict(list)
for line in sys.stdin:
    s, sp, seq, pl = line.rstrip("\n").split("\t")
    streams[(s, sp)].append((int(seq), bytes.fromhex(pl)))
n = collections.Counter()
for v in streams.values():
    v.sort()
    buf = b"".join(p for _, p in v)
    i = buf.find(b"\xfeSMB@\x00")
    while i >= 0:
        flags = int.from_bytes(buf[i+16:i+20], "little")
        status = int.from_bytes(buf[i+8:i+12], "little")
        cmd = int.from_bytes(buf[i+12:i+14], "little")
        if not (flags & 1 and status == 0x103):
            n[(cmd, flags & 1)] += 1
        i = buf.find(b"\xfeSMB@\x00", i + 4)
print("smb2.cmd\tsmb2.flags.response\tcount")
for (c, r), k in sorted(n.items()):
    print(f"{c}\t{r}\t{k}")
' > siw-smbdirect.smb2-scan.tsv
