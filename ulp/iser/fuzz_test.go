package iser_test

import (
	"encoding/binary"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// FuzzSession: any sequence of Sends and RDMA operations, whatever their
// bytes, goes through the session and the rules without a panic.
func FuzzSession(f *testing.F) {
	read := pdu(ctrl|rsv, 0, 0, 0x16cd, 0x1000, opCmd, 0xc1, 7, nil)
	binary.BigEndian.PutUint32(read[28+20:], 4096)
	read[28+32] = 0x28
	resp := pdu(ctrl, 0, 0, 0, 0, opResp, 0x80, 7, nil)
	login := pdu(ctrl, 0, 0, 0, 0, 0x43, 0x87, 0, []byte("RDMAExtensions=Yes\x00ImmediateData=No\x00"))
	f.Add(byte(0x80), []byte{0, 255, 1, 255, 2, 16, 4, 255}, login, read)
	f.Add(byte(0xc0), []byte{0, 255, 9, 255, 3, 7}, read, resp)
	f.Fuzz(func(t *testing.T, cmFlags byte, script, a, b []byte) {
		r := newRig(t, 0x80)
		r.c.PrivateData[0].Bytes = []byte{cmFlags, 0, 0, 0}
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
				r.send(dissect.DirServerToClient, data, script[i]&8 != 0, uint32(n)|0x1600)
			case 2:
				r.op(dissect.RDMARead, dissect.DirServerToClient, uint32(n)|0x1600, 0x1000, uint32(len(data)))
			case 3:
				r.op(dissect.RDMAWrite, dissect.Direction(1+script[i]>>7), uint32(n)|0x1600, 0x1000, uint32(len(data)))
			}
		}
		r.findings()
	})
}
