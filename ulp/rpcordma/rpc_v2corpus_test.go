package rpcordma

import (
	"github.com/rdmashark/rdmashark/dissect"
	"strings"
	"testing"
)

// TestV2CorpusFields: the independent version 2 corpus
// (testdata/v2corpus: headers encoded by the rpcgen routines of the
// draft's XDR) decodes to what its encoder (encoder/enc.c) wrote. Each
// row is a labelled Send (valid.labels) and the values enc.c put in it:
// rdma_xid, rdma_vers, rdma_credit (sent count + 32), rdma_htype, and the
// body's fields.
func TestV2CorpusFields(t *testing.T) {
	names := []string{"rpcordma.xid", "rpcordma.version", "rpcordma.flow_control", "rpcordma.msg_type",
		"rdmashark.rpcordma.property", "rdmashark.rpcordma.property_value", "rdmashark.rpcordma.remaining",
		"rdmashark.rpcordma.inv_handle", "rpcordma.rdma_handle", "rpcordma.rdma_length", "rpcordma.position",
		"rpcordma.errcode", "rpcordma.vers_low", "rpcordma.vers_high"}
	want := map[int]string{
		// client CONNPROP_MIDDLE: SBSIZ 8192, RSSIZ 1048576.
		4: "0x00000000|2|32|6|1,3|8192,1048576||||||||",
		// server CONNPROP_FINAL: SBSIZ, RBSIZ 8192, RCSIZ 16, BRS CONT, property 99 of 3 octets.
		6: "0x00000000|2|32|7|1,2,4,5,99|8192,8192,16,RDMA2_RVRSDIR_CONT,unknown property: 010203||||||||",
		// client CONNPROP_FINAL: RBSIZ 8192, RCSIZ empty (the default), HOSTAUTH "rdmashark".
		8:  "0x00000000|2|33|7|2,4,6|8192,16 (default),72646d61736861726b||||||||",
		10: "0x00000000|2|33|5||||||||||", // server GRANT
		// a 10096-octet WRITE Call in pieces of 4001 and 3002 octets.
		28: "0x52000003|2|36|9|||6095|||||||",
		32: "0x52000003|2|37|9|||3093|||||||",
		37: "0x52000003|2|38|10||||0x00000000||||||",
		// WRITE with a Read chunk after the 96 octets before its data, solicited invalidation.
		41: "0x52000004|2|39|10||||0xaa000001|0xaa000001|4096|96|||",
		// READ with a two-segment Write chunk, and its Reply returning it.
		50: "0x52000005|2|40|10||||0x00000000|0xbb000001,0xbb000002|4096,4096||||",
		62: "0x52000005|2|38|13|||||0xbb000001,0xbb000002|4096,4096||||",
		// CALL_EXTERNAL: the 40-octet Call chunk at position 0 and a provisional 1024-octet Reply chunk.
		64: "0x52000006|2|41|8||||0x00000000|0xcc000001,0xcc000002|40,1024|0|||",
		70: "0x52000006|2|39|11|||||0xcc000002|24||||",
		// a 12044-octet READ Reply in pieces of 6002 and 3001, then in a Reply chunk.
		79:  "0x52000007|2|40|12|||6042|||||||",
		83:  "0x52000007|2|41|12|||3041|||||||",
		104: "0x52000008|2|43|11|||||0xdd000001|12044||||",
		// RDMA2_ERR_VERS 2..2, RDMA2_ERR_SYSTEM.
		108: "0x52000009|2|44|4||||||||1|2|2",
		152: "0x52000014|2|55|4||||||||100||",
		// the second connection: version 2 refused with 1..1, version 1 after.
		159: "0x53000001|2|32|4||||||||1|1|1",
		161: "0x53000002|1|32|0||||||||||",
	}
	seen := 0
	runCapture(t, "v2/rxe-nfs3-v2-valid.pcap", Options{}, func(p *dissect.Packet) {
		w, ok := want[p.Number]
		if !ok {
			return
		}
		seen++
		var got []string
		for _, n := range names {
			v, _ := Present.Values(n, p, nil)
			got = append(got, strings.Join(v, ","))
		}
		if g := strings.Join(got, "|"); g != w {
			t.Errorf("frame %d:\n got %s\nwant %s", p.Number, g, w)
		}
	})
	if seen != len(want) {
		t.Errorf("%d of %d frames seen", seen, len(want))
	}
}
