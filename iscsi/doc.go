// Package iscsi decodes iSCSI (RFC 7143) as iSER (iSCSI Extensions for
// RDMA, RFC 7145) carries it: the iSER header in front of every Send, the
// iSER Hello and HelloReply messages (iWARP), the iSER private data of the
// RDMA-CM REQ and REP, the iSCSI Basic Header Segment and the PDUs it
// begins (SCSI Command with its CDB, SCSI Response, Data-In/Out, R2T,
// NOP-Out/In, Login and Text with their key=value text, Logout, Task
// Management, Asynchronous Message, Reject).
//
// Like the other wire packages (nvme, rpcrdma) it uses the standard
// library only, decodes into values the caller reuses (DecodeFromBytes),
// names fields as the specifications do, and allocates nothing per PDU:
// the key=value text is walked in place (KeyValues), failed decodes return
// preallocated errors.
//
// The iSER header and the iSCSI header are big-endian ("network order",
// RFC 7143 section 11.1; RFC 7145 section 4.2). On an RDMA Send the
// iSER header (28 octets) comes first, then the 48-octet BHS, then any
// AHS, then the data segment, padded to a multiple of 4 octets as on TCP
// (rxe-iser.pcap's first Login Request: a 230-octet data segment in a
// 308-octet Send). iSER carries no header or data digests: the RDMA
// transport has its own CRCs.
//
// The section numbers in this package's comments were not checked
// against the RFCs' text, which was not at hand; the layouts were checked
// against tshark 4.0 and the Linux sources on a real capture
// (capture_test.go).
package iscsi
