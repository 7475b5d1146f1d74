#!/bin/sh
# Regenerates the tshark reference output the nvme package's tests compare
# against (nvme/tshark_test.go). Run from this directory with TShark 4.0
# (these files: TShark 4.0.17, Debian bookworm 4.0.17-0+deb12u3).
# -2: two passes, so that tshark decodes the data an RDMA Read/Write moved
# for a command (Connect data, Identify data) in the data packets.
set -e
P=../../pcaps/ulp/rxe-nvmeof.pcap
F="-T fields -E header=y -E separator=/t -E aggregator=, -E occurrence=a"

# Capsules: commands (SQEs) and completions (CQEs), fabrics and CM fields
# (rxe-nvmeof.pcap, and the mix capture: discovery, a refused Connect, errors).
for C in rxe-nvmeof rxe-nvmeof-mix-small; do
tshark -2 -r ../../pcaps/ulp/$C.pcap -Y 'nvme-rdma || nvme' $F \
  -e frame.number -e infiniband.bth.opcode -e nvme-rdma.cmd.qid \
  -e nvme-rdma.cm.req.recfmt -e nvme-rdma.cm.req.qid -e nvme-rdma.cm.req.hrqsize -e nvme-rdma.cm.req.hsqsize \
  -e nvme-rdma.cm.rsp.recfmt -e nvme-rdma.cm.rsp.crqsize \
  -e nvme.cmd.opc -e nvme.cmd.fuse_op -e nvme.cmd.psdt -e nvme.cmd.cid -e nvme.cmd.nsid -e nvme.cmd.mptr \
  -e nvme.cmd.sgl.type -e nvme.cmd.sgl.subtype -e nvme.cmd.sgl1.addr -e nvme.cmd.sgl1.len -e nvme.cmd.sgl1.key \
  -e nvme.cmd.dword10 -e nvme.cmd.dword11 -e nvme.cmd.dword12 -e nvme.cmd.dword13 -e nvme.cmd.dword14 -e nvme.cmd.dword15 \
  -e nvme.cmd.slba -e nvme.cmd.nlb -e nvme.cmd.prinfo -e nvme.cmd.fua -e nvme.cmd.lr \
  -e nvme.cmd.dsm.access_freq -e nvme.cmd.dsm.access_lat -e nvme.cmd.dsm.seq_req -e nvme.cmd.dsm.incompressible \
  -e nvme.cmd.eilbrt -e nvme.cmd.elbat -e nvme.cmd.elbatm \
  -e nvme.cmd.identify.dword14.uuid_index -e nvme.cmd.identify.dwrod11.nvmesetid \
  -e nvme.cmd.set_features.dword14.uuid -e nvme.cmd.get_logpage.dword10.numdl -e nvme.cmd.get_logpage.dword11.numdu \
  -e nvme.cmd.get_logpage.dword11.lsi -e nvme.cmd.identify.get_logpage.dword14.uuid_index \
  -e nvme.cmd.identify.dword10.cns -e nvme.cmd.set_features.dword10.fid -e nvme.cmd.get_features.dword10.fid \
  -e nvme.cmd.identify.dword10.cntid \
  -e nvme.cmd.get_logpage.dword10.id -e nvme.cmd.get_logpage.dword10.lsp -e nvme.cmd.get_logpage.dword10.rae -e nvme.cmd.get_logpage.numd -e nvme.cmd.get_logpage.lpo \
  -e nvme.cmd.set_features.dword11.kat.kato -e nvme.cmd.set_features.dword11.nq.nsqr -e nvme.cmd.set_features.dword11.nq.ncqr \
  -e nvme.fabrics.cmd.opc -e nvme.fabrics.cmd.cid -e nvme.fabrics.cmd.fctype \
  -e nvme.fabrics.cmd.connect.recfmt -e nvme.fabrics.cmd.connect.qid -e nvme.fabrics.cmd.connect.sqsize \
  -e nvme.fabrics.cmd.connect.cattr -e nvme.fabrics.cmd.connect.kato \
  -e nvme.fabrics.cmd.prop_get_set.attrib.size -e nvme.fabrics.cmd.prop_get_set.offset -e nvme.fabrics.prop_get_set.data.4B -e nvme.fabrics.prop_get_set.data.8B \
  -e nvme.cqe.dword0.get_features.nq.nsqa -e nvme.cqe.dword0.get_features.nq.ncqa -e nvme.cqe.dword0.aev.aet -e nvme.cqe.dword0.aev.aei -e nvme.cqe.dword0.aev.lpi \
  -e nvme.cqe.dword0 -e nvme.cqe.dword1 -e nvme.cqe.sqhd -e nvme.cqe.sqid -e nvme.cqe.cid -e nvme.cqe.status \
  -e nvme.cqe.status.p -e nvme.cqe.status.sc -e nvme.cqe.status.sct -e nvme.cqe.status.crd -e nvme.cqe.status.m -e nvme.cqe.status.dnr \
  -e nvme.fabrics.cqe.sts -e nvme.fabrics.cqe.connect.cntrlid -e nvme.fabrics.cqe.connect.authreq \
  -e nvme.fabrics.prop_get.ccap -e nvme.fabrics.prop_get.vs -e nvme.fabrics.prop_get_set.csts -e nvme.fabrics.prop_get_set.cc \
  > $C.capsules.tsv 2>/dev/null
