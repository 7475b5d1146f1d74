package main

import (
	"fmt"
	"io"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/outfile"
	"github.com/rdmashark/rdmashark/pcapwrite"
	"github.com/rdmashark/rdmashark/source"
)

// pcapSink writes packets to a pcapng file (-w): one Interface Description
// Block per input interface (and link type: a second pcapng section can
// reuse an interface number), added when its first packet comes, and each packet's
// timestamp, lengths, bytes and comments as read. More comments may be
// attached to each packet (WriteAnnotated).
type pcapSink struct {
	name     string
	file     *outfile.File // nil for standard output
	w        *pcapwrite.Writer
	ifaces   map[ifaceKey]int
	comments []string
	input    *source.Reader // where the interfaces' names and snap lengths come from, if known
	// classic, when set, writes pcap instead of pcapng (-F pcap,
	// pcap_classic.go); w is nil then.
	classic *classicPcap
}

// setInput names the capture the packets are read from: each interface
// written then keeps the input interface's name, description and snap
// length.
func (s *pcapSink) setInput(r *source.Reader) { s.input = r }

// outInterface is the output interface for the input's interface iface
// with link type lt: the input's description of it when there is one
// (the latest section's: interface numbers start again in each section).
func (s *pcapSink) outInterface(iface int, lt layers.LinkType) pcapwrite.Interface {
	out := pcapwrite.Interface{LinkType: uint16(lt)}
	if s.input == nil {
		return out
	}
	ifs := s.input.Interfaces()
	for i := len(ifs) - 1; i >= 0; i-- {
		if ifs[i].ID == iface && ifs[i].LinkType == lt {
			out.SnapLen, out.Name, out.Description = ifs[i].SnapLen, ifs[i].Name, ifs[i].Description
			break
		}
	}
	return out
}

// newPcapSink creates path ("-" is out) and writes the section header.
// ifaceKey is an input interface as packets name it.
type ifaceKey struct {
	iface    int
	linkType layers.LinkType
}

// The file is written as every output is (internal/outfile): refused when
// it is one of inputs, written to a temporary file and renamed into place
// by Close, removed by Abort.
func newPcapSink(path string, out io.Writer, inputs ...string) (*pcapSink, error) {
	return newPcapSinkAs(path, out, false, inputs...)
}

// newPcapSinkAs is newPcapSink writing pcap when classic is set.
func newPcapSinkAs(path string, out io.Writer, classic bool, inputs ...string) (*pcapSink, error) {
	s := &pcapSink{name: path, ifaces: map[ifaceKey]int{}}
	if path == "-" {
		path = "<stdout>"
		s.name = path
	} else {
		release, err := waitFIFOReader(path)
		if err != nil {
			return nil, &exitError{exitUsage, err}
		}
		defer release()
		f, err := outfile.Create(path, inputs...)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		s.file, out = f, f
	}
	if classic {
		s.classic = newClassicPcap(out)
		return s, nil
	}
	w, err := pcapwrite.NewWriter(out, "rdmashark "+versionString())
	if err != nil {
		s.Abort()
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	s.w = w
	return s, nil
}

// WritePacket writes p with the comments its record had.
func (s *pcapSink) WritePacket(p *dissect.Packet) error {
	s.comments = appendComments(s.comments[:0], p.Comments)
	return s.WriteAnnotated(p, s.comments)
}

// appendComments appends a record's comments as strings (allocating only
// for packets that have comments).
func appendComments(dst []string, cs [][]byte) []string {
	for _, c := range cs {
		dst = append(dst, string(c))
	}
	return dst
}

// WriteAnnotated writes p with one opt_comment per comment.
func (s *pcapSink) WriteAnnotated(p *dissect.Packet, comments []string) error {
	if s.classic != nil {
		if err := s.classic.write(p); err != nil {
			return fmt.Errorf("%s: packet %d: %w", s.name, p.Number, err)
		}
		return nil
	}
	k := ifaceKey{p.Interface, p.LinkType}
	id, ok := s.ifaces[k]
	if !ok {
		var err error
		if id, err = s.w.AddInterface(s.outInterface(p.Interface, p.LinkType)); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		s.ifaces[k] = id
	}
	// The record as read: p.Data is all of it, while p.CaptureLength and
	// p.Length leave out a pseudo-header such as ERF's, to be added back.
	origLen := p.Length
	if extra := len(p.Data) - p.CaptureLength; extra > 0 {
		origLen += extra
	}
	if err := s.w.WritePacket(id, p.Timestamp, p.Data, origLen, comments...); err != nil {
		return fmt.Errorf("%s: packet %d: %w", s.name, p.Number, err)
	}
	return nil
}

// Flush writes what is buffered.
func (s *pcapSink) Flush() error {
	if s.classic != nil {
		if err := s.classic.flush(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		return nil
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return nil
}

// Close flushes the file and renames it into place; on a write error it
// is removed instead.
func (s *pcapSink) Close() error {
	var err error
	if s.w != nil || s.classic != nil {
		err = s.Flush()
	}
	if s.file != nil {
		if err != nil {
			s.file.Abort()
			return err
		}
		if cerr := s.file.Commit(); cerr != nil {
			err = fmt.Errorf("%s: %w", s.name, cerr)
		}
		s.file = nil
	}
	return err
}

// Abort discards the file: nothing appears under its name.
func (s *pcapSink) Abort() {
	if s.file != nil {
		s.file.Abort()
		s.file = nil
	}
}
