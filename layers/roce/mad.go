package roce

import "github.com/gopacket/gopacket"

// Stub: replaced by the MAD/CM implementation. Declared here so that BTH can
// name the layer that follows a UD SEND to QP0/QP1.

// LayerTypeMAD is the InfiniBand Management Datagram (IBA 13.4.3).
var LayerTypeMAD = gopacket.RegisterLayerType(1730, gopacket.LayerTypeMetadata{Name: "MAD", Decoder: gopacket.DecodePayload})
