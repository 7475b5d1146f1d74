// Package synth builds test frames and captures from the layers' SerializeTo:
// RoCEv2 over IPv4 and IPv6 (with none, one or two VLAN tags), RoCEv1
// (EtherType 0x8915, GRH first) and native InfiniBand (LRH, LRH+GRH, with
// VCRC), framed for Ethernet, Linux SLL and SLL2, ERF (record types 21, 25
// and 2), raw IP (link types 101, 228, 229) and InfiniBand (247) captures.
//
// Every frame carries a correct ICRC (IBA Vol 1 7.8.1, Annex A16, Annex
// A17.3.3) and, on native InfiniBand, a correct VCRC (7.8.2), computed with
// the roce package's Fix functions after the headers are in place. Options
// corrupt either CRC or cut the frame at a snap length, for the tests of
// what a dissector does with damaged packets.
//
// The CM helpers build the Communication Manager's MADs (IBA Vol 1 12.6,
// 12.11) as RDMA-CM sends them on QP1, with the private data of RFC 8797
// behind the RDMA-CM IP header; the data-packet helpers build RC, UC, UD
// and XRC packets, atomics, acknowledgements and CNPs.
//
// WritePcap and WritePcapNG write frames as capture files; Corpus is the
// set of synthetic captures committed under testdata/pcaps/synthetic/
// (go run ./testdata/synthetic writes them).
//
// The package is for tests: it favours explicit, spec-cited byte layouts
// over speed.
package synth
