package roce

import (
	"errors"
	"fmt"
)

// ErrTooShort is wrapped by every error about input shorter than a header
// or than a length field promises.
var ErrTooShort = errors.New("too short")

// ErrBadLength is wrapped by errors about length fields that contradict the
// structure they describe (PktLen below the LRH size, pad count larger than
// the payload, ...).
var ErrBadLength = errors.New("bad length field")

// ErrNotICRC is returned by the ICRC functions for packets that carry no
// ICRC (raw LRH packets, non-UDP IP packets, GRH not followed by a BTH).
var ErrNotICRC = errors.New("packet carries no ICRC")

// shortError describes a header cut short: which header, how many bytes
// were there and how many it needs.
func shortError(what string, have, need int) error {
	return fmt.Errorf("roce: %s: %d bytes, need %d: %w", what, have, need, ErrTooShort)
}
