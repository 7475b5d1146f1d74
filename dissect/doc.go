// Package dissect is rdmashark's engine: it reads a capture (a file,
// standard input, a live interface) packet by packet, decodes link, IP and
// the RDMA transport (IB BTH and its extended headers, RoCEv1/v2, IB CM;
// iWARP MPA, DDP and RDMAP over TCP), tracks connections and their set-up,
// reassembles Sends and RDMA Reads and Writes on both transports, models
// the reliable-connection requester (PSNs, ACKs, NAKs, retransmissions:
// transport health and capture loss), and bounds everything it holds by a
// named limit with a counter of what the limit cut.
//
// Above the transport it is protocol-neutral. Each upper-layer protocol
// (ULP) is a plug-in behind one seam (ulp.go): Options.ULPs lists them,
// each connection's ULP is decided once (ULP.Claim from its set-up, or a
// bounded ULP.Probe of its first Sends), and a Session of that ULP receives
// every reassembled Message and RDMAOp of the connection. What every ULP
// needs is here, written once:
//
//   - Memory (memory.go): the regions a connection's outstanding requests
//     advertised, by STag; which request an RDMA operation served, whether
//     it came after the response, who owns an invalidated STag;
//   - Exchange (exchange.go): one request and its response, the neutral
//     record the exchanges listing, its export table and the neutral rules
//     read (Options.Exchange, ExchangeObserver);
//   - Env: the buffer budget a session accounts in, the exchange observer,
//     the engine's Observer, the bound of open exchanges and the message
//     and rebuild limits; ULPCounters, ULPRetainer and DetailDropper, what
//     a ULP with engine-wide state tells the snapshot, Retained and
//     DropDetail;
//   - Connection.ULPData, Message.ULP and OpAttachment.Owner: where a
//     session keeps its per-connection summary, its per-message record and
//     the request an operation served, in its own types.
//
// The ULPs are plug-ins outside this package: RPC-over-RDMA (ulp/rpcordma,
// its records in Packet.ULP and Message.ULP, its statistics in
// Connection.ULPData, its engine-wide counters in Snapshot.ULPCounters),
// NVMe over Fabrics (ulp/nvmeof), SMB Direct (ulp/smbdirect) and iSER
// (ulp/iser). The engine imports no ULP package: the command's one
// registration list (cmd/rdmashark/ulps.go) names them, and
// internal/archtest holds that rule. The engine decodes of each side's
// set-up only the generic framing (package pvtdata: the RDMA-CM IP header,
// the MPA v2 IRD/ORD field) and keeps the consumer's private data
// (PrivateData.Consumer); what it means is the ULP's (RFC 8797's message is
// ulp/rpcordma's, package rpcrdma/rfc8797), and what it negotiated a
// Session says (Negotiator, Connection.Negotiation). What remains of
// RPC-over-RDMA here are the names UnattachedReason prints ("not rpc", "no
// segment", "after reply": the output contract); its Go names and
// OpAttachment's fields are neutral (UnattachedNoULP, NoRegion,
// AfterResponse, RequestUnknown; Key, ResponsePacket).
//
// The engine writes nothing: presentation is package fields', output
// report's and export's. docs/architecture.md has the whole picture and
// the checklist for adding a ULP.
package dissect
