// Package ipoib decodes the link-layer header of LINKTYPE_IPOIB (242)
// captures, IP over InfiniBand as libpcap records it.
//
// The header is 44 bytes (tcpdump's print-ipoib.c, IPOIB_HDRLEN): a 40-byte
// pseudo-header, then the 4-byte IPoIB encapsulation header of RFC 4391
// section 6 (a 16-bit EtherType and 16 reserved bits), then the IPv4, IPv6
// or ARP packet. The pseudo-header (Wireshark's packet-ipoib.c, for
// WTAP_ENCAP_IP_OVER_IB_PCAP) takes one of two forms:
//
//   - bytes 0-1 zero: no GRH was received; bytes 20-39 are the destination's
//     20-byte IPoIB link-layer address (RFC 4391 9.1.1): a flags byte, the
//     24-bit queue pair number, the 128-bit GID;
//   - otherwise a Global Route Header as the capturing host saw it: IP
//     version, traffic class and flow label in bytes 0-3, the source QPN in
//     bytes 5-7, the source GID in 8-23, the destination GID in 24-39.
//
// IPoIB is a gopacket layer (LayerTypeIPoIB) whose NextLayerType follows
// Type: IPv4, IPv6 or ARP.
package ipoib

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// LayerTypeIPoIB is the LINKTYPE_IPOIB header.
var LayerTypeIPoIB = gopacket.RegisterLayerType(1771, gopacket.LayerTypeMetadata{Name: "IPoIB", Decoder: gopacket.DecodeFunc(decodeIPoIB)})

// Header lengths.
const (
	PseudoHeaderLength = 40 // the pcap pseudo-header (address or GRH)
	HeaderLength       = 44 // pseudo-header and the RFC 4391 encapsulation header
)

// ErrTruncated is wrapped by the error DecodeFromBytes returns for data
// shorter than HeaderLength.
var ErrTruncated = errors.New("IPoIB header truncated")

// IPoIB is the 44-byte LINKTYPE_IPOIB header. DecodeFromBytes fills it in
// place; the GIDs point into the decoded data.
type IPoIB struct {
	layers.BaseLayer
	// GRH reports that the pseudo-header holds a Global Route Header
	// (its first 16 bits are not zero); the Source* and GRH fields are set
	// only then, the Destination flags and QPN only when it is false.
	GRH          bool
	IPVersion    uint8  // GRH IPVer, 4 bits
	TrafficClass uint8  // GRH TClass
	FlowLabel    uint32 // GRH FlowLabel, 20 bits
	SourceQPN    uint32 // 24 bits
	SourceGID    net.IP // 16 bytes
	// DestinationFlags is the first byte of the destination link-layer
	// address (RFC 4391 9.1.1; its top bit advertises connected mode,
	// RFC 4755 4.1).
	DestinationFlags uint8
	DestinationQPN   uint32 // 24 bits
	DestinationGID   net.IP // 16 bytes, in both forms
	// Type is the EtherType of the payload (RFC 4391 6); Reserved must be 0.
	Type     layers.EthernetType
	Reserved uint16
}

// LayerType returns LayerTypeIPoIB.
func (i *IPoIB) LayerType() gopacket.LayerType { return LayerTypeIPoIB }

// CanDecode returns LayerTypeIPoIB.
func (i *IPoIB) CanDecode() gopacket.LayerClass { return LayerTypeIPoIB }

// NextLayerType returns IPv4, IPv6 or ARP by Type (RARP too is ARP's
// format), and gopacket.LayerTypePayload for any other EtherType.
func (i *IPoIB) NextLayerType() gopacket.LayerType {
	switch i.Type {
	case layers.EthernetTypeIPv4:
		return layers.LayerTypeIPv4
	case layers.EthernetTypeIPv6:
		return layers.LayerTypeIPv6
	case layers.EthernetTypeARP, ethernetTypeRARP:
		return layers.LayerTypeARP
	}
	return gopacket.LayerTypePayload
}

const ethernetTypeRARP layers.EthernetType = 0x8035

// DecodeFromBytes decodes the header; Payload is everything after it.
func (i *IPoIB) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < HeaderLength {
		df.SetTruncated()
		return fmt.Errorf("%w: %d bytes, the header needs %d", ErrTruncated, len(data), HeaderLength)
	}
	i.GRH = binary.BigEndian.Uint16(data[0:2]) != 0
	if i.GRH {
		w := binary.BigEndian.Uint32(data[0:4])
		i.IPVersion = uint8(w >> 28)
		i.TrafficClass = uint8(w >> 20)
		i.FlowLabel = w & 0xfffff
		i.SourceQPN = binary.BigEndian.Uint32(data[4:8]) & 0xffffff
		i.SourceGID = net.IP(data[8:24:24])
		i.DestinationFlags, i.DestinationQPN = 0, 0
	} else {
		i.IPVersion, i.TrafficClass, i.FlowLabel, i.SourceQPN, i.SourceGID = 0, 0, 0, 0, nil
		i.DestinationFlags = data[20]
		i.DestinationQPN = binary.BigEndian.Uint32(data[20:24]) & 0xffffff
	}
	i.DestinationGID = net.IP(data[24:40:40])
	i.Type = layers.EthernetType(binary.BigEndian.Uint16(data[40:42]))
	i.Reserved = binary.BigEndian.Uint16(data[42:44])
	i.Contents = data[:HeaderLength:HeaderLength]
	i.Payload = data[HeaderLength:]
	return nil
}

// SerializeTo writes the 44-byte header in front of the payload in b. The
// pseudo-header bytes no field covers (2-19 without a GRH, 4 with one) are
// written as zero.
func (i *IPoIB) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(HeaderLength)
	if err != nil {
		return err
	}
	clear(h[:PseudoHeaderLength])
	if i.GRH {
		w := uint32(i.IPVersion&0xf)<<28 | uint32(i.TrafficClass)<<20 | i.FlowLabel&0xfffff
		if w>>16 == 0 {
			return errors.New("IPoIB: a GRH pseudo-header needs a non-zero IP version, traffic class or flow label high bits")
		}
		binary.BigEndian.PutUint32(h[0:4], w)
		binary.BigEndian.PutUint32(h[4:8], i.SourceQPN&0xffffff)
		if err := putGID(h[8:24], i.SourceGID); err != nil {
			return err
		}
	} else {
		binary.BigEndian.PutUint32(h[20:24], uint32(i.DestinationFlags)<<24|i.DestinationQPN&0xffffff)
	}
	if err := putGID(h[24:40], i.DestinationGID); err != nil {
		return err
	}
	binary.BigEndian.PutUint16(h[40:42], uint16(i.Type))
	binary.BigEndian.PutUint16(h[42:44], i.Reserved)
	return nil
}

func putGID(dst []byte, gid net.IP) error {
	switch len(gid) {
	case 0:
		return nil
	case 16:
		copy(dst, gid)
		return nil
	}
	return fmt.Errorf("IPoIB: a GID has 16 bytes, not %d", len(gid))
}

func decodeIPoIB(data []byte, p gopacket.PacketBuilder) error {
	i := &IPoIB{}
	if err := i.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(i)
	return p.NextDecoder(i.NextLayerType())
}
