package pcaptest

import (
	"encoding/binary"
	"testing"
)

// TCPPayload returns the TCP payload of an Ethernet (untagged) IPv4 frame
// and its offset in the frame; ok is false for anything else.
func TCPPayload(frame []byte) (payload []byte, off int, ok bool) {
	const eth = 14
	if len(frame) < eth+20 || binary.BigEndian.Uint16(frame[12:]) != 0x0800 || frame[eth]>>4 != 4 || frame[eth+9] != 6 {
		return nil, 0, false
	}
	ihl := int(frame[eth]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(frame[eth+2:]))
	if ihl < 20 || total < ihl+20 || eth+total > len(frame) {
		return nil, 0, false
	}
	tcp := eth + ihl
	doff := int(frame[tcp+12]>>4) * 4
	if doff < 20 || ihl+doff > total {
		return nil, 0, false
	}
	return frame[tcp+doff : eth+total], tcp + doff, true
}

// SetTCPPayload returns a copy of the Ethernet IPv4 TCP frame with its
// payload replaced, the IPv4 total length and header checksum and the TCP
// checksum recomputed: the frame a sender would have put on the wire with
// that payload (sequence numbers are left as they were).
func SetTCPPayload(t testing.TB, frame, payload []byte) []byte {
	t.Helper()
	_, off, ok := TCPPayload(frame)
	if !ok {
		t.Fatal("SetTCPPayload: not an Ethernet IPv4 TCP frame")
	}
	const eth = 14
	out := append(append([]byte(nil), frame[:off]...), payload...)
	ihl := int(out[eth]&0x0f) * 4
	binary.BigEndian.PutUint16(out[eth+2:], uint16(len(out)-eth))
	out[eth+10], out[eth+11] = 0, 0
	binary.BigEndian.PutUint16(out[eth+10:], ^fold(sum(0, out[eth:eth+ihl])))
	FixTCPChecksum(t, out)
	return out
}

// FixTCPChecksum recomputes the TCP checksum of an Ethernet IPv4 TCP frame
// in place (after its payload was edited).
func FixTCPChecksum(t testing.TB, frame []byte) {
	t.Helper()
	_, _, ok := TCPPayload(frame)
	if !ok {
		t.Fatal("FixTCPChecksum: not an Ethernet IPv4 TCP frame")
	}
	const eth = 14
	ihl := int(frame[eth]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(frame[eth+2:]))
	seg := frame[eth+ihl : eth+total]
	seg[16], seg[17] = 0, 0
	s := sum(0, frame[eth+12:eth+20]) // source and destination addresses
	s += 6 + uint32(len(seg))
	s = sum(s, seg)
	binary.BigEndian.PutUint16(seg[16:], ^fold(s))
}

func sum(s uint32, b []byte) uint32 {
	for len(b) >= 2 {
		s += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

func fold(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}
