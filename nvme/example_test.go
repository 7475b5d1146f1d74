package nvme_test

import (
	"fmt"

	"github.com/rdmashark/rdmashark/nvme"
)

// The admin queue's Connect and its completion, as the Linux host and
// target sent them in rxe-nvmeof.pcap (frames 14 and 18); the values
// printed are those tshark 4.0 shows for these frames (tshark names SGL
// subtype 0xF "Transport specific"; the NVMe RDMA transport defines it as
// Invalidate Key).
func Example() {
	connect := []byte{
		0x7f, 0x40, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf4, 0xdb, 0xe6, 0x4f, 0xb2, 0x3b, 0xff,
		0x00, 0x04, 0x00, 0x17, 0x03, 0x00, 0x00, 0x4f, 0x00, 0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00,
		0x88, 0x13, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	}
	response := []byte{0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}

	var cmd nvme.Command // reuse one per queue: decoding allocates nothing
	var cqe nvme.Completion
	for _, send := range [][]byte{connect, response} {
		switch nvme.Classify(send) {
		case nvme.KindCommand:
			if err := cmd.DecodeFromBytes(send); err != nil {
				panic(err)
			}
			c := cmd.Connect()
			fmt.Printf("%s CID %d: QID %d SQSIZE %d KATO %d ms\n", cmd.Name(true), cmd.CID, c.QID, c.SQSIZE, c.KATO)
			fmt.Printf("SGL1 %s, %s: %d octets, key 0x%x, remote invalidation asked: %v\n",
				cmd.SGL1.Type, cmd.SGL1.Subtype, cmd.SGL1.Length, cmd.SGL1.Key, cmd.SGL1.InvalidateKey())
		case nvme.KindCompletion:
			if err := cqe.DecodeFromBytes(send); err != nil {
				panic(err)
			}
			fmt.Printf("CID %d SQHD %d: %s, CNTLID %d\n", cqe.CID, cqe.SQHD,
				cqe.Status.Describe(cmd.OPC, true, cmd.FCTYPE), cqe.ConnectResponse().CNTLID)
		}
	}
	// Output:
	// Connect CID 0: QID 0 SQSIZE 31 KATO 5000 ms
	// SGL1 Keyed Data Block, Invalidate Key: 1024 octets, key 0x317, remote invalidation asked: true
	// CID 0 SQHD 1: Successful Completion, CNTLID 1
}
