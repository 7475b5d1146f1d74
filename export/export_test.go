package export_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/export"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	nvmepresent "github.com/rdmashark/rdmashark/ulp/nvmeof/present"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
	rpcpresent "github.com/rdmashark/rdmashark/ulp/rpcordma/present"
)

const pcaps = "../testdata/pcaps/"

// RPC-over-RDMA's columns and transactions, and NVMe/RDMA's nvme_commands,
// come from their presentations, registered as the command registers them
// (cmd/rdmashark/ulps.go).
func init() {
	rpcpresent.Register()
	nvmepresent.Register()
}

// exportCapture runs one capture through an engine wired as the export
// command wires it (the export's Observer behind the check runner).
func exportCapture(t testing.TB, cfg export.Config, name string, r *source.Reader, part int) (*dissect.Engine, map[string]int64) {
	t.Helper()
	var rows map[string]int64
	eng := exportWith(t, cfg, name, r, part, func(xc *export.Capture) { rows = xc.Rows() })
	return eng, rows
}

// exportWith is exportCapture calling done with the Capture once it
// finished.
func exportWith(t testing.TB, cfg export.Config, name string, r *source.Reader, part int, done func(*export.Capture)) *dissect.Engine {
	t.Helper()
	return exportLimited(t, cfg, name, r, part, 0, 0, done)
}

// exportLimited is exportWith with the engine's connection table and the
// runner's findings bounded (0: the defaults).
func exportLimited(t testing.TB, cfg export.Config, name string, r *source.Reader, part, maxConns, maxFindings int, done func(*export.Capture)) *dissect.Engine {
	t.Helper()
	xc, err := export.NewCapture(cfg, name, part)
	if err != nil {
		t.Fatal(err)
	}
	opts := dissect.Options{Exchange: xc.Exchange, MaxConnections: maxConns}
	runner := check.NewRunner(check.Config{Next: xc.Observer(nil), MaxTotal: maxFindings})
	xc.SetRunner(runner)
	opts.Observer = runner
	eng := dissect.NewEngine(rpcordma.With(opts, nfs.NewBinding(), rpcpresent.ExportTransactions(xc)))
	if err := eng.Run(r, func(p *dissect.Packet) error {
		runner.Packet(p)
		return xc.Packet(p)
	}); err != nil {
		t.Fatal(err)
	}
	res := runner.Finish(eng.Conns.Connections())
	if err := xc.Finish(eng, res); err != nil {
		t.Fatal(err)
	}
	if done != nil {
		done(xc)
	}
	return eng
}

