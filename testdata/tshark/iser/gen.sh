#!/bin/sh
# Regenerates the tshark reference output ulp/iser's and iscsi's tests
# compare against. Run from this directory with TShark 4.0 (these files:
# TShark 4.0.17, Debian bookworm 4.0.17-0+deb12u3). tshark decodes iSER by
# its heuristic on InfiniBand payloads of RC connections whose CM REQ named
# a service ID of port 3260 (enabled by default; no -d needed), on the
# first packet of each Send only (it does not reassemble multi-packet
# Sends: KD-ISER-MULTIPACKET).
set -e
P=../../pcaps/ulp/rxe-iser.pcap
F="-T fields -E header=y -E separator=/t -E aggregator=, -E occurrence=a"

# Every iSER message: the iSER header, the iSCSI BHS fields tshark shows,
# the CDB opcode and the key=value text.
tshark -r $P -Y 'iser' $F \
  -e frame.number -e infiniband.bth.opcode -e infiniband.ieth \
  -e iser.flags -e iser.flags.opcode -e iser.flags.wsv -e iser.flags.rsv \
  -e iser.write_stag -e iser.write_base_offset -e iser.read_stag -e iser.read_base_offset \
  -e iscsi.opcode -e iscsi.I -e iscsi.flags -e iscsi.totalahslength -e iscsi.datasegmentlength \
  -e iscsi.initiatortasktag -e iscsi.targettransfertag \
  -e iscsi.scsicommand.F -e iscsi.scsicommand.R -e iscsi.scsicommand.W -e iscsi.scsicommand.attr \
  -e iscsi.scsicommand.expecteddatatransferlength -e iscsi.cmdsn -e iscsi.expstatsn \
  -e iscsi.statsn -e iscsi.expcmdsn -e iscsi.maxcmdsn -e iscsi.expdatasn \
  -e iscsi.scsiresponse.o -e iscsi.scsiresponse.u -e iscsi.scsiresponse.O -e iscsi.scsiresponse.U \
  -e iscsi.scsiresponse.response -e iscsi.scsiresponse.status -e iscsi.scsiresponse.residualcount \
  -e iscsi.scsiresponse.bidireadresidualcount -e iscsi.scsiresponse.senselength \
  -e iscsi.login.T -e iscsi.login.C -e iscsi.login.csg -e iscsi.login.nsg \
  -e iscsi.versionmax -e iscsi.versionmin -e iscsi.versionactive -e iscsi.isid -e iscsi.tsih -e iscsi.cid \
  -e iscsi.login.status -e iscsi.text.F -e iscsi.text.C \
  -e iscsi.logout.reason -e iscsi.logout.response -e iscsi.time2wait -e iscsi.time2retain \
  -e scsi_sbc.opcode -e scsi.status \
  -e iscsi.request_frame -e iscsi.response_frame \
  -e iscsi.keyvalue \
  > rxe-iser.pdus.tsv 2>/dev/null

# The Info column of the iSER messages (ulp/iser's AppendInfo test).
tshark -r $P -Y 'iser' -T fields -E separator=/t -e frame.number -e _ws.col.Info \
  > rxe-iser.info.tsv 2>/dev/null

# Every RDMA Write and RDMA Read Request (the first packet of each) with
# its RETH (ulp/iser's attachment test).
tshark -r $P -Y 'infiniband.bth.opcode == 6 || infiniband.bth.opcode == 10 || infiniband.bth.opcode == 12' $F \
  -e frame.number -e ip.src -e infiniband.bth.opcode -e infiniband.reth.va -e infiniband.reth.r_key \
  -e infiniband.reth.dmalen > rxe-iser.rdma.tsv 2>/dev/null

# Every packet of a Send (BTH opcodes 0-4, 22, 23) with its source and
# destination QP: which packets make each multi-packet Send (ulp/iser's
# tests map tshark's first packet of a Send to our last).
tshark -r $P -Y 'infiniband.bth.opcode <= 4 || infiniband.bth.opcode == 22 || infiniband.bth.opcode == 23' \
  -T fields -E header=y -E separator=/t -e frame.number -e ip.src -e infiniband.bth.destqp -e infiniband.bth.opcode \
  > rxe-iser.sends.tsv 2>/dev/null

# The CM REQ's consumer private data (after the RDMA-CM IP header) and the
# CM REP's private data: the iSER CM message (rdmashark.iser.cm_* fields).
tshark -r $P -Y 'infiniband.cm.req.ip_cm.private || infiniband.cm.rep.private' \
  -T fields -E header=y -E separator=/t -e frame.number -e infiniband.cm.req.ip_cm.private -e infiniband.cm.rep.private \
  > rxe-iser.cm.tsv 2>/dev/null
