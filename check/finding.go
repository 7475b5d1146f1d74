package check

// Finding is one thing a rule found on the wire. The JSON keys rule,
// severity, connection, xid, packets, message and reference are a contract of
// `analyze --format json` and `check --format json`: later versions add keys
// and never rename these.
type Finding struct {
	// Rule is the rule's ID, e.g. "INV-NOT-NEGOTIATED".
	Rule string `json:"rule"`
	// Severity is the rule's severity; a rule may report a lesser one for
	// a milder form of what it checks (HDR-PROC: RDMA_MSGP is a warning).
	Severity Severity `json:"severity"`
	// Connection is the connection's ID in the capture (1-based, as analyze
	// numbers them); 0 for packets that belong to no connection.
	Connection int `json:"connection"`
	// XID is the RPC transaction's XID, when the finding is about one.
	XID *uint32 `json:"xid"`
	// ULP is the upper-layer protocol of the rule ("rpcordma"); empty for
	// the transport's rules (Rule.ULP).
	ULP string `json:"ulp,omitempty"`
	// Exchange is the key of the request/response exchange the finding is
	// about, as the exchanges listing prints it (an RPC XID "0x%08x").
	Exchange string `json:"exchange,omitempty"`
	// Packets are the packet numbers (1-based, as Wireshark numbers them)
	// that show the finding, at most MaxPackets of them.
	Packets []int `json:"packets"`
	// Message says what was found: the values and the limit they break.
	Message string `json:"message"`
	// Reference is the spec section the rule enforces.
	Reference string `json:"reference"`
	// Key is the part of the finding that stays the same when the same
	// test runs again (no packet numbers, XIDs, STags, QPNs or PSNs): what
	// a baseline matches on, with the rule and the connection's endpoints.
	Key string `json:"key,omitempty"`
	// PacketsOmitted counts packet numbers left out of Packets.
	PacketsOmitted int `json:"packets_omitted,omitempty"`
}

// First returns the finding's first packet number, 0 when it names none.
func (f *Finding) First() int {
	if len(f.Packets) == 0 {
		return 0
	}
	return f.Packets[0]
}
