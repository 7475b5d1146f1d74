package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// callRecord is an RPC Call whole at the packet, without a transport
// header (the fields of the rpc and nfs groups only).
func callRecord(xid uint32, prog oncrpc.Program, vers, proc uint32) rpcordma.RPCRecord {
	return rpcordma.RPCRecord{HasRPC: true, XID: xid, RPCLength: 40,
		RPC: oncrpc.Header{XID: xid, MsgType: oncrpc.Call, RPCVers: 2, Prog: prog, Vers: vers, Proc: proc}}
}

func writePacket(t *testing.T, pw PacketWriter, buf *bytes.Buffer, p *dissect.Packet) string {
	t.Helper()
	buf.Reset()
	if err := pw.WritePacket(p); err != nil {
		t.Fatal(err)
	}
	if err := pw.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestInstances: a packet that completed two RPC messages (an NFSv3
// GETATTR Call, then an NFSACL GETACL Call) shows them apart in -V and
// -T json, numbered as they are in the packet, while -T fields joins each
// field's values with commas as tshark does. A packet with one message
// keeps the flat form.
func TestInstances(t *testing.T) {
	p := &dissect.Packet{Number: 7}
	recs := []rpcordma.RPCRecord{
		callRecord(0x11, oncrpc.Program(100003), 3, 1),
		callRecord(0x22, oncrpc.Program(100227), 3, 1),
	}
	rpcordma.SetRecords(p, recs)
	var buf bytes.Buffer

	v := writePacket(t, NewVerboseWriter(&buf), &buf, p)
	want := []string{
		"  Remote Procedure Call #1\n", "      XID: 0x00000011\n",
		"  Network File System #1\n", "      V3 Procedure: 1 (GETATTR)\n",
		"  Remote Procedure Call #2\n", "      XID: 0x00000022\n",
		"  NFSACL #2\n", "      V3 Procedure: 1 (GETACL)\n",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(v[at:], w)
		if i < 0 {
			t.Fatalf("-V: %q missing or out of order in\n%s", w, v)
		}
		at += i + len(w)
	}
	for _, bad := range []string{"Network File System #2", "NFSACL #1", "  Remote Procedure Call\n"} {
		if strings.Contains(v, bad) {
			t.Errorf("-V has %q:\n%s", bad, v)
		}
	}

	js := writePacket(t, NewJSONWriter(&buf), &buf, p)
	var doc struct {
		Layers map[string]json.RawMessage `json:"layers"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	var rpc, nfs, acl struct {
		Instances []map[string]any `json:"instances"`
	}
	for name, dst := range map[string]any{"rpc": &rpc, "nfs": &nfs, "nfsacl": &acl} {
		if err := json.Unmarshal(doc.Layers[name], dst); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, js)
		}
	}
	if len(rpc.Instances) != 2 || rpc.Instances[0]["rpc.xid"] != "0x00000011" || rpc.Instances[1]["rpc.xid"] != "0x00000022" {
		t.Errorf("rpc instances %v", rpc.Instances)
	}
	if len(nfs.Instances) != 2 || nfs.Instances[0]["nfs.procedure_v3"] != "1" || nfs.Instances[1] != nil {
		t.Errorf("nfs instances %v", nfs.Instances)
	}
	if len(acl.Instances) != 2 || acl.Instances[0] != nil || acl.Instances[1]["nfsacl.procedure_v3"] != "1" {
		t.Errorf("nfsacl instances %v", acl.Instances)
	}

	fw, err := NewFieldsWriter(&buf, []string{"rpc.xid", "rpc.program", "nfs.procedure_v3", "nfsacl.procedure_v3"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := writePacket(t, fw, &buf, p); got != "0x00000011,0x00000022\t100003,100227\t1\t1\n" {
		t.Errorf("-T fields: %q", got)
	}

	// One message: no numbers, no "instances".
	p.ULP = p.ULP[:0]
	rpcordma.SetRecords(p, recs[:1])
	if v := writePacket(t, NewVerboseWriter(&buf), &buf, p); !strings.Contains(v, "  Remote Procedure Call\n") || strings.Contains(v, "#1") {
		t.Errorf("-V of one message:\n%s", v)
	}
	js = writePacket(t, NewJSONWriter(&buf), &buf, p)
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	var flat map[string]any
	if err := json.Unmarshal(doc.Layers["rpc"], &flat); err != nil || flat["rpc.xid"] != "0x00000011" || flat["instances"] != nil {
		t.Errorf("-T json of one message: %s (%v)", doc.Layers["rpc"], err)
	}
}

// TestHiddenField: nfs.status, hidden in tshark's tree, is printed by
// -T fields but not by -V, where nfs.status3 shows the same status.
func TestHiddenField(t *testing.T) {
	p := &dissect.Packet{Number: 9}
	rpcordma.SetRecords(p, []rpcordma.RPCRecord{{HasRPC: true, Reply: true, XID: 0x33, HasProgram: true, Program: 100003, Version: 3, Procedure: 1,
		RPC: oncrpc.Header{XID: 0x33, MsgType: oncrpc.Reply, ReplyStat: oncrpc.MsgAccepted, AcceptStat: oncrpc.Success},
		ULP: rpcordma.ULPInfo{Protocol: "NFS", Procedure: "GETATTR", HasStatus: true, Status: 70}}})
	var buf bytes.Buffer
	v := writePacket(t, NewVerboseWriter(&buf), &buf, p)
	if n := strings.Count(v, "Status: 70 (NFS3ERR_STALE)"); n != 1 {
		t.Errorf("-V shows the status %d times:\n%s", n, v)
	}
	fw, err := NewFieldsWriter(&buf, []string{"nfs.status", "nfs.status3", "nfs.nfsstat4"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := writePacket(t, fw, &buf, p); got != "70\t70\t\n" {
		t.Errorf("-T fields: %q", got)
	}
}
