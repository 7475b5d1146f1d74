package nvme

import "encoding/binary"

// Completion is the 16-octet completion queue entry a response capsule
// carries (Base 2.0 "Common Completion Queue Entry"):
//
//	octets 0-3   DW0   command specific
//	octets 4-7   DW1   command specific
//	octets 8-9   SQHD  submission queue head pointer
//	octets 10-11 SQID  submission queue identifier
//	octets 12-13 CID   identifier of the command completed
//	octets 14-15 Status field and phase tag (STATUS)
//
// For Fabrics commands DW0-DW1 hold the command's response (Connect: the
// CNTLID and AUTHREQ; Property Get: the value), see ConnectResponse and
// PropertyValue.
type Completion struct {
	DW0    uint32
	DW1    uint32
	SQHD   uint16
	SQID   uint16
	CID    uint16
	Status Status

	contents []byte
}

// DecodeFromBytes decodes the CQE at the start of data (an RDMA Send
// payload from controller to host, 16 octets on NVMe/RDMA).
func (c *Completion) DecodeFromBytes(data []byte) error {
	if len(data) < CQELen {
		*c = Completion{}
		return errShortCQE
	}
	c.DW0 = binary.LittleEndian.Uint32(data[0:])
	c.DW1 = binary.LittleEndian.Uint32(data[4:])
	c.SQHD = binary.LittleEndian.Uint16(data[8:])
	c.SQID = binary.LittleEndian.Uint16(data[10:])
	c.CID = binary.LittleEndian.Uint16(data[12:])
	c.Status = Status(binary.LittleEndian.Uint16(data[14:]))
	c.contents = data[:CQELen]
	return nil
}

// LayerContents returns the 16 octets of the CQE.
func (c *Completion) LayerContents() []byte { return c.contents }

// LayerPayload returns nil: a response capsule on NVMe/RDMA has no data.
func (c *Completion) LayerPayload() []byte { return nil }

// Result returns DW0 and DW1 as one 64-bit value (DW1 the high half), e.g.
// the 8-octet property value of a Property Get response (Base 2.0
// "Property Get Response").
func (c *Completion) Result() uint64 { return uint64(c.DW1)<<32 | uint64(c.DW0) }

// ConnectResponse is DW0 of a Connect command's completion (Base 2.0
// "Connect Response"; NVMe over Fabrics 1.1 "Connect Command").
type ConnectResponse struct {
	CNTLID  uint16 // bits 15:0: the controller the host is now connected to
	AUTHREQ uint16 // bits 31:16: authentication requirements (NVMe-oF 1.1; 0 in 1.0)
}

// ConnectResponse reads DW0 as the response to a Connect command.
func (c *Completion) ConnectResponse() ConnectResponse {
	return ConnectResponse{CNTLID: uint16(c.DW0), AUTHREQ: uint16(c.DW0 >> 16)}
}

// NumberOfQueuesResult reads DW0 as the response to a Set/Get Features
// Number of Queues (Base 2.0 "Number of Queues" feature): NSQA (bits 15:0)
// and NCQA (31:16), both 0's based.
func (c *Completion) NumberOfQueuesResult() (nsqa, ncqa uint16) {
	return uint16(c.DW0), uint16(c.DW0 >> 16)
}

// AsyncEvent is DW0 of an Asynchronous Event Request's completion (Base
// 2.0 "Asynchronous Event Request command", completion queue entry
// Dword 0).
type AsyncEvent struct {
	AET AsyncEventType // bits 2:0, Asynchronous Event Type
	AEI uint8          // bits 15:8, Asynchronous Event Information
	LID LogPageID      // bits 23:16, the log page to read to clear it
}

// AsyncEvent reads DW0 as an asynchronous event.
func (c *Completion) AsyncEvent() AsyncEvent {
	return AsyncEvent{AET: AsyncEventType(c.DW0 & 0x7), AEI: uint8(c.DW0 >> 8), LID: LogPageID(c.DW0 >> 16)}
}

// AsyncEventType is AET (Base 2.0 "Asynchronous Event Information").
type AsyncEventType uint8

// Asynchronous event types.
const (
	AsyncEventError        AsyncEventType = 0
	AsyncEventSMART        AsyncEventType = 1
	AsyncEventNotice       AsyncEventType = 2
	AsyncEventIOCommandSet AsyncEventType = 6
	AsyncEventVendor       AsyncEventType = 7
)

// String names the event type.
func (t AsyncEventType) String() string {
	switch t {
	case AsyncEventError:
		return "Error status"
	case AsyncEventSMART:
		return "SMART / Health status"
	case AsyncEventNotice:
		return "Notice"
	case AsyncEventIOCommandSet:
		return "I/O Command specific status"
	case AsyncEventVendor:
		return "Vendor specific"
	}
	return "Reserved"
}
