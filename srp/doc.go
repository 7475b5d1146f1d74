// Package srp decodes the SCSI RDMA Protocol (SRP, INCITS T10 SRP and
// SRP-2) as it appears on the wire: the information units (IUs) an SRP
// initiator and target exchange in RDMA Sends, and the login IUs that
// travel in the connection set-up's private data.
//
// It depends on the standard library only and follows the house style of
// the wire packages (nvme, iscsi, smbdirect): wire structs whose fields
// are named as the standard names them, DecodeFromBytes into a value the
// caller reuses, byte slices pointing into the decoded buffer instead of
// copies, typed constants with String methods, errors that are values.
// Decoding allocates nothing.
//
// What is where:
//
//   - srp.go: the IU type codes, the buffer and descriptor formats, the
//     login flags, the SRP_LOGIN_REJ and SRP_T_LOGOUT reasons, the task
//     management functions, the SRP_RSP flags and SCSI status.
//   - iu.go: the IUs — SRP_LOGIN_REQ (in both layouts: the IU itself, as
//     the InfiniBand CM REQ carries it, and Linux's RDMA/CM layout
//     without the reserved octets, struct srp_login_req_rdma),
//     SRP_LOGIN_RSP, SRP_LOGIN_REJ, SRP_CMD with its data buffer
//     descriptors (direct, indirect with the partial memory descriptor
//     list, SRP-2's immediate data), SRP_RSP, SRP_TSK_MGMT, SRP_I_LOGOUT,
//     SRP_T_LOGOUT, SRP_CRED_REQ/RSP and SRP_AER_REQ/RSP — and Message,
//     which decodes whichever one a Send holds.
//
// The T10 documents were not at hand: the layouts and names here follow
// SRP revision 16a and SRP-2 as Linux's include/scsi/srp.h transcribes
// them (the header the kernel's ib_srp initiator and ib_srpt target are
// built on), and were checked octet by octet against the real captures of
// testdata/pcaps/ulp (rxe-srp.pcap, siw-srp.pcap). Comments cite the
// standard by IU name rather than by section number.
//
// Every multi-octet field is big-endian, except the TAG, which the
// standard leaves to the initiator (Linux's ib_srp writes its block-layer
// tag in host order): Tag is its eight octets read big-endian, as a hex
// dump shows them.
package srp
