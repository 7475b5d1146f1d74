package rfc8797

// Thresholds is what a connection's two private-data messages mean for it.
type Thresholds struct {
	// ClientToServer and ServerToClient are the inline thresholds in
	// octets: the largest RPC-over-RDMA message either side may convey
	// with one RDMA Send in that direction.
	ClientToServer int
	ServerToClient int
	// RemoteInvalidation is true when both peers set R, the only case in
	// which a responder MAY use RDMA Send With Invalidate (RFC 8797
	// section 4.1).
	RemoteInvalidation bool
	// ClientR and ServerR are each side's R bit as used for the
	// negotiation (false for a side that sent no valid message), so a
	// report can say which side withheld remote invalidation.
	ClientR, ServerR bool
	// ClientDefault and ServerDefault are true when that side sent no
	// valid version 1 message and the defaults of RFC 8797 section 5.1
	// were used for it.
	ClientDefault, ServerDefault bool
}

// Negotiate computes a connection's inline thresholds and remote
// invalidation permission from the message the client (the active side,
// CM REQ / MPA Request) and the server (the passive side, CM REP / MPA
// Reply) sent. nil, or a message whose version is not 1, stands for "no
// conforming private data" from that side.
//
// RFC 8797 section 5.1: "When a peer does not receive a CM Private Data
// message which conforms to Section 4, it needs to act as if the remote
// peer supports only the default RPC-over-RDMA version 1 settings, as
// defined in [RFC8166]. In other words, the peer MUST behave as if a
// Private Data message was received in which bit 15 of the Flags field is
// zero, and both Size fields contain the value zero."
//
// RFC 8797 section 4.2: "The client uses the smaller of its own send size
// and the server's reported receive size as the client-to-server inline
// threshold. The server uses the smaller of its own send size and the
// clients's reported receive size as the server-to-client inline
// threshold."
//
// RFC 8797 section 4.1: "When both connection peers have set this bit flag
// in their CM Private Data, the responder MAY use RDMA Send With
// Invalidate when transmitting RPC Replies. [...] When either peer on a
// connection clears this flag, the responder MUST use only RDMA Send when
// transmitting RPC Replies." Both R bits are needed. (Linux's server,
// net/sunrpc/xprtrdma svc_rdma_parse_connect_private, looks only at the
// client's R bit and sends R clear itself, yet uses Send With Invalidate;
// by the RFC's words that is not permitted.)
//
// A side's own send size is what it advertised: a capture shows nothing
// else. A side that sent no message has the default 1024-octet sizes.
func Negotiate(client, server *Message) Thresholds {
	c, cDefault := effective(client)
	s, sDefault := effective(server)
	return Thresholds{
		ClientToServer:     min(c.SendBytes(), s.ReceiveBytes()),
		ServerToClient:     min(s.SendBytes(), c.ReceiveBytes()),
		RemoteInvalidation: c.RemoteInvalidate && s.RemoteInvalidate,
		ClientR:            c.RemoteInvalidate,
		ServerR:            s.RemoteInvalidate,
		ClientDefault:      cDefault,
		ServerDefault:      sDefault,
	}
}

// effective returns the message to negotiate with: m itself when it is a
// version 1 message, else the section 5.1 default.
func effective(m *Message) (Message, bool) {
	if m == nil || m.Version != Version1 {
		return defaultMessage, true
	}
	return *m, false
}
