package live

import (
	"errors"
	"fmt"
	"strings"
)

// Kinds of interface error, for errors.Is.
var (
	// ErrNoInterface: no interface of that name.
	ErrNoInterface = errors.New("no such interface")
	// ErrPermission: the process may not open packet sockets.
	ErrPermission = errors.New("not permitted")
	// ErrInterfaceDown: the interface is administratively down, or went
	// down during the capture.
	ErrInterfaceDown = errors.New("interface down")
	// ErrLinkType: the interface does not carry Ethernet frames.
	ErrLinkType = errors.New("not an Ethernet interface")
	// ErrUnsupported: live capture needs Linux.
	ErrUnsupported = errors.New("live capture needs Linux (AF_PACKET)")
)

// Error is an interface error: which interface, what went wrong, and the
// system error under it. Error() is one line that says what to do.
type Error struct {
	Interface string
	// Kind is one of the Err* values above, or nil for other failures.
	Kind error
	// Err is the underlying system error, if any.
	Err error
	// Available lists the interfaces there are (ErrNoInterface).
	Available []string
	// Detail completes the message (the link type for ErrLinkType).
	Detail string
}

func (e *Error) Error() string {
	var b strings.Builder
	switch e.Kind {
	case ErrNoInterface:
		fmt.Fprintf(&b, "no interface named %q", e.Interface)
		if len(e.Available) > 0 {
			fmt.Fprintf(&b, " (interfaces: %s)", strings.Join(e.Available, ", "))
		}
		return b.String()
	case ErrPermission:
		return fmt.Sprintf("capturing on %s is not permitted: it needs CAP_NET_RAW (run as root, or give the binary the capability: setcap cap_net_raw=eip rdmashark)", e.Interface)
	case ErrInterfaceDown:
		if e.Detail != "" {
			return fmt.Sprintf("interface %s %s", e.Interface, e.Detail)
		}
		return fmt.Sprintf("interface %s is down (bring it up with `ip link set %s up`)", e.Interface, e.Interface)
	case ErrLinkType:
		return fmt.Sprintf("interface %s is not an Ethernet interface (%s): capture it with tcpdump -w - and pipe into rdmashark analyze -r -", e.Interface, e.Detail)
	case ErrUnsupported:
		return fmt.Sprintf("capturing on %s: %v", e.Interface, ErrUnsupported)
	}
	fmt.Fprintf(&b, "capturing on %s", e.Interface)
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrPermission) and the like work.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

func (e *Error) Unwrap() error { return e.Err }
