package present

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestServerInvalidatesOneHandle: what the Linux NFS server's Replies
// show on every real NFS capture (RoCE and iWARP, NFSv3, 4.1, 4.2). Its
// svcrdma (svc_rdma_get_inv_rkey, net/sunrpc/xprtrdma/svc_rdma_recvfrom.c)
// chooses the R_key to invalidate from the Call's chunk lists: the one
// handle when every segment of every chunk (Read list, Write list, Reply
// chunk) has the same, none otherwise, and none for a Call without
// chunks. So a Reply is sent With Invalidate exactly when every segment
// of its Call's chunks shares one handle, and invalidates that handle —
// not "every Reply whose Call had chunks", as docs/linux-findings.md
// said: READDIR(PLUS), READLINK and GETACL Reply chunks of several
// segments, each with its own handle, are never invalidated remotely.
func TestServerInvalidatesOneHandle(t *testing.T) {
	files, _ := filepath.Glob("../../../testdata/pcaps/*-nfs*.pcap")
	if len(files) < 6 {
		t.Fatalf("%d NFS captures, want rxe and siw nfs3, nfs41, nfs42-small", len(files))
	}
	// RDMASHARK_SWI_CAPTURES (a glob) adds captures from the lab, e.g.
	// its Linux 6.12 runs (shared/lab/build-rootfs-trixie.sh).
	if g := os.Getenv("RDMASHARK_SWI_CAPTURES"); g != "" {
		more, _ := filepath.Glob(g)
		files = append(files, more...)
	}
	var one, several, none, swi int
	severalBy := map[string]int{}
	for _, f := range files {
		r, err := source.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		check := func(x *rpcordma.Transaction) {
			if x.Call == nil || x.Reply == nil || x.Direction != rpcordma.RPCForward {
				return
			}
			// The segments' handles, read here without OneHandle.
			var handles []uint32
			for _, ch := range x.Call.Chunks {
				for _, s := range ch.Segments {
					handles = append(handles, s.Handle)
				}
			}
			same := len(handles) > 0
			for _, h := range handles {
				if h != handles[0] {
					same = false
				}
			}
			switch {
			case len(handles) == 0:
				none++
			case same:
				one++
			default:
				several++
				severalBy[x.ProcedureName]++
			}
			if h, ok := OneHandle(x.Call.Chunks); ok != same || (ok && h != handles[0]) {
				t.Errorf("%s: XID 0x%08x: OneHandle says %v, the segments %v", f, x.XID, ok, handles)
			}
			if x.Reply.Invalidate {
				swi++
			}
			if x.Reply.Invalidate != same {
				t.Errorf("%s: XID 0x%08x (%s): Reply With Invalidate %v, Call segments' handles %x",
					f, x.XID, x.ProcedureName, x.Reply.Invalidate, handles)
			} else if same && x.Reply.InvalidatedSTag != handles[0] {
				t.Errorf("%s: XID 0x%08x: invalidated 0x%08x, the Call's one handle 0x%08x", f, x.XID, x.Reply.InvalidatedSTag, handles[0])
			}
		}
		eng := dissect.NewEngine(rpcordma.With(dissect.Options{}, nfs.NewBinding(), check))
		if err := eng.Run(r, nil); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		r.Close()
	}
	t.Logf("%d Replies to Calls with chunks of one handle (%d With Invalidate), %d of several, %d without chunks", one, swi, several, none)
	t.Logf("Calls of several handles by procedure: %v", severalBy)
	if one == 0 || several == 0 || swi == 0 {
		t.Fatalf("the captures must show both kinds of Call: one handle %d, several %d", one, several)
	}
}
