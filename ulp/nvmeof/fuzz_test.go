package nvmeof_test

import (
	"encoding/binary"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// FuzzSession: any sequence of Sends and RDMA operations, whatever their
// bytes, goes through the session and the rules without a panic, and the
// queue's counts stay consistent.
func FuzzSession(f *testing.F) {
	cmd := make([]byte, 64)
	cmd[0], cmd[39] = 0x02, 0x4f
	binary.LittleEndian.PutUint32(cmd[32:], 4096)
	cpl := make([]byte, 16)
	f.Add(cmReq(1, 32, 31), []byte{0, 64, 1, 16, 2, 8, 0, 70}, cmd, cpl)
	f.Add([]byte{1, 2}, []byte{3, 0, 1, 1}, cpl, cmd)
	f.Fuzz(func(t *testing.T, req, script, a, b []byte) {
		r := newRig(t, append(cmReq(1, 32, 31)[:0:0], req...))
		for i := 0; i+1 < len(script) && i < 64; i += 2 {
			n := int(script[i+1])
			src := a
			if script[i]&4 != 0 {
				src = b
			}
			data := src[:min(n, len(src))]
			switch script[i] & 3 {
			case 0:
				r.send(dissect.DirClientToServer, data, false, 0)
			case 1:
				r.send(dissect.DirServerToClient, data, script[i]&8 != 0, uint32(n))
			case 2:
				r.op(dissect.RDMARead, dissect.DirServerToClient, uint32(n), uint64(n), uint32(len(data)))
			case 3:
				r.op(dissect.RDMAWrite, dissect.Direction(1+script[i]>>7), uint32(n), 0, uint32(len(data)))
			}
		}
		r.findings()
	})
}
