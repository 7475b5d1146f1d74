#!/bin/sh
# Regenerates the tshark reference fields the tests compare against.
# tshark 4.0 (Debian bookworm) made the committed files; run from this directory.
set -e
P=../../../testdata/pcaps
FPDU="-e frame.number -e tcp.srcport -e tcp.dstport -e tcp.seq_raw -e tcp.len
 -e iwarp_mpa.ulpdulength -e iwarp_mpa.pad -e iwarp_mpa.crc
 -e iwarp_ddp.tagged_flag -e iwarp_ddp.last_flag -e iwarp_ddp.rsvd -e iwarp_ddp.dv -e iwarp_ddp.rsvdulp
 -e iwarp_ddp.stag -e iwarp_ddp.tagged_offset -e iwarp_ddp.qn -e iwarp_ddp.msn -e iwarp_ddp.mo
 -e iwarp_rdma.version -e iwarp_rdma.rsv -e iwarp_rdma.opcode -e iwarp_rdma.reserved -e iwarp_rdma.inval_stag
 -e iwarp_rdma.sinkstag -e iwarp_rdma.sinkto -e iwarp_rdma.rdmardsz -e iwarp_rdma.srcstag -e iwarp_rdma.srcto
 -e _ws.malformed -e _ws.expert.message"
REQREP="-e frame.number -e tcp.srcport -e tcp.dstport -e tcp.seq_raw -e tcp.len
 -e iwarp_mpa.key.req -e iwarp_mpa.key.rep -e iwarp_mpa.marker_flag -e iwarp_mpa.crc_flag -e iwarp_mpa.rej_flag
 -e iwarp_mpa.res -e iwarp_mpa.rev -e iwarp_mpa.pdlength -e iwarp_mpa.privatedata -e _ws.expert.message"
for f in siw-rping siw-rping-any-sll siw-ib_send_bw siw-ib_read_bw siw-nfs3 siw-nfs41 siw-nfs42-small; do
	tshark -r $P/$f.pcap -Y 'iwarp_mpa.ulpdulength' -T fields -E header=y -E occurrence=a -E aggregator=, $FPDU | gzip -n -9 > $f.fpdu.tsv.gz
	tshark -r $P/$f.pcap -Y 'iwarp_mpa.req or iwarp_mpa.rep' -T fields -E header=y -E occurrence=a -E aggregator=, $REQREP > $f.reqrep.tsv
done
# An MPA reject (issue 28): the mutated capture's Reply sets R.
mkdir -p mutated
for f in mutated/siw-nfs3-head--mpa-reject; do
	tshark -r $P/$f.pcap -Y 'iwarp_mpa.req or iwarp_mpa.rep' -T fields -E header=y -E occurrence=a -E aggregator=, $REQREP > $f.reqrep.tsv
done
# Untagged messages tshark reassembled (iwarp_rdma.send.*).
for f in siw-ib_send_bw; do
	tshark -r $P/$f.pcap -Y 'iwarp_rdma.send.reassembled.length' -T fields -E header=y -E occurrence=a -E aggregator=, \
		-e frame.number -e tcp.srcport -e iwarp_ddp.qn -e iwarp_ddp.msn -e iwarp_rdma.send.reassembled.length \
		-e iwarp_rdma.send.fragment.count -e iwarp_rdma.send.fragment > $f.sendreasm.tsv
done
