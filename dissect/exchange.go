package dissect

import "time"

// Exchange is one request and its response as every ULP has them: an RPC
// Call and its Reply, an NVMe command and its completion, an iSCSI task,
// an SMB2 request. The ULP pairs them and keeps its own typed record
// (Detail: *Transaction for RPC-over-RDMA); when one is over, the session
// hands its neutral view to the observers (Env.Exchange, Options.Exchange,
// an ExchangeObserver), which the `exchanges` listing, its export table and
// the neutral rules read. The engine reuses it afterwards: copy what must
// be kept.
type Exchange struct {
	// ULP is the Name of the ULP that made it.
	ULP  string
	Conn *Connection
	// Key identifies the exchange on its connection as the ULP does: the
	// RPC XID; QID<<16|CID for NVMe.
	Key uint64
	// Initiator is the direction the request went.
	Initiator Direction
	// Name is what the request asked for ("NFS3 READ", "Read").
	Name string
	// Status names the response's status ("SUCCESS", "Invalid Field"),
	// "" without one; StatusCode is its number and OK whether it is a
	// success.
	Status     string
	StatusCode uint32
	OK         bool
	// RequestPacket and ResponsePacket: where the request and the
	// response were decoded (0 when not in the capture).
	RequestPacket, ResponsePacket int
	RequestTime, ResponseTime     time.Time
	// Latency: from the request to the response, when both are there.
	Latency time.Duration
	// ReadBytes and WriteBytes: what the RDMA Reads and Writes attached
	// to the request's advertised memory moved.
	ReadBytes, WriteBytes uint64
	// Invalidated is set when the response came by Send With Invalidate;
	// InvalidatedSTag is the STag it invalidated.
	Invalidated     bool
	InvalidatedSTag uint32
	Outcome         Outcome
	// Association is the association of connections the exchange's
	// connection belongs to, when its ULP has one and the capture names
	// it (NVMe/RDMA: the controller); nil otherwise. It is the ULP's and
	// stays valid after the call.
	Association *Association
	// Object is what the request acts on, when its ULP can tell (NFS: the
	// file handle and the name looked up, created or removed); the zero
	// value otherwise.
	Object ExchangeObject
	// Detail is the ULP's own record (*Transaction for RPC-over-RDMA),
	// valid during the call only.
	Detail any
}

// ExchangeObject is what an exchange's request acts on, as its ULP names
// it: a handle (a hash of it: NFS file handles are opaque and up to 128
// octets), a name, and the handle the response returned for that name.
type ExchangeObject struct {
	// HasHandle: Handle is the hash of the handle of the object the
	// request acts on (NFS: the CRC-32 of the file handle, tshark's
	// nfs.fh.hash; the first handle of NFSv3 arguments, the current
	// handle the last PUTFH of an NFSv4 COMPOUND set).
	HasHandle bool
	Handle    uint32
	// Name is the name the request looks up, creates or removes (NFS
	// LOOKUP, CREATE, REMOVE, RENAME's source, OPEN); nil without one.
	// It is the ULP's, valid during the call only (Clone copies it).
	Name []byte
	// HasReplyHandle: ReplyHandle is the hash of the handle the response
	// returned for the object named (NFSv3 LOOKUP, CREATE, MKDIR;
	// NFSv4 GETFH after OPEN, LOOKUP, CREATE).
	HasReplyHandle bool
	ReplyHandle    uint32
}

// Association is what a ULP's association of connections is named by: the
// initiator's and the target's names and the target's identifier of it.
// NVMe/RDMA: a controller (NVMe over Fabrics 1.1 "Controller Model": the
// host and the controller it connected to form an association), named by
// the host NQN, the subsystem NQN and the CNTLID.
type Association struct {
	Initiator string `json:"initiator"`
	Target    string `json:"target"`
	ID        uint32 `json:"id"`
}

// Outcome is how an exchange ended.
type Outcome uint8

const (
	Responded              Outcome = iota + 1 // its response was processed
	NoResponse                                // the capture (or the connection) ended first
	Evicted                                   // given up at the ULP's bound of open exchanges
	Superseded                                // a new request with the same key came first
	ResponseWithoutRequest                    // a response whose request is not in the capture
)

func (o Outcome) String() string {
	switch o {
	case Responded:
		return "responded"
	case NoResponse:
		return "no-response"
	case Evicted:
		return "evicted"
	case Superseded:
		return "superseded"
	case ResponseWithoutRequest:
		return "response-without-request"
	}
	return "unknown"
}

// MarshalText makes an Outcome appear by name in JSON.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// ExchangeObserver is an Observer that also hears every exchange of every
// ULP when it is over.
type ExchangeObserver interface {
	Observer
	Exchange(x *Exchange)
}

// Clone returns a copy of x without Detail, which the engine reuses, and
// with its own copy of Object.Name.
func (x *Exchange) Clone() *Exchange {
	out := *x
	out.Detail = nil
	if x.Object.Name != nil {
		out.Object.Name = append([]byte(nil), x.Object.Name...)
	}
	return &out
}

// endExchange hands x to the engine's exchange observers.
func (e *Engine) endExchange(x *Exchange) {
	if cb := e.opts.Exchange; cb != nil {
		cb(x)
	}
	if o, ok := e.opts.Observer.(ExchangeObserver); ok {
		o.Exchange(x)
	}
}
