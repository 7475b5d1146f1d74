// Package roce decodes the InfiniBand transport as it runs over native
// InfiniBand (LRH first), RoCEv1 (GRH first, EtherType 0x8915) and RoCEv2
// (BTH first, UDP port 4791): the base transport header, every extended
// header the opcode implies, the invariant and variant CRCs, Management
// Datagrams and the Communication Manager's messages.
//
// Every header is a gopacket layer usable with gopacket.NewPacket and with
// gopacket.DecodingLayerParser.
package roce