func open(t testing.TB, path string) *source.Reader {
	r, err := source.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func readParquet[T any](t *testing.T, path string) []T {
	t.Helper()
	rows, err := parquet.ReadFile[T](path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// nullZeros sets the latency columns that are 0 to nil: parquet-go's
// reader (v0.32) returns a NULL optional column of an embedded struct as a
// pointer to 0 (the file holds NULL: export/duckdbtest counts them), so the
// round trip compares values, and DuckDB the NULLs.
func nullZeros(h *export.HealthCounts) {
	for _, p := range []**float64{&h.EpisodeP50us, &h.EpisodeMaxus, &h.AckLatencyP50us, &h.AckLatencyP99us, &h.AckLatencyMaxus,
		&h.ReadLatencyP50, &h.ReadLatencyP99, &h.ReadLatencyMax} {
		if *p != nil && **p == 0 {
			*p = nil
		}
	}
}

func readNDJSON[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []T
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		var row T
		if err := dec.Decode(&row); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rows = append(rows, row)
	}
	return rows
}

// One capture exported as Parquet and as NDJSON: the files hold the rows
// the engine produced (counted here independently of the export: the
// engine's packet count, its Transaction callbacks, the check result), the
// two formats the same rows, the first packet's timestamp the capture
// record's, and the Parquet metadata the schema version.
func TestRoundTrip(t *testing.T) {
	name := pcaps + "rxe-nfs3.pcap"
	// Independent counts.
	var txns int
	var ops int
	var cm counter
	cm.ops = &ops
	runner := check.NewRunner(check.Config{Next: &cm})
	eng := dissect.NewEngine(rpcordma.With(dissect.Options{Observer: runner}, nfs.NewBinding(), func(*rpcordma.Transaction) { txns++ }))
	if err := eng.Run(open(t, name), func(p *dissect.Packet) error { runner.Packet(p); return nil }); err != nil {
		t.Fatal(err)
	}
	res := runner.Finish(eng.Conns.Connections())
	first, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := first.Next()
	first.Close()
	if err != nil {
		t.Fatal(err)
	}

	dirs := map[export.Format]string{}
	for _, f := range []export.Format{export.Parquet, export.NDJSON} {
		dir := t.TempDir()
		cfg := export.Config{Dir: dir, Format: f, Label: "host a/run 1", Packets: true, RowGroupRows: 1000}
		if _, err := export.Reserve(cfg, 1); err != nil {
			t.Fatal(err)
		}
		_, rows := exportCapture(t, cfg, name, open(t, name), 0)
		want := map[string]int64{
			export.TableConnections:      int64(len(eng.Conns.Connections())),
			rpcpresent.TableTransactions: int64(txns),
			export.TableRDMAOps:          int64(ops),
			export.TableFindings:         int64(len(res.Findings)),
			export.TablePackets:          int64(eng.Stats.Packets),
			export.TableUDFlows:          int64(len(eng.UD.Flows)),
			export.TableExchanges:        int64(txns), // RPC-over-RDMA's exchanges are its transactions
			// Every capture has a part file of every registered table:
			// an NFS capture's nvme_commands is empty.
			nvmepresent.TableCommands: 0,
		}
		for _, c := range eng.Conns.Connections() {
			if c.Health != nil {
				want[export.TableTransportHealth] += 2 // one row per direction
			}
		}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("%s: rows %v, want %v", f, rows, want)
		}
		dirs[f] = dir
	}
	part := func(f export.Format, table string) string {
		return filepath.Join(export.PartitionDir(dirs[f], table, "host a/run 1"), "part-0."+string(f))
	}
	if got := filepath.Base(filepath.Dir(part(export.Parquet, "x"))); got != "label=host%20a%2Frun%201" {
		t.Errorf("partition directory %q", got)
	}
	same := func(table string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
			for i := 0; i < av.Len() && i < bv.Len(); i++ {
				if !reflect.DeepEqual(av.Index(i).Interface(), bv.Index(i).Interface()) {
					t.Errorf("%s: Parquet and NDJSON rows differ: row %d\n%+v\n%+v", table, i, av.Index(i).Interface(), bv.Index(i).Interface())
					return
				}
			}
			t.Errorf("%s: Parquet and NDJSON rows differ: %d and %d rows", table, av.Len(), bv.Len())
		}
	}
	pk := readParquet[export.Packet](t, part(export.Parquet, export.TablePackets))
	same("packets", normTimes(pk), normTimes(readNDJSON[export.Packet](t, part(export.NDJSON, export.TablePackets))))
	if len(pk) != int(eng.Stats.Packets) || pk[0].Number != 1 || !pk[0].Time.Equal(rec.CI.Timestamp.Truncate(time.Microsecond)) {
		t.Errorf("packets: %d rows, first %d at %v (capture: %v)", len(pk), pk[0].Number, pk[0].Time, rec.CI.Timestamp)
	}
	if pk[0].Capture != name || pk[0].Label != "host a/run 1" {
		t.Errorf("packets: capture %q label %q", pk[0].Capture, pk[0].Label)
	}
	// transport_health: the same rows both ways, and the retransmitted
	// packets the engine counted (rxe-nfs3.pcap: 3 Sends resent after a
	// timeout, the raw PSN reader's count in dissect's loss tests).
	th := readParquet[export.TransportHealth](t, part(export.Parquet, export.TableTransportHealth))
	thJSON := readNDJSON[export.TransportHealth](t, part(export.NDJSON, export.TableTransportHealth))
	for i := range th {
		nullZeros(&th[i].HealthCounts)
	}
	for i := range thJSON {
		nullZeros(&thJSON[i].HealthCounts)
	}
	same("transport_health", th, thJSON)
	var retx int64
	for _, r := range th {
		retx += r.RetransmittedPackets
		if r.GoodputBytes != r.Bytes-r.RetransmittedBytes || (r.Direction != "client-to-server" && r.Direction != "server-to-client") {
			t.Errorf("transport_health row %+v", r)
		}
	}
	if retx != 3 {
		t.Errorf("transport_health: %d retransmitted packets, want 3", retx)
	}
	ud := readParquet[export.UDFlow](t, part(export.Parquet, export.TableUDFlows))
	udJSON := readNDJSON[export.UDFlow](t, part(export.NDJSON, export.TableUDFlows))
	for i := range ud {
		nullZeros(&ud[i].HealthCounts)
	}
	for i := range udJSON {
		nullZeros(&udJSON[i].HealthCounts)
	}
	same("ud_flows", ud, udJSON)
	tx := readParquet[rpcpresent.Transaction](t, part(export.Parquet, rpcpresent.TableTransactions))
	same("transactions", normTimes(tx), normTimes(readNDJSON[rpcpresent.Transaction](t, part(export.NDJSON, rpcpresent.TableTransactions))))
	// rxe-nfs3.pcap: XID 0xbdad315d is an NFSv3 WRITE whose Reply (packet
	// 1448) came With Invalidate of STag 0x0000092c (README, checked
	// against tshark's rpcrdma and infiniband.ieth fields).
	found := false
	for _, x := range tx {
		if x.XIDHex == "0xbdad315d" {
			found = true
			if x.XID != 0xbdad315d || x.ProcedureName == nil || *x.ProcedureName != "WRITE" || !x.ReplyWithInvalidate ||
				x.InvalidatedSTag == nil || *x.InvalidatedSTag != 0x92c || x.ReplyPacket == nil || *x.ReplyPacket != 1448 {
				t.Errorf("XID 0xbdad315d: %+v", x)
			}
		}
	}
	if !found {
		t.Error("XID 0xbdad315d not exported")
	}
	// The exchanges: the same rows both ways; the same WRITE seen
	// neutrally, with the latency of its transaction.
	ex := readParquet[export.Exchange](t, part(export.Parquet, export.TableExchanges))
	same("exchanges", normTimes(ex), normTimes(readNDJSON[export.Exchange](t, part(export.NDJSON, export.TableExchanges))))
	found = false
	for _, x := range ex {
		if x.Key != "0xbdad315d" {
			continue
		}
		found = true
		var lat *float64
		for _, y := range tx {
			if y.XIDHex == x.Key && y.ConnectionID == x.ConnectionID {
				lat = y.LatencyMicroseconds
			}
		}
		if x.ULP != "rpcordma" || x.KeyNum != 0xbdad315d || x.Name == nil || *x.Name != "WRITE" || x.Status == nil || *x.Status != "SUCCESS" ||
			x.OK == nil || !*x.OK || x.InvalidatedSTag == nil || *x.InvalidatedSTag != 0x92c || x.ResponsePacket == nil || *x.ResponsePacket != 1448 ||
			x.Outcome != "responded" || x.Initiator != "client-to-server" || x.RequestTime == nil {
			t.Errorf("exchange 0xbdad315d: %+v", x)
		}
		if lat == nil || x.LatencyNS == nil || float64(*x.LatencyNS) != *lat*1e3 {
			t.Errorf("exchange 0xbdad315d: latency %v ns, its transaction's %v µs", x.LatencyNS, lat)
		}
		// Its Call was rebuilt from its Read chunk: the request is
		// decoded at the last RDMA Read Response, packet 1253 (tshark's
		// frame for the Call), after the Call's Send (1206).
		if x.RequestPacket == nil || *x.RequestPacket != 1253 {
			t.Errorf("exchange 0xbdad315d: request packet %v, want 1253", x.RequestPacket)
		}
	}
	if !found {
		t.Error("exchange 0xbdad315d not exported")
	}
	same("rdma_ops", normTimes(readParquet[export.RDMAOp](t, part(export.Parquet, export.TableRDMAOps))),
		normTimes(readNDJSON[export.RDMAOp](t, part(export.NDJSON, export.TableRDMAOps))))
	same("findings", readParquet[export.Finding](t, part(export.Parquet, export.TableFindings)),
		readNDJSON[export.Finding](t, part(export.NDJSON, export.TableFindings)))
	same("connections", readParquet[export.Connection](t, part(export.Parquet, export.TableConnections)),
		readNDJSON[export.Connection](t, part(export.NDJSON, export.TableConnections)))

	f, err := os.Open(part(export.Parquet, rpcpresent.TableTransactions))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := pf.Lookup(export.MetadataKey); !ok || v != strconv.Itoa(export.SchemaVersion) {
		t.Errorf("metadata %s = %q, %v", export.MetadataKey, v, ok)
	}
	// 618 transactions in row groups of at most 1000 rows; the packets
	// file's 7245 rows in several.
	if n := len(pf.RowGroups()); n != 1 {
		t.Errorf("transactions: %d row groups", n)
	}
	pf2 := openParquet(t, part(export.Parquet, export.TablePackets))
	if n := len(pf2.RowGroups()); n != (len(pk)+999)/1000 {
		t.Errorf("packets: %d row groups for %d rows at 1000 a group", n, len(pk))
	}
}

