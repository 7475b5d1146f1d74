//go:build !linux

package live

import (
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Handle is an open capture; on this system Open always fails.
type Handle struct{}

// Open fails: live capture needs Linux AF_PACKET sockets.
func Open(cfg Config) (*Handle, error) {
	return nil, &Error{Interface: cfg.Interface, Kind: ErrUnsupported}
}

func (h *Handle) ReadPacket() ([]byte, Info, error) { return nil, Info{}, ErrUnsupported }
func (h *Handle) SetDeadline(t time.Time) error     { return ErrUnsupported }
func (h *Handle) Stats() (Stats, error)             { return Stats{}, ErrUnsupported }
func (h *Handle) Close() error                      { return nil }
func (h *Handle) Interface() string                 { return "" }
func (h *Handle) Filter() Filter                    { return Filter{} }
func (h *Handle) SnapLen() int                      { return 0 }
func (h *Handle) LinkType() layers.LinkType         { return layers.LinkTypeEthernet }
func (h *Handle) Loopback() bool                    { return false }
func (h *Handle) RingSize() (bytes, blocks int)     { return 0, 0 }
