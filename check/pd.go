package check

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/pvtdata"
)

// Connection set-up rules: the RDMA-CM header in front of the consumer's
// private data (the consumer's own are its ULP's rules: RPC-over-RDMA's
// RFC 8797 message, ulp/rpcordma).

// SideName names the sides of a connection by their index (0: client, 1:
// server), as findings do.
var SideName = [2]string{"client", "server"}

var sideName = SideName

// SideOf names the side that sent in direction d ("client", "server").
func SideOf(d dissect.Direction) string {
	if d == dissect.DirServerToClient {
		return "server"
	}
	return "client"
}

func sideOf(d dissect.Direction) string { return SideOf(d) }

// SetupMessage names the set-up message side i sent on c (CM REQ or REP,
// MPA Request or Reply).
func SetupMessage(c *Conn, i int) string {
	if c.Transport == dissect.TransportIWARP {
		return [2]string{"MPA Request", "MPA Reply"}[i]
	}
	return [2]string{"CM REQ", "CM REP"}[i]
}

// NeedsSetup is a Rule.Applies for a rule that reads what the set-up
// messages carried.
func NeedsSetup(c *Conn) string {
	if c.State == dissect.StateNoSetup {
		return ReasonNoSetup.String()
	}
	if !c.PrivateData[0].Seen && !c.PrivateData[1].Seen {
		return ReasonNoSetup.String()
	}
	return ""
}

// checkCMAHeader: CM-IP-HEADER (IBA Vol 1 Annex A11, the IP CM Request
// Message RDMA-CM puts in front of the consumer's private data).
func checkCMAHeader(c *Conn) {
	pd := &c.PrivateData[0]
	if !pd.Seen || pd.Framing.Prefix != pvtdata.PrefixCMA {
		return
	}
	c.Checked()
	if err := pd.Framing.CMAProblem(); err != nil {
		c.Reportf([]int{pd.Packet}, "", "the client's CM REQ for IP service ID 0x%016x: %v", c.ServiceID, err)
	}
}

func cmaApplies(c *Conn) string {
	if why := NeedsSetup(c); why != "" {
		return why
	}
	if c.Transport != dissect.TransportRoCE {
		return "not an InfiniBand/RoCE connection"
	}
	if !c.PrivateData[0].Seen {
		return ReasonHalfSetup.String()
	}
	if c.PrivateData[0].Framing.Prefix != pvtdata.PrefixCMA {
		return "the service ID is not in the RDMA IP CM range"
	}
	return ""
}