func openParquet(t *testing.T, path string) *parquet.File {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// normTimes makes the rows' timestamps comparable across formats: both
// keep microseconds and UTC.
func normTimes[T any](rows []T) []T {
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for j := 0; j < v.NumField(); j++ {
			f := v.Field(j)
			switch x := f.Interface().(type) {
			case time.Time:
				f.Set(reflect.ValueOf(x.UTC().Truncate(time.Microsecond)))
			case *time.Time:
				if x != nil {
					y := x.UTC().Truncate(time.Microsecond)
					f.Set(reflect.ValueOf(&y))
				}
			}
		}
	}
	return rows
}

type counter struct{ ops *int }

func (c *counter) Message(*dissect.Message) {}
func (c *counter) RDMAOp(op *dissect.RDMAOp) {
	if op.Conn != nil {
		*c.ops++
	}
}

// An export into a directory that holds one adds part files after the
// existing ones; it never overwrites.
func TestReserveAppends(t *testing.T) {
	dir := t.TempDir()
	cfg := export.Config{Dir: dir, Label: "h"}
	for want := range 3 {
		first, err := export.Reserve(cfg, 2)
		if err != nil {
			t.Fatal(err)
		}
		if first != 2*want {
			t.Fatalf("export %d: first part %d, want %d", want, first, 2*want)
		}
		for i := range 2 {
			xc, err := export.NewCapture(cfg, "x", first+i)
			if err != nil {
				t.Fatal(err)
			}
			if err := xc.Finish(nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := export.NewCapture(cfg, "x", 0); err == nil {
		t.Error("an existing part file was overwritten")
	}
	b, err := os.ReadFile(filepath.Join(dir, "_rdmashark_export.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &man); err != nil || man.SchemaVersion != export.SchemaVersion {
		t.Errorf("manifest: %s (%v)", b, err)
	}
}
