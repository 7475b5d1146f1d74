package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/roce"
)

// identifier is the RFC 8797 Format Identifier, 0xf6ab0e18 on the wire.
var identifier = []byte{0xf6, 0xab, 0x0e, 0x18}

// pdAt returns the 8 octets of the RFC 8797 message in packet n's private
// data (searched for, as receivers do: RFC 8797 section 5.2).
func pdAt(c *capture, n int) ([]byte, error) {
	d := c.at(n).data
	i := bytes.Index(d, identifier)
	if i < 0 || i+8 > len(d) {
		return nil, fmt.Errorf("packet %d carries no RFC 8797 private data", n)
	}
	return d[i : i+8], nil
}

// send returns the payload of packet n, a Send (the whole RPC-over-RDMA
// message when it is a SEND_ONLY), after checking its rdma_xid.
func send(c *capture, n int, xid uint32) (*rv, []byte, error) {
	r := mustRoCE(c.at(n))
	if !r.op.IsSend() || !r.op.IsOnly() {
		return nil, nil, fmt.Errorf("packet %d is %s, not a single-packet Send", n, r.op.Name())
	}
	p := r.payload()
	if got := be32(p, offXID); got != xid {
		return nil, nil, fmt.Errorf("packet %d has rdma_xid 0x%08x, want 0x%08x", n, got, xid)
	}
	return r, p, nil
}

// rpcStart returns where the inline RPC message starts in a Send's payload.
func rpcStart(p []byte) (int, error) {
	h, err := layout(p)
	return h.end, err
}

// enlarge makes the Send of packet n (a SEND_ONLY) carry size bytes — its
// message followed by zeros — split into full-MTU packets SEND_FIRST,
// SEND_MIDDLE..., SEND_LAST as a sender with a 1024-byte path MTU (the
// REQ's) would; renumbering then gives them consecutive PSNs and moves the
// later ones.
func enlarge(c *capture, n int, xid uint32, size int) error {
	r, p, err := send(c, n, xid)
	if err != nil {
		return err
	}
	if r.op != roce.OpRCSendOnly {
		return fmt.Errorf("packet %d is %s, want a plain SEND_ONLY", n, r.op.Name())
	}
	const mtu = 1024
	msg := append(slices.Clone(p), make([]byte, size-len(p))...)
	var pieces []*frame
	for i := 0; len(msg) > 0; i++ {
		k := min(mtu, len(msg))
		op := roce.OpRCSendMiddle
		switch {
		case i == 0:
			op = roce.OpRCSendFirst
		case k == len(msg):
			op = roce.OpRCSendLast
		}
		f := *r.f
		f.data = slices.Clone(r.f.data)
		f.piece = i + 1
		f.ci.Timestamp = r.f.ci.Timestamp.Add(time.Duration(i) * time.Microsecond)
		mustRoCE(&f).rebuild(op, nil, msg[:k])
		pieces = append(pieces, &f)
		msg = msg[k:]
	}
	c.replace(n, pieces...)
	return nil
}

// resize gives packet n's Send the payload p (the extended headers kept).
func resize(c *capture, n int, p []byte) {
	r := mustRoCE(c.at(n))
	r.rebuild(r.op, r.extBytes(), p)
}

