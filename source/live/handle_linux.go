//go:build linux

package live

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"
)

// Handle is an open capture on one interface: an AF_PACKET socket
// (packet(7)) with the filter in the kernel. One goroutine reads it;
// SetDeadline and Close may be called from others.
type Handle struct {
	iface   string
	ifindex int
	filter  Filter
	snaplen int

	f  *os.File
	rc syscall.RawConn

	// buf receives a frame at buf[lenVLANTag:], leaving room in front to
	// put back a VLAN tag the kernel took off.
	buf []byte
	oob []byte
	msg unix.Msghdr
	iov unix.Iovec

	// Results of the last recvmsg, set by recv (a method value made once,
	// so that reading allocates nothing).
	recvFn    func(fd uintptr) bool
	n, oobn   int
	errno     syscall.Errno
	cumulated Stats
}

var (
	sizeofCmsghdr   = unix.CmsgSpace(0)
	sizeofAuxdata   = int(unsafe.Sizeof(unix.TpacketAuxdata{}))
	sizeofTimespec  = int(unsafe.Sizeof(unix.Timespec{}))
	oobSpace        = unix.CmsgSpace(sizeofAuxdata) + unix.CmsgSpace(sizeofTimespec)
	errClosedHandle = errors.New("capture closed")
)

// Open opens a capture as cfg says. Interface problems are *Error values
// (ErrNoInterface, ErrPermission, ErrInterfaceDown, ErrLinkType).
func Open(cfg Config) (*Handle, error) {
	cfg = cfg.withDefaults()
	ifi, err := net.InterfaceByName(cfg.Interface)
	if err != nil {
		return nil, noInterface(cfg.Interface, err)
	}
	if ifi.Flags&net.FlagUp == 0 {
		return nil, &Error{Interface: cfg.Interface, Kind: ErrInterfaceDown}
	}
	prog, err := cfg.Filter.Compile(uint32(cfg.SnapLen))
	if err != nil {
		return nil, &Error{Interface: cfg.Interface, Detail: "filter " + cfg.Filter.String(), Err: err}
	}

	// Protocol 0: the socket receives nothing until bind names one, so
	// the filter is in place before the first frame is queued.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, &Error{Interface: cfg.Interface, Kind: ErrPermission, Err: err}
		}
		return nil, &Error{Interface: cfg.Interface, Detail: "packet socket", Err: err}
	}
	fail := func(e *Error) (*Handle, error) {
		unix.Close(fd)
		return nil, e
	}
	sockErr := func(what string, err error) (*Handle, error) {
		return fail(&Error{Interface: cfg.Interface, Detail: what, Err: err})
	}

	filter := make([]unix.SockFilter, len(prog))
	for i, ins := range prog {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog); err != nil {
		return sockErr("attaching the BPF filter", err)
	}
	// Auxiliary data: the length on the wire and the VLAN tag the kernel
	// may have taken off (packet(7) PACKET_AUXDATA).
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		return sockErr("PACKET_AUXDATA", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return sockErr("SO_TIMESTAMPNS", err)
	}
	// A large receive queue absorbs bursts; beyond net.core.rmem_max only
	// with CAP_NET_ADMIN (SO_RCVBUFFORCE), else the kernel caps it.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, cfg.BufferSize) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, cfg.BufferSize)
	}
	sll := unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}
	if err := unix.Bind(fd, &sll); err != nil {
		switch {
		case errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENXIO):
			return fail(noInterface(cfg.Interface, err))
		case errors.Is(err, unix.ENETDOWN):
			return fail(&Error{Interface: cfg.Interface, Kind: ErrInterfaceDown, Err: err})
		case errors.Is(err, unix.EPERM):
			return fail(&Error{Interface: cfg.Interface, Kind: ErrPermission, Err: err})
		}
		return sockErr("bind", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return sockErr("getsockname", err)
	}
	if ll, ok := sa.(*unix.SockaddrLinklayer); ok && ll.Hatype != unix.ARPHRD_ETHER && ll.Hatype != unix.ARPHRD_LOOPBACK {
		return fail(&Error{Interface: cfg.Interface, Kind: ErrLinkType, Detail: hatypeName(ll.Hatype)})
	}
	if cfg.Promiscuous {
		mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			return sockErr("promiscuous mode", err)
		}
	}
	// Reading the statistics clears them: start from zero.
	if _, err := unix.GetsockoptTpacketStats(fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err != nil {
		return sockErr("PACKET_STATISTICS", err)
	}

	h := &Handle{
		iface:   cfg.Interface,
		ifindex: ifi.Index,
		filter:  cfg.Filter,
		snaplen: cfg.SnapLen,
		buf:     make([]byte, lenVLANTag+cfg.SnapLen),
		oob:     make([]byte, oobSpace),
	}
	h.f = os.NewFile(uintptr(fd), "packet:"+cfg.Interface)
	if h.f == nil {
		return fail(&Error{Interface: cfg.Interface, Detail: "bad socket descriptor"})
	}
	if h.rc, err = h.f.SyscallConn(); err != nil {
		h.f.Close()
		return nil, &Error{Interface: cfg.Interface, Detail: "socket", Err: err}
	}
	h.iov.Base = &h.buf[lenVLANTag]
	h.iov.SetLen(cfg.SnapLen)
	h.msg.Iov = &h.iov
	h.msg.Iovlen = 1
	h.msg.Control = &h.oob[0]
	h.recvFn = h.recv
	return h, nil
}

