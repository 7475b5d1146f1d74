package rfc8797

import (
	"strconv"

	"github.com/rdmashark/rdmashark/pvtdata"
)

// Summary is one side's RFC 8797 private data as reports show it.
type Summary struct {
	Seen   bool // the side's set-up message is in the capture
	Packet int
	Length int // octets of private data
	// Found: the Format Identifier is there (valid or not); Present: a valid
	// version 1 message.
	Found, Present   bool
	Offset           int // of the Format Identifier, from octet 0 of the private data
	Version          int
	RemoteInvalidate bool
	SendSize         int // octets
	ReceiveSize      int // octets
	// Note says why there is no valid message, or what is odd about the
	// private data's header.
	Note string
}

// Summarize reduces one side's set-up private data (pd, with the framing
// the engine decoded; seen false when the side's set-up message is not in
// the capture) to what reports show of its RFC 8797 message.
func Summarize(seen bool, packet int, pd []byte, f pvtdata.Framing) Summary {
	s := Summary{Seen: seen, Packet: packet}
	if !seen {
		return s
	}
	r := ParseFramed(pd, f)
	s.Length = r.Len
	s.Found = r.Offset >= 0
	s.Present = r.Valid()
	s.Offset = r.Offset
	s.Version = int(r.Message.Version)
	if s.Present {
		s.RemoteInvalidate = r.Message.RemoteInvalidate
		s.SendSize = r.Message.SendBytes()
		s.ReceiveSize = r.Message.ReceiveBytes()
		if r.Message.Reserved != 0 {
			// Section 4: "Senders MUST set these bits to zero and
			// receivers MUST ignore their value": honoured, but said.
			s.Note = "reserved flag bits 0x" + strconv.FormatUint(uint64(r.Message.Reserved), 16) +
				" set (RFC 8797 section 4: senders must send zero; ignored)"
		}
	} else {
		s.Note = r.Reason()
	}
	if err := r.CMAProblem(); err != nil {
		if s.Note != "" {
			s.Note += "; "
		}
		s.Note += err.Error()
	}
	return s
}

// NegotiateFramed is Negotiate of both sides' set-up private data as the
// engine keeps it (client's then server's, each with its framing).
func NegotiateFramed(client []byte, cf pvtdata.Framing, server []byte, sf pvtdata.Framing) Thresholds {
	cl, sv := ParseFramed(client, cf), ParseFramed(server, sf)
	return Negotiate(cl.Peer(), sv.Peer())
}
