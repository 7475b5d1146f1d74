package diff

import "github.com/rdmashark/rdmashark/dissect"

// ULP is an upper-layer protocol's part of a profile (issue 25): what diff
// reads of its exchanges and connections beyond the neutral model. A
// plug-in's presentation registers one (Register) from the command's
// registration list; diff imports no plug-in. Each function may be nil,
// and answers only for its own protocol's exchanges and connections.
type ULP struct {
	// ExchangeName is the name x is counted under when the ULP names it
	// more finely than x.Name (rpcordma: an NFSv4 COMPOUND with its
	// operations); ok false leaves x.Name.
	ExchangeName func(x *dissect.Exchange) (name string, ok bool)
	// Chunks says what x's request advertised, counted by the exchange
	// figures "call read chunk" … "call chunks of several handles"; ok
	// false when x is not the ULP's.
	Chunks func(x *dissect.Exchange) (ch Chunks, ok bool)
	// Behaviour adds the ULP's figures of conn to its behaviour, through
	// met (a figure of 0 is not kept).
	Behaviour func(conn *dissect.Connection, met func(name string, k Kind, v uint64))
}

// Chunks is what one exchange's request (an RPC-over-RDMA Call) carried,
// and how its response came (RFC 8166 section 3.4, 3.5).
type Chunks struct {
	ReadChunk   bool // a Read chunk at a position other than zero
	LongCall    bool // a position-zero Read chunk (a long Call)
	WriteChunk  bool
	ReplyChunk  bool
	LongReply   bool // the response was an RDMA_NOMSG
	OneHandle   bool // the chunks' segments all share one handle
	MultiHandle bool // they have several
}

var ulps []ULP

// Register adds a ULP's part of the profile; call it before any Collector
// is made (the command does, from init).
func Register(u ULP) { ulps = append(ulps, u) }
