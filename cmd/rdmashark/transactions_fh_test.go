package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTransactionsFHHash checks the "fh_hash" and "name" keys of
// `transactions --format json` against tshark on the six NFS captures: for
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
	for _, base := range rpcCaptures {
		t.Run(base, func(t *testing.T) {
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
			doc := runTransactionsJSON(t, filepath.Join("..", "..", "testdata", "pcaps", base+".pcap"))
			type got struct{ hash, name string }
			byXID := map[string][]got{}
			for _, x := range doc.Transactions {
				g := got{name: x.Name}
				if x.FHHash != nil {
					g.hash = x.FHHash.String()
				}
				byXID[x.XID.String()] = append(byXID[x.XID.String()], g)
			}
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
				want := got{}
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
					ok = ok || g == want
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

// TestTransactionsReplyFHHash checks "reply_fh_hash" against tshark: on
// the frame of each Call's first Reply (the next frame with its XID that
// has a status in *.nfs.tsv), tshark's first nfs.fh.hash (*.nfs-more.tsv)
// for NFSv3 LOOKUP, CREATE, MKDIR, SYMLINK and MKNOD and for an NFSv4
// COMPOUND with GETFH; none for the others.
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
	compared := 0
	for _, base := range rpcCaptures {
		t.Run(base, func(t *testing.T) {
			read := func(name string) []string {
				b, err := os.ReadFile(filepath.Join(dir, base+name))
				if err != nil {
					t.Fatal(err)
				}
				return readLines(t, b)
			}
			nfsRows, moreRows := read(".nfs.tsv"), read(".nfs-more.tsv")
			doc := runTransactionsJSON(t, filepath.Join("..", "..", "testdata", "pcaps", base+".pcap"))
			byXID := map[string][]string{}
			for _, x := range doc.Transactions {
				h := ""
				if x.ReplyFHHash != nil {
					h = x.ReplyFHHash.String()
				}
				byXID[x.XID.String()] = append(byXID[x.XID.String()], h)
			}
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
				for _, h := range byXID[xid] {
					ok = ok || h == want
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
		t.Errorf("only %d reply handles compared", compared)
	}
}
