package iwarp

import "github.com/gopacket/gopacket"

// Layer type numbers 1750-1769 are reserved for this package.
var (
	// LayerTypeMPAReqRep is an MPA Request or Reply frame (RFC 5044 section 7.1).
	LayerTypeMPAReqRep = gopacket.RegisterLayerType(1750, gopacket.LayerTypeMetadata{Name: "MPAReqRep", Decoder: gopacket.DecodeFunc(decodeMPAReqRep)})
	// LayerTypeMPA is one MPA FPDU without markers (RFC 5044 section 4).
	LayerTypeMPA = gopacket.RegisterLayerType(1751, gopacket.LayerTypeMetadata{Name: "MPA", Decoder: gopacket.DecodeFunc(decodeMPA)})
	// LayerTypeDDP is a DDP segment header (RFC 5041 section 4).
	LayerTypeDDP = gopacket.RegisterLayerType(1752, gopacket.LayerTypeMetadata{Name: "DDP", Decoder: gopacket.DecodeFunc(decodeDDP)})
	// LayerTypeRDMAP is an RDMAP message header (RFC 5040 section 4, RFC 7306).
	LayerTypeRDMAP = gopacket.RegisterLayerType(1753, gopacket.LayerTypeMetadata{Name: "RDMAP", Decoder: gopacket.DecodeFunc(decodeRDMAP)})
)
