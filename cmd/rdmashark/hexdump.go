package main

import (
	"bufio"
	"io"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
)

// hexWriter prints each packet's bytes as tshark -x does: 16 bytes a line,
// offset, hex, ASCII, and a blank line after the packet; after what inner
// prints for it (-V), or alone (tshark -x without -V prints no summary).
type hexWriter struct {
	w     *bufio.Writer
	inner report.PacketWriter // writes into w; nil for the dump alone
	line  []byte
}

// newHexWriter returns the writer and the io.Writer inner writers must
// write to so that their output and the dumps stay in order.
func newHexWriter(out io.Writer) *hexWriter {
	return &hexWriter{w: bufio.NewWriterSize(out, 1<<16)}
}

func (h *hexWriter) WritePacket(p *dissect.Packet) error {
	if h.inner != nil {
		if err := h.inner.WritePacket(p); err != nil {
			return err
		}
		if err := h.inner.Flush(); err != nil {
			return err
		}
	}
	const digits = "0123456789abcdef"
	b := p.Data
	for off := 0; off < len(b); off += 16 {
		row := b[off:min(off+16, len(b))]
		l := h.line[:0]
		for s := 12; s >= 0; s -= 4 {
			l = append(l, digits[off>>s&0xf])
		}
		l = append(l, ' ', ' ')
		for i := 0; i < 16; i++ {
			if i < len(row) {
				l = append(l, digits[row[i]>>4], digits[row[i]&0xf], ' ')
			} else {
				l = append(l, ' ', ' ', ' ')
			}
		}
		l = append(l, ' ', ' ')
		for _, c := range row {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			l = append(l, c)
		}
		l = append(l, '\n')
		h.line = l
		if _, err := h.w.Write(l); err != nil {
			return err
		}
	}
	return h.w.WriteByte('\n')
}

func (h *hexWriter) Flush() error {
	if h.inner != nil {
		if err := h.inner.Flush(); err != nil {
			return err
		}
	}
	return h.w.Flush()
}

// nopWriter prints nothing (-q).
type nopWriter struct{}

func (nopWriter) WritePacket(*dissect.Packet) error { return nil }
func (nopWriter) Flush() error                      { return nil }
