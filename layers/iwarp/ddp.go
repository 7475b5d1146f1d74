package iwarp

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// DDP header sizes and version (RFC 5041 sections 4.2-4.4).
const (
	DDPTaggedHeaderLen   = 14 // control (1) + RsvdULP (1) + STag (4) + TO (8)
	DDPUntaggedHeaderLen = 18 // control (1) + RsvdULP (5) + QN (4) + MSN (4) + MO (4)
	DDPVersion1          = 1  // DV "MUST be set to one" (RFC 5041 section 4.2)
)

// DDP control field bits (RFC 5041 section 4.2).
const (
	ddpFlagT    = 0x80
	ddpFlagL    = 0x40
	ddpRsvdMask = 0x3c
	ddpDVMask   = 0x03
)

// DDP is the header of a DDP segment (RFC 5041 section 4).
//
// Tagged buffer model (T=1, section 4.3):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|T|L| Rsvd  | DV|   RsvdULP     |            STag ...           |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  ... STag     |            TO (64 bits) ...                   |
//
// Untagged buffer model (T=0, section 4.4):
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|T|L| Rsvd  | DV|              RsvdULP[0:23]                    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  RsvdULP[24:39] |  QN (32)  |  MSN (32)  |  MO (32)            |
//
// RsvdULP belongs to the ULP: RDMAP keeps its control field in the first
// octet and, in untagged segments, the Invalidate STag or a reserved word in
// the other four (RFC 5040 section 4.1). Because of that DDP's LayerPayload
// is the whole segment when the next layer is RDMAP (see the package doc);
// Data is the DDP payload after the header.
type DDP struct {
	layers.BaseLayer
	T    bool  // tagged buffer model
	L    bool  // last segment of the DDP message
	Rsvd uint8 // four reserved bits (mask 0x3c of the control octet), shifted down
	DV   uint8 // DDP version
	// RsvdULP is the ULP's part of the header: one octet in tagged segments
	// (RsvdULP[0]), five in untagged ones.
	RsvdULP [5]byte
	STag    uint32 // Data Sink STag (tagged)
	TO      uint64 // Data Sink Tagged Offset (tagged)
	QN      uint32 // Queue Number (untagged)
	MSN     uint32 // Message Sequence Number (untagged)
	MO      uint32 // Message Offset (untagged)
	// Data is the DDP payload: the segment after the DDP header.
	Data []byte
}

// LayerType returns LayerTypeDDP.
func (d *DDP) LayerType() gopacket.LayerType { return LayerTypeDDP }

// CanDecode returns LayerTypeDDP.
func (d *DDP) CanDecode() gopacket.LayerClass { return LayerTypeDDP }

// NextLayerType returns LayerTypeRDMAP for DDP version 1 (RDMAP is the ULP
// of DDP in iWARP, RFC 5040 section 1.3) and gopacket.LayerTypePayload for
// any other version.
func (d *DDP) NextLayerType() gopacket.LayerType {
	if d.DV == DDPVersion1 {
		return LayerTypeRDMAP
	}
	return gopacket.LayerTypePayload
}

// HeaderLen returns 14 for tagged and 18 for untagged segments.
func (d *DDP) HeaderLen() int {
	if d.T {
		return DDPTaggedHeaderLen
	}
	return DDPUntaggedHeaderLen
}

// Control returns the DDP control octet.
func (d *DDP) Control() uint8 {
	c := (d.Rsvd<<2)&ddpRsvdMask | d.DV&ddpDVMask
	if d.T {
		c |= ddpFlagT
	}
	if d.L {
		c |= ddpFlagL
	}
	return c
}

// DecodeFromBytes decodes the DDP header at the front of a DDP segment (a
// whole MPA ULPDU).
func (d *DDP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 1 {
		df.SetTruncated()
		return fmt.Errorf("%w: empty DDP segment", ErrTruncated)
	}
	c := data[0]
	d.T = c&ddpFlagT != 0
	d.L = c&ddpFlagL != 0
	d.Rsvd = (c & ddpRsvdMask) >> 2
	d.DV = c & ddpDVMask
	n := d.HeaderLen()
	if len(data) < n {
		df.SetTruncated()
		return fmt.Errorf("%w: DDP %s header needs %d octets, have %d", ErrTruncated, d.model(), n, len(data))
	}
	d.RsvdULP = [5]byte{}
	if d.T {
		d.RsvdULP[0] = data[1]
		d.STag = binary.BigEndian.Uint32(data[2:6])
		d.TO = binary.BigEndian.Uint64(data[6:14])
		d.QN, d.MSN, d.MO = 0, 0, 0
	} else {
		copy(d.RsvdULP[:], data[1:6])
		d.QN = binary.BigEndian.Uint32(data[6:10])
		d.MSN = binary.BigEndian.Uint32(data[10:14])
		d.MO = binary.BigEndian.Uint32(data[14:18])
		d.STag, d.TO = 0, 0
	}
	d.Contents = data[:n]
	d.Data = data[n:]
	if d.NextLayerType() == LayerTypeRDMAP {
		d.Payload = data
	} else {
		d.Payload = d.Data
	}
	return nil
}

func (d *DDP) model() string {
	if d.T {
		return "tagged"
	}
	return "untagged"
}

// SerializeTo prepends the DDP header to the DDP payload in b. RDMAP's
// control field and Invalidate STag are written from RsvdULP; RDMAP.FillDDP
// puts them there.
func (d *DDP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(d.HeaderLen())
	if err != nil {
		return err
	}
	buf[0] = d.Control()
	if d.T {
		buf[1] = d.RsvdULP[0]
		binary.BigEndian.PutUint32(buf[2:6], d.STag)
		binary.BigEndian.PutUint64(buf[6:14], d.TO)
		return nil
	}
	copy(buf[1:6], d.RsvdULP[:])
	binary.BigEndian.PutUint32(buf[6:10], d.QN)
	binary.BigEndian.PutUint32(buf[10:14], d.MSN)
	binary.BigEndian.PutUint32(buf[14:18], d.MO)
	return nil
}

func decodeDDP(data []byte, p gopacket.PacketBuilder) error {
	d := &DDP{}
	if err := d.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(d)
	return p.NextDecoder(d.NextLayerType())
}
