package nfs_test

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// tsvRows reads a tshark -T fields file of testdata/tshark.
func tsvRows(t *testing.T, name string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", name))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		rows = append(rows, strings.Split(l, "\t"))
	}
	return rows
}

// TestCallbackCapturesAgainstTshark walks the backchannel CB_COMPOUNDs of
// the two callback captures (a delegation recalled, RoCE and iWARP) and
// compares their operations, statuses and the CB_SEQUENCE and CB_RECALL
// values with what tshark 4.0 shows (testdata/tshark/gen-nfs-callback.sh:
// NAME.nfs.tsv and NAME.nfs-cb.tsv). Every body must be walked to its
// last byte.
func TestCallbackCapturesAgainstTshark(t *testing.T) {
	for _, name := range []string{"rxe-nfs-callback", "siw-nfs-callback"} {
		t.Run(name, func(t *testing.T) {
			fields := tsvRows(t, "fields-nfs.txt")
			col := map[string]int{}
			k := 0
			for _, f := range fields {
				if f[0] != "" && !strings.HasPrefix(f[0], "#") {
					col[f[0]] = k
					k++
				}
			}
			// tshark's values per XID and direction ("c"/"r").
			type ref struct{ ops, st4 string }
			refs := map[string]ref{}
			for _, r := range tsvRows(t, name+".nfs.tsv") {
				if r[col["nfs.cb_procedure"]] != "1" {
					continue
				}
				dir := "c"
				if r[col["rpc.time"]] != "" {
					dir = "r"
				}
				refs[r[col["rpc.xid"]]+dir] = ref{r[col["nfs.cb.operation"]], r[col["nfs.nfsstat4"]]}
			}
			details := map[string][]string{}
			for _, r := range tsvRows(t, name+".nfs-cb.tsv") {
				dir := "c"
				if r[6] != "" { // target_high_slotid: results only
					dir = "r"
				}
				details[r[1]+dir] = r
			}
			if len(refs) != 4 || len(details) != 4 {
				t.Fatalf("tshark shows %d CB_COMPOUND messages with operations, %d with details; the capture has 4", len(refs), len(details))
			}
			msgs, _ := messages(t, name)
			var in nfs.Info
			done := 0
			for _, m := range msgs {
				h := &m.hdr
				key := fmt.Sprintf("0x%08x", h.XID)
				call := h.MsgType == oncrpc.Call
				if call {
					key += "c"
				} else {
					key += "r"
				}
				want, ok := refs[key]
				if !ok {
					continue
				}
				// A Reply carries no program: its Call's, 0x40000000, v1, CB_COMPOUND.
				body := h.Payload()
				if err := in.Decode(0x40000000, 1, 1, call, body, nil); err != nil {
					t.Fatalf("frame %d: %v", m.frame, err)
				}
				if in.Len != len(body) || !in.Callback || in.ProcName != "CB_COMPOUND" {
					t.Errorf("frame %d: walked %d of %d bytes, callback %v, %q", m.frame, in.Len, len(body), in.Callback, in.ProcName)
				}
				var ops, st []string
				if !call {
					st = append(st, fmt.Sprint(in.Status))
				}
				for _, op := range in.Ops {
					ops = append(ops, fmt.Sprint(uint32(op.CBCode)))
					if !call {
						st = append(st, fmt.Sprint(uint32(op.Status)))
					}
				}
				if strings.Join(ops, ",") != want.ops || strings.Join(st, ",") != want.st4 {
					t.Errorf("frame %d: ops %v statuses %v; tshark %s / %s", m.frame, ops, st, want.ops, want.st4)
				}
				d := details[key]
				var seq, rec *nfs.CBOpDetail
				for i := range in.CBDetails {
					switch in.Ops[in.CBDetails[i].Op].CBCode {
					case nfs.OP_CB_SEQUENCE:
						seq = &in.CBDetails[i]
					case nfs.OP_CB_RECALL:
						rec = &in.CBDetails[i]
					}
				}
				if seq == nil {
					t.Fatalf("frame %d: no CB_SEQUENCE details: %+v", m.frame, in.CBDetails)
				}
				got := []string{hex.EncodeToString(seq.SessionID[:]), fmt.Sprintf("0x%08x", seq.SequenceID),
					fmt.Sprint(seq.SlotID), fmt.Sprint(seq.HighestSlotID)}
				if call {
					got = append(got, "", b01(seq.CacheThis))
					if rec == nil {
						t.Fatalf("frame %d: no CB_RECALL details", m.frame)
					}
					got = append(got, fmt.Sprint(rec.StateID.Seqid), hex.EncodeToString(rec.StateID.Other[:]), b01(rec.Truncate),
						hex.EncodeToString(rec.FH))
					if seq.RefCallLists != 0 || seq.RefCalls != 0 {
						t.Errorf("frame %d: referring call lists %d/%d; tshark: count 0", m.frame, seq.RefCallLists, seq.RefCalls)
					}
				} else {
					got = append(got, fmt.Sprint(seq.TargetSlotID), "", "", "", "", "")
					if rec != nil {
						t.Errorf("frame %d: details for CB_RECALL's results, which are only a status", m.frame)
					}
				}
				if g, w := strings.Join(got, "\t"), strings.Join(d[2:], "\t"); g != w {
					t.Errorf("frame %d:\n got  %s\n tshark %s", m.frame, g, w)
				}
				done++
			}
			if done != 4 {
				t.Errorf("%d CB_COMPOUND messages compared, want 4", done)
			}
		})
	}
}

func b01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
