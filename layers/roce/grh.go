package roce

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// GRHLen is the length of the Global Route Header (IBA Vol 1 §8.3).
const GRHLen = 40

// NxtHdrIBA is the GRH NxtHdr value announcing an IBA transport header
// (BTH) (IBA Vol 1 §8.3; RoCEv1 Annex A16).
const NxtHdrIBA = 0x1B

// GRH is the InfiniBand Global Route Header (IBA Vol 1 §8.3), laid out like
// an IPv6 header; RoCEv1 (Annex A16) puts it right after the Ethernet
// header with EtherType 0x8915:
//
//	byte 0     IPVer(4) TClass(high 4)
//	byte 1     TClass(low 4) FlowLabel(high 4)
//	bytes 2-3  FlowLabel(low 16)
//	bytes 4-5  PayLen: bytes after the GRH through the ICRC
//	byte 6     NxtHdr (0x1B: BTH)
//	byte 7     HopLmt
//	bytes 8-23 SGID, bytes 24-39 DGID
//
// Contents is the 40 GRH bytes, Payload the PayLen bytes after it (fewer if
// the capture cut the packet; then Truncated is set).
type GRH struct {
	layers.BaseLayer
	IPVer     uint8 // 4 bits, 6
	TClass    uint8
	FlowLabel uint32 // 20 bits
	PayLen    uint16
	NxtHdr    uint8
	HopLmt    uint8
	SGID      [16]byte
	DGID      [16]byte
	Truncated bool
}

func (g *GRH) LayerType() gopacket.LayerType  { return LayerTypeGRH }
func (g *GRH) CanDecode() gopacket.LayerClass { return LayerTypeGRH }

// NextLayerType is BTH for NxtHdr 0x1B, payload otherwise.
func (g *GRH) NextLayerType() gopacket.LayerType {
	if g.NxtHdr == NxtHdrIBA {
		return LayerTypeBTH
	}
	return gopacket.LayerTypePayload
}

// SrcGID and DstGID return the GIDs as IPv6 addresses (RoCE GIDs are IPv6
// or IPv4-mapped addresses, Annex A17).
func (g *GRH) SrcGID() netip.Addr { return netip.AddrFrom16(g.SGID) }
func (g *GRH) DstGID() netip.Addr { return netip.AddrFrom16(g.DGID) }

// NetworkFlow makes GRH a gopacket.NetworkLayer (GIDs as IPv6 endpoints).
func (g *GRH) NetworkFlow() gopacket.Flow {
	return gopacket.NewFlow(layers.EndpointIPv6, g.SGID[:], g.DGID[:])
}

// DecodeFromBytes decodes the GRH and bounds the payload by PayLen, calling
// df.SetTruncated if the data is shorter than PayLen promises.
func (g *GRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*g = GRH{}
	if len(data) < GRHLen {
		df.SetTruncated()
		return shortError("GRH", len(data), GRHLen)
	}
	w := binary.BigEndian.Uint32(data[0:4])
	g.IPVer = uint8(w >> 28)
	g.TClass = uint8(w >> 20)
	g.FlowLabel = w & 0xFFFFF
	g.PayLen = binary.BigEndian.Uint16(data[4:6])
	g.NxtHdr = data[6]
	g.HopLmt = data[7]
	copy(g.SGID[:], data[8:24])
	copy(g.DGID[:], data[24:40])
	end := GRHLen + int(g.PayLen)
	if len(data) < end {
		g.Truncated = true
		df.SetTruncated()
		end = len(data)
	}
	g.BaseLayer = layers.BaseLayer{Contents: data[:GRHLen], Payload: data[GRHLen:end]}
	return nil
}

// SerializeTo prepends the GRH. With FixLengths, PayLen is set from the
// buffer. With ComputeChecksums and NxtHdr 0x1B, the ICRC at the end of the
// buffer is recomputed (RoCEv1 rule, Annex A16; the same as native IB with
// a GRH, where the LRH counts as all ones).
func (g *GRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		n := len(b.Bytes())
		if n > 0xFFFF {
			return fmt.Errorf("roce: GRH: payload of %d bytes does not fit PayLen: %w", n, ErrBadLength)
		}
		g.PayLen = uint16(n)
	}
	d, err := b.PrependBytes(GRHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d, uint32(g.IPVer)<<28|uint32(g.TClass)<<20|g.FlowLabel&0xFFFFF)
	binary.BigEndian.PutUint16(d[4:], g.PayLen)
	d[6] = g.NxtHdr
	d[7] = g.HopLmt
	copy(d[8:24], g.SGID[:])
	copy(d[24:40], g.DGID[:])
	if opts.ComputeChecksums && g.NxtHdr == NxtHdrIBA {
		return FixICRCv1(b.Bytes())
	}
	return nil
}

func decodeGRH(data []byte, p gopacket.PacketBuilder) error {
	g := &GRH{}
	if err := g.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(g)
	p.SetNetworkLayer(g)
	return p.NextDecoder(g.NextLayerType())
}
