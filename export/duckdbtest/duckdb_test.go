package duckdbtest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/rdmashark/rdmashark/export"
)

const root = "../.."

// nfsCaptures are the real NFS-over-RDMA captures of testdata/pcaps (the
// kernel's rxe and siw, clean and under loss).
func nfsCaptures(t *testing.T) []string {
	var out []string
	for _, g := range []string{"testdata/pcaps/*nfs*.pcap", "testdata/pcaps/lossy/*nfs*.pcap"} {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 8 {
		t.Fatalf("only %d NFS captures found", len(out))
	}
	return out
}

// rdmashark builds the binary once per test run.
func rdmashark(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "rdmashark")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/rdmashark")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func run(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil // findings
	}
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	return out
}

// analyzed is what analyze --format json says of one capture.
type analyzed struct {
	File        string `json:"file"`
	Connections []struct {
		ID  int `json:"id"`
		RPC *struct {
			Calls struct {
				Forward, Backchannel int64
			} `json:"calls"`
			Replies struct {
				Forward, Backchannel int64
			} `json:"replies"`
			RepliesWithInvalidate int64 `json:"replies_with_invalidate"`
		} `json:"rpc"`
	} `json:"connections"`
	Findings []struct {
		Rule       string `json:"rule"`
		Connection int    `json:"connection"`
	} `json:"findings"`
}

type connKey struct {
	capture string
	conn    int64
}

type counts struct{ calls, replies, inv int64 }