done

# Data moved for a command by RDMA Read (Connect data) or RDMA Write
# (Identify data), as tshark decodes it in the data packets.
tshark -2 -r $P -Y 'nvme.fabrics.cmd.connect.data.hostnqn || nvme.cmd.identify.ctrl.vid || nvme.cmd.identify.ctrl.subnqn || nvme.cmd.identify.ctrl.nvmeof.ioccsz || nvme.cmd.identify.ns.nsze || nvme.cmd.identify.nslist.nsid || nvme.cmd.get_logpage.identify.numrec' $F \
  -e frame.number \
  -e nvme.fabrics.cmd.connect.data.hostid -e nvme.fabrics.cmd.connect.data.cntrlid \
  -e nvme.fabrics.cmd.connect.data.subnqn -e nvme.fabrics.cmd.connect.data.hostnqn \
  -e nvme.cmd.identify.ctrl.vid -e nvme.cmd.identify.ctrl.sn -e nvme.cmd.identify.ctrl.mdts -e nvme.cmd.identify.ctrl.cntlid \
  -e nvme.cmd.identify.ctrl.ver -e nvme.cmd.identify.ctrl.kas -e nvme.cmd.identify.ctrl.sqes -e nvme.cmd.identify.ctrl.cqes \
  -e nvme.cmd.identify.ctrl.maxcmd -e nvme.cmd.identify.ctrl.nn -e nvme.cmd.identify.ctrl.subnqn \
  -e nvme.cmd.identify.ctrl.nvmeof.ioccsz -e nvme.cmd.identify.ctrl.nvmeof.iorcsz -e nvme.cmd.identify.ctrl.nvmeof.icdoff \
  -e nvme.cmd.identify.ctrl.nvmeof.msdbd -e nvme.cmd.identify.ctrl.sgls \
  -e nvme.cmd.identify.ctrl.ssvid -e nvme.cmd.identify.ctrl.mn -e nvme.cmd.identify.ctrl.fr -e nvme.cmd.identify.ctrl.rab \
  -e nvme.cmd.identify.ctrl.ieee -e nvme.cmd.identify.ctrl.cmic -e nvme.cmd.identify.ctrl.cntrltype \
  -e nvme.cmd.identify.ctrl.nvmeof.fcatt -e nvme.cmd.identify.ctrl.nvmeof.ofcs \
  -e nvme.cmd.identify.ns.nsfeat -e nvme.cmd.identify.ns.mc -e nvme.cmd.identify.ns.dpc -e nvme.cmd.identify.ns.dps \
  -e nvme.cmd.identify.ns.nmic -e nvme.cmd.identify.ns.nguid -e nvme.cmd.identify.ns.eui64 \
  -e nvme.cmd.identify.ns.nsze -e nvme.cmd.identify.ns.ncap -e nvme.cmd.identify.ns.nuse -e nvme.cmd.identify.ns.nlbaf \
  -e nvme.cmd.identify.ns.flbas -e nvme.cmd.identify.ns.lbaf \
  -e nvme.cmd.identify.nslist.nsid -e nvme.cmd.get_logpage.identify.genctr -e nvme.cmd.get_logpage.identify.numrec \
  > rxe-nvmeof.data.tsv 2>/dev/null

# Pairing (ulp/nvmeof's tests): every command and completion capsule with its
# queue, CID and, for a Send With Invalidate, the invalidated R_Key.
for P in rxe; do
  tshark -2 -r ../../pcaps/ulp/$P-nvmeof.pcap -Y 'nvme.cmd.opc || nvme.fabrics.cmd.opc || nvme.cqe.cid' \
    -T fields -E header=y -E separator=/t \
    -e frame.number -e nvme-rdma.cmd.qid -e nvme.cmd.cid -e nvme.fabrics.cmd.cid -e nvme.cqe.cid \
    -e infiniband.bth.opcode -e infiniband.ieth > $P-nvmeof.pairing.tsv
done

# The Info column of the capsules (ulp/nvmeof's AppendInfo test).
tshark -2 -r ../../pcaps/ulp/rxe-nvmeof.pcap -Y 'nvme.cmd.opc || nvme.fabrics.cmd.opc || nvme.cqe.cid' \
  -T fields -E separator=/t -e frame.number -e _ws.col.Info > rxe-nvmeof.info.tsv

