package check

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
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
	// transport, which judge every connection. A ULP's rule runs on, and
	// is listed for, the connections that carry its ULP.
	ULP string
	// OnUnclaimed: the ULP's rule also runs on, and is listed for, the
	// connections no ULP claimed, where Applies says why it could not be
	// evaluated (RPC-over-RDMA's rules: "no RPC-over-RDMA traffic on this
	// connection").
	OnUnclaimed bool
	// Hide, when set, leaves the rule out of the results of the
	// connections it returns true for (RPC-over-RDMA: a rule of one
	// version on a connection whose messages all used the other).
	Hide func(c *Conn) bool
	// Before, when set, is the ID of a rule already in the table that
	// Register lists this one in front of (a plug-in's rules keep the
	// places they had in the table's order); empty: after the rest.
	Before string
	// Added marks rules that are not in the project's list of checks
	// (shared/specs/conformance-rules.md) but that the specs support.
	Added bool
	// Version, when set, is the version of its ULP's protocol whose rules
	// the rule enforces (RPC-over-RDMA: RFC 8166/8797 for 1,
	// draft-ietf-nfsv4-rpcrdma-version-two for 2). It judges only that
	// version's messages (its ULP's Hide leaves it out of a connection
	// whose messages all used another).
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
	// Transport, when set, is the only transport whose connections'
	// packets Packet runs on (it still runs on the packets of no
	// connection): a rule of one transport's headers is not called for
	// every packet of the other, where it would find nothing to judge.
	Transport dissect.Transport
	// RDMAOp runs for every RDMA Read or Write of a connection (for a
	// ULP's rule, of a connection it runs on: ULP).
	RDMAOp func(c *Conn, op *dissect.RDMAOp)
	// ULPMessage runs, for a ULP's rule, for every Send of a connection
	// carrying that ULP that its session made a record of
	// (dissect.Message.ULP), after the ULP's Hooks.Message.
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
		at := len(table)
		if r.Before != "" {
			b, ok := byID[r.Before]
			if !ok {
				panic("check: rule " + r.ID + " before " + r.Before + ", which is not registered")
			}
			at = b.index
		}
		table = slices.Insert(table, at, r)
		for i := at; i < len(table); i++ {
			table[i].index = i
		}
		r.waitsReason = "waits for " + r.Waits
		r.noEvidenceReason = "nothing in the capture to check: needs " + r.Evidence
		byID[r.ID] = r
	}
}

// Hooks are what a ULP's rules share that is no one rule's: the view of a
// message they all read, the connection's summary they add to its result.
// A plug-in registers them with its rules (RegisterHooks).
type Hooks struct {
	// ULP is the plug-in's Name.
	ULP string
	// Message runs for every Send of a connection carrying the ULP that
	// its session made a record of (dissect.Message.ULP), before the
	// ULP's rules' ULPMessage and whichever of them are enabled: it makes
	// what they read of the message (in Conn.ULPState) and counts it.
	Message func(c *Conn, m *dissect.Message)
	// Result adds the ULP's part of a connection's result
	// (ConnResult.RPC, Usage, Chunks), after its End rules ran, for the
	// connections its rules run on.
	Result func(c *Conn, cr *ConnResult)
	// Refusal names the ULP's message in a refusal's private data (a CM
	// REJ's, an MPA reject's: "RPC-over-RDMA 1 …"), ok false when the
	// octets are not one; CM-REJ and MPA-REJ say so in their findings.
	Refusal func(pd []byte) (text string, ok bool)
}

// hooks are the ULPs' Hooks by name (RegisterHooks), hookOrder their
// names in registration order.
var (
	hooks     = map[string]*Hooks{}
	hookOrder []string
)

// RegisterHooks adds a ULP's Hooks, before any Runner is made (the
// command's list of plug-ins, with the ULP's rules).
func RegisterHooks(h Hooks) {
	if _, ok := hooks[h.ULP]; !ok {
		hookOrder = append(hookOrder, h.ULP)
	}
	hooks[h.ULP] = &h
}

// refusalText names a ULP's message in a refusal's private data, asking
// the registered ULPs in order.
func refusalText(pd []byte) (string, bool) {
	for _, name := range hookOrder {
		if h := hooks[name]; h.Refusal != nil {
			if s, ok := h.Refusal(pd); ok {
				return s, true
			}
		}
	}
	return "", false
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

// hiddenFor reports whether ru is left out of c's results: a ULP's rule
// on a connection it does not run on (otherULP), or one its Hide leaves
// out.
func (ru *Rule) hiddenFor(c *Conn) bool {
	return ru.otherULP(c) || ru.Hide != nil && ru.Hide(c)
}

// otherULP reports whether ru is a rule of a ULP that does not run on c:
// c carries another ULP, or none and ru is not OnUnclaimed.
func (ru *Rule) otherULP(c *Conn) bool {
	return ru.ULP != "" && ru.ULP != c.Connection.ULP && !(ru.OnUnclaimed && c.Connection.ULP == "")
}
