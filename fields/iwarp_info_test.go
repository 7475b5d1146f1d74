package fields

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// TestFPDUInfoFormats: the FPDU items of the summary line, appended
// without fmt, read as the printf formats that defined them (before
// issue 14) on FPDUs the bundled captures lack: a non-standard QN, a
// message offset, an undecodable DDP header, the largest values.
func TestFPDUInfoFormats(t *testing.T) {
	errBad := errors.New("bad")
	for _, tc := range []struct {
		f    dissect.IWARPFPDU
		want string
	}{
		{dissect.IWARPFPDU{ULPDULength: 65535, Err: errBad}, fmt.Sprintf("FPDU Len=%d [malformed: %v]", 65535, errBad)},
		{func() (f dissect.IWARPFPDU) {
			f.DDP.T, f.DDP.L, f.DDP.DV = true, true, 1
			f.RDMAP.Opcode = iwarp.OpRDMAWrite
			f.DDP.STag, f.DDP.TO, f.DataLen = 0xab, 0, 4096
			return
		}(), fmt.Sprintf("%s STag=0x%08x TO=0x%x Len=%d", iwarp.OpRDMAWrite, 0xab, 0, 4096)},
		{func() (f dissect.IWARPFPDU) {
			f.DDP.T, f.DDP.L, f.DDP.DV = true, true, 1
			f.RDMAP.Opcode = iwarp.OpRDMAReadResponse
			f.DDP.STag, f.DDP.TO, f.DataLen = 0xffffffff, 0xffffffffffffffff, 1
			return
		}(), fmt.Sprintf("%s STag=0x%08x TO=0x%x Len=%d", iwarp.OpRDMAReadResponse, uint32(0xffffffff), uint64(0xffffffffffffffff), 1)},
		{func() (f dissect.IWARPFPDU) {
			f.DDP.L, f.DDP.DV = true, 1
			f.RDMAP.Opcode = iwarp.OpSendWithInvalidate
			f.DDP.QN, f.DDP.MSN, f.DDP.MO = 7, 0xffffffff, 12
			f.RDMAP.InvalidateSTag, f.DataLen = 0x1234, 0
			return
		}(), fmt.Sprintf("%s QN=%d MSN=%d MO=%d InvSTag=0x%08x Len=%d", iwarp.OpSendWithInvalidate, 7, uint32(0xffffffff), 12, 0x1234, 0)},
		{func() (f dissect.IWARPFPDU) {
			f.DDP.L, f.DDP.DV = false, 1
			f.RDMAP.Opcode = iwarp.OpRDMAReadRequest
			f.DDP.QN, f.DDP.MSN = iwarp.QNReadRequest, 3
			q := &f.RDMAP.ReadRequest
			q.SourceSTag, q.SourceTaggedOffset, q.RDMAReadMessageSize, q.SinkSTag, q.SinkTaggedOffset = 1, 0x10, 65536, 0xffff0000, 0
			return
		}(), fmt.Sprintf("%s MSN=%d SrcSTag=0x%08x SrcTO=0x%x Len=%d SinkSTag=0x%08x SinkTO=0x%x [more]",
			iwarp.OpRDMAReadRequest, 3, 1, 0x10, 65536, 0xffff0000, 0)},
	} {
		var b infoBuf
		fpduInfo(&tc.f, &b)
		if got := b.String(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
