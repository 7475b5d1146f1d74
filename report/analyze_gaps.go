package report

import (
	"fmt"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
)

// GapEffect says how the stretches a connection's capture lacks (capture
// loss or damage, docs/loss.md) bear on some of analyze's figures.
type GapEffect struct {
	// Figures names them as the JSON does.
	Figures []string `json:"figures"`
	Note    string   `json:"note"`
}

// gapEffects lists, for a connection whose capture lost part of a stream,
// which figures that touches and how; nil when the capture lost nothing
// of it. What is missing: PSNs never seen, not those a resend filled
// (RoCE, IB: psns_never_seen), TCP octets never seen (iWARP), stretches the
// peer acknowledged (dissect.Connection.Lost).
func gapEffects(c *dissect.Connection) []GapEffect {
	var lost []string
	if h := c.Health; h != nil {
		// PSNs skipped and never sent again in the capture; those a
		// resend filled (wire loss) the capture holds.
		var n uint64
		for _, d := range h.Dir {
			n += d.MissingPSNs - min(d.FilledPSNs, d.MissingPSNs)
		}
		if n > 0 {
			lost = append(lost, plural(n, "PSN"))
		}
	}
	if w := c.IWARP; w != nil {
		if n := w.Dir[0].GapOctets + w.Dir[1].GapOctets; n > 0 {
			lost = append(lost, plural(n, "TCP octet"))
		}
	}
	stretches := c.Lost[0].Gaps + c.Lost[1].Gaps
	if len(lost) == 0 && stretches == 0 {
		return nil
	}
	what := "stretches of its streams"
	if len(lost) > 0 {
		what = strings.Join(lost, " and ")
	}
	out := []GapEffect{
		{[]string{"traffic", "transport_health.bytes", "transport_health.goodput_bytes", "transport_health.throughput"},
			"count only what the capture holds, not the " + what + " it lacks"},
		{[]string{"transport_health.ack_latency", "transport_health.read_latency"},
			"a request or answer the capture lacks gives no sample: the slowest may be among them"},
	}
	var ops []string
	if c.Transport == dissect.TransportIWARP {
		ops = []string{"iwarp.sends", "iwarp.rdma_writes", "iwarp.rdma_read_requests"}
	}
	switch c.ULP {
	case "":
	case "rpcordma":
		ops = append(ops, "rpc")
	default:
		ops = append(ops, c.ULP)
	}
	out = append(out, GapEffect{ops,
		"a message, RDMA operation or transaction the gaps touched is missing or counted incomplete"})
	if c.Transport != dissect.TransportIWARP {
		out = append(out, GapEffect{[]string{"transport_health.out_of_order_packets"},
			"a resend whose original the capture lacks counts as out of order, not as a retransmission"})
	}
	return out
}

func plural(n uint64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// gapEffectsText is the analyze text's line for them.
func gapEffectsText(g []GapEffect) string {
	if len(g) == 0 {
		return ""
	}
	return "gaps affect: bytes and throughput (" + g[0].Note + "); latency (" + g[1].Note +
		"); operation counts (" + g[2].Note + ")"
}
