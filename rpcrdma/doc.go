// Package rpcrdma decodes and encodes RPC-over-RDMA transport headers: version 1
// (RFC 8166 section 4) and version 2 (draft-ietf-nfsv4-rpcrdma-version-two-07).
//
// Every RDMA Send on an RPC-over-RDMA connection starts with a transport header.
// Its first four XDR words (rpcrdma_common: rdma_xid, rdma_vers, rdma_credit and
// rdma_proc/rdma_htype) sit at the same place in every version (RFC 8166 section
// 4.2, draft-07 "Common Transport Header Prefix"), so Message.DecodeFromBytes reads
// rdma_vers and hands the bytes to Header (version 1) or Header2 (version 2).
//
// Decoding is built for the per-packet hot path: a Header, Header2 or Message is
// meant to be reused; its slices keep their backing arrays across calls and point
// into the input for opaque data, so a decode allocates nothing in steady state.
// The slices are valid until the next decode into the same value and as long as
// the input bytes are not modified.
//
// Chunk lists are XDR optional-data linked lists: their length is never stated,
// only implied by discriminators. A decoder therefore stops at the end of the
// input (every list entry consumes bytes) and at a hard cap on the number of
// segments (MaxSegments); counted arrays (the segments of a Write or Reply chunk,
// the property set) are checked against the bytes left before anything is
// stored. Malformed input yields a *DecodeError naming the part of the header,
// the chunk and segment index, the byte offset and the reason; decoders never
// panic.
//
// Every header form also has an encoder (AppendBinary), used to build test
// packets for the forms no capture holds (RDMA_ERROR, RDMA_MSGP, RDMA_DONE and
// all of version 2).
package rpcrdma
