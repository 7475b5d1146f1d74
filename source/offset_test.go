package source

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestRecordOffsets: every record's Offset and Length frame exactly its
// bytes in the file — for pcap the 16-byte record header (whose captured
// length is Length-16) followed by Data, for pcapng a packet block whose
// type, total length (at both ends) and packet data are there — and the
// records tile the file from the end of the pcap file header.
func TestRecordOffsets(t *testing.T) {
	for _, name := range []string{
		filepath.Join(pcapDir, "rxe-nfs42-small.pcap"),
		filepath.Join(pcapDir, "siw-rping.pcap"),
		mixedPcapNG,
		filepath.Join(pcapDir, "synthetic/rocev2-ipv4-vlan-cm.pcapng"),
	} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			raw, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			next := int64(24) // pcap: records follow the 24-byte file header
			n := 0
			for {
				rec, err := r.Next()
				if err != nil {
					break
				}
				n++
				end := rec.Offset + int64(rec.Length)
				if rec.Offset <= 0 || end > int64(len(raw)) {
					t.Fatalf("record %d: offset %d length %d outside the %d-byte file", rec.Number, rec.Offset, rec.Length, len(raw))
				}
				b := raw[rec.Offset:end]
				if r.Format() == FormatPcap {
					if rec.Offset != next {
						t.Fatalf("record %d at %d, want %d", rec.Number, rec.Offset, next)
					}
					next = end
					if caplen := binary.LittleEndian.Uint32(b[8:]); int(caplen) != rec.Length-16 || !bytes.Equal(b[16:], rec.Data) {
						t.Fatalf("record %d: caplen %d, length %d, data differ", rec.Number, caplen, rec.Length)
					}
					continue
				}
				typ, l1, l2 := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[len(b)-4:])
				if (typ != 6 && typ != 3 && typ != 2) || int(l1) != rec.Length || l1 != l2 || !bytes.Contains(b, rec.Data) {
					t.Fatalf("record %d: block type %d, lengths %d/%d, want a packet block of %d bytes holding the data", rec.Number, typ, l1, l2, rec.Length)
				}
			}
			if n == 0 {
				t.Fatal("no records")
			}
			if r.Format() == FormatPcap && next != int64(len(raw)) {
				t.Errorf("records end at %d, the file at %d", next, len(raw))
			}
		})
	}
}