# The lab captures of issue 26 (ulp/nvmeof/lab_test.go), RoCE only (tshark 4.0
# decodes no NVMe/RDMA on iWARP): every command and completion capsule with its
# RDMA connection (the destination QP and the PSN of its packet: a go-back-N
# replay repeats a PSN), queue, CID, opcode, completion status (SCT, SC, DNR)
# the first SGL (type, subtype, length), NLB and, for a Send With Invalidate,
# the invalidated R_Key.
for P in rxe-nvmeof-mix-small rxe-nvmeof-loss2; do
  [ -e ../../pcaps/ulp/$P.pcap ] || continue
  tshark -2 -r ../../pcaps/ulp/$P.pcap -Y 'nvme.cmd.opc || nvme.fabrics.cmd.opc || nvme.cqe.cid' \
    -T fields -E header=y -E separator=/t -E occurrence=f \
    -e frame.number -e infiniband.bth.destqp -e infiniband.bth.psn -e nvme-rdma.cmd.qid \
    -e nvme.cmd.opc -e nvme.fabrics.cmd.fctype -e nvme.cmd.cid -e nvme.fabrics.cmd.cid -e nvme.cqe.cid \
    -e nvme.cqe.status.sct -e nvme.cqe.status.sc -e nvme.cqe.status.dnr \
    -e nvme.cmd.sgl.type -e nvme.cmd.sgl.subtype -e nvme.cmd.sgl1.len -e nvme.cmd.nlb \
    -e infiniband.bth.opcode -e infiniband.ieth > $P.lab.tsv
done
# ... and the packets of the multi-packet Sends (SEND_FIRST, _MIDDLE, _LAST),
# which tshark 4.0 does not reassemble into capsules (KD-NVME-MULTIPACKET):
# a Send's length is the sum of its packets' UDP payloads less BTH and ICRC.
for P in rxe-nvmeof-mix-small rxe-nvmeof-loss2; do
  [ -e ../../pcaps/ulp/$P.pcap ] || continue
  tshark -r ../../pcaps/ulp/$P.pcap -Y 'infiniband.bth.opcode <= 2 && udp.dstport == 4791' \
    -T fields -E header=y -E separator=/t -E occurrence=f \
    -e frame.number -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.opcode -e udp.length \
    > $P.sends.tsv
done

# One row per command and completion capsule of rxe-nvmeof.pcap with what
# the nvme_commands export table shows of it (ulp/nvmeof/present's tests):
# queue, opcode (Fabrics: FCTYPE), CID, NSID, SLBA, NLB (tshark's is the
# number of blocks, NLB+1), the first SGL, the completion's status (SCT, SC,
# M, DNR), tshark's pairing (cmd_pkt, cqe_pkt) and latency (ms), and the
# R_Key a Send With Invalidate invalidated.
tshark -2 -r $P -Y 'nvme.cmd.opc || nvme.fabrics.cmd.opc || nvme.cqe.cid' \
  -T fields -E header=y -E separator=/t -E occurrence=f \
  -e frame.number -e nvme-rdma.cmd.qid -e nvme.cmd.opc -e nvme.fabrics.cmd.opc -e nvme.fabrics.cmd.fctype \
  -e nvme.cmd.cid -e nvme.fabrics.cmd.cid -e nvme.cmd.nsid -e nvme.cmd.slba -e nvme.cmd.nlb \
  -e nvme.cmd.sgl.type -e nvme.cmd.sgl.subtype -e nvme.cmd.sgl1.addr -e nvme.cmd.sgl1.len -e nvme.cmd.sgl1.key \
  -e nvme.cqe.cid -e nvme.cqe.status.sct -e nvme.cqe.status.sc -e nvme.cqe.status.m -e nvme.cqe.status.dnr \
  -e nvme.cmd_pkt -e nvme.cqe_pkt -e nvme.cmd_latency -e nvme.fabrics.cmd_pkt -e nvme.fabrics.cqe_pkt -e nvme.fabrics.cmd_latency \
  -e infiniband.ieth > rxe-nvmeof.commands.tsv 2>/dev/null

# The data admin commands return to the host by RDMA Write — Identify
# (Controller, Namespace, Active Namespace ID list) and Get Log Page (SMART,
# Commands Supported and Effects, ANA, Discovery, nvme.data) — as tshark
# decodes each RDMA Write packet at its offset in the data
# (ulp/nvmeof/fields_data_test.go): every field of the data tshark 4.0 has,
# on the frames that carry any.
DF=$(tshark -G fields 2>/dev/null | awk -F'\t' '$3 ~ /^nvme\.cmd\.(identify\.(ctrl|ns|nslist)\.|get_logpage\.(identify|smart|ana|cmd_and_eff|errinf)\.)/ || $3 == "nvme.data" {print $3}')
E=$(for f in $DF; do printf ' -e %s' $f; done)
Y=$(echo $DF | sed 's/ / || /g')
for C in ulp/rxe-nvmeof ulp/rxe-nvmeof-mix-small linux612/rxe-nvmeof; do
  O=$(echo $C | tr / -)
  tshark -2 -r ../../pcaps/$C.pcap -Y "$Y" $F -e frame.number $E > $O.admindata.tsv 2>/dev/null
done
