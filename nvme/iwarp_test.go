package nvme

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// queueSummary is what a capture's NVMe/RDMA traffic amounts to, in terms
// that do not depend on the RDMA transport.
type queueSummary struct {
	cmReq      []CMRequest // by QID order of appearance
	cmRep      []CMReply
	commands   map[string]int // "qid name" -> count
	statuses   map[string]int // status name -> count
	unanswered map[string]int // "qid name" of commands never completed
	invalidate int            // completions by Send With Invalidate
	keyed      int            // commands with a keyed SGL, subtype Invalidate Key
	moved      map[string]int // "qid name read|write" -> octets moved by RDMA Read/Write
	identify   string         // Identify Controller fields of the capture
	connect    string         // the admin Connect's data
}

// summarize pairs every command with its completion by queue and CID and
// checks, on the way, the rules the wire must follow whatever the
// transport: a completion answers an outstanding command, its SQID is the
// queue's, CIDs are unique among outstanding commands, and a Send With
// Invalidate invalidates the key of the command it completes, which asked
// for it (NVMe RDMA Transport 1.0, "Remote Invalidation": only for a keyed
// SGL with subtype Invalidate Key).
func summarize(t *testing.T, c *nvmeCapture) queueSummary {
	t.Helper()
	s := queueSummary{commands: map[string]int{}, statuses: map[string]int{}, unanswered: map[string]int{}, moved: map[string]int{}}
	for _, e := range c.cm {
		pd := e.pd
		if c.name[:3] == "siw" {
			// MPA v2: the 4-octet IRD/ORD field, then the 32 octets of
			// Linux's struct nvme_rdma_cm_req / nvme_rdma_cm_rep.
			if len(pd) != mpaIRDORDLen+32 {
				t.Errorf("%s frame %d: %d octets of MPA private data, want 4 + 32", c.name, e.frame, len(pd))
			}
			if len(pd) < mpaIRDORDLen {
				t.Fatalf("%s frame %d: %d octets of MPA private data", c.name, e.frame, len(pd))
			}
			pd = pd[mpaIRDORDLen:]
		}
		switch e.kind {
		case "REQ":
			if !LooksLikeCMRequest(pd) {
				t.Errorf("%s frame %d: REQ private data % x does not look like NVMe/RDMA", c.name, e.frame, pd)
			}
			var r CMRequest
			if err := r.DecodeFromBytes(pd); err != nil {
				t.Fatalf("%s frame %d: %v", c.name, e.frame, err)
			}
			s.cmReq = append(s.cmReq, r)
		case "REP":
			if !LooksLikeCMReply(pd) {
				t.Errorf("%s frame %d: REP private data % x does not look like NVMe/RDMA", c.name, e.frame, pd)
			}
			var r CMReply
			if err := r.DecodeFromBytes(pd); err != nil {
				t.Fatalf("%s frame %d: %v", c.name, e.frame, err)
			}
			r.Reserved = nil
			s.cmRep = append(s.cmRep, r)
		}
	}
	pending := map[uint32]Command{}
	for i := range c.capsules {
		cp := &c.capsules[i]
		if cp.toCtrl {
			var cmd Command
			if err := cmd.DecodeFromBytes(cp.data); err != nil {
				t.Fatalf("%s frame %d: %v", c.name, cp.frame(), err)
			}
			k := uint32(cp.qid)<<16 | uint32(cmd.CID)
			if _, dup := pending[k]; dup {
				t.Errorf("%s frame %d: CID 0x%04x already outstanding on queue %d", c.name, cp.frame(), cmd.CID, cp.qid)
			}
			pending[k] = cmd
			s.commands[fmt.Sprintf("%d %s", cp.qid, cmd.Name(cp.qid == 0))]++
			if cmd.SGL1.InvalidateKey() {
				s.keyed++
			}
			continue
		}
		if Classify(cp.data) != KindCompletion {
			t.Fatalf("%s frame %d: %d octets from the controller", c.name, cp.frame(), len(cp.data))
		}
		var r Completion
		if err := r.DecodeFromBytes(cp.data); err != nil {
			t.Fatalf("%s frame %d: %v", c.name, cp.frame(), err)
		}
		k := uint32(cp.qid)<<16 | uint32(r.CID)
		cmd, ok := pending[k]
		if !ok {
			t.Errorf("%s frame %d: completion of CID 0x%04x, no such command outstanding on queue %d", c.name, cp.frame(), r.CID, cp.qid)
			continue
		}
		delete(pending, k)
		if r.SQID != cp.qid {
			t.Errorf("%s frame %d: SQID %d on queue %d", c.name, cp.frame(), r.SQID, cp.qid)
		}
		s.statuses[r.Status.Describe(cmd.OPC, cp.qid == 0, cmd.FCTYPE)]++
		if cp.invalid {
			s.invalidate++
			if !cmd.SGL1.InvalidateKey() || cmd.SGL1.Key != cp.invKey {
				t.Errorf("%s frame %d: Send With Invalidate of key 0x%x completes a command whose SGL1 is %s/%s key 0x%x",
					c.name, cp.frame(), cp.invKey, cmd.SGL1.Type, cmd.SGL1.Subtype, cmd.SGL1.Key)
			}
		}
	}
	for k, cmd := range pending {
		qid := uint16(k >> 16)
		s.unanswered[fmt.Sprintf("%d %s", qid, cmd.Name(qid == 0))]++
	}
	// Every RDMA Read and Write moves data of a command on its queue,
	// inside the command's keyed SGL, in the direction the command's
	// opcode says (Base 2.0 opcode bits 1:0: 01b host to controller, the
	// controller RDMA Reads; 10b controller to host, it RDMA Writes).
	owner := commandFor(t, c)
	for i, tr := range c.transfers {
		cmd := owner[i]
		if cmd == nil {
			t.Errorf("%s frames %v: %d octets to key 0x%x belong to no command", c.name, tr.frames, len(tr.data), tr.key)
			continue
		}
		dir, want := "read", TransferHostToCtrl
		if tr.write {
			dir, want = "write", TransferCtrlToHost
		}
		if cmd.Transfer() != want {
			t.Errorf("%s frames %v: RDMA %s for %s (%s)", c.name, tr.frames, dir, cmd.Name(tr.qid == 0), cmd.Transfer())
		}
		s.moved[fmt.Sprintf("%d %s %s", tr.qid, cmd.Name(tr.qid == 0), dir)] += len(tr.data)
		switch {
		case cmd.IsFabrics() && cmd.FCTYPE == FabricsConnect:
			var d ConnectData
			if err := d.DecodeFromBytes(tr.data); err != nil {
				t.Fatalf("%s frames %v: %v", c.name, tr.frames, err)
			}
			// The host NQN is each lab VM's own (a UUID): it differs
			// between the two runs; only its form is checked.
			if !strings.HasPrefix(string(d.HOSTNQN), "nqn.2014-08.org.nvmexpress:uuid:") {
				t.Errorf("%s frames %v: HOSTNQN %q", c.name, tr.frames, d.HOSTNQN)
			}
			s.connect = fmt.Sprintf("CNTLID 0x%04x SUBNQN %s", d.CNTLID, d.SUBNQN)
		case tr.qid == 0 && cmd.OPC == byte(AdminIdentify) && cmd.Identify().CNS == CNSController:
			var id IdentifyController
			if err := id.DecodeFromBytes(tr.data); err != nil {
				t.Fatalf("%s frames %v: %v", c.name, tr.frames, err)
			}
			s.identify = fmt.Sprintf("CNTLID %d MAXCMD %d IOCCSZ %d IORCSZ %d ICDOFF %d MSDBD %d SUBNQN %s", id.CNTLID, id.MAXCMD, id.IOCCSZ, id.IORCSZ, id.ICDOFF, id.MSDBD, id.SUBNQN)
		}
	}
	return s
}

