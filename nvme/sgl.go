package nvme

import "encoding/binary"

// SGLDescriptorLen is the size of an SGL descriptor; a command's DPTR holds
// one (SGL1).
const SGLDescriptorLen = 16

// SGLType is the SGL Descriptor Type, bits 7:4 of the descriptor's last
// octet (Base 2.0 "SGL Descriptor Type").
type SGLType uint8

// SGL descriptor types.
const (
	SGLDataBlock          SGLType = 0x0
	SGLBitBucket          SGLType = 0x1
	SGLSegment            SGLType = 0x2
	SGLLastSegment        SGLType = 0x3
	SGLKeyedDataBlock     SGLType = 0x4
	SGLTransportDataBlock SGLType = 0x5
	SGLVendorSpecific     SGLType = 0xf
)

// String names the descriptor type as the specification does.
func (t SGLType) String() string {
	switch t {
	case SGLDataBlock:
		return "Data Block"
	case SGLBitBucket:
		return "Bit Bucket"
	case SGLSegment:
		return "Segment"
	case SGLLastSegment:
		return "Last Segment"
	case SGLKeyedDataBlock:
		return "Keyed Data Block"
	case SGLTransportDataBlock:
		return "Transport SGL Data Block"
	case SGLVendorSpecific:
		return "Vendor Specific"
	}
	return "Reserved (0x" + hex8(uint8(t))[1:] + ")"
}

// SGLSubtype is the SGL Descriptor Sub Type, bits 3:0 of the last octet
// (Base 2.0 "SGL Descriptor Sub Type"). 0xA-0xF are the transport's; the
// RDMA transport defines 0xF for keyed data blocks (NVMe RDMA Transport
// 1.0, "Keyed SGL Data Block descriptor": Invalidate Key).
type SGLSubtype uint8

// SGL descriptor subtypes.
const (
	SGLSubtypeAddress SGLSubtype = 0x0 // Address: the address field is a memory address
	SGLSubtypeOffset  SGLSubtype = 0x1 // Offset: the address field is an offset into the capsule's data
	// SGLSubtypeInvalidateKey (RDMA transport, keyed data block only):
	// the host asks the controller to invalidate the key with its
	// response (a Send With Invalidate). Linux nvme-rdma sets it on every
	// keyed descriptor it registers a memory region for.
	SGLSubtypeInvalidateKey SGLSubtype = 0xf
)

// String names the subtype. 0xF is named for the RDMA transport; on other
// transports it is merely "Transport Specific".
func (s SGLSubtype) String() string {
	switch s {
	case SGLSubtypeAddress:
		return "Address"
	case SGLSubtypeOffset:
		return "Offset"
	case SGLSubtypeInvalidateKey:
		return "Invalidate Key"
	}
	if s >= 0xa {
		return "Transport Specific (0x" + hex8(uint8(s))[1:] + ")"
	}
	return "Reserved (0x" + hex8(uint8(s))[1:] + ")"
}

// SGLDescriptor is one 16-octet SGL descriptor, decoded according to its
// type (Base 2.0 "SGL Data Block descriptor", "SGL Segment descriptor",
// "SGL Last Segment descriptor", "Keyed SGL Data Block descriptor"):
//
//	Data Block, Segment, Last Segment, Bit Bucket:
//	  octets 0-7   Address (for a Data Block with subtype Offset: the
//	               offset into the capsule's in-capsule data)
//	  octets 8-11  Length
//	  octets 12-14 reserved
//	Keyed Data Block:
//	  octets 0-7   Address
//	  octets 8-10  Length (24 bits)
//	  octets 11-14 Key (the RDMA remote key)
//	octet 15       Type (bits 7:4), Subtype (bits 3:0)
type SGLDescriptor struct {
	Address uint64
	Length  uint32
	Key     uint32 // keyed data block only
	Type    SGLType
	Subtype SGLSubtype
	Raw     [SGLDescriptorLen]byte // the descriptor as it was on the wire
}

// DecodeFromBytes decodes the descriptor at the start of data.
func (d *SGLDescriptor) DecodeFromBytes(data []byte) error {
	if len(data) < SGLDescriptorLen {
		*d = SGLDescriptor{}
		return errShortSGL
	}
	d.decode(data)
	return nil
}

func (d *SGLDescriptor) decode(b []byte) {
	copy(d.Raw[:], b[:SGLDescriptorLen])
	d.Address = binary.LittleEndian.Uint64(b[0:])
	d.Type = SGLType(b[15] >> 4)
	d.Subtype = SGLSubtype(b[15] & 0xf)
	if d.Type == SGLKeyedDataBlock {
		d.Length = uint32(b[8]) | uint32(b[9])<<8 | uint32(b[10])<<16
		d.Key = binary.LittleEndian.Uint32(b[11:])
		return
	}
	d.Length = binary.LittleEndian.Uint32(b[8:])
	d.Key = 0
}

// IsKeyed reports whether the descriptor is a keyed data block: data the
// controller moves with RDMA Read (host to controller) or RDMA Write
// (controller to host) into the host memory Address/Length/Key name.
func (d *SGLDescriptor) IsKeyed() bool { return d.Type == SGLKeyedDataBlock }

// InvalidateKey reports whether the descriptor is a keyed data block with
// subtype Invalidate Key: the host asks for remote invalidation of Key.
func (d *SGLDescriptor) InvalidateKey() bool {
	return d.Type == SGLKeyedDataBlock && d.Subtype == SGLSubtypeInvalidateKey
}

// IsInCapsule reports whether the descriptor is a data block with subtype
// Offset: its data is in the command capsule, Address octets after the
// 64-octet SQE (NVMe over Fabrics 1.1 "Capsules"; Base 2.0 "SGL Data
// Block descriptor" with subtype Offset).
func (d *SGLDescriptor) IsInCapsule() bool {
	return d.Type == SGLDataBlock && d.Subtype == SGLSubtypeOffset
}

// IsSegment reports whether the descriptor points at a further list of
// descriptors (Segment or Last Segment). On NVMe/RDMA such a list is in
// the capsule when the subtype is Offset.
func (d *SGLDescriptor) IsSegment() bool {
	return d.Type == SGLSegment || d.Type == SGLLastSegment
}

// ForEachSGLDescriptor calls fn for each 16-octet descriptor of a segment
// (the descriptors a Segment or Last Segment descriptor points at), in
// order, stopping early when fn returns false. A trailing partial
// descriptor is ignored and reported by the return value (false).
func ForEachSGLDescriptor(segment []byte, fn func(i int, d *SGLDescriptor) bool) bool {
	var d SGLDescriptor
	for i := 0; (i+1)*SGLDescriptorLen <= len(segment); i++ {
		d.decode(segment[i*SGLDescriptorLen:])
		if !fn(i, &d) {
			return true
		}
	}
	return len(segment)%SGLDescriptorLen == 0
}
