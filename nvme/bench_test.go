package nvme

import "testing"

// realCapsules returns a command capsule (a 64 KiB Write with a keyed SGL)
// and a completion of rxe-nvmeof.pcap.
func realCapsules(tb testing.TB) (cmd, cqe []byte) {
	tb.Helper()
	for _, s := range roceCapture(tb, "rxe-nvmeof.pcap").capsules {
		switch {
		case s.toCtrl && s.qid == 1 && cmd == nil && len(s.data) == SQELen && s.data[0] == byte(IOWrite):
			cmd = s.data
		case !s.toCtrl && s.qid == 1 && cqe == nil:
			cqe = s.data
		}
	}
	if cmd == nil || cqe == nil {
		tb.Fatal("no Write command or completion in the capture")
	}
	return cmd, cqe
}

// TestDecodeAllocatesNothing: decoding into reused structs, and reading the
// command specific fields, allocates nothing (the per-packet hot path).
func TestDecodeAllocatesNothing(t *testing.T) {
	cmdB, cqeB := realCapsules(t)
	c := roceCapture(t, "rxe-nvmeof.pcap")
	var cm CMRequest
	var rep CMReply
	var cmd Command
	var cqe Completion
	var cd ConnectData
	var ic IdentifyController
	var connectData, identify []byte
	owner := commandFor(t, c)
	for i, tr := range c.transfers {
		if o := owner[i]; o != nil && o.IsFabrics() {
			connectData = tr.data
		} else if o != nil && o.OPC == byte(AdminIdentify) && o.Identify().CNS == CNSController {
			identify = tr.data
		}
	}
	if connectData == nil || identify == nil {
		t.Fatal("no Connect data or Identify Controller data in the capture")
	}
	n := testing.AllocsPerRun(200, func() {
		_ = cm.DecodeFromBytes(c.cm[0].pd)
		_ = rep.DecodeFromBytes(c.cm[1].pd)
		_ = cmd.DecodeFromBytes(cmdB)
		_ = cmd.RW().Blocks()
		_ = cmd.SGL1.InvalidateKey()
		_ = cqe.DecodeFromBytes(cqeB)
		_ = cqe.Status.Success()
		_ = cqe.Status.Describe(cmd.OPC, false, 0)
		_ = AdminOpcode(6).String() + IOOpcode(2).String() + FabricsConnect.String() + PropertyCC.String()
		_ = cd.DecodeFromBytes(connectData)
		_ = ic.DecodeFromBytes(identify)
	})
	if n != 0 {
		t.Errorf("%v allocations per decode", n)
	}
}

func BenchmarkDecodeCommand(b *testing.B) {
	cmdB, _ := realCapsules(b)
	var cmd Command
	b.ReportAllocs()
	b.SetBytes(int64(len(cmdB)))
	for b.Loop() {
		if err := cmd.DecodeFromBytes(cmdB); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeCompletion(b *testing.B) {
	_, cqeB := realCapsules(b)
	var cqe Completion
	b.ReportAllocs()
	b.SetBytes(int64(len(cqeB)))
	for b.Loop() {
		if err := cqe.DecodeFromBytes(cqeB); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClassifyAndDecode(b *testing.B) {
	cmdB, cqeB := realCapsules(b)
	var cmd Command
	var cqe Completion
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range [][]byte{cmdB, cqeB} {
			switch Classify(p) {
			case KindCommand:
				_ = cmd.DecodeFromBytes(p)
			case KindCompletion:
				_ = cqe.DecodeFromBytes(p)
			}
		}
	}
}