// The export read by DuckDB reproduces analyze's per-connection counts —
// Calls, Replies, Replies With Invalidate, findings by rule — on every real
// NFS capture, by SQL over the transactions and findings tables (not by
// reading back the connections table's copies of the counts, which the
// test checks as well), and the tables join on their keys.
func TestDuckDBReproducesAnalyze(t *testing.T) {
	bin := rdmashark(t)
	caps := nfsCaptures(t)
	dir := t.TempDir()
	run(t, bin, append([]string{"export", "-o", dir, "--label", "ci-host", "--jobs", "2"}, caps...)...)

	var docs []analyzed
	if err := json.Unmarshal(run(t, bin, append([]string{"analyze", "--format", "json"}, caps...)...), &docs); err != nil {
		t.Fatal(err)
	}
	want := map[connKey]counts{}
	wantFindings := map[string]int64{} // capture|conn|rule
	for _, d := range docs {
		for _, c := range d.Connections {
			if c.RPC == nil {
				continue
			}
			want[connKey{d.File, int64(c.ID)}] = counts{
				c.RPC.Calls.Forward + c.RPC.Calls.Backchannel,
				c.RPC.Replies.Forward + c.RPC.Replies.Backchannel,
				c.RPC.RepliesWithInvalidate,
			}
		}
		for _, f := range d.Findings {
			wantFindings[fmt.Sprintf("%s|%d|%s", d.File, f.Connection, f.Rule)]++
		}
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := func(name string) string {
		return fmt.Sprintf("read_parquet('%s/%s/*/*.parquet', hive_partitioning = true)", dir, name)
	}

	// Calls, Replies and Replies With Invalidate per connection, counted
	// from the transactions table.
	rows, err := db.Query(`SELECT capture, connection_id,
		count(*) FILTER (WHERE has_call),
		count(*) FILTER (WHERE has_reply),
		count(*) FILTER (WHERE reply_with_invalidate)
		FROM ` + tbl("transactions") + ` WHERE label = 'ci-host' GROUP BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[connKey]counts{}
	for rows.Next() {
		var k connKey
		var c counts
		if err := rows.Scan(&k.capture, &k.conn, &c.calls, &c.replies, &c.inv); err != nil {
			t.Fatal(err)
		}
		got[k] = c
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) < 2*len(caps)-2 {
		t.Fatalf("analyze reports only %d RPC connections on %d captures", len(want), len(caps))
	}
	for k, w := range want {
		if g := got[k]; g != w {
			t.Errorf("%s connection %d: SQL calls/replies/invalidate %d/%d/%d, analyze %d/%d/%d",
				k.capture, k.conn, g.calls, g.replies, g.inv, w.calls, w.replies, w.inv)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s connection %d: transactions in the export, none in analyze", k.capture, k.conn)
		}
	}

	// The connections table's copies of the counts agree too, and every
	// transaction joins a connection.
	var mismatched, orphans, conns int64
	err = db.QueryRow(`SELECT
		count(*) FILTER (WHERE c.calls_forward + c.calls_backchannel <> t.calls
			OR c.replies_forward + c.replies_backchannel <> t.replies
			OR c.replies_with_invalidate <> t.inv),
		count(*) FILTER (WHERE c.connection_id IS NULL),
		count(*)
		FROM (SELECT capture, label, connection_id, count(*) FILTER (WHERE has_call) calls,
			count(*) FILTER (WHERE has_reply) replies, count(*) FILTER (WHERE reply_with_invalidate) inv
			FROM `+tbl("transactions")+` GROUP BY ALL) t
		LEFT JOIN `+tbl("connections")+` c USING (capture, label, connection_id)`).Scan(&mismatched, &orphans, &conns)
	if err != nil {
		t.Fatal(err)
	}
	if mismatched != 0 || orphans != 0 || conns != int64(len(want)) {
		t.Errorf("connections join: %d mismatched, %d transactions' connections missing, %d connections (want %d)", mismatched, orphans, conns, len(want))
	}

	// Findings by rule per connection.
	rows, err = db.Query(`SELECT capture, connection_id, rule, count(*) FROM ` + tbl("findings") + ` GROUP BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	gotFindings := map[string]int64{}
	for rows.Next() {
		var capture, rule string
		var conn, n int64
		if err := rows.Scan(&capture, &conn, &rule, &n); err != nil {
			t.Fatal(err)
		}
		gotFindings[fmt.Sprintf("%s|%d|%s", capture, conn, rule)] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]int64) []string {
		var ks []string
		for k, v := range m {
			ks = append(ks, fmt.Sprintf("%s=%d", k, v))
		}
		sort.Strings(ks)
		return ks
	}
	if g, w := keys(gotFindings), keys(wantFindings); strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("findings by rule:\n SQL     %v\n analyze %v", g, w)
	}
	if len(wantFindings) == 0 {
		t.Error("no findings on the NFS captures: the Linux server's Send With Invalidate under R=0 should be there")
	}

	// Every rdma_ops row with an XID joins its transaction.
	var ops, attached, joined int64
	err = db.QueryRow(`SELECT count(*), count(o.xid), count(t.xid) FROM `+tbl("rdma_ops")+` o
		LEFT JOIN (SELECT DISTINCT capture, label, connection_id, xid FROM `+tbl("transactions")+`) t
		USING (capture, label, connection_id, xid)`).Scan(&ops, &attached, &joined)
	if err != nil {
		t.Fatal(err)
	}
	if ops == 0 || attached == 0 || joined != attached {
		t.Errorf("rdma_ops: %d rows, %d with an XID, %d of them join a transaction", ops, attached, joined)
	}

	// Every exchange is a transaction seen neutrally: as many rows, each
	// joining its transaction on the XID with the same latency and RDMA
	// bytes.
	var exchanges, txns, matched int64
	err = db.QueryRow(`SELECT (SELECT count(*) FROM `+tbl("exchanges")+`), (SELECT count(*) FROM `+tbl("transactions")+`),
		(SELECT count(*) FROM `+tbl("exchanges")+` e JOIN `+tbl("transactions")+` t
			ON e.capture = t.capture AND e.label = t.label AND e.connection_id = t.connection_id AND e.key_num = t.xid
			AND e.outcome = CASE t.outcome WHEN 'replied' THEN 'responded' WHEN 'no-reply' THEN 'no-response'
				WHEN 'reply-without-call' THEN 'response-without-request' ELSE t.outcome END
			AND e.read_bytes = t.rdma_read_bytes AND e.write_bytes = t.rdma_write_bytes
			AND e.latency_ns IS NOT DISTINCT FROM round(t.latency_us * 1000)::BIGINT
			AND e.invalidated_stag IS NOT DISTINCT FROM t.invalidated_stag
			AND e.ulp = 'rpcordma' AND e.key = t.xid_hex)`).Scan(&exchanges, &txns, &matched)
	if err != nil {
		t.Fatal(err)
	}
	if exchanges == 0 || exchanges != txns || matched != exchanges {
		t.Errorf("exchanges: %d rows, %d transactions, %d exchanges join a transaction with the same values", exchanges, txns, matched)
	}

	// The schema version is in every file's metadata.
	var files, versioned int64
	err = db.QueryRow(fmt.Sprintf(`SELECT count(DISTINCT file_name), count(DISTINCT file_name) FILTER (WHERE decode(key) = '%s' AND decode(value) = '%d')
		FROM parquet_kv_metadata('%s/*/*/*.parquet')`, export.MetadataKey, export.SchemaVersion, dir)).Scan(&files, &versioned)
	if err != nil {
		t.Fatal(err)
	}
	// One file per capture of every table but packets (no --packets):
	// the manifest's tables, which are the neutral ones (export.Tables in
	// this process, where no plug-in registered its own) and the plug-ins'
	// (transactions, nvme_commands).
	tables := manifestTables(t, dir)
	if len(tables) != len(export.Tables)+2 {
		t.Errorf("the manifest lists %v", tables)
	}
	if nf := int64((len(tables) - 1) * len(caps)); files != nf || versioned != files {
		t.Errorf("%d files, %d with %s=%d (want %d)", files, versioned, export.MetadataKey, export.SchemaVersion, nf)
	}
	// DuckDB sees the columns typed: timestamps as timestamps, counts and
	// keys as integers, addresses and enumerations as strings, lists as
	// lists.
	types := map[string]string{}
	for _, tb := range []string{"transactions", "connections", "rdma_ops", "findings", "exchanges"} {
		rows, err := db.Query("DESCRIBE SELECT * FROM " + tbl(tb))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name, typ string
			var null, key, def, extra sql.NullString
			if err := rows.Scan(&name, &typ, &null, &key, &def, &extra); err != nil {
				t.Fatal(err)
			}
			types[tb+"."+name] = typ
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	for col, want := range map[string]string{
		"transactions.call_time":             "TIMESTAMP WITH TIME ZONE",
		"transactions.xid":                   "BIGINT",
		"transactions.latency_us":            "DOUBLE",
		"transactions.operations":            "VARCHAR[]",
		"transactions.reply_with_invalidate": "BOOLEAN",
		"connections.server_address":         "VARCHAR",
		"connections.packets_c2s":            "BIGINT",
		"connections.state":                  "VARCHAR",
		"rdma_ops.start_time":                "TIMESTAMP WITH TIME ZONE",
		"findings.packets":                   "BIGINT[]",
		"findings.label":                     "VARCHAR",
		"exchanges.latency_ns":               "BIGINT",
		"exchanges.request_time":             "TIMESTAMP WITH TIME ZONE",
		"exchanges.key":                      "VARCHAR",
		"exchanges.ok":                       "BOOLEAN",
	} {
		if types[col] != want {
			t.Errorf("%s: DuckDB type %q, want %q", col, types[col], want)
		}
	}

	t.Logf("%d captures, %d RPC connections, %d finding groups, %d RDMA operations (%d attached)", len(caps), len(want), len(wantFindings), ops, attached)
}

// The transport_health table read by DuckDB reproduces analyze's
// retransmitted packets per connection and direction on the lossy
// captures, and its rows join the connections table.
func TestDuckDBRetransmissions(t *testing.T) {
	bin := rdmashark(t)
	caps, err := filepath.Glob(filepath.Join(root, "testdata/pcaps/lossy/*.pcap"))
	if err != nil || len(caps) < 5 {
		t.Fatalf("lossy captures: %v %v", caps, err)
	}
	dir := t.TempDir()
	run(t, bin, append([]string{"export", "-o", dir, "--jobs", "2"}, caps...)...)
	var docs []struct {
		File        string `json:"file"`
		Connections []struct {
			ID     int `json:"id"`
			Health *struct {
				C2S struct {
					Retx int64 `json:"retransmitted_packets"`
				} `json:"client_to_server"`
				S2C struct {
					Retx int64 `json:"retransmitted_packets"`
				} `json:"server_to_client"`
			} `json:"transport_health"`
		} `json:"connections"`
	}
	if err := json.Unmarshal(run(t, bin, append([]string{"analyze", "--format", "json"}, caps...)...), &docs); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{} // capture|conn|direction
	var total int64
	for _, d := range docs {
		for _, c := range d.Connections {
			if c.Health == nil {
				continue
			}
			want[fmt.Sprintf("%s|%d|client-to-server", d.File, c.ID)] = c.Health.C2S.Retx
			want[fmt.Sprintf("%s|%d|server-to-client", d.File, c.ID)] = c.Health.S2C.Retx
			total += c.Health.C2S.Retx + c.Health.S2C.Retx
		}
	}
	if total == 0 {
		t.Fatal("analyze finds no retransmission in the lossy captures")
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := func(name string) string {
		return fmt.Sprintf("read_parquet('%s/%s/*/*.parquet', hive_partitioning = true)", dir, name)
	}
	rows, err := db.Query(`SELECT h.capture, h.connection_id, h.direction, sum(h.retransmitted_packets), count(c.connection_id)
		FROM ` + tbl("transport_health") + ` h LEFT JOIN ` + tbl("connections") + ` c USING (capture, label, connection_id)
		GROUP BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for rows.Next() {
		var capture, direction string
		var conn, n, joined int64
		if err := rows.Scan(&capture, &conn, &direction, &n, &joined); err != nil {
			t.Fatal(err)
		}
		if joined != 1 {
			t.Errorf("%s connection %d %s: joins %d connections rows", capture, conn, direction, joined)
		}
		got[fmt.Sprintf("%s|%d|%s", capture, conn, direction)] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d transport_health rows, analyze has %d directions with transport health", len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: SQL %d retransmitted packets, analyze %d", k, g, w)
		}
	}
	// Latencies without a sample are NULL, not 0 (every UD flow's episode
	// duration; the Read latency of every direction that issued no Read).
	var n, readLat, udEpisodes int64
	if err := db.QueryRow(`SELECT count(*), count(read_latency_p50_us), (SELECT count(episode_duration_max_us) FROM `+tbl("ud_flows")+`)
		FROM `+tbl("transport_health")).Scan(&n, &readLat, &udEpisodes); err != nil {
		t.Fatal(err)
	}
	if readLat == 0 || readLat >= n || udEpisodes != 0 {
		t.Errorf("NULL latencies: %d of %d directions have a Read latency, %d UD flows an episode duration", readLat, n, udEpisodes)
	}
	t.Logf("%d directions, %d retransmitted packets", len(want), total)
}

// manifestTables reads the tables an export's _rdmashark_export.json lists.
func manifestTables(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "_rdmashark_export.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		SchemaVersion int      `json:"schema_version"`
		Tables        []string `json:"tables"`
	}
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	if man.SchemaVersion != export.SchemaVersion {
		t.Errorf("manifest: schema version %d, want %d", man.SchemaVersion, export.SchemaVersion)
	}
	return man.Tables
}

// The nvme_commands table read by DuckDB reproduces analyze's NVMe/RDMA
// per-queue counts — commands, completions, remote invalidations asked
// (a keyed SGL with data and subtype Invalidate Key) and used, bytes by
// RDMA Read and Write and in capsules — on every real NVMe/RDMA capture,
// RoCE and iWARP, and every row joins its exchange with the same packets,
// outcome, name, status, latency, bytes and invalidated key.
func TestDuckDBNVMeCommands(t *testing.T) {
	bin := rdmashark(t)
	caps, err := filepath.Glob(filepath.Join(root, "testdata/pcaps/ulp/*-nvmeof*.pcap"))
	if err != nil || len(caps) < 6 {
		t.Fatalf("NVMe/RDMA captures: %v %v", caps, err)
	}
	dir := t.TempDir()
	run(t, bin, append([]string{"export", "-o", dir, "--jobs", "2"}, caps...)...)
	if tables := manifestTables(t, dir); !slices.Contains(tables, "nvme_commands") || tables[len(tables)-1] != "nvme_commands" {
		t.Errorf("the manifest lists %v", tables)
	}
	var docs []struct {
		File        string `json:"file"`
		Connections []struct {
			ID   int `json:"id"`
			NVMe *struct {
				Commands      int64 `json:"commands"`
				Completions   int64 `json:"completions"`
				InvRequested  int64 `json:"remote_invalidation_requested"`
				Invalidations int64 `json:"remote_invalidations"`
				Read          int64 `json:"read_bytes"`
				Write         int64 `json:"write_bytes"`
				InCapsule     int64 `json:"in_capsule_bytes"`
			} `json:"nvme_rdma"`
		} `json:"connections"`
	}
	if err := json.Unmarshal(run(t, bin, append([]string{"analyze", "--format", "json"}, caps...)...), &docs); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // capture|conn → figures
	for _, d := range docs {
		for _, c := range d.Connections {
			if n := c.NVMe; n != nil && n.Commands+n.Completions > 0 {
				want[fmt.Sprintf("%s|%d", d.File, c.ID)] = fmt.Sprint(n.Commands, n.Completions, n.InvRequested, n.Invalidations, n.Read, n.Write, n.InCapsule)
			}
		}
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := func(name string) string {
		return fmt.Sprintf("read_parquet('%s/%s/*/*.parquet', hive_partitioning = true)", dir, name)
	}
	rows, err := db.Query(`SELECT capture, connection_id, count(request_packet), count(response_packet),
		count(*) FILTER (WHERE invalidate_requested AND data_length > 0), count(*) FILTER (WHERE invalidated),
		sum(read_bytes), sum(write_bytes), coalesce(sum(in_capsule_bytes), 0)
		FROM ` + tbl("nvme_commands") + ` GROUP BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var total int64
	for rows.Next() {
		var capture string
		var conn, cmds, cpls, invReq, inv, read, write, inCap int64
		if err := rows.Scan(&capture, &conn, &cmds, &cpls, &invReq, &inv, &read, &write, &inCap); err != nil {
			t.Fatal(err)
		}
		got[fmt.Sprintf("%s|%d", capture, conn)] = fmt.Sprint(cmds, cpls, invReq, inv, read, write, inCap)
		total += cmds
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) < 12 || len(got) != len(want) {
		t.Errorf("%d queues in nvme_commands, analyze has %d", len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: SQL %q, analyze %q (commands completions inv-asked inv-used read write in-capsule)", k, got[k], w)
		}
	}
	var cmds, exchanges, matched int64
	err = db.QueryRow(`SELECT (SELECT count(*) FROM `+tbl("nvme_commands")+`),
		(SELECT count(*) FROM `+tbl("exchanges")+` WHERE ulp = 'nvme-rdma'),
		(SELECT count(*) FROM `+tbl("nvme_commands")+` c JOIN `+tbl("exchanges")+` e
			ON e.ulp = 'nvme-rdma' AND c.capture = e.capture AND c.label = e.label AND c.connection_id = e.connection_id
			AND c.key_num = e.key_num AND c.request_packet IS NOT DISTINCT FROM e.request_packet
			AND c.response_packet IS NOT DISTINCT FROM e.response_packet AND c.outcome = e.outcome
			AND c.name IS NOT DISTINCT FROM e.name AND c.status IS NOT DISTINCT FROM e.status AND c.ok IS NOT DISTINCT FROM e.ok
			AND c.latency_ns IS NOT DISTINCT FROM e.latency_ns AND c.read_bytes = e.read_bytes AND c.write_bytes = e.write_bytes
			AND c.invalidated_key IS NOT DISTINCT FROM e.invalidated_stag)`).Scan(&cmds, &exchanges, &matched)
	if err != nil {
		t.Fatal(err)
	}
	if cmds == 0 || cmds != exchanges || matched != cmds {
		t.Errorf("nvme_commands: %d rows, %d NVMe/RDMA exchanges, %d rows join their exchange with the same values", cmds, exchanges, matched)
	}
	types := map[string]string{}
	trows, err := db.Query("DESCRIBE SELECT * FROM " + tbl("nvme_commands"))
	if err != nil {
		t.Fatal(err)
	}
	for trows.Next() {
		var name, typ string
		var null, key, def, extra sql.NullString
		if err := trows.Scan(&name, &typ, &null, &key, &def, &extra); err != nil {
			t.Fatal(err)
		}
		types[name] = typ
	}
	for col, w := range map[string]string{"slba": "BIGINT", "nlb": "BIGINT", "request_time": "TIMESTAMP WITH TIME ZONE",
		"status_dnr": "BOOLEAN", "sgl_type": "VARCHAR", "outcome": "VARCHAR"} {
		if types[col] != w {
			t.Errorf("nvme_commands.%s: DuckDB type %q, want %q", col, types[col], w)
		}
	}
	t.Logf("%d captures, %d queues, %d commands", len(caps), len(got), total)
}
