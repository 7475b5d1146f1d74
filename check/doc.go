// Package check holds rdmashark's conformance rules and the runner that
// evaluates them while the engine streams a capture.
//
// The rules are data: one table lists every rule with its stable ID,
// severity, the spec section it enforces, a one-line summary, the
// paragraph `rdmashark rules ID` prints, the evidence it needs, and the
// functions that evaluate it. check's own (rules.go) are the RDMA
// transport's; each upper-layer protocol plug-in adds its own (Register,
// from the command's list of plug-ins, cmd/rdmashark/ulps.go), RPC-over-RDMA's
// among them (ulp/rpcordma), each where Rule.Before places it.
// `rdmashark rules`, the reports (text, JSON, JUnit, SARIF) and the docs
// all read that table.
//
// A rule evaluates at one or more of four points, each a function field of
// Rule:
//
//   - Packet: every decoded packet (Engine.Run's callback): CRCs, PSNs,
//     NAKs, CM messages;
//   - ULPMessage: every reassembled RDMA Send of a connection of the
//     rule's ULP that its session made a record of (dissect.Observer,
//     dissect.Message.ULP), after the ULP's Hooks.Message made what its
//     rules share of it (RPC-over-RDMA: its view of the message);
//   - RDMAOp: every RDMA Read or Write (dissect.Observer), with the
//     request the ULP attached it to, or why none (RDMAOp.Attach);
//   - End: once per connection after the capture, for what the connection
//     as a whole shows (set-up, usage counts).
//
// The rules decode, classify and match nothing themselves: which ULP a
// connection carries, what a message is, which request a response answers
// and which region an operation served are the engine's and its ULP's
// answers, the same `transactions` and `exchanges` show.
//
// The runner keeps state per connection only, and bounds what it keeps:
// per rule and connection the first MaxFindings findings, a count of the rest,
// and per finding the first MaxPackets packet numbers.
//
// A rule that lacks its evidence on a connection does not guess: its status
// there is "not evaluated", with the reason (no CM exchange in the capture,
// payload cut by the snap length, the capture started mid-transaction, no
// traffic of the rule's ULP, or engine work the rule still waits for).
//
// Imports: dissect's model and the protocol packages; never a plug-in,
// report or cmd.
package check
