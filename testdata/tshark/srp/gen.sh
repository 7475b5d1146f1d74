#!/bin/sh
# Regenerates the tshark reference output ulp/srp's tests compare against.
# Run from this directory with TShark 4.0 (these files: TShark 4.0.17,
# Debian bookworm). tshark 4.0 has no SRP dissector: it shows an SRP IU as
# the InfiniBand payload ("data"), so what it gives here is the transport's
# view — the CM private data, the RETHs, the Sends' payload — against which
# the SRP decoding and the attachment of RDMA to descriptors are checked.
set -e
P=../../pcaps/ulp/rxe-srp.pcap
F="-T fields -E header=y -E separator=/t -E aggregator=, -E occurrence=a"

# The CM REQ's consumer private data (after the RDMA-CM IP header) and the
# CM REP's private data: the SRP login request (Linux's RDMA/CM layout) and
# response.
tshark -r $P -Y 'infiniband.cm.req.ip_cm.private || infiniband.cm.rep.private' $F \
  -e frame.number -e infiniband.cm.req.serviceid -e infiniband.cm.req.ip_cm.private -e infiniband.cm.rep.private \
  > rxe-srp.cm.tsv 2>/dev/null

# Every RDMA Write and RDMA Read Request (the first packet of each) with
# its RETH.
tshark -r $P -Y 'infiniband.bth.opcode == 6 || infiniband.bth.opcode == 10 || infiniband.bth.opcode == 12' $F \
  -e frame.number -e ip.src -e infiniband.bth.opcode -e infiniband.reth.va -e infiniband.reth.r_key \
  -e infiniband.reth.dmalen > rxe-srp.rdma.tsv 2>/dev/null

# The first packet of every Send with its payload (an SRP IU, or its first
# 1024 octets).
tshark -r $P -Y 'infiniband.bth.opcode == 0 || infiniband.bth.opcode == 4' $F \
  -e frame.number -e ip.src -e infiniband.bth.opcode -e data.data > rxe-srp.sends.tsv 2>/dev/null