var mutations = []mutation{
	{name: "retransmit-differs", base: "rxe-nfs3-conn2", added: []string{"PSN-GAP", "RETRANS-DIFFERS"},
		what: "after the server's ACK (packet 3086) the client sends the LOOKUP Call (packet 3085) again with the same PSN but one octet of its payload changed: a retransmission (PSN-GAP warning) that is not the original (RETRANS-DIFFERS)",
		apply: func(c *capture) error {
			orig := mustRoCE(c.at(3085))
			if !orig.op.IsSend() || !orig.op.IsOnly() {
				return fmt.Errorf("packet 3085 is %s, want a SEND_ONLY", orig.op.Name())
			}
			f := *orig.f
			f.data = slices.Clone(orig.f.data)
			f.ci.Timestamp = c.at(3086).ci.Timestamp.Add(time.Millisecond)
			p := mustRoCE(&f).payload()
			p[len(p)-1] ^= 0x01
			c.replace(3086, c.at(3086), &f)
			return nil
		}},
	{name: "req-no-responder-resources", base: "rxe-nfs42-head", added: []string{"READ-DEPTH"},
		what: "the client's CM REQ offers 0 Responder Resources (IBA Vol 1 12.7.29): the server's RDMA Reads of its WRITE data exceed what the set-up agreed",
		apply: func(c *capture) error {
			for _, f := range c.frames {
				p := gopacket.NewPacket(f.data, layers.LayerTypeEthernet, gopacket.Default)
				req, ok := p.Layer(roce.LayerTypeCMREQ).(*roce.CMREQ)
				if !ok {
					continue
				}
				// The CM message follows the BTH, the DETH and the 24-octet
				// MAD header (IBA Vol 1 13.4.2); Responder Resources is its
				// octet 35 (12.6.5).
				off := mustRoCE(f).pay + 24 + 35
				if int(f.data[off]) != int(req.ResponderResources) || req.ResponderResources == 0 {
					return fmt.Errorf("packet %d: Responder Resources %d not at octet %d", f.orig, req.ResponderResources, off)
				}
				f.data[off] = 0
				return nil
			}
			return fmt.Errorf("no CM REQ in the cut")
		}},
	// Connection set-up (RFC 8797 private data, IBA CM).
	{name: "rep-version-2", base: "rxe-nfs3-cm", added: []string{"PD-FORMAT", "PD-ABSENT"},
		what: "the server's CM REP (packet 37) says RFC 8797 version 2: PD-FORMAT, and the server counts as having sent no private data (PD-ABSENT, info)",
		apply: func(c *capture) error {
			pd, err := pdAt(c, 37)
			if err != nil {
				return err
			}
			pd[4] = 2
			return nil
		}},
	{name: "req-reserved-bit", base: "rxe-nfs3-cm", added: []string{"PD-RESERVED"},
		what: "the client's CM REQ (packet 36) sets a reserved flag bit (flags 0x03 instead of 0x01)",
		apply: func(c *capture) error {
			pd, err := pdAt(c, 36)
			if err != nil {
				return err
			}
			if pd[5] != 0x01 {
				return fmt.Errorf("REQ flags 0x%02x, want 0x01", pd[5])
			}
			pd[5] = 0x03
			return nil
		}},
	{name: "rep2-send-size-8k", base: "rxe-nfs3-cm", added: []string{"PD-SIZE-RANGE"},
		what: "on reconnection the server's CM REP (packet 3037) advertises an 8192-byte Send Size where the first connection's said 4096 (reported, not flagged: RFC 8797 section 4 lets settings change)",
		apply: func(c *capture) error {
			pd, err := pdAt(c, 3037)
			if err != nil {
				return err
			}
			if pd[6] != 3 {
				return fmt.Errorf("REP Send Size code %d, want 3", pd[6])
			}
			pd[6] = 7
			return nil
		}},
	{name: "req-no-identifier", base: "rxe-nfs3-cm", added: []string{"PD-ABSENT"},
		what: "the client's CM REQ (packet 36) carries 0xf7ab0e18 where the RFC 8797 Format Identifier belongs: no recognisable private data",
		apply: func(c *capture) error {
			pd, err := pdAt(c, 36)
			if err != nil {
				return err
			}
			pd[0] = 0xf7
			return nil
		}},
	{name: "req-cma-version", base: "rxe-nfs3-cm", added: []string{"CM-IP-HEADER"},
		what: "the client's CM REQ (packet 36) starts its private data with cma_version 0x10 instead of 0x00 (IBA Annex A11 IP CM header)",
		apply: func(c *capture) error {
			pd, err := pdAt(c, 36)
			if err != nil {
				return err
			}
			d := c.at(36).data
			off := bytes.Index(d, pd) - 36 // the 36-octet IP CM header precedes the message
			if d[off] != 0x00 || d[off+1]>>4 != 4 {
				return fmt.Errorf("no IPv4 CMA header at %d", off)
			}
			d[off] = 0x10
			return nil
		}},
	{name: "rtu-to-rej", base: "rxe-nfs3-cm", added: []string{"CM-REJ"},
		what: "the client answers the first connection's CM REP with a REJ (packet 38, an RTU turned into a REJ of the REP, reason 28 consumer reject)",
		apply: func(c *capture) error {
			r := mustRoCE(c.at(38))
			mad := r.payload()
			if binary.BigEndian.Uint16(mad[16:]) != 0x0014 {
				return fmt.Errorf("packet 38 is not a CM RTU")
			}
			binary.BigEndian.PutUint16(mad[16:], 0x0012) // AttributeID: ConnectReject (IBA 16.7.3)
			msg := mad[24:]
			msg[8] = 1 << 6                          // MessageRejected: REP
			msg[9] = 0                               // RejectedInfoLength
			binary.BigEndian.PutUint16(msg[10:], 28) // Reason: consumer reject
			return nil
		}},

	// Remote invalidation (RFC 8797 section 4.1).
	{name: "rep-r-bit-set", base: "rxe-nfs3-conn2", removed: []string{"INV-NOT-NEGOTIATED"},
		what: "the server's CM REP (packet 3037) sets R: both peers now allow remote invalidation, and the server's Send With Invalidate conforms",
		apply: func(c *capture) error {
			pd, err := pdAt(c, 3037)
			if err != nil {
				return err
			}
			if pd[5] != 0 {
				return fmt.Errorf("REP flags 0x%02x, want 0", pd[5])
			}
			pd[5] = 1
			return nil
		}},
	{name: "foreign-stag", base: "rxe-nfs3-conn2", added: []string{"INV-FOREIGN-STAG"},
		what: "the READ Reply (packet 3082) invalidates STag 0x00001234 instead of 0x0000189d, the Write chunk handle its Call advertised",
		apply: func(c *capture) error {
			r := mustRoCE(c.at(3082))
			off := r.ext(roce.ExtIETH)
			if be32(r.f.data, off) != 0x189d {
				return fmt.Errorf("IETH R_Key 0x%08x", be32(r.f.data, off))
			}
			put32(r.f.data, off, 0x1234)
			return nil
		}},
	{name: "call-with-invalidate", base: "rxe-nfs3-conn2", added: []string{"INV-WRONG-DIRECTION"},
		what: "the client sends the LOOKUP Call (packet 3085) as SEND_ONLY_WITH_INVALIDATE of STag 0x0000189d",
		apply: func(c *capture) error {
			r, p, err := send(c, 3085, 0x4220f6bf)
			if err != nil {
				return err
			}
			ieth := []byte{0, 0, 0x18, 0x9d}
			r.rebuild(roce.OpRCSendOnlyWithInvalidate, ieth, slices.Clone(p))
			return nil
		}},

	// Inline thresholds.
	{name: "call-4372-bytes", base: "rxe-nfs3-conn2", added: []string{"THRESH-C2S"},
		what:  "the LOOKUP Call (packet 3085) is enlarged to a 4372-byte Send (its 132-byte message and zeros, five packets) over the 4096-byte client-to-server threshold",
		apply: func(c *capture) error { return enlarge(c, 3085, 0x4220f6bf, 4372) }},
	{name: "reply-4372-bytes", base: "rxe-nfs3-conn2", added: []string{"THRESH-S2C", "CHUNK-MISSING-REPLY"},
		what:  "the LOOKUP Reply (packet 3087) is enlarged to a 4372-byte Send over the 4096-byte server-to-client threshold; its Call provided no Reply chunk, so CHUNK-MISSING-REPLY names it too",
		apply: func(c *capture) error { return enlarge(c, 3087, 0x4220f6bf, 4372) }},

	// Transport header.
	{name: "call-vers-7", base: "rxe-nfs3-conn2", added: []string{"HDR-VERSION"},
		what: "the LOOKUP Call (packet 3085) has rdma_vers 7, and the server answers with an ordinary Reply instead of ERR_VERS",
		apply: func(c *capture) error {
			_, p, err := send(c, 3085, 0x4220f6bf)
			if err != nil {
				return err
			}
			put32(p, offVers, 7)
			return nil
		}},
	{name: "call-proc-9", base: "rxe-nfs3-conn2", added: []string{"HDR-PROC"},
		what: "the ACCESS Call (packet 3089) has rdma_proc 9",
		apply: func(c *capture) error {
			_, p, err := send(c, 3089, 0x4320f6bf)
			if err != nil {
				return err
			}
			put32(p, offProc, 9)
			return nil
		}},
	{name: "write-chunk-count-50", base: "rxe-nfs3-conn2", added: []string{"HDR-TRUNCATED"},
		what: "the READ Call (packet 3079) says its Write chunk has 50 segments: the list runs past the end of the Send",
		apply: func(c *capture) error {
			_, p, err := send(c, 3079, 0x4120f6bf)
			if err != nil {
				return err
			}
			h, err := layout(p)
			if err != nil {
				return err
			}
			put32(p, h.writeDisc[0]+4, 50)
			return nil
		}},
	{name: "reply-chunk-disc-2", base: "rxe-nfs3-conn2", added: []string{"HDR-MALFORMED"},
		what: "the ACCESS Call (packet 3089) has 2 as its Reply chunk discriminator (XDR optional-data is 0 or 1)",
		apply: func(c *capture) error {
			_, p, err := send(c, 3089, 0x4320f6bf)
			if err != nil {
				return err
			}
			h, err := layout(p)
			if err != nil {
				return err
			}
			put32(p, h.replyDisc, 2)
			return nil
		}},
	{name: "reply-rpc-xid", base: "rxe-nfs3-conn2", added: []string{"HDR-XID-MISMATCH"},
		what: "the LOOKUP Reply (packet 3087) carries an RPC message with XID 0x4220f6c0 under rdma_xid 0x4220f6bf",
		apply: func(c *capture) error {
			_, p, err := send(c, 3087, 0x4220f6bf)
			if err != nil {
				return err
			}
			at, err := rpcStart(p)
			if err != nil {
				return err
			}
			put32(p, at, 0x4220f6c0)
			return nil
		}},
	{name: "reply-err-chunk", base: "rxe-nfs3-conn2", added: []string{"HDR-ERROR", "CHUNK-MISSING-REPLY"},
		what: "the server answers the LOOKUP Call (packet 3085, no Reply chunk) with RDMA_ERROR/ERR_CHUNK (packet 3087 rewritten)",
		apply: func(c *capture) error {
			_, p, err := send(c, 3087, 0x4220f6bf)
			if err != nil {
				return err
			}
			e := slices.Clone(p[:16])
			put32(e, offProc, 4)                    // RDMA_ERROR
			e = binary.BigEndian.AppendUint32(e, 2) // ERR_CHUNK
			resize(c, 3087, e)
			return nil
		}},
	{name: "credit-0", base: "rxe-nfs3-conn2", added: []string{"CREDIT-ZERO", "CREDIT-OVERRUN"},
		what: "the LOOKUP Reply (packet 3087) grants 0 credits; the client's next Call (3089) then overruns that limit",
		apply: func(c *capture) error {
			_, p, err := send(c, 3087, 0x4220f6bf)
			if err != nil {
				return err
			}
			put32(p, offCredit, 0)
			return nil
		}},
	{name: "credit-2", base: "rxe-nfs42-head", added: []string{"CREDIT-OVERRUN"},
		what: "the Reply in packet 133 grants 2 credits instead of 64; the client then has ten WRITEs outstanding (packets 136-145)",
		apply: func(c *capture) error {
			_, p, err := send(c, 133, 0x5fffc607)
			if err != nil {
				return err
			}
			put32(p, offCredit, 2)
			return nil
		}},

	// Chunks.
	{name: "read-list-in-reply", base: "rxe-nfs3-conn2", added: []string{"CHUNK-READ-IN-REPLY"},
		what: "the LOOKUP Reply (packet 3087) carries a Read list of one segment (24 octets inserted)",
		apply: func(c *capture) error {
			_, p, err := send(c, 3087, 0x4220f6bf)
			if err != nil {
				return err
			}
			seg := []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 0x10, 0, 0, 0, 0, 0, 0x10, 0, 0, 0}
			q := slices.Concat(p[:offLists], seg, p[offLists:])
			resize(c, 3087, q)
			return nil
		}},
	{name: "read-position-198", base: "rxe-nfs42-head", added: []string{"CHUNK-READ-POSITION"},
		what: "the WRITE Call in packet 136 puts its Read chunk at position 198, not a multiple of 4",
		apply: func(c *capture) error {
			_, p, err := send(c, 136, 0x60ffc607)
			if err != nil {
				return err
			}
			h, err := layout(p)
			if err != nil {
				return err
			}
			s := h.seg("read", 0)
			if be32(p, s.at) != 196 {
				return fmt.Errorf("position %d", be32(p, s.at))
			}
			put32(p, s.at, 198)
			return nil
		}},
	{name: "nomsg-call", base: "rxe-nfs3-conn2", added: []string{"CHUNK-LONG-CALL"},
		what: "the LOOKUP Call (packet 3085) is marked RDMA_NOMSG although it has no position-zero Read chunk and carries its RPC Call inline",
		apply: func(c *capture) error {
			_, p, err := send(c, 3085, 0x4220f6bf)
			if err != nil {
				return err
			}
			put32(p, offProc, 1)
			return nil
		}},
	{name: "long-reply-no-chunk", base: "rxe-nfs42-head", added: []string{"CHUNK-LONG-REPLY"},
		what: "the RDMA_NOMSG Reply in packet 23 drops its Reply chunk (discriminator 0): the Long Reply has nowhere to be",
		apply: func(c *capture) error {
			r := mustRoCE(c.at(23))
			p := r.payload()
			if be32(p, offProc) != 1 {
				return fmt.Errorf("packet 23 is not RDMA_NOMSG")
			}
			h, err := layout(p)
			if err != nil {
				return err
			}
			put32(p, h.replyDisc, 0)
			return nil
		}},
	{name: "reply-write-overflow", base: "rxe-nfs3-conn2", added: []string{"CHUNK-REPLY-ECHO"}, removed: []string{"CHUNK-UNNEEDED"},
		what: "the READ Reply (packet 3082) reports 4100 bytes written into the 4096-byte Write chunk segment its Call provided (and so no longer looks like it would have fit inline: CHUNK-UNNEEDED, info, goes)",
		apply: func(c *capture) error {
			_, call, err := sendAny(c, 3079, 0x4120f6bf)
			if err != nil {
				return err
			}
			hc, err := layout(call)
			if err != nil {
				return err
			}
			provided := be32(call, hc.seg("write", 0).length)
			_, p, err := sendAny(c, 3082, 0x4120f6bf)
			if err != nil {
				return err
			}
			h, err := layout(p)
			if err != nil {
				return err
			}
			put32(p, h.seg("write", 0).length, provided+4)
			return nil
		}},
	{name: "read-on-getattr", base: "rxe-nfs3-conn2", added: []string{"CHUNK-DDP-ELIGIBLE"},
		what: "the READ Call with a Write chunk (packet 3079) becomes a GETATTR (procedure 1), which has no DDP-eligible result",
		apply: func(c *capture) error {
			_, p, err := send(c, 3079, 0x4120f6bf)
			if err != nil {
				return err
			}
			at, err := rpcStart(p)
			if err != nil {
				return err
			}
			if be32(p, at+20) != 6 {
				return fmt.Errorf("procedure %d, want READ", be32(p, at+20))
			}
			put32(p, at+20, 1)
			return nil
		}},
	{name: "write-chunk-roundup", base: "rxe-nfs3-conn2", added: []string{"CHUNK-ROUNDUP"},
		what: "the READ Reply (packet 3082) says 93 bytes of data (count and opaque length) while reporting 96 bytes written into the Write chunk: the XDR roundup was written into the chunk",
		apply: func(c *capture) error {
			_, p, err := sendAny(c, 3082, 0x4120f6bf)
			if err != nil {
				return err
			}
			at, err := rpcStart(p)
			if err != nil {
				return err
			}
			// RPC reply header: xid, REPLY, MSG_ACCEPTED, verifier
			// (flavor, length 0), SUCCESS = 24 octets; READ3res: status,
			// post_op_attr (1 + fattr3 84 octets), count, eof, data length.
			res := at + 24
			if be32(p, res) != 0 || be32(p, res+4) != 1 {
				return fmt.Errorf("unexpected READ3res layout")
			}
			cnt, dl := res+8+84, res+8+84+8
			if be32(p, cnt) != 96 || be32(p, dl) != 96 {
				return fmt.Errorf("count %d, data length %d, want 96", be32(p, cnt), be32(p, dl))
			}
			put32(p, cnt, 93)
			put32(p, dl, 93)
			return nil
		}},
	{name: "nfs4-read-chunk-short", base: "rxe-nfs42-conn2", added: []string{"CHUNK-NFS4-PAIRING"},
		what: "the NFSv4 READ Reply (packet 3964) reports 60 bytes written into the Write chunk that pairs with its READ, whose result holds 96",
		apply: func(c *capture) error {
			_, p, err := sendAny(c, 3964, 0xe992b1dc)
			if err != nil {
				return err
			}
			h, err := layout(p)
			if err != nil {
				return err
			}
			l := h.seg("write", 0).length
			if be32(p, l) != 96 {
				return fmt.Errorf("written %d, want 96", be32(p, l))
			}
			put32(p, l, 60)
			return nil
		}},

	// RDMA operations against advertised memory.
	{name: "write-outside-segment", base: "rxe-nfs3-conn2", added: []string{"RDMA-WRITE-UNADVERTISED"},
		what: "the server's RDMA Write of the READ data (packet 3081) targets the Write chunk's handle 1 MiB past its segment",
		apply: func(c *capture) error {
			r := mustRoCE(c.at(3081))
			off := r.ext(roce.ExtRETH)
			va := binary.BigEndian.Uint64(r.f.data[off:])
			binary.BigEndian.PutUint64(r.f.data[off:], va+1<<20)
			return nil
		}},
	{name: "read-outside-segment", base: "rxe-nfs42-head", added: []string{"RDMA-READ-UNADVERTISED"},
		what: "the server's first RDMA Read Request for a WRITE's data targets the Read chunk's handle 1 MiB past its segment",
		apply: func(c *capture) error {
			for _, f := range c.frames {
				r, ok := roceOf(f)
				if ok && r.op.IsReadRequest() && f.orig > 136 {
					off := r.ext(roce.ExtRETH)
					va := binary.BigEndian.Uint64(f.data[off:])
					binary.BigEndian.PutUint64(f.data[off:], va+1<<20)
					return nil
				}
			}
			return fmt.Errorf("no RDMA Read Request after packet 136")
		}},
	{name: "write-after-reply", base: "rxe-nfs3-conn2", added: []string{"RDMA-AFTER-REPLY"},
		what: "the server sends the READ Reply (packet 3082) before the RDMA Write of its data (packet 3081), which then lands in the Write chunk after the Reply",
		apply: func(c *capture) error {
			w, rep := c.at(3081), c.at(3082)
			a1, a2 := c.at(3083), c.at(3084)
			i := c.index(w)
			// Keep the timestamps in order, and the ACKs in the order of
			// what they acknowledge.
			w.ci.Timestamp, rep.ci.Timestamp = rep.ci.Timestamp, w.ci.Timestamp
			a1.ci.Timestamp, a2.ci.Timestamp = a2.ci.Timestamp, a1.ci.Timestamp
			c.frames[i], c.frames[i+1] = rep, w
			c.frames[i+2], c.frames[i+3] = a2, a1
			return nil
		}},

	{name: "client-rdma-write", base: "rxe-nfs3-conn2", added: []string{"RDMA-BY-REQUESTER"},
		what: "the RDMA Write of the READ data (packet 3081) goes from the client to the server instead, acknowledged by the server (packet 3083 turned around); PSNs and MSNs renumbered on both sides",
		apply: func(c *capture) error {
			w, ack := c.at(3081), c.at(3083)
			if r := mustRoCE(w); !r.op.IsWrite() {
				return fmt.Errorf("packet 3081 is %s", r.op.Name())
			}
			turnAround(w)
			turnAround(ack)
			return nil
		}},

	// Transport.
	{name: "icrc-corrupt", base: "rxe-nfs3-conn2", added: []string{"ICRC-BAD", "PSN-GAP"},
		what: "the ICRC of the FSINFO Call (packet 3043) has its last octet flipped: a receiver discards it (IBA Vol 1 7.8.1), so the server's ACK past its PSN is a gap the capture lost (PSN-GAP, info)",
		apply: func(c *capture) error {
			f := c.at(3043)
			f.data[len(f.data)-1] ^= 0xff
			f.badICRC = true
			return nil
		}},
	{name: "drop-call", base: "rxe-nfs3-conn2", added: []string{"PSN-GAP"}, noRenumber: true,
		what:  "the LOOKUP Call (packet 3085) is missing from the capture; the server acknowledges past it",
		apply: func(c *capture) error { c.drop(3085); return nil }},
	{name: "drop-reply", base: "rxe-nfs3-conn2", added: []string{"PSN-GAP"}, noRenumber: true,
		what:  "the LOOKUP Reply (packet 3087) is missing from the capture",
		apply: func(c *capture) error { c.drop(3087); return nil }},
	{name: "ack-to-nak", base: "rxe-nfs3-conn2", added: []string{"NAK"},
		what: "the server's ACK of the LOOKUP Call (packet 3086) becomes a NAK remote access error",
		apply: func(c *capture) error {
			r := mustRoCE(c.at(3086))
			off := r.ext(roce.ExtAETH)
			r.f.data[off] = 0x62 // NAK (11b), code 2: remote access error (IBA Vol 1 9.3.5)
			return nil
		}},
	{name: "vcrc-corrupt", base: "ib-erf", added: []string{"VCRC-BAD", "PSN-GAP"},
		what: "the variant CRC of an RC SEND_ONLY (packet 10) has its last octet flipped; its invariant CRC, which the VCRC does not cover, stays right: a receiver discards it (IBA Vol 1 7.8.2), so the ACK past its PSN is a gap the capture lost (PSN-GAP, info)",
		apply: func(c *capture) error {
			f := c.at(10)
			f.data[len(f.data)-1] ^= 0xff
			return nil
		}},
	{name: "mpa-reply-reserved", base: "siw-nfs3-head", added: []string{"PD-RESERVED"},
		what: "the server's MPA Reply sets a reserved bit in its RFC 8797 flags (iWARP; TCP checksum recomputed)",
		apply: func(c *capture) error {
			for _, f := range c.frames {
				i := bytes.Index(f.data, identifier)
				if i < 0 || !bytes.Contains(f.data, []byte("MPA ID Rep Frame")) {
					continue
				}
				f.data[i+5] |= 0x04
				return nil
			}
			return fmt.Errorf("no MPA Reply with RFC 8797 private data")
		}},
	{name: "mpa-reject", base: "siw-nfs3-head", added: []string{"MPA-REJ"}, removed: []string{"INV-USAGE"}, noRenumber: true,
		what: "the server's MPA Reply (packet 41) sets the Rejected flag (R, RFC 5044 section 7.1) and keeps its private data; the client's ACK (packet 42) follows and nothing else of the connection (packets 43-60 removed, so no Send and no INV-USAGE; iWARP, TCP checksum recomputed)",
		apply: func(c *capture) error {
			f := c.at(41)
			i := bytes.Index(f.data, []byte("MPA ID Rep Frame"))
			if i < 0 {
				return fmt.Errorf("packet 41 holds no MPA Reply")
			}
			f.data[i+16] |= 0x20 // R: the flags octet follows the 16-octet key (RFC 5044 section 7.1)
			for n := 43; n <= 60; n++ {
				c.drop(n)
			}
			return nil
		}},
	{name: "mpa-no-reply", base: "siw-nfs3-head", added: []string{"MPA-NO-REPLY"}, removed: []string{"INV-USAGE"}, noRenumber: true,
		what: "the server acknowledges the client's MPA Request (packet 40) but never sends its MPA Reply: packets 41-60 removed, so no Send and no INV-USAGE (iWARP)",
		apply: func(c *capture) error {
			for n := 41; n <= 60; n++ {
				c.drop(n)
			}
			return nil
		}},
	{name: "syn-refused-then-connected", base: "siw-nfs3-head", added: []string{"IWARP-REFUSED"}, noRenumber: true,
		what:  "before the NFS connection (packet 36) the client's SYN from port 42248 to 20049 is answered by a RST (nothing listening yet, RFC 9293 section 3.10.7.1); the connection that follows to the same server is established: IWARP-REFUSED as information",
		apply: func(c *capture) error { return refuseSYN(c, 36, 42248) }},
	{name: "syn-refused", base: "siw-nfs3-head", added: []string{"IWARP-REFUSED"}, removed: []string{"INV-USAGE"}, noRenumber: true,
		what: "the client's SYN from port 42248 to 20049 is answered by a RST (RFC 9293 section 3.10.7.1) and no connection follows (packets 36-60 removed): IWARP-REFUSED as a warning",
		apply: func(c *capture) error {
			if err := refuseSYN(c, 36, 42248); err != nil {
				return err
			}
			for n := 36; n <= 60; n++ {
				c.drop(n)
			}
			return nil
		}},
}

