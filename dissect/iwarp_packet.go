package dissect

import (
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// IWARPPacket is what one TCP segment of an iWARP connection completed: an
// MPA Request or Reply, and the FPDUs whose last octet it carried (an FPDU
// that TCP split over several segments belongs to the segment that
// completes it, as in Wireshark; a segment may complete several). Slices
// point into a buffer of the Packet and are valid while the Packet is.
type IWARPPacket struct {
	// HasReqRep: the segment completed an MPA Request or Reply frame.
	HasReqRep bool
	ReqRep    iwarp.MPAReqRep
	// FPDUs are the FPDUs completed, in stream order.
	FPDUs []IWARPFPDU
	// Resync is set when framing was (re)started in this segment without
	// the MPA exchange: a capture that begins mid-stream, or after a loss
	// of sync (see IWARPInfo.Resyncs).
	Resync bool

	markers []iwarp.Marker
	arena   []byte
}

// IWARPFPDU is one MPA FPDU (RFC 5044 section 4) and the DDP segment
// (RFC 5041) and RDMAP message header (RFC 5040, RFC 7306) it carries.
type IWARPFPDU struct {
	// Seq is the TCP sequence number of the FPDU's first octet; Len its
	// octets on the wire, markers included.
	Seq uint32
	Len int
	// ULPDULength, Pad and CRC are the MPA fields; CRCChecked is set when
	// CRC32c was negotiated for the direction, CRCComputed is then our
	// CRC of the FPDU.
	ULPDULength uint16
	Pad         []byte
	CRC         uint32
	CRCChecked  bool
	CRCComputed uint32
	// Markers are the MPA markers inside the FPDU (when negotiated),
	// removed before DDP decoding.
	Markers []iwarp.Marker
	// DDP and RDMAP are the decoded headers. Their Data/Contents/Payload
	// slices are cleared (the payload is not kept with the packet);
	// DataLen is the DDP payload length. Err is the DDP or RDMAP
	// decoding error, if any (then the layers after it are zero).
	DDP     iwarp.DDP
	RDMAP   iwarp.RDMAP
	DataLen int
	Err     error
}

// CRCBad reports a negotiated CRC that does not match.
func (f *IWARPFPDU) CRCBad() bool { return f.CRCChecked && f.CRC != f.CRCComputed }

func (w *IWARPPacket) reset() {
	w.HasReqRep = false
	w.Resync = false
	w.FPDUs = w.FPDUs[:0]
	w.markers = w.markers[:0]
	w.arena = w.arena[:0]
}

// keep copies b into the packet's buffer. Earlier copies stay valid when
// the buffer grows: they keep the old backing array.
func (w *IWARPPacket) keep(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	n := len(w.arena)
	w.arena = append(w.arena, b...)
	return w.arena[n:len(w.arena):len(w.arena)]
}

// addReqRep records an MPA Request/Reply completed by the packet.
func (w *IWARPPacket) addReqRep(m *iwarp.MPAReqRep) {
	w.HasReqRep = true
	w.ReqRep = *m
	w.ReqRep.BaseLayer = layers.BaseLayer{}
	w.ReqRep.PrivateData = w.keep(m.PrivateData)
}

// addFPDU records an FPDU completed by the packet, copying what the field
// table shows out of the framer's buffers.
func (w *IWARPPacket) addFPDU(fp *iwarp.FPDU, d *iwarp.DDP, r *iwarp.RDMAP, err error) {
	w.FPDUs = append(w.FPDUs, IWARPFPDU{})
	f := &w.FPDUs[len(w.FPDUs)-1]
	f.Seq = fp.Seq
	f.Len = len(fp.Raw)
	f.ULPDULength = fp.ULPDULength
	f.Pad = w.keep(fp.Pad)
	f.CRC = fp.CRC
	f.CRCChecked = fp.CRCChecked
	f.CRCComputed = fp.CRCComputed
	if len(fp.Markers) > 0 {
		n := len(w.markers)
		w.markers = append(w.markers, fp.Markers...)
		f.Markers = w.markers[n:len(w.markers):len(w.markers)]
	}
	f.Err = err
	if d == nil {
		return
	}
	f.DDP = *d
	f.DataLen = len(d.Data)
	f.DDP.Data = nil
	f.DDP.BaseLayer = layers.BaseLayer{}
	if r == nil {
		return
	}
	f.RDMAP = *r
	f.RDMAP.BaseLayer = layers.BaseLayer{}
	t := &f.RDMAP.Terminate
	t.TerminatedDDPHeader = w.keep(t.TerminatedDDPHeader)
	t.TerminatedRDMAHeader = w.keep(t.TerminatedRDMAHeader)
}
