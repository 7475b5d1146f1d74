// Package smbdirect decodes SMB Direct ([MS-SMBD], the SMB2 Remote Direct
// Memory Access Transport Protocol) as it appears on the wire, and as much
// of SMB2 ([MS-SMB2]) as a capture analysis of it needs: the header of
// every message of a compound chain, and the READ and WRITE requests'
// RDMA channel with their buffer descriptors.
//
// It depends on the standard library only and follows the house style of
// the wire packages (nvme, rpcrdma): wire structs whose fields are named as
// the specifications name them, DecodeFromBytes into a value the caller
// reuses, byte slices pointing into the decoded buffer instead of copies,
// typed constants with String methods, errors that are values. Decoding
// allocates nothing.
//
// What is where:
//
//   - smbd.go: the three SMB Direct messages ([MS-SMBD] 2.2.1 Negotiate
//     Request, 2.2.2 Negotiate Response, 2.2.3 Data Transfer Message) and
//     the buffer descriptor ([MS-SMBD] 2.2.3.1
//     SMB_DIRECT_BUFFER_DESCRIPTOR_V1).
//   - smb2.go: the SMB2 header ([MS-SMB2] 2.2.1.1 and 2.2.1.2), its
//     commands, flags and the NT status codes a capture of one commonly
//     shows ([MS-ERREF] 2.3.1); the channel fields of SESSION_SETUP
//     (2.2.5), READ (2.2.19) and WRITE (2.2.21) requests.
//
// Which SMB Direct message a Send holds depends on the connection's state,
// which the caller knows: the first Send of the client is its Negotiate
// Request, the first of the server its Negotiate Response, every later one
// a Data Transfer Message. LooksLikeNegotiateRequest tells a plausible
// Negotiate Request from its bytes alone, for a caller that lacks the
// state (a probe).
//
// Everything here is little-endian ([MS-SMBD] 2.2, [MS-SMB2] 2.2).
package smbdirect