func noInterface(name string, err error) *Error {
	e := &Error{Interface: name, Kind: ErrNoInterface, Err: err}
	if ifs, lerr := net.Interfaces(); lerr == nil {
		for _, i := range ifs {
			e.Available = append(e.Available, i.Name)
		}
	}
	return e
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func hatypeName(t uint16) string {
	switch t {
	case unix.ARPHRD_INFINIBAND:
		return "IPoIB, ARPHRD_INFINIBAND"
	case unix.ARPHRD_NONE:
		return "no link-layer header, ARPHRD_NONE"
	case unix.ARPHRD_IEEE80211_RADIOTAP:
		return "802.11 radiotap"
	}
	return fmt.Sprintf("ARPHRD %d", t)
}

// recv runs one recvmsg; it returns false to wait when nothing is queued.
func (h *Handle) recv(fd uintptr) bool {
	h.msg.SetControllen(len(h.oob))
	h.msg.Flags = 0
	for {
		r, _, e := syscall.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&h.msg)), unix.MSG_TRUNC)
		if e == unix.EINTR {
			continue
		}
		h.n, h.oobn, h.errno = int(r), int(h.msg.Controllen), e
		return e != unix.EAGAIN
	}
}

// ReadPacket returns the next frame. The bytes are valid until the next
// call. It blocks until a frame arrives, the deadline passes (an error for
// which errors.Is(err, os.ErrDeadlineExceeded)), or the handle is closed.
func (h *Handle) ReadPacket() ([]byte, Info, error) {
	if err := h.rc.Read(h.recvFn); err != nil {
		if errors.Is(err, os.ErrClosed) {
			return nil, Info{}, errClosedHandle
		}
		return nil, Info{}, err
	}
	switch h.errno {
	case 0:
	case unix.ENETDOWN:
		return nil, Info{}, &Error{Interface: h.iface, Kind: ErrInterfaceDown, Detail: "went down during the capture", Err: h.errno}
	default:
		return nil, Info{}, &Error{Interface: h.iface, Detail: "reading", Err: h.errno}
	}
	var (
		info    Info
		aux     *unix.TpacketAuxdata
		wireLen = h.n // with MSG_TRUNC: the frame's length after the filter cut it
	)
	oob := h.oob[:h.oobn]
	for len(oob) >= sizeofCmsghdr {
		c := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if int(c.Len) < sizeofCmsghdr || int(c.Len) > len(oob) {
			break
		}
		body := oob[sizeofCmsghdr:c.Len]
		switch {
		case c.Level == unix.SOL_PACKET && c.Type == unix.PACKET_AUXDATA && len(body) >= sizeofAuxdata:
			aux = (*unix.TpacketAuxdata)(unsafe.Pointer(&body[0]))
		case c.Level == unix.SOL_SOCKET && c.Type == unix.SCM_TIMESTAMPNS && len(body) >= sizeofTimespec:
			ts := (*unix.Timespec)(unsafe.Pointer(&body[0]))
			info.Timestamp = time.Unix(int64(ts.Sec), int64(ts.Nsec))
		}
		adv := unix.CmsgSpace(int(c.Len) - sizeofCmsghdr)
		if adv > len(oob) {
			break
		}
		oob = oob[adv:]
	}
	if info.Timestamp.IsZero() {
		info.Timestamp = time.Now()
	}
	caplen := min(h.n, h.snaplen)
	data := h.buf[lenVLANTag : lenVLANTag+caplen]
	if aux != nil {
		wireLen = int(aux.Len)
		if aux.Status&unix.TP_STATUS_VLAN_VALID != 0 && caplen >= 2*6 {
			// Put the tag back between the MAC addresses and the
			// EtherType, where it was on the wire (IEEE 802.1Q 9.3).
			tpid := uint16(0x8100)
			if aux.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
				tpid = aux.Vlan_tpid
			}
			copy(h.buf[0:12], h.buf[lenVLANTag:lenVLANTag+12])
			binary.BigEndian.PutUint16(h.buf[12:], tpid)
			binary.BigEndian.PutUint16(h.buf[14:], aux.Vlan_tci)
			caplen = min(caplen+lenVLANTag, h.snaplen)
			data = h.buf[:caplen]
			wireLen += lenVLANTag
		}
	}
	info.CaptureLength = caplen
	info.Length = max(wireLen, caplen)
	return data, info, nil
}

// SetDeadline makes a blocked or later ReadPacket return at t; a zero t
// means no deadline. A past t wakes a blocked reader at once.
func (h *Handle) SetDeadline(t time.Time) error { return h.f.SetReadDeadline(t) }

// Stats returns the kernel's counters since Open.
func (h *Handle) Stats() (Stats, error) {
	var (
		st  *unix.TpacketStats
		err error
	)
	cerr := h.rc.Control(func(fd uintptr) {
		st, err = unix.GetsockoptTpacketStats(int(fd), unix.SOL_PACKET, unix.PACKET_STATISTICS)
	})
	if cerr != nil {
		return h.cumulated, cerr
	}
	if err != nil {
		return h.cumulated, err
	}
	// Each read clears the kernel's counters: add them up.
	h.cumulated.Packets += uint64(st.Packets)
	h.cumulated.Drops += uint64(st.Drops)
	return h.cumulated, nil
}

// Close closes the socket; a blocked ReadPacket returns.
func (h *Handle) Close() error { return h.f.Close() }

// Interface is the interface's name.
func (h *Handle) Interface() string { return h.iface }

// Filter is the filter running in the kernel.
func (h *Handle) Filter() Filter { return h.filter }

// SnapLen is the most bytes kept of a frame.
func (h *Handle) SnapLen() int { return h.snaplen }

// LinkType is the link type of the frames: Ethernet.
func (h *Handle) LinkType() layers.LinkType { return layers.LinkTypeEthernet }
