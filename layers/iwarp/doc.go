// Package iwarp decodes the iWARP protocol stack as it runs over TCP:
//
//   - MPA (RFC 5044, updated by RFC 6581): the MPA Request and Reply frames
//     that open a connection, with the RFC 6581 enhanced connection
//     establishment data (IRD/ORD and peer-to-peer control flags), and the
//     framed PDUs (FPDUs) of full operation, with optional markers and CRC32c;
//   - DDP (RFC 5041): the tagged and untagged buffer model headers;
//   - RDMAP (RFC 5040, extended by RFC 7306): the RDMAP control field and the
//     Read Request, Terminate and Atomic headers.
//
// MPAReqRep, MPA, DDP and RDMAP are gopacket layers usable with
// gopacket.NewPacket and gopacket.DecodingLayerParser. MPA decodes one FPDU
// at the front of a buffer with markers off; a Framer cuts FPDUs out of a
// TCP byte stream delivered in arbitrary pieces (markers, CRC, lost sync),
// and a Reassembler puts untagged DDP messages back together (RFC 5041
// section 5). TCP reassembly itself is left to the caller (gopacket's
// reassembly package).
//
// The RDMAP control field and the Invalidate STag live inside the DDP header
// (RFC 5040 section 4.1, RFC 5041 section 4: the RsvdULP field belongs to the
// ULP). DDP therefore hands RDMAP the whole DDP segment: DDP.LayerPayload
// returns the segment it decoded, header included, and RDMAP decodes from the
// segment. DDP.Data is the DDP payload proper.
package iwarp
