#!/usr/bin/env bash
# Regenerates summary-words.tsv, the tshark reference of
# cmd/rdmashark/golden_words_test.go's TestTsharkSummaryWords: the Info
# column `tshark -r` prints (one pass, as rdmashark dissect prints) for the
# ARP, ICMP, ICMPv6 packets and the TCP segments without payload (SYN, ACK,
# FIN, RST: the ones tshark does not hand to a protocol above TCP) that
# carry no TCP analysis tag, on Ethernet, Linux cooked v1 and v2 and IPoIB
# captures. One line per packet: CAPTURE <tab> FRAME <tab> INFO.
#
# Needs tshark; the output is committed so the tests do not need it. Made
# with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
out=$here/summary-words.tsv
: > "$out"
for cap in rxe-rping.pcap siw-rping.pcap siw-rping-any-sll.pcap rxe-rping-any-sll2.pcap public/tcpdump-tests-ipoib.pcap \
	rxe-nfs3.pcap siw-nfs41.pcap lossy/siw-nfs3-lossy.pcap; do
	tshark -n -r "$pcaps/$cap" -Y 'arp || icmp || icmpv6 || (tcp && tcp.len == 0 && !tcp.analysis.flags && !iwarp_mpa)' \
		-T fields -e frame.number -e _ws.col.Info 2>/dev/null | sed "s#^#$cap\t#" >> "$out"
done
echo "summary-words.tsv: $(wc -l < "$out") lines"
