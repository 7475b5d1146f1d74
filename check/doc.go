// Package check holds rdmashark's conformance rules and the runner that
// evaluates them while the engine streams a capture.
//
// The rules are data: one table (rules.go) lists every rule with its stable
// ID, severity, the spec section it enforces, a one-line summary, the
// paragraph `rdmashark rules ID` prints, the evidence it needs, and the
// functions that evaluate it. `rdmashark rules`, the reports (text, JSON,
// JUnit, SARIF) and the docs all read that table.
//
// A rule evaluates at one or more of four points, each a function field of
// Rule:
//
//   - Packet: every decoded packet (Engine.Run's callback): CRCs, PSNs,
//     NAKs, CM messages;
//   - Message: every reassembled RDMA Send of an RPC-over-RDMA connection
//     (dissect.Observer), as the engine's record of it (Msg, a view of
//     rpcordma.RPCRecord: transport header, inline RPC header, kind,
//     transaction, the Upper-Layer Binding's findings);
//   - RDMAOp: every RDMA Read or Write (dissect.Observer), with the Call
//     segment the engine attached it to, or why none (RDMAOp.Attach);
//   - End: once per connection after the capture, for what the connection
//     as a whole shows (private data, usage counts).
//
// The rules decode, classify and match nothing themselves: whether a
// connection carries RPC-over-RDMA, what a message is, which Call a Reply
// answers and which segment an operation served are the engine's answers
// (dissect/rpc_view.go), the same `transactions` shows.
//
// The runner keeps state per connection only, and bounds what it keeps:
// per rule and connection the first MaxFindings findings, a count of the rest,
// and per finding the first MaxPackets packet numbers.
//
// A rule that lacks its evidence on a connection does not guess: its status
// there is "not evaluated", with the reason (no CM exchange in the capture,
// payload cut by the snap length, the capture started mid-transaction, no
// RPC-over-RDMA traffic, or engine work the rule still waits for).
//
// Imports: dissect's model and the protocol packages; never report or cmd.
package check
