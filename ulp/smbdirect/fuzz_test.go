package smbdirect_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// FuzzSession: any sequence of Sends and RDMA operations, whatever their
// bytes, goes through the session and the rules without a panic.
func FuzzSession(f *testing.F) {
	f.Add([]byte{0, 20, 1, 32, 0, 80, 2, 8, 3, 0}, negReq(0x100, 0x100, 255, 1364, 173910), negResp(254, 8388608, 1364, 173910),
		data(1, 0, 0, smb2(8, 1, false, 0, readWrite(8, 2, 0x1000, 0x10, 4096))))
	f.Add([]byte{4, 200, 5, 90, 8, 100}, data(1, 0, 50, smb2(5, 1, false, 0, make([]byte, 60))), data(0, 0, 0, smb2(5, 1, true, 0x103, nil)),
		data(1, 0, 0, smb2(9, 2, false, 0, readWrite(9, 1, 0x2000, 0x11, 8192))))
	f.Fuzz(func(t *testing.T, script, a, b, c []byte) {
		r := newRig(t)
		for i := 0; i+1 < len(script) && i < 64; i += 2 {
			n := int(script[i+1])
			src := [][]byte{a, b, c, a}[script[i]>>2&3]
			data := src[:min(n, len(src))]
			switch script[i] & 3 {
			case 0:
				r.send(c2s, data, false, 0)
			case 1:
				r.send(s2c, data, script[i]&16 != 0, uint32(n))
			case 2:
				r.op(dissect.RDMARead, s2c, uint32(n)&0x1f, uint64(n)<<8, uint32(len(data)))
			case 3:
				r.op(dissect.RDMAWrite, dissect.Direction(1+script[i]>>7), uint32(n)&0x1f, 0, uint32(len(data)))
			}
		}
		r.findings()
	})
}
