// Package pvtdata decodes the private data that RPC-over-RDMA peers exchange
// while an RDMA connection is set up, and the header Linux RDMA-CM puts in
// front of it.
//
// What the private data of each connection-setup message holds:
//
//   - InfiniBand / RoCE CM REQ (92 octets, IBA 12.6.5) for a service ID in
//     the RDMA IP CM range (IBA Annex A11): the 36-octet RDMA-CM IP
//     addressing header (Linux struct cma_hdr, see CMAHeader), then the
//     consumer's private data.
//   - InfiniBand / RoCE CM REP (196 octets, IBA 12.6.8): the consumer's
//     private data directly; RDMA-CM adds no header.
//   - iWARP MPA Request / Reply (RFC 5044 7.1): no CMA header; with MPA
//     revision 2 and the enhanced-connection flag (RFC 6581; siw always)
//     a 4-octet IRD/ORD field comes first, then the consumer's private
//     data.
//
// In the consumer's private data, an RPC-over-RDMA version 1 peer may place
// the 8-octet message of RFC 8797 (Message), found by searching for the
// Format Identifier 0xf6ab0e18 at any offset (RFC 8797 section 5.2). The
// inline thresholds and the remote-invalidation permission of a connection
// follow from both peers' messages (Negotiate, RFC 8797 sections 4.1, 4.2
// and 5.1).
//
// Parse is the entry point for a connection tracker: it takes the private
// data of one CM REQ/REP or MPA Request/Reply and reports the CMA header,
// the RFC 8797 message, where it was, and why it is absent or invalid,
// without allocating.
package pvtdata
