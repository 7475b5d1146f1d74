#!/bin/sh
# Regenerates the tshark reference output the SMB Direct tests compare
# against (smbdirect/, ulp/smbdirect/). Run from this directory with TShark
# 4.0 (these files: TShark 4.0.17, Debian bookworm). tshark 4.0 decodes SMB
# Direct on RoCE only (not on iWARP): rxe-smbdirect.pcap.
set -e
P=../../pcaps/ulp/rxe-smbdirect.pcap
F="-T fields -E header=y -E separator=/t -E aggregator=, -E occurrence=a"

# Every SMB Direct Send: the SMB Direct fields, and the SMB2 header and
# channel fields of the SMB2 messages it completed (a compound chain
# repeats them, comma-separated), with the RDMA opcode and, for a Send
# With Invalidate, the invalidated R_Key (IETH).
tshark -r $P -Y smb_direct $F \
  -e frame.number -e infiniband.bth.opcode -e infiniband.ieth \
  -e smb_direct.version.min -e smb_direct.version.max -e smb_direct.version.negotiated \
  -e smb_direct.credits.requested -e smb_direct.credits.granted -e smb_direct.status \
  -e smb_direct.max_read_write_size -e smb_direct.preferred_send_size -e smb_direct.max_receive_size \
  -e smb_direct.max_fragmented_size -e smb_direct.flags -e smb_direct.flags.response_requested -e smb_direct.remaining_length \
  -e smb_direct.data_offset -e smb_direct.data_length \
  -e smb2.cmd -e smb2.credit.charge -e smb2.msg_id -e smb2.sesid -e smb2.nt_status -e smb2.flags.response -e smb2.channel \
  -e smb2.buffer_descriptor.offset -e smb2.buffer_descriptor.token -e smb2.buffer_descriptor.length \
  > rxe-smbdirect.sends.tsv 2>/dev/null

# The Info column of the SMB Direct Sends.
tshark -r $P -Y smb_direct -T fields -E separator=/t -e frame.number -e _ws.col.Info \
  > rxe-smbdirect.info.tsv 2>/dev/null

# The RDMA operations: the first packet of every RDMA Write (FIRST 6, ONLY
# 10) and every RDMA Read Request (12), with its RETH.
tshark -r $P -Y 'infiniband.bth.opcode == 6 || infiniband.bth.opcode == 10 || infiniband.bth.opcode == 12' $F \
  -e frame.number -e infiniband.bth.opcode -e infiniband.reth.va -e infiniband.reth.r_key -e infiniband.reth.dmalen \
  > rxe-smbdirect.rdma.tsv 2>/dev/null
