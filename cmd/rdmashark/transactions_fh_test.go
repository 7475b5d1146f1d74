package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/report"
)

// fhObject is what a transaction or an exchange says its Call acts on.
type fhObject struct{ hash, name, reply string }

// fhSources are the two listings that carry the object of each RPC: the
// transactions (fh_hash, name, reply_fh_hash) and the neutral exchanges
// (fh_hash, object_name, reply_fh_hash), by XID.
var fhSources = []struct {
	name string
	read func(t *testing.T, capture string) map[string][]fhObject
}{
	{"transactions", func(t *testing.T, capture string) map[string][]fhObject {
		by := map[string][]fhObject{}
		for _, x := range runTransactionsJSON(t, capture).Transactions {
			o := fhObject{name: x.Name}
			if x.FHHash != nil {
				o.hash = x.FHHash.String()
			}
			if x.ReplyFHHash != nil {
				o.reply = x.ReplyFHHash.String()
			}
			by[x.XID.String()] = append(by[x.XID.String()], o)
		}
		return by
	}},
	{"exchanges", func(t *testing.T, capture string) map[string][]fhObject {
		var out, errOut bytes.Buffer
		if code := run([]string{"exchanges", "--format", "json", capture}, nil, &out, &errOut); code != 0 {
			t.Fatalf("exchanges %s: exit %d: %s", capture, code, errOut.String())
		}
		var doc struct {
			Exchanges []report.Exchange `json:"exchanges"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		by := map[string][]fhObject{}
		for _, x := range doc.Exchanges {
			if x.ULP != "rpcordma" {
				continue
			}
			o := fhObject{name: x.ObjectName}
			if x.FHHash != nil {
				o.hash = x.FHHash.String()
			}
			if x.ReplyFHHash != nil {
				o.reply = x.ReplyFHHash.String()
			}
			by[x.Key] = append(by[x.Key], o)
		}
		return by
	}},
}

// TestTransactionsFHHash checks the "fh_hash" and "name" keys of
// `transactions --format json` (and "fh_hash" and "object_name" of
// `exchanges --format json`) against tshark on the six NFS captures: for
// every Call tshark decodes over RDMA (testdata/tshark/*.nfs-calls.tsv:
// frame and XID), tshark's nfs.fh.hash on the Call's frame
// (*.nfs-more.tsv) — the first for NFSv3 (the object or directory), the
// last for an NFSv4 COMPOUND (the current file handle PUTFH set) — and its
// first nfs.name (NFSv3) or nfs.pathname.component (NFSv4).
func TestTransactionsFHHash(t *testing.T) {
	fields := listFile(t, filepath.Join("..", "..", "testdata", "tshark", "fields-nfs-more.txt"))
	col := map[string]int{}
	for i, f := range fields {
		col[f] = i
	}
	for _, src := range fhSources {
		for _, base := range rpcCaptures {
			t.Run(src.name+"/"+base, func(t *testing.T) {
				dir := filepath.Join("..", "..", "testdata", "tshark")
				calls, err := os.ReadFile(filepath.Join(dir, base+".nfs-calls.tsv"))
				if err != nil {
					t.Fatal(err)
				}
				more, err := os.ReadFile(filepath.Join(dir, base+".nfs-more.tsv"))
				if err != nil {
					t.Fatal(err)
				}
				rows := map[string][]string{}
				for _, l := range readLines(t, more) {
					v := strings.Split(l, "\t")
					rows[v[0]] = v
				}
				byXID := src.read(t, filepath.Join("..", "..", "testdata", "pcaps", base+".pcap"))
				withHash, withName := 0, 0
				for _, l := range readLines(t, calls) {
					v := strings.Split(l, "\t")
					frame, xid, proc := v[0], v[1], v[3]
					row := rows[frame]
					if row == nil {
						t.Fatalf("frame %s not in %s.nfs-more.tsv", frame, base)
					}
					var hashes []string
					if s := row[col["nfs.fh.hash"]]; s != "" {
						hashes = strings.Split(s, ",")
					}
					var want fhObject
					nameField := "nfs.name"
					if proc == "COMPOUND" {
						nameField = "nfs.pathname.component"
						if len(hashes) > 0 {
							want.hash = hashes[len(hashes)-1]
						}
					} else if len(hashes) > 0 {
						want.hash = hashes[0]
					}
					if s := row[col[nameField]]; s != "" {
						want.name = strings.Split(s, ",")[0]
					}
					ok := false
					for _, g := range byXID[xid] {
						ok = ok || (g.hash == want.hash && g.name == want.name)
					}
					if !ok {
						t.Errorf("frame %s xid %s %s: tshark fh %q name %q; rdmashark %+v", frame, xid, proc, want.hash, want.name, byXID[xid])
					}
					if want.hash != "" {
						withHash++
					}
					if want.name != "" {
						withName++
					}
				}
				if withHash < 50 || withName < 5 {
					t.Errorf("only %d Calls with a file handle and %d with a name compared", withHash, withName)
				}
			})
		}
	}
}

// TestTransactionsReplyFHHash checks "reply_fh_hash" against tshark: on
// the frame of each Call's first Reply (the next frame with its XID that
// has a status in *.nfs.tsv), tshark's first nfs.fh.hash (*.nfs-more.tsv)
// for NFSv3 LOOKUP, CREATE, MKDIR, SYMLINK and MKNOD and for an NFSv4
// COMPOUND with GETFH; none for the others. The same for exchanges'
// reply_fh_hash.
func TestTransactionsReplyFHHash(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "tshark")
	nfsFields := listFile(t, filepath.Join(dir, "fields-nfs.txt"))
	moreFields := listFile(t, filepath.Join(dir, "fields-nfs-more.txt"))
	col := func(list []string, name string) int {
		for i, f := range list {
			if f == name {
				return i
			}
		}
		t.Fatalf("no %s", name)
		return -1
	}
	xidCol, statusCol, hashCol := col(nfsFields, "rpc.xid"), col(nfsFields, "nfs.status"), col(moreFields, "nfs.fh.hash")
	for _, src := range fhSources {
		compared := 0
		for _, base := range rpcCaptures {
			t.Run(src.name+"/"+base, func(t *testing.T) {
				read := func(name string) []string {
					b, err := os.ReadFile(filepath.Join(dir, base+name))
					if err != nil {
						t.Fatal(err)
					}
					return readLines(t, b)
				}
				nfsRows, moreRows := read(".nfs.tsv"), read(".nfs-more.tsv")
				byXID := src.read(t, filepath.Join("..", "..", "testdata", "pcaps", base+".pcap"))
				for _, l := range read(".nfs-calls.tsv") {
					v := strings.Split(l, "\t")
					frame, xid, proc, ops := v[0], v[1], v[3], ","+v[4]+","
					n, _ := strconv.Atoi(frame)
					reply := -1
					for i := n; i < len(nfsRows); i++ { // row i is frame i+1
						r := strings.Split(nfsRows[i], "\t")
						if r[xidCol] == xid && r[statusCol] != "" {
							reply = i
							break
						}
					}
					if reply < 0 {
						continue // a Reply without status (NULL)
					}
					want := ""
					hashes := strings.Split(strings.Split(moreRows[reply], "\t")[hashCol], ",")
					switch {
					case v[2] == "NFS" && strings.Contains(" LOOKUP CREATE MKDIR SYMLINK MKNOD ", " "+proc+" "),
						proc == "COMPOUND" && strings.Contains(ops, ",GETFH,"):
						want = hashes[0]
					}
					ok := false
					for _, g := range byXID[xid] {
						ok = ok || g.reply == want
					}
					if !ok {
						t.Errorf("frame %s xid %s %s %s: tshark's reply handle %q, rdmashark %q", frame, xid, proc, v[4], want, byXID[xid])
					}
					if want != "" {
						compared++
					}
				}
			})
		}
		if compared < 50 {
			t.Errorf("%s: only %d reply handles compared", src.name, compared)
		}
	}
}

// TestExportExchangesFHHash checks the exchanges table's fh_hash,
// object_name and reply_fh_hash columns (schema 5) against tshark on an
// NFSv4.1 and an NFSv3 capture: each row's fh_hash is tshark's last
// nfs.fh.hash on the request's frame (NFSv4: the handle the last PUTFH
// set) or its first (NFSv3: the object's or directory's handle),
// reply_fh_hash one of the hashes on the response's frame, object_name
// tshark's first nfs.pathname.component or nfs.name on the request's frame;
// and the columns are NULL where tshark has nothing.
func TestExportExchangesFHHash(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "tshark")
	moreFields := listFile(t, filepath.Join(dir, "fields-nfs-more.txt"))
	col := map[string]int{}
	for i, f := range moreFields {
		col[f] = i
	}
	for _, c := range []struct {
		base, nameField string
		v4              bool
	}{{"rxe-nfs41", "nfs.pathname.component", true}, {"siw-nfs3", "nfs.name", false}} {
		t.Run(c.base, func(t *testing.T) {
			more, err := os.ReadFile(filepath.Join(dir, c.base+".nfs-more.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			rows := map[int64][]string{}
			for _, l := range readLines(t, more) {
				v := strings.Split(l, "\t")
				n, _ := strconv.ParseInt(v[0], 10, 64)
				rows[n] = v
			}
			hashes := func(frame int64) []string {
				if r := rows[frame]; r != nil && r[col["nfs.fh.hash"]] != "" {
					return strings.Split(r[col["nfs.fh.hash"]], ",")
				}
				return nil
			}
			out := t.TempDir()
			if code, _, errs := runCmd(t, "export", "-o", out, "--format", "ndjson", "--label", "x",
				filepath.Join("..", "..", "testdata", "pcaps", c.base+".pcap")); code != 0 {
				t.Fatalf("export: exit %d: %s", code, errs)
			}
			b, err := os.ReadFile(filepath.Join(out, "exchanges", "label=x", "part-0.ndjson"))
			if err != nil {
				t.Fatal(err)
			}
			hex := func(p *int64) string {
				if p == nil {
					return ""
				}
				return fmt.Sprintf("0x%08x", *p)
			}
			var fh, names, replies int
			for _, l := range readLines(t, b) {
				var row struct {
					ULP            string  `json:"ulp"`
					Key            string  `json:"key"`
					RequestPacket  *int64  `json:"request_packet"`
					ResponsePacket *int64  `json:"response_packet"`
					FHHash         *int64  `json:"fh_hash"`
					ObjectName     *string `json:"object_name"`
					ReplyFHHash    *int64  `json:"reply_fh_hash"`
				}
				if err := json.Unmarshal([]byte(l), &row); err != nil {
					t.Fatal(err)
				}
				if row.ULP != "rpcordma" || row.RequestPacket == nil {
					continue
				}
				want := ""
				if h := hashes(*row.RequestPacket); len(h) > 0 {
					want = h[0]
					if c.v4 {
						want = h[len(h)-1]
					}
				}
				switch got := hex(row.FHHash); {
				case got != want:
					t.Errorf("%s packet %d: fh_hash %s, tshark %q", row.Key, *row.RequestPacket, got, want)
				case got != "":
					fh++
				}
				if row.ObjectName != nil {
					names++
					r := rows[*row.RequestPacket]
					if r == nil || strings.Split(r[col[c.nameField]], ",")[0] != *row.ObjectName {
						t.Errorf("%s packet %d: object_name %q, tshark %v", row.Key, *row.RequestPacket, *row.ObjectName, r)
					}
				}
				if row.ReplyFHHash != nil {
					replies++
					if row.ResponsePacket == nil || !slices.Contains(hashes(*row.ResponsePacket), hex(row.ReplyFHHash)) {
						t.Errorf("%s: reply_fh_hash %s not among tshark's %v", row.Key, hex(row.ReplyFHHash), row.ResponsePacket)
					}
				}
			}
			if fh < 50 || names < 5 || replies < 5 {
				t.Errorf("only %d fh_hash, %d object_name, %d reply_fh_hash compared", fh, names, replies)
			}
			t.Logf("%d fh_hash, %d object_name, %d reply_fh_hash equal to tshark's", fh, names, replies)
		})
	}
}
