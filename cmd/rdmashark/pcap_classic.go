package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
)

// classicPcap writes the pcap format (-F pcap, as tshark -F pcap): the
// libpcap file header (microsecond timestamps, magic 0xa1b2c3d4, version
// 2.4) and a record header per packet (pcap-savefile(5);
// draft-ietf-opsawg-pcap section 4 and 5). One link type a file: a packet
// of another is an error that says to write pcapng.
type classicPcap struct {
	w        *bufio.Writer
	linkType layers.LinkType
	begun    bool
	rec      [16]byte
}

func newClassicPcap(out io.Writer) *classicPcap { return &classicPcap{w: bufio.NewWriter(out)} }

// classicSnapLen is the file header's snap length: tshark's default.
const classicSnapLen = 262144

func (c *classicPcap) header(lt layers.LinkType) error {
	var h [24]byte
	binary.LittleEndian.PutUint32(h[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], classicSnapLen)
	binary.LittleEndian.PutUint32(h[20:], uint32(lt))
	c.linkType, c.begun = lt, true
	_, err := c.w.Write(h[:])
	return err
}

func (c *classicPcap) write(p *dissect.Packet) error {
	if !c.begun {
		if err := c.header(p.LinkType); err != nil {
			return err
		}
	} else if p.LinkType != c.linkType {
		return fmt.Errorf("link type %d after %d: a pcap file holds one link type; write pcapng (-F pcapng, the default)", p.LinkType, c.linkType)
	}
	// The record as read: p.Data is all of it, while p.CaptureLength and
	// p.Length leave out a pseudo-header such as ERF's (write.go).
	origLen := p.Length
	if extra := len(p.Data) - p.CaptureLength; extra > 0 {
		origLen += extra
	}
	us := p.Timestamp.UnixMicro()
	binary.LittleEndian.PutUint32(c.rec[0:], uint32(us/1e6))
	binary.LittleEndian.PutUint32(c.rec[4:], uint32(us%1e6))
	binary.LittleEndian.PutUint32(c.rec[8:], uint32(len(p.Data)))
	binary.LittleEndian.PutUint32(c.rec[12:], uint32(origLen))
	if _, err := c.w.Write(c.rec[:]); err != nil {
		return err
	}
	_, err := c.w.Write(p.Data)
	return err
}

// flush writes what is buffered; a file without packets gets its header
// (Ethernet) so that it is a valid, empty capture.
func (c *classicPcap) flush() error {
	if !c.begun {
		if err := c.header(layers.LinkTypeEthernet); err != nil {
			return err
		}
	}
	return c.w.Flush()
}
