package nvme

import (
	"testing"
)

// The fuzz tests are seeded from the real captures: every distinct command
// capsule, completion, CM private data and data transfer of rxe-nvmeof.pcap
// and siw-nvmeof.pcap. No input may panic, and what a decoder reports must
// stay inside its input.
//
// FuzzData's seeds are whole 4 KiB Identify pages: minimizing an
// interesting input of that size takes the fuzzer most of its default
// minute, during which it reports 0 execs/sec. Run it with
// -fuzzminimizetime 1s (go test ./nvme -run XXX -fuzz FuzzData
// -fuzztime 20s -fuzzminimizetime 1s).

func fuzzSeeds(f *testing.F, pick func(c *nvmeCapture, add func([]byte))) {
	seen := map[string]bool{}
	add := func(b []byte) {
		if len(b) > 8192 {
			b = b[:8192]
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			f.Add(b)
		}
	}
	for _, c := range []*nvmeCapture{roceCapture(f, "rxe-nvmeof.pcap"), iwarpCapture(f, "siw-nvmeof.pcap")} {
		pick(c, add)
	}
}

func FuzzCapsule(f *testing.F) {
	fuzzSeeds(f, func(c *nvmeCapture, add func([]byte)) {
		for _, s := range c.capsules {
			add(s.data)
		}
	})
	var cmd Command
	var cqe Completion
	f.Fuzz(func(t *testing.T, b []byte) {
		switch Classify(b) {
		case KindCommand:
			err := cmd.DecodeFromBytes(b)
			if len(cmd.LayerContents()) != SQELen || len(cmd.Data) != len(b)-SQELen {
				t.Fatalf("SQE %d + data %d octets from %d", len(cmd.LayerContents()), len(cmd.Data), len(b))
			}
			if err == nil && cmd.InCapsule != nil && uint64(len(cmd.InCapsule)) != uint64(cmd.SGL1.Length) {
				t.Fatalf("in-capsule %d octets, SGL1 says %d", len(cmd.InCapsule), cmd.SGL1.Length)
			}
			for _, icdoff := range []uint16{0, 1, 0xffff} {
				if d, err := cmd.InCapsuleAt(icdoff); err == nil && d != nil && uint64(len(d)) != uint64(cmd.SGL1.Length) {
					t.Fatalf("ICDOFF %d: %d octets, SGL1 says %d", icdoff, len(d), cmd.SGL1.Length)
				}
			}
			_ = cmd.Name(true) + cmd.Name(false) + cmd.Transfer().String()
			_, _, _, _, _ = cmd.Connect(), cmd.Property(), cmd.Auth(), cmd.Identify(), cmd.GetLogPage()
			_, _, _, _ = cmd.Features(), cmd.Abort(), cmd.RW(), cmd.DSM()
			_ = cmd.SGL1.Type.String() + cmd.SGL1.Subtype.String()
			ForEachSGLDescriptor(cmd.Data, func(int, *SGLDescriptor) bool { return true })
			var cd ConnectData
			_ = cd.DecodeFromBytes(cmd.Data)
		case KindCompletion:
			if err := cqe.DecodeFromBytes(b); err != nil {
				t.Fatal(err)
			}
			_ = cqe.Status.String() + cqe.Status.Describe(OpcodeFabrics, true, FabricsConnect) + cqe.Status.Describe(2, true, 0)
			_ = cqe.AsyncEvent().AET.String()
		default:
			if cmd.DecodeFromBytes(b) == nil || cqe.DecodeFromBytes(b) == nil && len(b) < CQELen {
				t.Fatalf("%d octets decoded", len(b))
			}
		}
	})
}

