package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// The mutation classes of issue 29: damage that passes the transport's
// integrity checks, so that it reaches reassembly, RPC, NFS, the checks,
// the report and export instead of being dropped as a bad CRC — header
// edits, and hostile text (terminal escape sequences, newlines, NUL,
// bytes that are not UTF-8, bidi overrides) in place of the strings in
// the packets (AUTH_SYS machine names, NFS file names) — with the RoCEv2
// ICRC, the iWARP MPA CRC32c and the TCP checksum recomputed.

// hostileText are the byte strings written over the capture's text.
var hostileText = [][]byte{
	[]byte("\x1b]0;pwned\x07"), // retitle the terminal
	[]byte("\x1b[2J\x1b[H"),    // clear the screen
	[]byte("\x1b[6n"),          // make the terminal type into the shell
	[]byte("a\nforged\trow"),   // -T fields rows and columns
	[]byte("\x00\xff\xfe\xc3"), // NUL, bytes that are not UTF-8
	[]byte("\xe2\x80\xaeevil"), // U+202E RIGHT-TO-LEFT OVERRIDE
	[]byte("\xc2\x9b2J"),       // U+009B, a CSI to some terminals
}

// ipFrame is an IPv4 frame of a little-endian pcap: the frame, where its
// IP header starts, and its transport (17 UDP, 6 TCP).
type ipFrame struct {
	frame []byte
	ip    int
	proto byte
}

// ipFrames lists the Ethernet IPv4 frames of a little-endian pcap file b
// (µs or ns; nil for anything else: pcapng, compressed, other link types).
func ipFrames(b []byte) []ipFrame {
	if len(b) < 24 {
		return nil
	}
	if m := binary.LittleEndian.Uint32(b); (m != 0xa1b2c3d4 && m != 0xa1b23c4d) || binary.LittleEndian.Uint32(b[20:]) != 1 {
		return nil
	}
	var out []ipFrame
	for off := 24; off+16 <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[off+8:]))
		if off+16+n > len(b) {
			break
		}
		f := b[off+16 : off+16+n]
		off += 16 + n
		if len(f) < 14+20 || binary.BigEndian.Uint16(f[12:]) != 0x0800 || f[14]>>4 != 4 {
			continue
		}
		if p := f[14+9]; p == 17 || p == 6 {
			out = append(out, ipFrame{f, 14, p})
		}
	}
	return out
}

// payload is where the frame's transport payload starts (after the UDP or
// TCP header) and where its IP packet ends; ok false when they make no sense.
func (f ipFrame) payload() (start, end int, ok bool) {
	ip := f.frame[f.ip:]
	ihl := int(ip[0]&0xf) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if ihl < 20 || total > len(ip) || total < ihl+8 {
		return 0, 0, false
	}
	l4 := ihl
	if f.proto == 17 {
		return f.ip + l4 + 8, f.ip + total, true
	}
	if total < l4+20 {
		return 0, 0, false
	}
	doff := int(ip[l4+12]>>4) * 4
	if doff < 20 || l4+doff > total {
		return 0, 0, false
	}
	return f.ip + l4 + doff, f.ip + total, true
}

// fixIntegrity recomputes what guards the frame after its payload
// changed: the RoCEv2 ICRC (UDP), or the MPA CRC32c of an FPDU filling the
// segment and the TCP checksum (TCP).
func (f ipFrame) fixIntegrity() {
	ip := f.frame[f.ip:]
	if f.proto == 17 {
		_ = roce.FixICRCv2(ip) // not RoCEv2: nothing to fix
		return
	}
	start, end, ok := f.payload()
	if !ok {
		return
	}
	seg := f.frame[start:end]
	if len(seg) >= iwarp.MinFPDULen && iwarp.FPDULen(int(binary.BigEndian.Uint16(seg))) == len(seg) {
		binary.BigEndian.PutUint32(seg[len(seg)-4:], iwarp.CRC32c(seg[:len(seg)-4]))
	}
	fixTCPChecksum(ip, int(ip[0]&0xf)*4)
}

// fixTCPChecksum recomputes the checksum of the TCP segment at l4 in the
// IPv4 packet ip (RFC 793 section 3.1).
func fixTCPChecksum(ip []byte, l4 int) {
	total := int(binary.BigEndian.Uint16(ip[2:]))
	seg := ip[l4:total]
	seg[16], seg[17] = 0, 0
	var sum uint32
	add := func(b []byte) {
		for len(b) >= 2 {
			sum += uint32(binary.BigEndian.Uint16(b))
			b = b[2:]
		}
		if len(b) == 1 {
			sum += uint32(b[0]) << 8
		}
	}
	add(ip[12:20])
	sum += 6 + uint32(len(seg))
	add(seg)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(seg[16:], ^uint16(sum))
}

// editHeaders flips bits in the transport headers at the front of the
// payload of a few frames (BTH and its extended headers; MPA, DDP and
// RDMAP) and recomputes their CRCs and checksums.
func editHeaders(rng *rand.Rand, b []byte) string {
	fs := ipFrames(b)
	if len(fs) == 0 {
		return ""
	}
	edited := 0
	for range 1 + rng.IntN(4) {
		f := fs[rng.IntN(len(fs))]
		start, end, ok := f.payload()
		if !ok || end-start < 8 {
			continue
		}
		span := min(end-start-4, 48) // not the ICRC or CRC itself
		for range 1 + rng.IntN(3) {
			f.frame[start+rng.IntN(span)] ^= byte(1 << rng.IntN(8))
		}
		f.fixIntegrity()
		edited++
	}
	if edited == 0 {
		return ""
	}
	return fmt.Sprintf("headers of %d frames edited, CRCs recomputed", edited)
}

// hostileStrings writes hostile text over strings in the payloads of a
// few frames — XDR strings (a 4-byte length, then that many printable
// bytes: AUTH_SYS machine names, NFS file names, paths) when there are
// any, else runs of four printable bytes or more — and recomputes their
// CRCs and checksums.
func hostileStrings(rng *rand.Rand, b []byte) string {
	fs := ipFrames(b)
	var runs, xdr [][]byte
	var owners, xdrOwners []ipFrame
	for _, f := range fs {
		start, end, ok := f.payload()
		if !ok {
			continue
		}
		p := f.frame[start:max(start, end-4)]
		for i := 0; i < len(p); {
			j := i
			for j < len(p) && p[j] >= 0x21 && p[j] < 0x7f {
				j++
			}
			if j-i >= 4 {
				runs, owners = append(runs, p[i:j]), append(owners, f)
				if l := int(binary.BigEndian.Uint32(p[max(i, 4)-4:])); i >= 4 && l >= 4 && l <= j-i {
					xdr, xdrOwners = append(xdr, p[i:i+l]), append(xdrOwners, f)
				}
			}
			i = j + 1
		}
	}
	if len(xdr) > 0 {
		runs, owners = xdr, xdrOwners
	}
	if len(runs) == 0 {
		return ""
	}
	n := 1 + rng.IntN(min(len(runs), 8))
	for range n {
		k := rng.IntN(len(runs))
		h := hostileText[rng.IntN(len(hostileText))]
		r := runs[k]
		copy(r, bytes.Repeat(h, len(r)/len(h)+1)[:len(r)])
		owners[k].fixIntegrity()
	}
	return fmt.Sprintf("hostile text in %d strings, CRCs recomputed", n)
}

// rawControl reports the first control byte a text output must not hold
// raw (issue 29 point 9: escape sequences, NUL, DEL; newlines and tabs
// are the output's own), or -1.
func rawControl(b []byte) int {
	for i, c := range b {
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			return i
		}
	}
	return -1
}
