package dissect

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/source"
)

// capturePath names a capture of testdata/pcaps.
func capturePath(name string) string {
	return filepath.Join("..", "testdata", "pcaps", name)
}

// IWARPHintPort is nfsrdma's TCP port (RFC 8267 section 4.2), the port of
// testULP: the iWARP engine picks up a connection on it whose MPA
// exchange the capture lacks.
const IWARPHintPort = 20049

// testULP stands in the engine's own tests for the ULP the command
// registers on nfsrdma's port (RPC-over-RDMA, which package dissect
// cannot import): its port is the iWARP hint port, it claims the
// connections to it and keeps a session of each until it is closed.
type testULP struct {
	open map[*Connection]bool
}

func (u *testULP) Name() string                            { return "test" }
func (u *testULP) Ports() []uint16                         { return []uint16{IWARPHintPort} }
func (u *testULP) Probe(c *Connection, m *Message) Verdict { return No }

func (u *testULP) Claim(c *Connection) Verdict {
	if c.ServicePort == IWARPHintPort {
		return Yes
	}
	return Maybe
}

func (u *testULP) Start(c *Connection, env *Env) Session {
	if u.open == nil {
		u.open = map[*Connection]bool{}
	}
	u.open[c] = true
	return &testSession{u, c}
}

// Retained counts the sessions open (ULPRetainer).
func (u *testULP) Retained() (conns, open, rebuildBytes int) { return len(u.open), 0, 0 }

type testSession struct {
	u *testULP
	c *Connection
}

func (s *testSession) Message(p *Packet, m *Message) {}
func (s *testSession) RDMAOp(p *Packet, op *RDMAOp)  {}
func (s *testSession) Close()                        { delete(s.u.open, s.c) }

// newEngine is NewEngine with testULP when opts names no ULP.
func newEngine(opts Options) *Engine {
	if opts.ULPs == nil {
		opts.ULPs = []ULP{&testULP{}}
	}
	return NewEngine(opts)
}

// countObserver counts what the engine hands up.
type countObserver struct{ msgs, ops int }

func (o *countObserver) Message(*Message) { o.msgs++ }
func (o *countObserver) RDMAOp(*RDMAOp)   { o.ops++ }

// runCapture runs a capture of testdata/pcaps through an engine (newEngine).
func runCapture(t testing.TB, name string, opts Options, each func(*Packet)) (*Engine, error) {
	t.Helper()
	r, err := source.Open(capturePath(name))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := newEngine(opts)
	err = e.Run(r, func(p *Packet) error {
		if each != nil {
			each(p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return e, nil
}
