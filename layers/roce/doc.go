// Package roce decodes the InfiniBand transport as it runs over native
// InfiniBand (LRH first), RoCEv1 (GRH first, EtherType 0x8915) and RoCEv2
// (BTH first, UDP port 4791): the base transport header, every extended
// header the opcode implies, the invariant and variant CRCs, Management
// Datagrams and the Communication Manager's messages.
//
// Every header is a gopacket layer usable with gopacket.NewPacket and with
// gopacket.DecodingLayerParser.
//
// # Transport headers
//
// The BTH's OpCode, not the bytes, says which extended headers follow (IBA
// Vol 1 §9.2, Table 38), so BTH.DecodeFromBytes decodes the BTH and all of
// them into value fields of BTH (bth.RETH, bth.AETH, ...; test with
// bth.Has(ExtRETH)), then the payload, the pad and the ICRC. With a
// DecodingLayerParser this allocates nothing; gopacket.NewPacket adds the
// BTH and then each extended header as a layer of its own.
//
// Importing the package registers the layers with gopacket: UDP port 4791
// leads to BTH, EtherType 0x8915 to GRH, link type 247 (DLT_INFINIBAND) to
// LRH; LRH continues by LNH, GRH by NxtHdr, BTH to LayerTypeMAD for UD
// SEND_ONLY to QP0/QP1 and to the payload otherwise.
//
// # Truncated packets
//
// A packet cut by the snap length decodes as far as it can: if the BTH and
// its extended headers are whole, BTH.Truncated is set, HasICRC is false
// (the ICRC is not verifiable) and Payload holds what was captured. The
// BTH learns of the cut from the layers before it (IPv4/UDP/GRH/LRH call
// SetTruncated); DecodeWithLength takes the wire length explicitly.
//
// # CRCs
//
// ICRCv2, ICRCv1, ICRCIB and VCRC compute the invariant and variant CRCs
// (IBA Vol 1 §7.8, Annex A16, Annex A17.3.3) and FixICRCv2, FixICRCv1,
// FixICRCIB and FixVCRC write them into a packet. CRC values are the wire
// bytes read big-endian, as tshark prints them and as BTH.ICRC and
// LRH.VCRC hold them.
package roce
