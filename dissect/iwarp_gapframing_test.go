package dissect

import "testing"

// TestResyncAfterGapInsideFPDU: siw-nfs41 sends the client's 1448-octet
// FPDUs (ULPDU_Length 1442, RDMA Write) as one segment each, but some
// split in two: tshark 4.0 shows packet 176 with 16 octets at Seq
// 1282428778 and packet 178 with the 1432 after it, whose FPDU ends where
// packet 180's 16 start (tcp.seq_raw, tcp.len, iwarp_mpa.ulpdulength).
// A capture that lost one of them loses that FPDU and no other:
//   - without 176 (the FPDU's header), framing finds the next FPDU inside
//     the octets after the gap (on the grid of four, chained to the end);
//     before, everything the acknowledgement released at once after the
//     gap was discarded: 40,528 octets in a 3% thinning;
//   - without 178 (the FPDU's tail), the header in 176 said where the next
//     FPDU starts: framing goes on there without losing sync.
func TestResyncAfterGapInsideFPDU(t *testing.T) {
	all := iwReadFrames(t, "siw-nfs41.pcap")
	count := func(frames []iwFrame) (fpdus, lostSync, discarded uint64) {
		e := iwRun(frames, Options{}, nil)
		for _, c := range e.Conns.Connections() {
			if c.IWARP == nil {
				continue
			}
			d := c.IWARP.Dir[0]
			fpdus += d.FPDUs
			lostSync += d.LostSync
			discarded += d.Discarded
		}
		return
	}
	without := func(n int) []iwFrame {
		var out []iwFrame
		for _, f := range all {
			if f.num != n {
				out = append(out, f)
			}
		}
		return out
	}
	base, baseLost, baseDisc := count(all)
	if baseLost != 0 || baseDisc != 0 {
		t.Fatalf("whole capture: lost sync %d, discarded %d", baseLost, baseDisc)
	}
	for _, tc := range []struct {
		drop      int
		lostSync  uint64
		discarded uint64
	}{
		{176, 1, 1432}, // the rest of the FPDU whose header was lost
		{178, 0, 16},   // the 16 octets of its header held; 1432 missing
	} {
		fpdus, lost, disc := count(without(tc.drop))
		if fpdus != base-1 || lost != tc.lostSync || disc != tc.discarded {
			t.Errorf("without packet %d: %d client FPDUs (want %d), lost sync %d (want %d), %d octets discarded (want %d)",
				tc.drop, fpdus, base-1, lost, tc.lostSync, disc, tc.discarded)
		}
	}
}

// FuzzFPDUInside: the search for an FPDU inside octets that start mid-FPDU
// never panics, and what it finds lies on the grid of four from the
// stream's first FPDU, past the first octet, with a plausible DDP header.
// Seeded with real octets: siw-nfs41 packet 178 (the 1432 octets that end
// an FPDU) followed by packet 180's (the next FPDU's first 16).
func FuzzFPDUInside(f *testing.F) {
	var seed []byte
	for _, fr := range iwReadFrames(f, "siw-nfs41.pcap") {
		if fr.num == 178 || fr.num == 180 {
			pay := fr.data[14+20+32:] // Ethernet, IPv4, TCP with timestamps
			seed = append(seed, pay...)
		}
	}
	f.Add(seed, uint32(0), false)
	f.Add(seed[:len(seed)-8], uint32(2), true)
	f.Fuzz(func(t *testing.T, data []byte, fpduSeq uint32, crc bool) {
		const seq = 1000
		k, ok := fpduInside(data, seq, fpduSeq, crc)
		if !ok {
			return
		}
		if k <= 0 || k+4 > len(data) || (seq+uint32(k)-fpduSeq)%4 != 0 {
			t.Fatalf("found %d in %d octets", k, len(data))
		}
		if !plausibleDDP(data[k+2:], int(data[k])<<8|int(data[k+1])) {
			t.Fatalf("implausible header at %d", k)
		}
	})
}
