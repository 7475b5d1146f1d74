package export_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rdmashark/rdmashark/export"
	"github.com/rdmashark/rdmashark/internal/longstream"
	"github.com/rdmashark/rdmashark/source"
	rpcpresent "github.com/rdmashark/rdmashark/ulp/rpcordma/present"
)

// spillInput is a capture of many connections, most of them released
// while it is read.
type spillInput struct {
	name string
	open func(t *testing.T) io.Reader
}

func spillInputs(t *testing.T) []spillInput {
	var ins []spillInput
	// Every repetition is a new set of connections, released (DREQ/DREP,
	// FIN) before the next one starts.
	for _, f := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "lossy/rxe-nfs3-lossy.pcap"} {
		c, err := longstream.Load(pcaps + f)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, spillInput{f + "x16", func(*testing.T) io.Reader { return c.Reader(16) }})
	}
	// An NFS mount with rping runs between: connections of the two kinds
	// released in turn (report's spill tests make the same).
	for _, pair := range [][2]string{{"rxe-nfs3.pcap", "rxe-rping.pcap"}, {"siw-nfs3.pcap", "siw-rping.pcap"}} {
		read := func(name string) []byte {
			b, err := os.ReadFile(pcaps + name)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 24 || binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 {
				t.Fatalf("%s: not a little-endian pcap file", name)
			}
			return b
		}
		nfsB, rping := read(pair[0]), read(pair[1])
		c := append([]byte(nil), nfsB[:24]...)
		for range 3 {
			c = append(c, nfsB[24:]...)
			c = append(c, bytes.Repeat(rping[24:], 20)...)
		}
		ins = append(ins, spillInput{"mixed-" + pair[0], func(*testing.T) io.Reader { return bytes.NewReader(c) }})
	}
	return ins
}

// spillRun exports in into a new directory, as the export command wires
// the engine, and returns the directory, how many connections the spill
// took, how many times it compacted its file, and how many connections
// the engine forgot.
func spillRun(t *testing.T, in spillInput, f export.Format, maxConns, maxFindings int) (dir string, spilled, compactions int, forgotten uint64) {
	t.Helper()
	dir = t.TempDir()
	cfg := export.Config{Dir: dir, Format: f, Label: "spill", RowGroupRows: 500}
	if _, err := export.Reserve(cfg, 1); err != nil {
		t.Fatal(err)
	}
	r, err := source.NewReader(in.open(t), in.name)
	if err != nil {
		t.Fatal(err)
	}
	eng := exportLimited(t, cfg, in.name, r, 0, maxConns, maxFindings, func(xc *export.Capture) {
		spilled, compactions = xc.Spilled()
	})
	return dir, spilled, compactions, eng.Conns.Forgotten
}

// The spill of released connections changes nothing in the tables: on
// captures of many connections released along the way, with the
// connection table big enough and too small (the engine forgets released
// summaries, and the spill their rows), the NDJSON files are byte for byte
// those written with the rows built at the end, the spill writing to a
// file or keeping its records in memory; and the Parquet files read back
// to the same rows. It fails should the spill leave out, add, reorder or
// alter a row — and when it took nothing, which would prove nothing.
func TestSpillSameRows(t *testing.T) {
	tables := []string{export.TableConnections, rpcpresent.TableTransactions, export.TableRDMAOps,
		export.TableFindings, export.TableTransportHealth, export.TableUDFlows}
	for _, in := range spillInputs(t) {
		// The table's bound, and the runner's on findings kept: as
		// the command sets them, and so small that the engine forgets
		// released summaries (and the spill their rows), and that
		// findings are left out (the runner counts those of a
		// forgotten connection out of the bound: its findings, read
		// back from the spill).
		for _, bound := range [][2]int{{0, 0}, {6, 12}, {20, 0}} {
			maxConns, maxFindings := bound[0], bound[1]
			t.Run(fmt.Sprintf("%s/max-connections=%d/max-findings=%d", in.name, maxConns, maxFindings), func(t *testing.T) {
				restore := export.SetSpill(-1, false)
				defer restore()
				wantJSON, n, _, _ := spillRun(t, in, export.NDJSON, maxConns, maxFindings)
				wantParquet, _, _, _ := spillRun(t, in, export.Parquet, maxConns, maxFindings)
				if n != 0 {
					t.Fatalf("the spill took %d connections with the spill off", n)
				}
				// The spill from the first connection released, or
				// after 3 (those stay in memory: rows of both kinds,
				// merged), to a file or in memory; the file compacted
				// as soon as the forgotten connections' records are
				// more than the others'.
				defer export.SetCompactAt(1)()
				for _, sp := range []struct {
					after  int
					toFile bool
				}{{0, true}, {3, false}, {0, false}} {
					export.SetSpill(sp.after, sp.toFile)
					dir, spilled, compactions, forgotten := spillRun(t, in, export.NDJSON, maxConns, maxFindings)
					if spilled < 3 {
						t.Fatalf("the spill took %d connections", spilled)
					}
					if maxConns > 0 && forgotten == 0 {
						t.Fatalf("with %d connections at most, the engine forgot none", maxConns)
					}
					if maxConns > 0 && sp.toFile && compactions == 0 {
						t.Fatalf("the spill's file was never compacted")
					}
					for _, tb := range tables {
						part := func(d string) string {
							return filepath.Join(export.PartitionDir(d, tb, "spill"), "part-0.ndjson")
						}
						want, err := os.ReadFile(part(wantJSON))
						if err != nil {
							t.Fatal(err)
						}
						got, err := os.ReadFile(part(dir))
						if err != nil {
							t.Fatal(err)
						}
						if tb == export.TableConnections && len(want) == 0 {
							t.Fatal("no connections")
						}
						if !bytes.Equal(got, want) {
							t.Errorf("spill %+v, %s: the spill changed the rows:\n%s", sp, tb, firstDiff(got, want))
						}
					}
				}
				export.SetSpill(3, true)
				dir, _, _, _ := spillRun(t, in, export.Parquet, maxConns, maxFindings)
				sameParquet[export.Connection](t, dir, wantParquet, export.TableConnections)
				sameParquet[rpcpresent.Transaction](t, dir, wantParquet, rpcpresent.TableTransactions)
				sameParquet[export.RDMAOp](t, dir, wantParquet, export.TableRDMAOps)
				sameParquet[export.Finding](t, dir, wantParquet, export.TableFindings)
				sameParquet[export.TransportHealth](t, dir, wantParquet, export.TableTransportHealth)
				sameParquet[export.UDFlow](t, dir, wantParquet, export.TableUDFlows)
			})
		}
	}
}

func sameParquet[T any](t *testing.T, dir, wantDir, table string) {
	t.Helper()
	part := func(d string) string { return filepath.Join(export.PartitionDir(d, table, "spill"), "part-0.parquet") }
	got, want := readParquet[T](t, part(dir)), readParquet[T](t, part(wantDir))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: Parquet rows differ (%d and %d rows)", table, len(got), len(want))
	}
}

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b []byte) string {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y []byte
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if !bytes.Equal(x, y) {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i+1, x, y)
		}
	}
	return "(same lines)"
}
