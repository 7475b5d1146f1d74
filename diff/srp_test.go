package diff

import (
	"encoding/hex"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// FuzzSRPPD: whatever a set-up's private data holds, decoding it as SRP's
// login, response or rejection never panics. Seeded with rxe-srp.pcap's
// consumer private data (the CM REQ's after the RDMA/CM header, the CM
// REP's, zero padding trimmed, as diff's pd.*.consumer_bytes show them)
// and rxe-srp-rej.pcap's SRP_LOGIN_REJ (tshark -x of frame 14).
func FuzzSRPPD(f *testing.F) {
	for _, h := range []string{
		"00000000000000000006800000002044fe80000000000000505400fffe000202505400fffe000201505400fffe0002010044",
		"c00000000000008000000000000000000000204400002044000680",
		"c20000000001000600000000000000000000000000000000000600000000000000",
	} {
		b, _ := hex.DecodeString(h)
		for d := range 3 {
			f.Add(b, uint8(d))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, how uint8) {
		c := &dissect.Connection{Transport: dissect.TransportRoCE, ServiceID: 0x00000000010615b3}
		if how&4 != 0 {
			c.ServiceID = 0 // the InfiniBand CM layout
		}
		if how&8 != 0 {
			c.State = dissect.StateRejected
		}
		neg := func(string, any) {}
		switch how & 3 {
		case 0, 1:
			srpPD(neg, "pd", int(how&1), c, b)
		default:
			srpReject(neg, "pd", b)
		}
	})
}
