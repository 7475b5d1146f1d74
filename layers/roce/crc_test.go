package roce

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// Every RoCEv2 packet of the real captures carries the ICRC the Linux
// kernel computed; ours must agree on all of them, and flipping one payload
// byte must break it.
func TestICRCv2RealCaptures(t *testing.T) {
	for _, path := range capRoCEFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			frames := capRoCE(t, path)
			if len(frames) == 0 {
				t.Fatal("no RoCEv2 packets")
			}
			ok := 0
			for _, f := range frames {
				wire := binary.BigEndian.Uint32(f.ip[len(f.ip)-4:])
				got, err := ICRCv2(f.ip)
				if err != nil {
					t.Errorf("frame %d: %v", f.num, err)
					continue
				}
				if got != wire {
					t.Errorf("frame %d: ICRCv2 = 0x%08x, packet carries 0x%08x", f.num, got, wire)
					continue
				}
				ok++
				// Break it: flip the last byte before the ICRC (payload,
				// pad or last header byte).
				c := bytes.Clone(f.ip)
				c[len(c)-5] ^= 0x01
				if bad, _ := ICRCv2(c); bad == wire {
					t.Errorf("frame %d: ICRC unchanged after flipping a byte", f.num)
				}
				// Fix puts the right value back.
				if err := FixICRCv2(c); err != nil {
					t.Fatal(err)
				}
				c[len(c)-5] ^= 0x01
				if v, _ := ICRCv2(c); v == binary.BigEndian.Uint32(c[len(c)-4:]) {
					t.Errorf("frame %d: ICRC still valid after flipping back", f.num)
				}
			}
			if ok != len(frames) {
				t.Errorf("%d of %d RoCEv2 packets verified", ok, len(frames))
			}
			t.Logf("%d RoCEv2 packets, all ICRCs valid", ok)
		})
	}
}

// The variant fields (IPv4 TOS, TTL, checksum, UDP checksum, BTH Resv8a)
// must not change the ICRC; invariant ones (addresses, P_Key) must.
func TestICRCv2Masks(t *testing.T) {
	f := capRoCE(t, filepath.Join(capDir, "rxe-rping.pcap"))[0]
	want := binary.BigEndian.Uint32(f.ip[len(f.ip)-4:])
	ihl := int(f.ip[0]&0xF) * 4
	for _, tc := range []struct {
		name    string
		off     int
		variant bool
	}{
		{"IPv4 TOS", 1, true},
		{"IPv4 TTL", 8, true},
		{"IPv4 checksum", 10, true},
		{"UDP checksum", ihl + 6, true},
		{"BTH Resv8a (FECN/BECN)", ihl + 8 + 4, true},
		{"IPv4 source", 12, false},
		{"IPv4 ID", 4, false},
		{"UDP source port", ihl, false},
		{"BTH P_Key", ihl + 8 + 2, false},
		{"BTH DestQP", ihl + 8 + 7, false},
	} {
		c := bytes.Clone(f.ip)
		c[tc.off] ^= 0x5A
		got, err := ICRCv2(c)
		if err != nil {
			t.Fatal(err)
		}
		if (got == want) != tc.variant {
			t.Errorf("%s changed: ICRC 0x%08x, original 0x%08x, variant=%v", tc.name, got, want, tc.variant)
		}
	}
}