// sendAny is send for single-packet Sends of any kind (with Invalidate).

// refuseSYN puts a refused connection attempt in front of packet syn (the
// client's SYN) and packet syn+1 (the server's SYN-ACK): a copy of the SYN
// from client port sport with another initial sequence number, 30 ms
// earlier, and the RST a Linux server sends when nothing listens (RFC
// 9293 section 3.10.7.1: <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>; no
// options, window 0, IP ID 0) 0.5 ms later.
func refuseSYN(c *capture, syn int, sport uint16) error {
	orig, ack := c.at(syn), c.at(syn+1)
	ip := ethLen
	ihl := int(orig.data[ip]&0x0f) * 4
	tcp := ip + ihl
	if orig.data[tcp+13] != 0x02 || ack.data[tcp+13] != 0x12 {
		return fmt.Errorf("packets %d, %d are not a SYN and its SYN-ACK", syn, syn+1)
	}
	s := &frame{ci: orig.ci, data: slices.Clone(orig.data)}
	s.ci.Timestamp = orig.ci.Timestamp.Add(-30 * time.Millisecond)
	binary.BigEndian.PutUint16(s.data[tcp:], sport)
	isn := binary.BigEndian.Uint32(orig.data[tcp+4:]) - 0x10000
	binary.BigEndian.PutUint32(s.data[tcp+4:], isn)

	r := &frame{data: make([]byte, ip+20+20)}
	copy(r.data, ack.data[:ip+20]) // Ethernet and IPv4 header, server to client
	binary.BigEndian.PutUint16(r.data[ip+2:], 40)
	binary.BigEndian.PutUint16(r.data[ip+4:], 0) // IP ID
	ipChecksum(r.data[ip : ip+20])
	t := r.data[ip+20:]
	binary.BigEndian.PutUint16(t[0:], binary.BigEndian.Uint16(orig.data[tcp+2:]))
	binary.BigEndian.PutUint16(t[2:], sport)
	binary.BigEndian.PutUint32(t[4:], 0)
	binary.BigEndian.PutUint32(t[8:], isn+1)
	t[12], t[13] = 5<<4, 0x14 // RST, ACK
	r.ci = gopacket.CaptureInfo{Timestamp: s.ci.Timestamp.Add(500 * time.Microsecond), CaptureLength: len(r.data), Length: len(r.data)}
	c.replace(syn, s, r, orig)
	return nil
}
func sendAny(c *capture, n int, xid uint32) (*rv, []byte, error) {
	r := mustRoCE(c.at(n))
	if !r.op.IsSend() || !r.op.IsOnly() {
		return nil, nil, fmt.Errorf("packet %d is %s, not a single-packet Send", n, r.op.Name())
	}
	p := r.payload()
	if got := be32(p, offXID); got != xid {
		return nil, nil, fmt.Errorf("packet %d has rdma_xid 0x%08x, want 0x%08x", n, got, xid)
	}
	return r, p, nil
}

// turnAround swaps a RoCEv2 frame's Ethernet and IPv4 addresses (the
// IPv4 checksum does not change; the ICRC is recomputed later). Both
// queue pairs of the connections used here have the same number, so the
// BTH's DestQP stays.
func turnAround(f *frame) {
	d := f.data
	var mac [6]byte
	copy(mac[:], d[0:6])
	copy(d[0:6], d[6:12])
	copy(d[6:12], mac[:])
	ip := ethLen
	var a [4]byte
	copy(a[:], d[ip+12:ip+16])
	copy(d[ip+12:ip+16], d[ip+16:ip+20])
	copy(d[ip+16:ip+20], a[:])
}
