package main

import (
	"os"
	"path/filepath"
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
