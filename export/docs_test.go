package export_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/rdmashark/rdmashark/export"
	rpcpresent "github.com/rdmashark/rdmashark/ulp/rpcordma/present"
)

// docType is how docs/export.md names a Parquet column's type.
func docType(f parquet.Field) string {
	if !f.Leaf() {
		// A LIST: group (LIST) { repeated group list { element } }.
		el := f.Fields()[0]
		for !el.Leaf() {
			el = el.Fields()[0]
		}
		return "LIST<" + docType(el) + ">"
	}
	lt := ""
	if l := f.Type().LogicalType(); l != nil {
		lt = l.String()
	}
	var t string
	switch {
	case strings.HasPrefix(lt, "STRING"):
		t = "STRING"
	case strings.HasPrefix(lt, "TIMESTAMP"):
		t = "TIMESTAMP"
	case strings.HasPrefix(lt, "INT(32"):
		t = "INT32"
	case strings.HasPrefix(lt, "INT(64"):
		t = "INT64"
	default:
		t = strings.ToUpper(f.Type().Kind().String())
	}
	if f.Optional() {
		t += " NULL"
	}
	return t
}

var docRow = regexp.MustCompile("^\\| `([a-z0-9_]+)` \\| ([A-Z0-9<> ]+) \\|")

// docs/export.md documents every table and every column, in the order the
// files hold them, with the Parquet type the code writes: a column added
// without its documentation, or renamed, fails here.
func TestDocsMatchSchema(t *testing.T) {
	b, err := os.ReadFile("../docs/export.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string][]string{}
	var table string
	var order []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "## `") {
			table = strings.SplitN(line[4:], "`", 2)[0]
			order = append(order, table)
			continue
		}
		if m := docRow.FindStringSubmatch(line); m != nil && table != "" {
			doc[table] = append(doc[table], m[1]+" "+m[2])
		}
	}
	for _, name := range export.Tables {
		var code []string
		for _, f := range parquet.SchemaOf(export.Schema(name)).Fields() {
			code = append(code, f.Name()+" "+docType(f))
		}
		if got, want := strings.Join(doc[name], "\n"), strings.Join(code, "\n"); got != want {
			t.Errorf("table %s: docs/export.md lists\n%s\nthe code writes\n%s", name, got, want)
		}
	}
	// The tables the plug-ins registered (RPC-over-RDMA's transactions,
	// NVMe/RDMA's nvme_commands) are where the documentation, the
	// manifest and the command's line have them.
	if got, want := strings.Join(order, " "), strings.Join(export.Tables, " "); got != want {
		t.Errorf("docs/export.md describes the tables in the order\n%s\nthe export writes\n%s", got, want)
	}
	if len(doc) != len(export.Tables) {
		t.Errorf("docs/export.md documents %d tables, the code writes %d", len(doc), len(export.Tables))
	}
}

// v1 are the columns of schema version 1. Later versions add columns at
// the end of a table (and tables); a column of v1 renamed, removed or moved
// fails here, whatever the documentation says.
var v1 = map[string]string{
	export.TableConnections: "capture label connection_id transport state reject_reason idle client_address client_qpn client_port " +
		"server_address server_qpn server_port service_port service_id first_packet last_packet client_pd_present " +
		"client_remote_invalidate client_send_size client_receive_size server_pd_present server_remote_invalidate " +
		"server_send_size server_receive_size inline_threshold_c2s inline_threshold_s2c remote_invalidation_negotiated " +
		"packets_c2s packets_s2c bytes_c2s bytes_s2c rpc_version calls_forward calls_backchannel replies_forward " +
		"replies_backchannel replies_with_invalidate replies_without_invalidate calls_without_reply replies_without_call " +
		"rdma_read_bytes rdma_write_bytes findings",
	rpcpresent.TableTransactions: "capture label connection_id xid xid_hex direction outcome program version procedure " +
		"procedure_name operations has_call call_packet call_time call_rdma_proc call_credits call_read_chunks " +
		"call_write_chunks call_reply_chunk call_rpc_bytes has_reply reply_packet reply_time reply_rdma_proc " +
		"reply_credits reply_with_invalidate invalidated_stag reply_status reply_rpc_bytes rdma_read_bytes " +
		"rdma_write_bytes latency_us",
	export.TableRDMAOps: "capture label connection_id xid chunk_kind kind direction stag offset length complete packets " +
		"first_packet last_packet start_time end_time",
	export.TableFindings: "capture label connection_id rule severity xid first_packet packets message reference",
	export.TablePackets: "capture label number time rel_time length cap_length source destination protocol info " +
		"connection_id direction xid",
}

func TestSchemaOnlyGrows(t *testing.T) {
	for table, cols := range v1 {
		var code []string
		for _, f := range parquet.SchemaOf(export.Schema(table)).Fields() {
			code = append(code, f.Name())
		}
		if got := strings.Join(code, " "); !strings.HasPrefix(got+" ", cols+" ") {
			t.Errorf("table %s: columns\n%s\ndo not start with schema version 1's\n%s", table, got, cols)
		}
	}
}