func FuzzCMPrivateData(f *testing.F) {
	fuzzSeeds(f, func(c *nvmeCapture, add func([]byte)) {
		for _, e := range c.cm {
			add(e.pd)
			if len(e.pd) > mpaIRDORDLen {
				add(e.pd[mpaIRDORDLen:])
			}
		}
	})
	f.Add([]byte{0, 0, 6, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var req CMRequest
		var rep CMReply
		var rej CMReject
		if err := req.DecodeFromBytes(b); (err == nil) != (len(b) >= CMRequestLen) {
			t.Fatalf("REQ of %d octets: %v", len(b), err)
		}
		if err := rep.DecodeFromBytes(b); (err == nil) != (len(b) >= CMReplyMinLen) || len(rep.Reserved) > CMReplyLen-4 {
			t.Fatalf("REP of %d octets: %v, %d reserved", len(b), err, len(rep.Reserved))
		}
		if err := rej.DecodeFromBytes(b); (err == nil) != (len(b) >= CMRejectLen) {
			t.Fatalf("REJ of %d octets: %v", len(b), err)
		}
		_ = rej.STS.String() + req.RECFMT.String()
		if LooksLikeCMRequest(b) && (req.RECFMT != 0 || req.HRQSIZE <= req.HSQSIZE) {
			t.Fatalf("% x passes the probe", b)
		}
		LooksLikeCMReply(b)
	})
}

func FuzzData(f *testing.F) {
	fuzzSeeds(f, func(c *nvmeCapture, add func([]byte)) {
		for _, tr := range c.transfers {
			if len(tr.data) <= 4096 {
				add(tr.data)
			}
		}
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		var cd ConnectData
		var ic IdentifyController
		var ns IdentifyNamespace
		var dh DiscoveryLogHeader
		var de DiscoveryLogEntry
		var r DSMRange
		if err := cd.DecodeFromBytes(b); err == nil && (len(cd.SUBNQN) > 256 || len(cd.HOSTNQN) > 256) {
			t.Fatal("NQN longer than its field")
		}
		if err := ic.DecodeFromBytes(b); err == nil {
			_ = ic.InCapsuleDataSize()
			_ = ic.VER.String()
		}
		if err := ns.DecodeFromBytes(b); err == nil {
			_ = ns.Format().BlockSize()
		}
		_ = dh.DecodeFromBytes(b)
		_ = de.DecodeFromBytes(b)
		for i := -1; i < 3; i++ {
			_ = DiscoveryEntry(b, i, &de)
		}
		_ = DiscoveryEntry(b, int(^uint(0)>>1), &de)
		_ = r.DecodeFromBytes(b)
		ForEachNSID(b, func(uint32) bool { return true })
	})
}

// FuzzDataItems: the items of every data structure layout read from any
// octets at any place in the structure without a panic, only from the
// octets given, and exactly when those hold the item whole.
func FuzzDataItems(f *testing.F) {
	fuzzSeeds(f, func(c *nvmeCapture, add func([]byte)) {
		for _, tr := range c.transfers {
			if len(tr.data) <= 4096 {
				add(tr.data)
				if len(tr.data) > 1024 {
					add(tr.data[1024:]) // a later packet's part
				}
			}
		}
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, at := range []int{-1, 0, 1, 3, 1024, 1792, 2048, 3072, 1 << 20} {
			for _, items := range AllLayouts {
				for i := range items {
					it := &items[i]
					in := it.In(b, at)
					v, ok := it.Bytes(b, at)
					if ok != in || ok && len(v) > it.Len {
						t.Fatalf("%s at %d: Bytes %d octets ok %v, In %v", it.Name, at, len(v), ok, in)
					}
					if it.Kind == ItemUint {
						u, ok := it.Uint(b, at)
						if ok != in || it.Mask == 0 && it.Len < 8 && u>>(8*it.Len) != 0 {
							t.Fatalf("%s at %d: %#x ok %v, In %v", it.Name, at, u, ok, in)
						}
					}
				}
			}
			last := -1
			NSIDs(b, at, func(i int, id uint32) bool {
				if id == 0 || i <= last || i*4 < at || i*4+4 > at+len(b) {
					t.Fatalf("NSID %d at index %d (after %d) from %d octets at %d", id, i, last, len(b), at)
				}
				last = i
				return true
			})
		}
	})
}