// RoCEv2 over IPv6: no capture has it, so build one from a real IPv4
// packet's UDP payload. The masked fields (traffic class, flow label, hop
// limit) must not matter, and Fix/compute must agree.
func TestICRCv2IPv6(t *testing.T) {
	f := capRoCE(t, filepath.Join(capDir, "rxe-rping.pcap"))[0]
	ihl := int(f.ip[0]&0xF) * 4
	udp := f.ip[ihl:]
	ip6 := make([]byte, 40+len(udp))
	ip6[0] = 0x60
	binary.BigEndian.PutUint16(ip6[4:], uint16(len(udp)))
	ip6[6], ip6[7] = 17, 64
	ip6[8], ip6[23], ip6[24], ip6[39] = 0xfe, 1, 0xfe, 2
	copy(ip6[40:], udp)
	if err := FixICRCv2(ip6); err != nil {
		t.Fatal(err)
	}
	want, err := ICRCv2(ip6)
	if err != nil || want != binary.BigEndian.Uint32(ip6[len(ip6)-4:]) {
		t.Fatalf("ICRCv2 after Fix: 0x%08x, %v", want, err)
	}
	if want == binary.BigEndian.Uint32(udp[len(udp)-4:]) {
		t.Error("IPv6 ICRC equals the IPv4 one")
	}
	for _, off := range []int{0, 1, 2, 3, 7, 46, 47, 48 + 4} {
		c := bytes.Clone(ip6)
		if off == 0 {
			c[0] ^= 0x0F // traffic class high nibble, not the version
		} else {
			c[off] ^= 0xA5
		}
		if got, _ := ICRCv2(c); got != want {
			t.Errorf("byte %d is variant but changed the ICRC", off)
		}
	}
	for _, off := range []int{4, 6, 9, 30, 40, 48 + 2} {
		c := bytes.Clone(ip6)
		c[off] ^= 0x01
		if got, err := ICRCv2(c); err == nil && got == want {
			t.Errorf("byte %d is invariant but did not change the ICRC", off)
		}
	}
}

// The native InfiniBand capture (ERF, made by a hardware HCA in 2008)
// carries valid ICRCs and VCRCs on every packet: LRH-only ones, and LRH+GRH
// ones where the whole LRH counts as variant.
func TestICRCAndVCRCNativeIB(t *testing.T) {
	frames := capIB(t)
	if len(frames) != 43 {
		t.Fatalf("%d frames, want 43", len(frames))
	}
	global := 0
	for _, f := range frames {
		end := int(binary.BigEndian.Uint16(f.data[4:6])&0x7FF) * 4
		if len(f.data) != end+2 {
			t.Fatalf("frame %d: %d bytes, PktLen says %d+2", f.num, len(f.data), end)
		}
		if LNH(f.data[1]&3) == LNHGlobal {
			global++
		}
		icrc, err := ICRCIB(f.data)
		if err != nil {
			t.Errorf("frame %d: %v", f.num, err)
		} else if wire := binary.BigEndian.Uint32(f.data[end-4:]); icrc != wire {
			t.Errorf("frame %d: ICRCIB = 0x%08x, packet carries 0x%08x", f.num, icrc, wire)
		}
		v, err := VCRC(f.data)
		if err != nil {
			t.Errorf("frame %d: %v", f.num, err)
		} else if wire := binary.BigEndian.Uint16(f.data[end:]); v != wire {
			t.Errorf("frame %d: VCRC = 0x%04x, packet carries 0x%04x", f.num, v, wire)
		}
		// VL is variant; SLID is not.
		c := bytes.Clone(f.data)
		c[0] ^= 0x30
		if got, _ := ICRCIB(c); got != icrc {
			t.Errorf("frame %d: VL changed the ICRC", f.num)
		}
		if got, _ := VCRC(c); got == v {
			t.Errorf("frame %d: VL did not change the VCRC", f.num)
		}
		c[0] ^= 0x30
		c[len(c)-7] ^= 1 // last byte before the ICRC
		if got, _ := ICRCIB(c); got == icrc {
			t.Errorf("frame %d: flipped payload byte kept the ICRC", f.num)
		}
		if err := FixICRCIB(c); err != nil {
			t.Fatal(err)
		}
		if err := FixVCRC(c); err != nil {
			t.Fatal(err)
		}
		if got, _ := ICRCIB(c); got != binary.BigEndian.Uint32(c[end-4:]) {
			t.Errorf("frame %d: FixICRCIB did not fix", f.num)
		}
		if got, _ := VCRC(c); got != binary.BigEndian.Uint16(c[end:]) {
			t.Errorf("frame %d: FixVCRC did not fix", f.num)
		}
	}
	if global != 6 {
		t.Errorf("%d packets with GRH, tshark shows 6", global)
	}
}

