package iwarp

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
)

// TestTsharkReqRep decodes every MPA Request and Reply of the siw captures
// and compares each field with tshark 4.0's iwarp_mpa.* fields.
func TestTsharkReqRep(t *testing.T) {
	total := 0
	// The mutated capture's Reply sets R (an MPA reject, issue 28).
	for _, name := range append(slices.Clone(siwCaptures), "mutated/siw-nfs3-head--mpa-reject") {
		segs := readSegments(t, name)
		tab := readTshark(t, name+".reqrep.tsv")
		if len(tab.rows) == 0 {
			t.Fatalf("%s: no MPA Request/Reply in the tshark reference", name)
		}
		for _, row := range tab.rows {
			frame := atoi(t, row["frame.number"])
			seg, ok := segmentByFrame(segs, frame)
			if !ok {
				t.Fatalf("%s frame %d: no TCP segment", name, frame)
			}
			var m MPAReqRep
			if err := m.DecodeFromBytes(seg.payload, gopacket.NilDecodeFeedback); err != nil {
				t.Fatalf("%s frame %d: %v", name, frame, err)
			}
			key := hex.EncodeToString(m.Key[:])
			got := map[string]string{
				"iwarp_mpa.marker_flag": tsBool(m.M),
				"iwarp_mpa.crc_flag":    tsBool(m.C),
				"iwarp_mpa.rej_flag":    tsBool(m.R),
				"iwarp_mpa.res":         tsHex8(m.ResField()),
				"iwarp_mpa.rev":         tsDec(uint64(m.Rev)),
				"iwarp_mpa.pdlength":    tsDec(uint64(m.PDLength)),
				"iwarp_mpa.privatedata": tsBytes(m.PrivateData),
				"iwarp_mpa.key.req":     "",
				"iwarp_mpa.key.rep":     "",
			}
			if m.IsRequest() {
				got["iwarp_mpa.key.req"] = key
			} else {
				got["iwarp_mpa.key.rep"] = key
			}
			for k, v := range got {
				if row[k] != v {
					t.Errorf("%s frame %d %s: got %q, tshark %q", name, frame, k, v, row[k])
				}
			}
			// RFC 6581: siw sends Rev 2 with the enhanced flag, so the first
			// four private data octets are IRD/ORD and the rest is the ULP's.
			if !m.HasEnhancedData || m.Rev != 2 || !m.Enhanced {
				t.Errorf("%s frame %d: no RFC 6581 enhanced data (rev %d, flag %v)", name, frame, m.Rev, m.Enhanced)
			}
			if len(m.LayerPayload()) != int(m.PDLength)-EnhancedDataLen {
				t.Errorf("%s frame %d: ULP private data %d octets", name, frame, len(m.LayerPayload()))
			}
			total++
		}
	}
	if total < 20 {
		t.Fatalf("only %d Request/Reply frames checked", total)
	}
}

