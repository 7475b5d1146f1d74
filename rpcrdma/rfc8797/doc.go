// Package rfc8797 decodes the private data RPC-over-RDMA version 1 peers
// exchange while an RDMA connection is set up (RFC 8797), and negotiates
// what it means for the connection. It is RPC-over-RDMA's, not the
// connection manager's: the generic framing in front of it (the RDMA-CM IP
// header, the MPA v2 IRD/ORD field) is package pvtdata's, which the engine
// decodes for every connection.
//
// In the consumer's private data, an RPC-over-RDMA version 1 peer may place
// the 8-octet message of RFC 8797 (Message), found by searching for the
// Format Identifier 0xf6ab0e18 at any offset (RFC 8797 section 5.2). The
// inline thresholds and the remote-invalidation permission of a connection
// follow from both peers' messages (Negotiate, RFC 8797 sections 4.1, 4.2
// and 5.1).
//
// Parse (or ParseFramed, given the engine's pvtdata.Framing) takes the
// private data of one CM REQ/REP or MPA Request/Reply and reports the
// framing, the RFC 8797 message, where it was, and why it is absent or
// invalid, without allocating.
//
// The texts of FormatError begin "pvtdata: ", the package the code came
// from: they are in analyze's notes and PD-FORMAT's findings, whose bytes
// stay (issue 25).
package rfc8797
