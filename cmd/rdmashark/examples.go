package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are the commands each --help shows under "Examples:", on the
// captures in testdata/pcaps (run from the repository's root).
// TestHelpExamples runs every one that reads a capture.
var examples = map[string][]string{
	"analyze": {
		"rdmashark analyze testdata/pcaps/rxe-nfs3.pcap",
		"rdmashark analyze --connection 2 testdata/pcaps/siw-nfs3.pcap",
		"rdmashark analyze --format json testdata/pcaps/ulp/rxe-nvmeof.pcap",
		"rdmashark analyze --wide testdata/pcaps/lossy/rxe-nfs3-lossy.pcap",
	},
	"check": {
		"rdmashark check testdata/pcaps/rxe-nfs3.pcap",
		"rdmashark check -v --fail-on warning testdata/pcaps/siw-nfs41.pcap",
		"rdmashark check --format sarif -o findings.sarif testdata/pcaps",
	},
	"transactions": {
		"rdmashark transactions testdata/pcaps/rxe-nfs3.pcap",
		"rdmashark transactions --procedure READ --connection 2 testdata/pcaps/siw-nfs3.pcap",
		"rdmashark transactions --format jsonl testdata/pcaps/rxe-nfs41.pcap",
	},
	"exchanges": {
		"rdmashark exchanges testdata/pcaps/ulp/rxe-nvmeof.pcap",
		"rdmashark exchanges --ulp rpcordma --format jsonl testdata/pcaps/rxe-nfs3.pcap",
	},
	"dissect": {
		"rdmashark dissect testdata/pcaps/rxe-nfs3.pcap",
		"rdmashark dissect -V -c 40 testdata/pcaps/siw-nfs3.pcap",
		"rdmashark dissect -Y 'rpcordma.xid == 0xb5ad315d' testdata/pcaps/rxe-nfs3.pcap",
		"rdmashark dissect -T fields -e frame.number -e rpc.xid -e nfs.main_opcode testdata/pcaps/rxe-nfs41.pcap",
		"rdmashark dissect -Y 'rpcordma.xid == 0xb5ad315d' -w xid.pcapng testdata/pcaps/rxe-nfs3.pcap",
	},
	"report": {
		"rdmashark report testdata/pcaps/rxe-nfs3.pcap -o rxe-nfs3.html",
	},
	"export": {
		"rdmashark export testdata/pcaps/rxe-nfs3.pcap testdata/pcaps/siw-nfs3.pcap -o tables",
		"duckdb -c \"select procedure, count(*) from 'tables/transactions/*/*.parquet' group by 1\"",
	},
	"diff": {
		"rdmashark diff testdata/pcaps/rxe-nfs3.pcap testdata/pcaps/lossy/rxe-nfs3-lossy.pcap",
	},
	"rules": {
		"rdmashark rules",
		"rdmashark rules 'CHUNK-*'",
		"rdmashark rules INV-NOT-NEGOTIATED",
	},
	"capture": {
		"sudo rdmashark capture -i rxe0",
		"sudo rdmashark capture -i eth0 -w nfs.pcapng --duration 60s",
	},
}

// addExamples sets each subcommand's Example from examples.
func addExamples(root *cobra.Command) {
	for _, c := range root.Commands() {
		if ex := examples[c.Name()]; len(ex) > 0 && c.Example == "" {
			c.Example = "  " + strings.Join(ex, "\n  ")
		}
	}
}
