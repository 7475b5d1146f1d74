package rfc8797

import "testing"

func TestNegotiate(t *testing.T) {
	msg := func(r bool, send, recv uint8) *Message {
		return &Message{Version: 1, RemoteInvalidate: r, SendSize: send, ReceiveSize: recv}
	}
	cases := []struct {
		name           string
		client, server *Message
		want           Thresholds
	}{
		// Section 5.1: neither side sent a message: R clear, 1024/1024.
		{"none", nil, nil, Thresholds{1024, 1024, false, false, false, true, true}},
		// Section 4.2: C2S = min(client send, server recv),
		// S2C = min(server send, client recv).
		{"asymmetric", msg(false, 7, 1), msg(false, 3, 31),
			Thresholds{ClientToServer: 8192, ServerToClient: 2048}},
		{"server smaller", msg(false, 255, 255), msg(false, 0, 1),
			Thresholds{ClientToServer: 2048, ServerToClient: 1024}},
		// Section 4.1: both R bits set → the responder MAY invalidate.
		{"both R", msg(true, 3, 3), msg(true, 3, 3),
			Thresholds{4096, 4096, true, true, true, false, false}},
		// Either R clear → MUST use only RDMA Send (the real captures).
		{"client R only", msg(true, 3, 3), msg(false, 3, 3),
			Thresholds{ClientToServer: 4096, ServerToClient: 4096, ClientR: true}},
		{"server R only", msg(false, 3, 3), msg(true, 3, 3),
			Thresholds{ClientToServer: 4096, ServerToClient: 4096, ServerR: true}},
		// One side silent: its sizes are 1024, its R clear.
		{"server silent", msg(true, 255, 255), nil,
			Thresholds{ClientToServer: 1024, ServerToClient: 1024, ClientR: true, ServerDefault: true}},
		{"client silent", nil, msg(true, 255, 255),
			Thresholds{ClientToServer: 1024, ServerToClient: 1024, ServerR: true, ClientDefault: true}},
		// A message of an unknown version does not conform to section 4:
		// defaults for that side.
		{"client version 2", &Message{Version: 2, RemoteInvalidate: true, SendSize: 9, ReceiveSize: 9}, msg(true, 9, 9),
			Thresholds{ClientToServer: 1024, ServerToClient: 1024, ServerR: true, ClientDefault: true}},
		// Reserved bits are ignored by receivers.
		{"reserved set", &Message{Version: 1, Reserved: 0x7f, RemoteInvalidate: true, SendSize: 1, ReceiveSize: 1},
			&Message{Version: 1, Reserved: 0x7f, RemoteInvalidate: true, SendSize: 1, ReceiveSize: 1},
			Thresholds{2048, 2048, true, true, true, false, false}},
	}
	for _, c := range cases {
		if got := Negotiate(c.client, c.server); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
