package pdtest

import (
	"bytes"
	"testing"
)

// TestLiteralsMatchCaptures: the literals are the captures' bytes.
func TestLiteralsMatchCaptures(t *testing.T) {
	cases := []struct {
		file  string
		frame int
		kind  string
		want  []byte
	}{
		{"rxe-nfs3.pcap", 36, "REQ", RxeNFS3REQ(t)},
		{"rxe-nfs3.pcap", 37, "REP", RxeNFS3REP(t)},
		{"rxe-nfs41.pcap", 14, "REP", RxeNFS3REP(t)},
		{"siw-nfs3.pcap", 39, "MPAReq", SiwNFS3MPAReq(t)},
		{"siw-nfs3.pcap", 41, "MPARep", SiwNFS3MPARep(t)},
		{"siw-nfs41.pcap", 16, "MPAReq", SiwNFS3MPAReq(t)},
		{"siw-nfs41.pcap", 18, "MPARep", SiwNFS3MPARep(t)},
		{"rxe-rping.pcap", 13, "REQ", RxeRpingREQ(t)},
	}
	for _, c := range cases {
		var got *SetupPD
		for _, p := range ReadSetupPD(t, "../../testdata/pcaps/"+c.file) {
			if p.Frame == c.frame {
				got = &p
				break
			}
		}
		if got == nil || got.Kind != c.kind {
			t.Errorf("%s frame %d: no %s found", c.file, c.frame, c.kind)
			continue
		}
		if !bytes.Equal(got.PD, c.want) {
			t.Errorf("%s frame %d private data\n got %x\nwant %x", c.file, c.frame, got.PD, c.want)
		}
	}
}
