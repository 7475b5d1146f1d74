package report

import (
	bufiopkg "bufio"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
)

// TimeFormats are the -t formats of the summary line's time column, as
// tshark names them: r relative to the first packet (the default), a and ad
// absolute local time without and with the date, adoy with the day of the
// year, u, ud and udoy the same in UTC, e seconds since the epoch, d since
// the previous packet, dd since the previous packet printed.
var TimeFormats = []string{"r", "a", "ad", "adoy", "u", "ud", "udoy", "e", "d", "dd"}

// ValidTimeFormat reports whether f is one of TimeFormats.
func ValidTimeFormat(f string) bool {
	for _, t := range TimeFormats {
		if f == t {
			return true
		}
	}
	return false
}

// NewSummaryWriterTime is NewSummaryWriter with the time column in format f
// (one of TimeFormats; "" is r).
func NewSummaryWriterTime(w io.Writer, f string) (PacketWriter, error) {
	if f != "" && !ValidTimeFormat(f) {
		return nil, fmt.Errorf("-t %q: want one of %v", f, TimeFormats)
	}
	return &summaryWriter{w: bufiopkg.NewWriter(w), timeFormat: f}, nil
}

// timeColumn is the time column of p's summary line.
func (s *summaryWriter) timeColumn(p *dissect.Packet) string {
	ts := p.Timestamp
	var out string
	switch s.timeFormat {
	case "", "r":
		out = fmt.Sprintf("%11.6f", p.RelTime.Seconds())
	case "a":
		out = ts.Local().Format("15:04:05.000000")
	case "ad":
		out = ts.Local().Format("2006-01-02 15:04:05.000000")
	case "adoy":
		out = ts.Local().Format("2006/002 15:04:05.000000")
	case "u":
		out = ts.UTC().Format("15:04:05.000000")
	case "ud":
		out = ts.UTC().Format("2006-01-02 15:04:05.000000")
	case "udoy":
		out = ts.UTC().Format("2006/002 15:04:05.000000")
	case "e":
		us := ts.UnixMicro()
		out = strconv.FormatInt(us/1e6, 10) + "." + fmt.Sprintf("%06d", us%1e6)
	case "d":
		out = fmt.Sprintf("%11.6f", p.TimeDelta.Seconds())
	case "dd":
		var d time.Duration
		if s.shown {
			d = ts.Sub(s.prevShown)
		}
		out = fmt.Sprintf("%11.6f", d.Seconds())
	}
	s.prevShown, s.shown = ts, true
	return out
}
