// Command mutate makes the breaking captures of rdmashark's conformance
// tests: it cuts the real kernel captures of testdata/pcaps to the packets
// a check needs, plants one fault in a copy, and repairs everything the
// fault would otherwise break as well — PSNs and MSNs after cutting or
// splitting packets, IPv4 and UDP lengths, the RoCE ICRC (layers/roce
// FixICRCv2), TCP checksums — so that the only thing wrong is the fault.
// It writes the cut base captures, the mutated ones, manifest.json (which
// rules each mutation must add to, or remove from, what the base shows) and
// README.md into testdata/pcaps/mutated. Run it from the module root:
//
//	go run ./testdata/mutate
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// base is a cut of a real capture that mutations start from.
type base struct {
	name   string
	source string   // file in testdata/pcaps
	keep   [][2]int // packet ranges kept, inclusive
	why    string
}

// mutation plants one fault in a copy of a base.
type mutation struct {
	name, base string
	// what the fault is, for the README.
	what string
	// added: rules the mutated capture shows that the base does not;
	// removed: rules the base shows that the mutated capture does not.
	added, removed []string
	apply          func(c *capture) error
	// noRenumber keeps the PSNs as the mutation leaves them (a dropped
	// packet must stay a gap).
	noRenumber bool
}

var bases = []base{
	{"rxe-nfs3-cm", "rxe-nfs3.pcap", [][2]int{{36, 38}, {3036, 3038}},
		"the CM REQ/REP/RTU of both NFSv3 connections (RFC 8797 private data each side), nothing else"},
	{"rxe-nfs3-conn2", "rxe-nfs3.pcap", [][2]int{{3036, 3092}},
		"the second NFSv3 connection from its CM REQ: NULL, FSINFO, PATHCONF, GETATTR, ACCESS, LOOKUP Calls and Replies, and a READ whose result moves by RDMA Write into a Write chunk, answered with Send With Invalidate"},
	{"rxe-nfs42-head", "rxe-nfs42-small.pcap", [][2]int{{1, 185}},
		"the first NFSv4.2 connection (rsize=wsize=4096) from its CM REQ: COMPOUNDs, Long Replies through Reply chunks (RDMA Write, Send With Invalidate), WRITEs whose data the server pulls with RDMA Read"},
	{"rxe-nfs42-conn2", "rxe-nfs42-small.pcap", [][2]int{{3856, 3966}},
		"the second NFSv4.2 connection from its CM REQ up to an NFSv4 READ (SEQUENCE PUTFH READ) whose data moves by Write chunk"},
	{"ib-erf", "public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap", [][2]int{{1, 1 << 30}},
		"a native InfiniBand capture (ERF): LRH, BTH and the variant CRC, IPoIB-CM set-up, RC Sends and ACKs (whole)"},
	{"siw-nfs3-head", "siw-nfs3.pcap", [][2]int{{1, 60}},
		"the first NFSv3-over-iWARP connection: TCP handshake, MPA Request/Reply with RFC 8797 private data after the RFC 6581 IRD/ORD field, the first Calls"},
}

func main() {
	src := flag.String("src", "testdata/pcaps", "directory of the real captures")
	out := flag.String("out", "testdata/pcaps/mutated", "output directory")
	flag.Parse()
	if err := run(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

// entry is one line of manifest.json.
type entry struct {
	File     string `json:"file"`
	Base     string `json:"base"`
	Mutation string `json:"mutation,omitempty"`
	// Source and Keep: the real capture a base was cut from, and the
	// packet ranges it kept.
	Source  string   `json:"source,omitempty"`
	Keep    [][2]int `json:"keep,omitempty"`
	What    string   `json:"what"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
}

func run(srcDir, outDir string) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	sources := map[string]*capture{}
	cuts := map[string]*capture{}
	var manifest []entry
	for _, b := range bases {
		full := sources[b.source]
		if full == nil {
			var err error
			if full, err = load(filepath.Join(srcDir, b.source)); err != nil {
				return err
			}
			sources[b.source] = full
		}
		c := full.cut(b.keep...)
		if err := finish(c, false); err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		cuts[b.name] = c
		file := b.name + ".pcap"
		if err := c.write(filepath.Join(outDir, file)); err != nil {
			return err
		}
		manifest = append(manifest, entry{File: file, Base: b.name, Source: b.source, Keep: b.keep,
			What: fmt.Sprintf("%s packets %s unchanged: %s", b.source, ranges(b.keep), b.why), Added: []string{}, Removed: []string{}})
	}
	for _, m := range mutations {
		b := baseOf(m.base)
		full := sources[b.source]
		c := full.cut(b.keep...)
		if err := m.apply(c); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		if err := finish(c, m.noRenumber); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		file := m.base + "--" + m.name + ".pcap"
		if err := c.write(filepath.Join(outDir, file)); err != nil {
			return err
		}
		add, rem := m.added, m.removed
		if add == nil {
			add = []string{}
		}
		if rem == nil {
			rem = []string{}
		}
		manifest = append(manifest, entry{File: file, Base: m.base, Mutation: m.name, What: m.what, Added: add, Removed: rem})
	}
	js, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(outDir, "manifest.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(outDir, "README.md"), []byte(readme(manifest)), 0o644)
}

// finish repairs what cutting and mutating left inconsistent.
func finish(c *capture, noRenumber bool) error {
	if !noRenumber {
		if err := c.renumber(); err != nil {
			return err
		}
	}
	c.fixTCPChecksums()
	return c.fixICRCs()
}

func baseOf(name string) base {
	for _, b := range bases {
		if b.name == name {
			return b
		}
	}
	panic("no base " + name)
}

func ranges(rs [][2]int) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%d-%d", r[0], r[1]))
	}
	return strings.Join(parts, ", ")
}

func readme(m []entry) string {
	var b strings.Builder
	b.WriteString(`# Mutated captures: one planted fault each

Generated by ` + "`go run ./testdata/mutate`" + ` (testdata/mutate/main.go) from the real kernel
captures in testdata/pcaps; do not edit by hand — change the generator and run it again.

Each *base* is a cut of a real capture, renumbered where packets were cut so that its packet
sequence is what the sender would have produced (PSNs, MSNs), with every ICRC recomputed. Each
mutated file is its base with one fault planted; the generator then repairs what the fault would
break besides (IPv4/UDP lengths, pad counts, PSNs and MSNs after a split Send, ICRCs with
layers/roce FixICRCv2, TCP checksums), so that the only thing wrong is the fault. The test
(check/mutated_test.go) runs every rule on the base and on the mutated file and asserts that the
set of rules with findings changes by exactly the rules listed here: *added* ones appear, *removed*
ones disappear, nothing else moves.

A base keeps what the real Linux stack does: every NFS base shows INV-NOT-NEGOTIATED (the server
sends R=0 in its private data yet uses Send With Invalidate, see docs/linux-findings.md) and the
informational INV-USAGE and CHUNK-UNNEEDED.

| file | fault | rules added | rules removed |
|---|---|---|---|
`)
	for _, e := range m {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", e.File, strings.ReplaceAll(e.What, "|", `\|`), strings.Join(e.Added, ", "), strings.Join(e.Removed, ", "))
	}
	rules := map[string]bool{}
	for _, e := range m {
		for _, r := range e.Added {
			rules[r] = true
		}
	}
	var ids []string
	for r := range rules {
		ids = append(ids, r)
	}
	sort.Strings(ids)
	fmt.Fprintf(&b, "\nRules broken by at least one file: %s.\n", strings.Join(ids, ", "))
	return b.String()
}