// TestIWARPLikeRoCE: tshark decodes nothing of NVMe/RDMA on iWARP
// (KD-NVME-IWARP), so the soft-iWARP capture is checked against the
// Soft-RoCE capture of the same workload, whose decoding the tshark tests
// check: the private data after the MPA v2 IRD/ORD field decodes to the
// same queues and sizes, and the same commands get the same statuses.
func TestIWARPLikeRoCE(t *testing.T) {
	roce := summarize(t, roceCapture(t, "rxe-nvmeof.pcap"))
	iw := summarize(t, iwarpCapture(t, "siw-nvmeof.pcap"))
	eq := func(what string, a, b any) {
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: RoCE %v, iWARP %v", what, a, b)
		}
	}
	eq("CM REQ private data", roce.cmReq, iw.cmReq)
	eq("CM REP private data", roce.cmRep, iw.cmRep)
	eq("commands", roce.commands, iw.commands)
	eq("statuses", roce.statuses, iw.statuses)
	eq("unanswered commands", roce.unanswered, iw.unanswered)
	eq("completions by Send With Invalidate", roce.invalidate, iw.invalidate)
	eq("commands asking for remote invalidation", roce.keyed, iw.keyed)
	eq("octets moved by RDMA Read/Write per command", roce.moved, iw.moved)
	eq("admin Connect data", roce.connect, iw.connect)
	eq("Identify Controller", roce.identify, iw.identify)
	if iw.identify == "" || iw.connect == "" || len(iw.moved) < 4 {
		t.Errorf("iWARP: Identify %q, Connect %q, moved %v", iw.identify, iw.connect, iw.moved)
	}
	qids := func(rs []CMRequest) []uint16 {
		var q []uint16
		for _, r := range rs {
			if r.RECFMT != RecordFormat10 {
				t.Errorf("RECFMT %d", r.RECFMT)
			}
			q = append(q, r.QID)
		}
		sort.Slice(q, func(i, j int) bool { return q[i] < q[j] })
		return q
	}
	if got := fmt.Sprint(qids(iw.cmReq)); got != "[0 1]" {
		t.Errorf("iWARP CM REQ QIDs %s, want the admin and one I/O queue", got)
	}
	// The one command left without completion is the Asynchronous Event
	// Request, which a controller answers only when an event occurs
	// (Base 2.0 "Asynchronous Event Request command"); the host deletes
	// the controller with it outstanding.
	eq("unanswered", fmt.Sprint(iw.unanswered), "map[0 Asynchronous Event Request:1]")
	n := 0
	for _, v := range iw.commands {
		n += v
	}
	t.Logf("iWARP: %d commands like RoCE's %v; statuses %v; %d Sends With Invalidate; moved %v; %s; %s", n, iw.commands, iw.statuses, iw.invalidate, iw.moved, iw.identify, iw.connect)
}
