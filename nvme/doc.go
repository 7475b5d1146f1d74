// Package nvme decodes NVMe over Fabrics on RDMA (nvme-rdma) as it appears
// on the wire: the RDMA-CM private data that sets up a queue, the command
// and response capsules carried in RDMA Sends, the SGL descriptors that
// point at the data, and the data structures the commands move (Connect
// data, Identify data, the Discovery log page).
//
// It depends on the standard library only. Every decoder follows the house
// style of the wire packages (see rpcrdma): a wire struct whose fields are
// named as the specification names them, DecodeFromBytes into a struct the
// caller reuses, byte slices pointing into the decoded buffer instead of
// copies, typed constants with String methods, and errors that are values.
// Decoding allocates nothing.
//
// What is where, and the specifications it follows:
//
//   - cm.go: the NVMe/RDMA private data of RDMA_CM_REQUEST, _REPLY and
//     _REJECT (NVMe over Fabrics 1.0/1.1, RDMA Transport
//     Binding, "RDMA Connection Establishment"; since 2021 the NVMe RDMA
//     Transport Specification 1.0, "RDMA_CM_REQUEST / REPLY / REJECT
//     Private Data"). The caller strips the RDMA-CM IP header of a CM REQ
//     (RoCE/IB) or the MPA v2 IRD/ORD field (iWARP) first (package pvtdata).
//   - command.go: the 64-byte submission queue entry (NVMe Base 2.0
//     "Common Command Format"; "Fabrics Command" format) and a command
//     capsule's in-capsule data (NVMe over Fabrics 1.1 "Capsules";
//     Base 2.0 "Capsules and Data Transfers").
//   - completion.go, status.go: the 16-byte completion queue entry and its
//     Status field (Base 2.0 "Common Completion Queue Entry", "Status
//     Field Definition" with the generic, command specific, media and
//     path status code tables).
//   - sgl.go: SGL descriptors (Base 2.0 "Scatter Gather List (SGL)",
//     "SGL Descriptor Types/Subtypes") with the RDMA transport's keyed data
//     block subtype "Invalidate Key" (NVMe RDMA Transport 1.0, "Keyed SGL
//     Data Block Descriptor"; NVMe over Fabrics 1.1, RDMA Transport Binding).
//   - opcode.go: admin, NVM I/O and Fabrics command opcodes (Base 2.0
//     "Opcodes for Admin Commands", "Opcodes for Fabrics Commands"; NVM
//     Command Set 1.0 "Opcodes for NVM Commands").
//   - fabrics.go: Connect and its 1024-byte data, Property Get/Set with the
//     property map, Authentication Send/Receive, Disconnect (Base 2.0
//     section 6 "Fabrics Command Set"; NVMe over Fabrics 1.1
//     "Fabrics Command Set" and "Property Definitions").
//   - admin.go: the admin and I/O command fields in CDW10-15 (Identify,
//     Get Log Page, Get/Set Features, Abort, Asynchronous Event Request,
//     Read, Write, Compare, Write Zeroes, Dataset Management).
//   - identify.go: Identify Controller data structure (Base 2.0, CNS 01h)
//     and Identify Namespace data structure (NVM Command Set 1.0, CNS 00h)
//     as far as a capture analysis needs them.
//   - logpage.go: the Discovery log page (Base 2.0 "Discovery (Log
//     Identifier 70h)"; NVMe over Fabrics 1.1 "Discovery Log Page").
//
// Everything in NVMe is little-endian (Base 2.0 "Conventions"); the RDMA
// headers in front of it are not, and are not this package's business.
//
// Deciding whether an RDMA Send payload is a command or a completion needs
// the direction (host to controller or back), which the caller knows;
// Classify tells the two shapes apart by length only.
//
// What a protocol plug-in calls, per packet and per connection:
//
//   - connection setup: LooksLikeCMRequest / LooksLikeCMReply (probing a
//     port other than 4420/8009), CMRequest, CMReply, CMReject
//     (.DecodeFromBytes), CMRejectStatus names;
//   - each Send payload: Classify, then Command.DecodeFromBytes (SQE,
//     SGL1, in-capsule data; Command.InCapsuleAt for ICDOFF other than 0)
//     or Completion.DecodeFromBytes; Command.Name / CommandName and
//     Command.Transfer for naming and direction; SGLDescriptor.IsKeyed,
//     InvalidateKey, IsInCapsule for what moves the data and whether
//     remote invalidation was asked for; Status.Success / Describe for the
//     outcome;
//   - command fields: Command.Connect, Property, Auth, Identify,
//     GetLogPage, Features, Abort, RW, DSM; Completion.ConnectResponse,
//     Result, NumberOfQueuesResult, AsyncEvent;
//   - data a command moved (from RDMA Read/Write or in-capsule):
//     ConnectData, IdentifyController (IOCCSZ, IORCSZ, MAXCMD, SUBNQN,
//     InCapsuleDataSize), IdentifyNamespace (NSZE, LBAF, FormatIndex),
//     DiscoveryLogHeader / DiscoveryEntry, DSMRange, ForEachNSID,
//     ForEachSGLDescriptor.
//
// The decoders are not gopacket layers (the package uses the standard
// library only, so it has no gopacket.LayerClass for CanDecode), but they
// have the shape of one: DecodeFromBytes into a reused value, and
// LayerContents / LayerPayload on Command and Completion.
package nvme
