package report

import (
	"io"

	"github.com/rdmashark/rdmashark/dissect"
)

// IWARPConnection is an iWARP connection's MPA negotiation in the Analysis
// document. (Stub: filled in by the iWARP work.)
type IWARPConnection struct{}

func iwarpConnection(c *dissect.Connection) *IWARPConnection { return nil }

// writeIWARPTable prints the iWARP connections' MPA details, if any.
func writeIWARPTable(w io.Writer, a *Analysis) error { return nil }
