package roce

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Layer types 1700-1729 belong to this package (1730 onwards: MAD and CM).
var (
	LayerTypeLRH          = gopacket.RegisterLayerType(1700, gopacket.LayerTypeMetadata{Name: "LRH", Decoder: gopacket.DecodeFunc(decodeLRH)})
	LayerTypeGRH          = gopacket.RegisterLayerType(1701, gopacket.LayerTypeMetadata{Name: "GRH", Decoder: gopacket.DecodeFunc(decodeGRH)})
	LayerTypeBTH          = gopacket.RegisterLayerType(1702, gopacket.LayerTypeMetadata{Name: "BTH", Decoder: gopacket.DecodeFunc(decodeBTH)})
	LayerTypeRDETH        = gopacket.RegisterLayerType(1703, gopacket.LayerTypeMetadata{Name: "RDETH", Decoder: gopacket.DecodeFunc(decodeExt[RDETH])})
	LayerTypeDETH         = gopacket.RegisterLayerType(1704, gopacket.LayerTypeMetadata{Name: "DETH", Decoder: gopacket.DecodeFunc(decodeExt[DETH])})
	LayerTypeXRCETH       = gopacket.RegisterLayerType(1705, gopacket.LayerTypeMetadata{Name: "XRCETH", Decoder: gopacket.DecodeFunc(decodeExt[XRCETH])})
	LayerTypeRETH         = gopacket.RegisterLayerType(1706, gopacket.LayerTypeMetadata{Name: "RETH", Decoder: gopacket.DecodeFunc(decodeExt[RETH])})
	LayerTypeAtomicETH    = gopacket.RegisterLayerType(1707, gopacket.LayerTypeMetadata{Name: "AtomicETH", Decoder: gopacket.DecodeFunc(decodeExt[AtomicETH])})
	LayerTypeAETH         = gopacket.RegisterLayerType(1708, gopacket.LayerTypeMetadata{Name: "AETH", Decoder: gopacket.DecodeFunc(decodeExt[AETH])})
	LayerTypeAtomicAckETH = gopacket.RegisterLayerType(1709, gopacket.LayerTypeMetadata{Name: "AtomicAckETH", Decoder: gopacket.DecodeFunc(decodeExt[AtomicAckETH])})
	LayerTypeImmDt        = gopacket.RegisterLayerType(1710, gopacket.LayerTypeMetadata{Name: "ImmDt", Decoder: gopacket.DecodeFunc(decodeExt[ImmDt])})
	LayerTypeIETH         = gopacket.RegisterLayerType(1711, gopacket.LayerTypeMetadata{Name: "IETH", Decoder: gopacket.DecodeFunc(decodeExt[IETH])})
	LayerTypeFETH         = gopacket.RegisterLayerType(1712, gopacket.LayerTypeMetadata{Name: "FETH", Decoder: gopacket.DecodeFunc(decodeExt[FETH])})
	LayerTypeCNP          = gopacket.RegisterLayerType(1713, gopacket.LayerTypeMetadata{Name: "CNP", Decoder: gopacket.DecodeFunc(decodeExt[CNP])})
)

// Well-known numbers under which the layers are registered with gopacket.
const (
	// UDPPortRoCEv2 is the IANA-assigned UDP destination port of RoCEv2
	// (Annex A17).
	UDPPortRoCEv2 layers.UDPPort = 4791
	// EthernetTypeRoCEv1 is the EtherType of RoCEv1 (Annex A16).
	EthernetTypeRoCEv1 layers.EthernetType = 0x8915
	// LinkTypeInfiniBand is the pcap link type DLT_INFINIBAND (247): a
	// packet starting with the LRH.
	LinkTypeInfiniBand layers.LinkType = 247
)

// extDecoder is what decodeExt needs of an extended header layer.
type extDecoder[T any] interface {
	*T
	gopacket.DecodingLayer
	LayerType() gopacket.LayerType
	LayerContents() []byte
}

// decodeExt is the gopacket.NewPacket decoder of an extended header met on
// its own (BTH decodes the ones it implies itself).
func decodeExt[T any, P extDecoder[T]](data []byte, p gopacket.PacketBuilder) error {
	h := P(new(T))
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(h)
	return p.NextDecoder(h.NextLayerType())
}

func init() {
	layers.RegisterUDPPortLayerType(UDPPortRoCEv2, LayerTypeBTH)
	layers.EthernetTypeMetadata[EthernetTypeRoCEv1] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeGRH), Name: "RoCEv1", LayerType: LayerTypeGRH,
	}
	layers.LinkTypeMetadata[LinkTypeInfiniBand] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeLRH), Name: "InfiniBand", LayerType: LayerTypeLRH,
	}
}
