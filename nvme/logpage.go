package nvme

import (
	"encoding/binary"
	"strconv"
)

// Sizes of the Discovery log page's parts.
const (
	DiscoveryLogHeaderLen = 1024
	DiscoveryLogEntryLen  = 1024

	// discoveryHeaderMinLen is what DiscoveryLogHeader.DecodeFromBytes
	// needs: the octets up to RECFMT (a host may read the header alone).
	discoveryHeaderMinLen = 18
)

// DiscoveryLogHeader is the start of the Discovery log page (LID 70h; Base
// 2.0 "Discovery Log Page"; NVMe over Fabrics 1.1 "Discovery Log Page"):
//
//	octets 0-7   GENCTR  generation counter
//	octets 8-15  NUMREC  number of records
//	octets 16-17 RECFMT  record format, 0
//	octets 18-1023 reserved; entries follow from octet 1024
type DiscoveryLogHeader struct {
	GENCTR uint64
	NUMREC uint64
	RECFMT RecordFormat
}

// DecodeFromBytes decodes the header at the start of data.
func (h *DiscoveryLogHeader) DecodeFromBytes(data []byte) error {
	if len(data) < discoveryHeaderMinLen {
		*h = DiscoveryLogHeader{}
		return errShortDiscHeader
	}
	h.GENCTR = binary.LittleEndian.Uint64(data[0:])
	h.NUMREC = binary.LittleEndian.Uint64(data[8:])
	h.RECFMT = RecordFormat(binary.LittleEndian.Uint16(data[16:]))
	return nil
}

// TransportType is TRTYPE (Base 2.0 / NVMe over Fabrics 1.1 "Transport
// Type" values; assigned by NVMe Express).
type TransportType uint8

// Transport types.
const (
	TransportRDMA      TransportType = 1
	TransportFC        TransportType = 2
	TransportTCP       TransportType = 3
	TransportIntraHost TransportType = 254
)

// String names the transport.
func (t TransportType) String() string {
	switch t {
	case TransportRDMA:
		return "RDMA"
	case TransportFC:
		return "Fibre Channel"
	case TransportTCP:
		return "TCP"
	case TransportIntraHost:
		return "Intra Host"
	}
	return "TRTYPE " + strconv.Itoa(int(t))
}

// AddressFamily is ADRFAM.
type AddressFamily uint8

// Address families.
const (
	AddressIPv4      AddressFamily = 1
	AddressIPv6      AddressFamily = 2
	AddressIB        AddressFamily = 3
	AddressFC        AddressFamily = 4
	AddressIntraHost AddressFamily = 254
)

// String names the address family.
func (a AddressFamily) String() string {
	switch a {
	case AddressIPv4:
		return "IPv4"
	case AddressIPv6:
		return "IPv6"
	case AddressIB:
		return "InfiniBand"
	case AddressFC:
		return "Fibre Channel"
	case AddressIntraHost:
		return "Intra Host"
	}
	return "ADRFAM " + strconv.Itoa(int(a))
}

// SubsystemType is SUBTYPE of a discovery log entry.
type SubsystemType uint8

// Subsystem types.
const (
	SubsystemReferral         SubsystemType = 1 // a referral to another discovery service
	SubsystemNVM              SubsystemType = 2 // an NVM subsystem
	SubsystemCurrentDiscovery SubsystemType = 3 // the current discovery subsystem
)

// String names the subsystem type.
func (s SubsystemType) String() string {
	switch s {
	case SubsystemReferral:
		return "Discovery subsystem referral"
	case SubsystemNVM:
		return "NVM subsystem"
	case SubsystemCurrentDiscovery:
		return "Current discovery subsystem"
	}
	return "SUBTYPE " + strconv.Itoa(int(s))
}

// DiscoveryLogEntry is one 1024-octet Discovery Log Page Entry (Base 2.0
// "Discovery Log Page Entry"):
//
//	octet 0 TRTYPE, 1 ADRFAM, 2 SUBTYPE, 3 TREQ, 4-5 PORTID, 6-7 CNTLID,
//	8-9 ASQSZ, 10-11 EFLAGS, 32-63 TRSVCID, 256-511 SUBNQN, 512-767 TRADDR,
//	768-1023 TSAS (transport specific address subtype)
//
// For RDMA, TSAS holds RDMA_QPTYPE (octet 0: 1 reliable connected),
// RDMA_PRTYPE (1: 1 none, 2 InfiniBand, 3 RoCE, 4 RoCEv2, 5 iWARP),
// RDMA_CMS (2: 1 RDMA-CM) and RDMA_PKEY (8-9) (NVMe RDMA Transport 1.0
// "Transport Specific Address Subtype").
type DiscoveryLogEntry struct {
	TRTYPE  TransportType
	ADRFAM  AddressFamily
	SUBTYPE SubsystemType
	TREQ    uint8
	PORTID  uint16
	CNTLID  uint16
	ASQSZ   uint16
	EFLAGS  uint16
	TRSVCID []byte // trailing spaces/NULs removed; into the decoded data
	SUBNQN  []byte
	TRADDR  []byte
	TSAS    []byte // 256 octets

	// RDMA TSAS fields (TRTYPE RDMA only).
	RDMAQPTYPE uint8
	RDMAPRTYPE uint8
	RDMACMS    uint8
	RDMAPKEY   uint16
}

// DecodeFromBytes decodes the entry at the start of data.
func (e *DiscoveryLogEntry) DecodeFromBytes(data []byte) error {
	if len(data) < DiscoveryLogEntryLen {
		*e = DiscoveryLogEntry{}
		return errShortDiscEntry
	}
	le := binary.LittleEndian
	e.TRTYPE = TransportType(data[0])
	e.ADRFAM = AddressFamily(data[1])
	e.SUBTYPE = SubsystemType(data[2])
	e.TREQ = data[3]
	e.PORTID = le.Uint16(data[4:])
	e.CNTLID = le.Uint16(data[6:])
	e.ASQSZ = le.Uint16(data[8:])
	e.EFLAGS = le.Uint16(data[10:])
	e.TRSVCID = TrimPadding(cstring(data[32:64]))
	e.SUBNQN = cstring(data[256:512])
	e.TRADDR = TrimPadding(cstring(data[512:768]))
	e.TSAS = data[768:1024]
	e.RDMAQPTYPE, e.RDMAPRTYPE, e.RDMACMS, e.RDMAPKEY = 0, 0, 0, 0
	if e.TRTYPE == TransportRDMA {
		e.RDMAQPTYPE = e.TSAS[0]
		e.RDMAPRTYPE = e.TSAS[1]
		e.RDMACMS = e.TSAS[2]
		e.RDMAPKEY = le.Uint16(e.TSAS[8:])
	}
	return nil
}

// DiscoveryEntry decodes entry i (0-based) of a Discovery log page held in
// page (header at octet 0, entry i at 1024*(i+1)).
func DiscoveryEntry(page []byte, i int, e *DiscoveryLogEntry) error {
	if i < 0 || i > len(page)/DiscoveryLogEntryLen {
		*e = DiscoveryLogEntry{}
		return errShortDiscEntry
	}
	off := DiscoveryLogHeaderLen + i*DiscoveryLogEntryLen
	if off > len(page) {
		*e = DiscoveryLogEntry{}
		return errShortDiscEntry
	}
	return e.DecodeFromBytes(page[off:])
}
