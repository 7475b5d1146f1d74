// Package pvtdata decodes the generic framing of the private data RDMA
// peers exchange while a connection is set up: the header Linux RDMA-CM
// puts in front of the consumer's private data, and the MPA v2 IRD/ORD
// field. What follows it, the consumer's private data, is the upper-layer
// protocol's own (RFC 8797's message is package rpcrdma/rfc8797's, NVMe/
// RDMA's package nvme's, iSER's package iscsi's, SRP's package srp's).
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
// Frame is the entry point for a connection tracker: it takes the private
// data of one CM REQ/REP or MPA Request/Reply and reports the CMA header
// and where the consumer's data starts, without allocating.
package pvtdata
