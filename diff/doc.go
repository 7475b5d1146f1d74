// Package diff compares two captures of the same workload: what changed
// on the wire between a known-good capture and today's (issue 33).
//
// Each capture is reduced, in the one streaming pass the engine makes, to
// a Profile: per connection — matched across captures by its role
// (transport, upper-layer protocol, service port and the order of its
// set-up among the connections of that kind, never by addresses or QPNs,
// which change between runs) — the negotiation (every CM REQ/REP field
// that is not an identifier, the consumer's private data byte for byte and
// decoded, MPA revision, markers, CRC, IRD/ORD, inline thresholds, remote
// invalidation) and the behaviour (transport health, segmentation, RDMA
// operation sizes, credits, chunk use); per exchange name the counts,
// bytes, chunk and Send With Invalidate use and latency quantiles from a
// bounded sketch; per rule the count of findings.
//
// Compare is pure: two Profiles and the Tolerances give the Rows, each
// saying whether it is a change beyond the tolerances. The package
// imports the engine's model (dissect), the checks' results (check) and
// the wire packages; never report, export, fields, cmd or a plug-in
// (internal/archtest).
package diff
