package roce

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// Test helpers: pull the MADs out of the real captures by stripping the
// headers in front of them by hand, so that these tests do not depend on
// the BTH/GRH/LRH layers.
//
//	RoCEv2:  Ethernet(14) | SLL2(20), IPv4(IHL*4), UDP(8, dst 4791), BTH(12), DETH(8), MAD(256), ICRC(4)
//	ERF/IB:  ERF(16), LRH(8), [GRH(40) if LNH=3], BTH(12), DETH(8), MAD(256), ICRC(4), VCRC(2)

const cmPcapDir = "../../testdata/pcaps"

// cmCapturedMAD is one MAD found in a capture: its 1-based frame number (as
// tshark numbers frames) and its 256 bytes.
type cmCapturedMAD struct {
	file  string
	frame int
	mad   []byte
}

const (
	cmLinkEthernet = 1
	cmLinkERF      = 197
	cmLinkSLL2     = 276
)

// cmMADsInCapture returns every MAD carried by a UD SEND_ONLY (opcode 0x64)
// to QP0 or QP1 in the capture.
func cmMADsInCapture(t testing.TB, name string) []cmCapturedMAD {
	t.Helper()
	lt, frames := pcaptest.Read(t, filepath.Join(cmPcapDir, name))
	link := int(lt)
	var out []cmCapturedMAD
	for _, f := range frames {
		frame, data := f.Num, f.Data
		bth := cmBTHOffset(link, data)
		if bth < 0 || len(data) < bth+20+MADLength {
			continue
		}
		opcode := data[bth]
		destQP := cmGet24(data[bth+5 : bth+8])
		if opcode != 0x64 || destQP > 1 {
			continue
		}
		mad := make([]byte, MADLength)
		copy(mad, data[bth+20:])
		out = append(out, cmCapturedMAD{file: name, frame: frame, mad: mad})
	}
	return out
}

// cmBTHOffset returns where the BTH starts in a frame, or -1.
func cmBTHOffset(link int, data []byte) int {
	ip := -1
	switch link {
	case cmLinkEthernet:
		if len(data) >= 14 && binary.BigEndian.Uint16(data[12:14]) == 0x0800 {
			ip = 14
		}
	case cmLinkSLL2:
		if len(data) >= 20 && binary.BigEndian.Uint16(data[0:2]) == 0x0800 {
			ip = 20
		}
	case cmLinkERF:
		// ERF header: type at byte 8 (21 = INFINIBAND, bit 7 = extension
		// headers follow, none in our capture).
		if len(data) < 16+8 || data[8] != 21 {
			return -1
		}
		lrh := 16
		switch data[lrh+1] & 0x3 { // LNH
		case 2:
			return lrh + 8
		case 3:
			return lrh + 8 + 40
		}
		return -1
	}
	if ip < 0 || len(data) < ip+20 || data[ip]>>4 != 4 || data[ip+9] != 17 {
		return -1
	}
	udp := ip + int(data[ip]&0xf)*4
	if len(data) < udp+8 || binary.BigEndian.Uint16(data[udp+2:udp+4]) != 4791 {
		return -1
	}
	return udp + 8
}

// cmCaptureFiles are the captures holding CM traffic.
var cmCaptureFiles = []string{
	"rxe-rping.pcap",
	"rxe-rping-any-sll2.pcap",
	"rxe-nfs3.pcap",
	"rxe-nfs41.pcap",
	"rxe-nfs42-small.pcap",
	"rxe-ib_send_bw.pcap",
	"rxe-ib_write_bw.pcap",
	"public/montybeatnik-rdma-roce-lab-test.pcap",
	"public/montybeatnik-rdma-roce-lab-roce_capture_read-write-ecn.pcap",
	"public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap",
}

// cmAllCapturedMADs returns the MADs of every capture in cmCaptureFiles.
func cmAllCapturedMADs(t testing.TB) []cmCapturedMAD {
	var all []cmCapturedMAD
	for _, name := range cmCaptureFiles {
		all = append(all, cmMADsInCapture(t, name)...)
	}
	return all
}
