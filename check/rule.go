package check

import (
	"fmt"
	"path"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// Rule is one conformance check: what it enforces, where the spec says so,
// and the functions that evaluate it. Rules live in one table (rules.go);
// adding a check is a row there, the function it names, and its tests.
type Rule struct {
	// ID is stable: output, --enable/--disable and baselines use it.
	ID       string
	Severity Severity
	// Reference is the spec section the rule enforces, e.g.
	// "RFC 8797 section 4.1".
	Reference string
	// Summary is one line for the `rules` table.
	Summary string
	// Explanation is the paragraph `rdmashark rules ID` prints: what the
	// rule checks, why the spec asks for it, and what a finding means.
	Explanation string
	// Evidence is what a capture must hold for the rule to be evaluated.
	Evidence string
	// ULP is the name of the upper-layer protocol whose rule it is
	// ("rpcordma", dissect.ULP.Name); empty for the rules of the RDMA
	// transport, which judge every connection.
	ULP string
	// Added marks rules that are not in the project's list of checks
	// (shared/specs/conformance-rules.md) but that the specs support.
	Added bool
	// Version, when set, is the RPC-over-RDMA version whose rules the rule
	// enforces (RFC 8166/8797 for 1, draft-ietf-nfsv4-rpcrdma-version-two
	// for 2). It judges only that version's messages, and is not listed
	// for a connection whose messages all used the other version.
	Version uint32
	// Waits, when set, names the engine work the rule needs and that is
	// not there yet; such a rule reports "not evaluated" with it.
	Waits string

	// Applies returns why the rule cannot be evaluated on c ("" when it
	// can). It runs at the end, and decides the status of a rule that
	// examined nothing.
	Applies func(c *Conn) string
	// Packet runs for every packet (p.Conn may be nil: c is then the
	// pseudo-connection 0) but those whose receiver discards them for a
	// bad ICRC or VCRC (dissect.Packet.CRCDiscarded), unless SeesDiscarded.
	Packet func(c *Conn, p *dissect.Packet)
	// SeesDiscarded: Packet runs on the packets with a bad ICRC or VCRC
	// too (the rules that judge those CRCs).
	SeesDiscarded bool
	// Message runs for every reassembled RDMA Send of a connection.
	Message func(c *Conn, m *Msg)
	// RDMAOp runs for every RDMA Read or Write of a connection (for a
	// rule of a ULP other than RPC-over-RDMA, of a connection carrying
	// that ULP).
	RDMAOp func(c *Conn, op *dissect.RDMAOp)
	// ULPMessage runs, for a rule of a ULP other than RPC-over-RDMA, for
	// every Send of a connection carrying that ULP that its session made a
	// record of (dissect.Message.ULP).
	ULPMessage func(c *Conn, m *dissect.Message)
	// End runs once per connection after the capture.
	End func(c *Conn)

	index int // position in the table
	// The reasons a rule not evaluated gives, made once (init) rather
	// than once per connection, whose result keeps them to the end.
	waitsReason, noEvidenceReason string
}

// waitsText is the reason of a rule that waits (Waits).
func (r *Rule) waitsText() string {
	if r.waitsReason == "" { // a rule not in the table
		return "waits for " + r.Waits
	}
	return r.waitsReason
}

// noEvidenceText is the reason of a rule that examined nothing.
func (r *Rule) noEvidenceText() string {
	if r.noEvidenceReason == "" {
		return "nothing in the capture to check: needs " + r.Evidence
	}
	return r.noEvidenceReason
}

// Rules returns every rule in table order. The slice is shared: do not
// modify it.
func Rules() []*Rule { return table }

// Lookup returns the rule with that ID (case-insensitive).
func Lookup(id string) (*Rule, bool) {
	r, ok := byID[strings.ToUpper(id)]
	return r, ok
}

// Select returns the rules that the --enable and --disable patterns leave:
// all rules, or those matching an enable pattern when there is one, minus
// those matching a disable pattern. Patterns are rule IDs or path.Match
// globs ("CHUNK-*"), case-insensitive. A pattern that matches no rule is an
// error, so a typo does not silently turn a gate off.
func Select(enable, disable []string) ([]*Rule, error) {
	match := func(pats []string) (map[*Rule]bool, error) {
		m := map[*Rule]bool{}
		for _, pat := range pats {
			for _, p := range strings.Split(pat, ",") {
				p = strings.ToUpper(strings.TrimSpace(p))
				if p == "" {
					continue
				}
				if _, err := path.Match(p, ""); err != nil {
					return nil, fmt.Errorf("bad rule pattern %q: %w", p, err)
				}
				n := 0
				for _, r := range table {
					if ok, _ := path.Match(p, r.ID); ok {
						m[r] = true
						n++
					}
				}
				if n == 0 {
					return nil, fmt.Errorf("no rule matches %q (rdmashark rules lists them)", p)
				}
			}
		}
		return m, nil
	}
	en, err := match(enable)
	if err != nil {
		return nil, err
	}
	dis, err := match(disable)
	if err != nil {
		return nil, err
	}
	var out []*Rule
	for _, r := range table {
		if (len(en) == 0 || en[r]) && !dis[r] {
			out = append(out, r)
		}
	}
	return out, nil
}

// table is the rule list (rules.go); byID indexes it.
var (
	table []*Rule
	byID  map[string]*Rule
)

func init() {
	byID = map[string]*Rule{}
	Register(ruleTable()...)
}

// Register adds the rules of an upper-layer protocol plug-in to the table
// (each with Rule.ULP set to its ULP's name), before any Runner is made:
// the one registration list of the command (cmd/rdmashark/ulps.go) calls
// it. It panics on a rule ID already taken.
func Register(rules ...*Rule) {
	for _, r := range rules {
		if _, dup := byID[r.ID]; dup {
			panic("check: duplicate rule " + r.ID)
		}
		r.index = len(table)
		table = append(table, r)
		r.waitsReason = "waits for " + r.Waits
		r.noEvidenceReason = "nothing in the capture to check: needs " + r.Evidence
		byID[r.ID] = r
	}
}

// NeedsULP returns a Rule.Applies for the rules of the ULP named name:
// they apply to the connections that carry it.
func NeedsULP(name string) func(c *Conn) string {
	return func(c *Conn) string {
		if c.ID != 0 && c.Connection.ULP == name {
			return ""
		}
		return "no " + name + " traffic on this connection"
	}
}

// hiddenFor reports whether ru is left out of c's results: a rule of a
// ULP other than RPC-over-RDMA on a connection that does not carry it, or
// an RPC-over-RDMA rule on a connection of another ULP. (On a connection
// of no ULP, RPC-over-RDMA's rules say why they were not evaluated, as
// they always did.)
func (ru *Rule) hiddenFor(c *Conn) bool {
	if ru.ULP == rpcULP {
		return c.Connection.ULP != "" && c.Connection.ULP != rpcULP || ru.otherVersion(c)
	}
	return ru.otherULP(c)
}

// otherVersion reports whether ru judges one RPC-over-RDMA version and c's
// messages all used the other one.
func (ru *Rule) otherVersion(c *Conn) bool {
	if ru.Version == 0 {
		return false
	}
	var n [3]uint64
	if rs := rpcordma.Stats(c.Connection); rs != nil {
		n = rs.Versions
	}
	switch ru.Version {
	case 1:
		return n[1] == 0 && n[2] > 0
	case 2:
		return n[2] == 0
	}
	return false
}

// otherULP reports whether ru is a rule of a ULP other than RPC-over-RDMA
// that does not apply to c (RPC's rules check c themselves).
func (ru *Rule) otherULP(c *Conn) bool {
	return ru.ULP != "" && ru.ULP != rpcULP && ru.ULP != c.Connection.ULP
}

// rpcULP names RPC-over-RDMA's rules (Rule.ULP).
const rpcULP = rpcordma.Name