// TestEnhancedDataFromCaptures checks the IRD/ORD fields against the private
// data bytes tshark shows (it does not decode them): NFS clients ask for IRD
// 128 / ORD 0 and the server answers IRD 0 / ORD 128 (00800000 and
// 00000080); rping uses 1/1 (00010001); perftest 0/0 and 128/128 (00800080).
func TestEnhancedDataFromCaptures(t *testing.T) {
	want := map[string]EnhancedData{
		"00800000": {IRD: 128, ORD: 0},
		"00000080": {IRD: 0, ORD: 128},
		"00010001": {IRD: 1, ORD: 1},
		"00000000": {},
		"00800080": {IRD: 128, ORD: 128},
	}
	seen := 0
	for _, name := range siwCaptures {
		segs := readSegments(t, name)
		for _, row := range readTshark(t, name+".reqrep.tsv").rows {
			seg, _ := segmentByFrame(segs, atoi(t, row["frame.number"]))
			var m MPAReqRep
			if err := m.DecodeFromBytes(seg.payload, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			w, ok := want[row["iwarp_mpa.privatedata"][:8]]
			if !ok {
				t.Fatalf("%s: unexpected IRD/ORD %s", name, row["iwarp_mpa.privatedata"][:8])
			}
			if m.EnhancedData != w {
				t.Errorf("%s frame %s: %+v, want %+v", name, row["frame.number"], m.EnhancedData, w)
			}
			seen++
		}
	}
	if seen == 0 {
		t.Fatal("nothing checked")
	}
}

// TestTsharkFPDUs frames every MPA half-connection of the siw captures with
// the Framer, decodes each FPDU with the DDP and RDMAP layers, and compares
// every iwarp_mpa/iwarp_ddp/iwarp_rdma field, formatted as tshark -T fields
// prints it, with tshark 4.0's for the frame where the FPDU ends (where
// tshark shows an FPDU that TCP split).
func TestTsharkFPDUs(t *testing.T) {
	opcodes := map[Opcode]int{}
	for _, name := range siwCaptures {
		byFrame := map[int][]map[string]string{}
		fpdus := 0
		for _, h := range mpaStreams(t, name) {
			fr := NewFramer(h.framerConfig())
			for _, p := range h.pieces {
				if err := fr.Feed(p.data); err != nil {
					t.Fatalf("%s frame %d: %v", name, p.frame, err)
				}
				for {
					fp, err := fr.Next()
					if err == ErrNeedMore {
						break
					}
					if err != nil {
						t.Fatalf("%s %s frame %d: %v", name, h.dir, p.frame, err)
					}
					var m MPA
					var d DDP
					var r RDMAP
					if err := m.DecodeFromBytes(fp.Raw, gopacket.NilDecodeFeedback); err != nil {
						t.Fatalf("%s frame %d: %v", name, p.frame, err)
					}
					if err := d.DecodeFromBytes(fp.ULPDU, gopacket.NilDecodeFeedback); err != nil {
						t.Fatalf("%s frame %d: %v", name, p.frame, err)
					}
					if err := r.DecodeFromBytes(d.LayerPayload(), gopacket.NilDecodeFeedback); err != nil {
						t.Fatalf("%s frame %d: %v", name, p.frame, err)
					}
					opcodes[r.Opcode]++
					fpdus++
					end := h.frameOf(fp.Seq + uint32(len(fp.Raw)) - 1)
					byFrame[end] = append(byFrame[end], tsharkFPDUFields(&m, &d, &r))
				}
			}
		}
		checked, malformed, differ := 0, 0, 0
		rows := readTshark(t, name+".fpdu.tsv.gz").rows
		inTshark := map[int]bool{}
		for _, row := range rows {
			inTshark[atoi(t, row["frame.number"])] = true
		}
		missed := 0
		for frame, l := range byFrame {
			if !inTshark[frame] {
				missed += len(l)
			}
		}
		for _, row := range rows {
			frame := atoi(t, row["frame.number"])
			if row["_ws.malformed"] != "" {
				// tshark flags the ULP (RPC-over-RDMA heuristics on
				// perftest, NFS READ replies whose data came by RDMA
				// Write); its iwarp fields are complete and compared.
				malformed++
			}
			n := len(strings.Split(row["iwarp_mpa.ulpdulength"], ","))
			if len(byFrame[frame]) != n {
				differ++
				t.Logf("%s frame %d: tshark shows %d FPDUs, the framer ends %d there", name, frame, n, len(byFrame[frame]))
				continue
			}
			got := joinFields(byFrame[frame])
			for _, k := range fpduFieldNames {
				if got[k] != row[k] {
					t.Errorf("%s frame %d %s: got %q, tshark %q", name, frame, k, got[k], row[k])
				}
			}
			checked++
		}
		t.Logf("%s: %d FPDUs framed; %d frames equal to tshark (%d of them malformed in tshark above iWARP), %d counted differently; %d FPDUs end in frames where tshark shows none", name, fpdus, checked, malformed, differ, missed)
		if checked == 0 || differ > checked/20 {
			t.Errorf("%s: %d frames checked, %d differ", name, checked, differ)
		}
	}
	for _, op := range []Opcode{OpRDMAWrite, OpRDMAReadRequest, OpRDMAReadResponse, OpSend, OpSendWithInvalidate} {
		if opcodes[op] == 0 {
			t.Errorf("no %v checked against tshark", op)
		}
	}
	t.Logf("opcodes framed: %v", opcodes)
}
