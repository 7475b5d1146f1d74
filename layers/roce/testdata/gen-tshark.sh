#!/bin/sh
# Regenerates the tshark reference fields the tests compare against.
# Needs tshark (made with 4.0.17). Run from this directory.
set -e
P=../../../testdata/pcaps
ROCE="-e frame.number -e infiniband.bth.opcode -e infiniband.bth.se -e infiniband.bth.m
 -e infiniband.bth.padcnt -e infiniband.bth.tver -e infiniband.bth.p_key -e infiniband.bth.destqp
 -e infiniband.bth.a -e infiniband.bth.psn -e infiniband.reth.va -e infiniband.reth.r_key
 -e infiniband.reth.dmalen -e infiniband.aeth.syndrome -e infiniband.aeth.msn -e infiniband.deth.q_key
 -e infiniband.deth.srcqp -e infiniband.immdt -e infiniband.ieth -e infiniband.invariant.crc"
# RoCE: the first 4 packets of every opcode in every RoCE capture.
for f in rxe-ib_send_bw rxe-ib_write_bw rxe-nfs3 rxe-nfs41 rxe-nfs42-small rxe-rping \
         public/montybeatnik-rdma-roce-lab-test; do
	out=tshark-$(basename $f).tsv
	tshark -r $P/$f.pcap -Y infiniband.bth -T fields -E header=y -E occurrence=f $ROCE 2>/dev/null |
		awk -F'\t' 'NR==1 || n[$2]++ < 4' > $out
done
# Native InfiniBand (ERF): every packet.
tshark -r $P/public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap -T fields -E header=y -E occurrence=f \
	-e frame.number -e infiniband.lrh.vl -e infiniband.lrh.lver -e infiniband.lrh.sl -e infiniband.lrh.lnh \
	-e infiniband.lrh.dlid -e infiniband.lrh.pktlen -e infiniband.lrh.slid -e infiniband.grh.ipver \
	-e infiniband.grh.tclass -e infiniband.grh.flowlabel -e infiniband.grh.paylen -e infiniband.grh.nxthdr \
	-e infiniband.grh.hoplmt -e infiniband.grh.sgid -e infiniband.grh.dgid -e infiniband.bth.opcode \
	-e infiniband.bth.p_key -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.deth.q_key \
	-e infiniband.deth.srcqp -e infiniband.aeth.syndrome -e infiniband.aeth.msn \
	-e infiniband.invariant.crc -e infiniband.variant.crc 2>/dev/null > tshark-ib-erf.tsv
# One packet of every defined opcode, built by synth_test.go.
tshark -r synthetic-opcodes.pcap -T fields -E header=y -E occurrence=f $ROCE \
	-e infiniband.atomiceth.swapdt -e infiniband.atomiceth.cmpdt -e infiniband.atomicacketh.origremdt \
	-e infiniband.rdeth.eecnxt -e infiniband.aeth.syndrome.opcode -e infiniband.aeth.syndrome.credit_count \
	-e infiniband.aeth.syndrome.timer -e infiniband.aeth.syndrome.error_code 2>/dev/null > tshark-synthetic.tsv