// RoCEv1 has no capture: the GRH packets of the native IB capture are the
// same bytes after the LRH, and the rule (LRH as 8 bytes of ones) is the
// same, so ICRCv1 over LRH-stripped global packets must match their ICRC.
func TestICRCv1FromNativeGlobalPackets(t *testing.T) {
	n := 0
	for _, f := range capIB(t) {
		if LNH(f.data[1]&3) != LNHGlobal {
			continue
		}
		end := int(binary.BigEndian.Uint16(f.data[4:6])&0x7FF) * 4
		grh := f.data[LRHLen:end]
		got, err := ICRCv1(grh)
		if err != nil {
			t.Fatalf("frame %d: %v", f.num, err)
		}
		if wire := binary.BigEndian.Uint32(grh[len(grh)-4:]); got != wire {
			t.Errorf("frame %d: ICRCv1 = 0x%08x, packet carries 0x%08x", f.num, got, wire)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no GRH packets")
	}
}

func TestICRCErrors(t *testing.T) {
	f := capRoCE(t, filepath.Join(capDir, "rxe-rping.pcap"))[0]
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrTooShort},
		{"cut", f.ip[:len(f.ip)-1], ErrTooShort},
		{"IPv5", append([]byte{0x50}, f.ip[1:]...), ErrNotICRC},
		{"TCP", func() []byte { c := bytes.Clone(f.ip); c[9] = 6; return c }(), ErrNotICRC},
		{"tiny total length", func() []byte { c := bytes.Clone(f.ip); c[2], c[3] = 0, 30; return c }(), ErrBadLength},
	} {
		if _, err := ICRCv2(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	lrh := []byte{0xF0, 0x00, 0xFF, 0xFF, 0x00, 0x06, 0xFF, 0xFF} // raw LNH 0, PktLen 6
	lrh = append(lrh, make([]byte, 16)...)
	if _, err := ICRCIB(lrh); !errors.Is(err, ErrNotICRC) {
		t.Errorf("raw LRH: %v", err)
	}
	if _, err := VCRC(lrh); err != nil {
		t.Errorf("VCRC of raw packet: %v", err)
	}
	lrh[5] = 0x01 // PktLen 1 word < LRH
	if _, err := VCRC(lrh); !errors.Is(err, ErrBadLength) {
		t.Errorf("PktLen 1: %v", err)
	}
	lrh[5] = 0x40 // PktLen 64 words, more than the data
	if _, err := ICRCIB(lrh); !errors.Is(err, ErrTooShort) {
		t.Errorf("PktLen beyond data: %v", err)
	}
	grh := make([]byte, 60)
	grh[6] = 0x11
	if _, err := ICRCv1(grh); !errors.Is(err, ErrNotICRC) {
		t.Errorf("GRH NxtHdr 0x11: %v", err)
	}
}

// The VCRC algorithm, checked on a known input independently of the
// capture: the reflected CRC-16 with polynomial 0x100B, init and xorout
// 0xFFFF, over "123456789" (computed bit by bit here).
func TestVCRCAlgorithm(t *testing.T) {
	msg := []byte("123456789")
	c := uint16(0xFFFF)
	for _, b := range msg {
		c ^= uint16(b)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008 // 0x100B reflected
			} else {
				c >>= 1
			}
		}
	}
	want := ^c
	got := vcrc(msg)
	if got != want>>8|want<<8 {
		t.Errorf("vcrc = 0x%04x, bitwise reference 0x%04x (byte-swapped %s)", got, want, fmt.Sprintf("0x%04x", want>>8|want<<8))
	}
}
