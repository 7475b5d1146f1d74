//go:build linux

package live

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"
)

// Handle is an open capture on one interface: an AF_PACKET socket
// (packet(7)) with the filter in the kernel and a TPACKET_V3 receive ring
// mapped into memory (Documentation/networking/packet_mmap.rst): the kernel
// writes frames into blocks of the ring and hands each block over whole,
// when it is full or when the block timeout passes; no system call per
// frame and no copy. One goroutine reads it (ReadPacket, or a Capture
// built on it); SetDeadline, Stats and Close may be called from others.
type Handle struct {
	iface    string
	ifindex  int
	filter   Filter
	snaplen  int
	loopback bool

	fd   int
	wake int // eventfd: SetDeadline and Close interrupt a wait
	ring []byte
	bsz  int // bytes per block
	nblk int
	pfd  [2]unix.PollFd

	deadline atomic.Int64 // UnixNano; 0: none
	closed   atomic.Bool
	closeMu  sync.Mutex // wake's lifetime
	// readMu is held by whoever walks the ring (ReadPacket, a Capture's
	// reader until its consumers let go): Close waits for it before it
	// unmaps the ring.
	readMu sync.Mutex

	// ReadPacket's walk: the block it reads (-1: none) and where in it.
	cur     int
	next    int
	left    int
	off     int
	pending blockFrames

	statsMu   sync.Mutex
	cumulated Stats
	statsBuf  unix.TpacketStatsV3
}

// Ring geometry.
const (
	// blockTimeout is how long the kernel fills a block before it hands
	// it over anyway (tp_retire_blk_tov): the most a frame waits when
	// traffic is light. A block handed over part full holds the ring's
	// space all the same: 32 blocks hold at least 3.2 s of light traffic.
	blockTimeout = 100 // ms
	// maxBlockSize is the block size of rings of 8 blocks or more; the
	// largest frame a ring holds is a little less than a block.
	maxBlockSize = 1 << 20
	// minBlockSize is the smallest block: a jumbo frame or a GRO
	// super-frame of 64 KiB fits whole.
	minBlockSize = 128 << 10
	// tpacketAlign is TPACKET_ALIGNMENT.
	tpacketAlign = 16
)

// ringGeometry returns the block size and count for a ring of about
// bufferSize bytes: at least 2 blocks; blocks of 1 MiB once there are 8 of
// them, smaller ones (down to 128 KiB) for smaller rings.
func ringGeometry(bufferSize int) (blockSize, blocks int) {
	blockSize = maxBlockSize
	for blockSize > minBlockSize && bufferSize/blockSize < 8 {
		blockSize /= 2
	}
	blocks = max(2, bufferSize/blockSize)
	return blockSize, blocks
}

var (
	errClosedHandle = errors.New("capture closed")
	errDeadline     = os.ErrDeadlineExceeded
	// offsets in a block and a frame header (linux/if_packet.h)
	offBlockStatus = int(unsafe.Offsetof(unix.TpacketBlockDesc{}.Hdr)) + int(unsafe.Offsetof(unix.TpacketHdrV1{}.Block_status))
	offNumPkts     = int(unsafe.Offsetof(unix.TpacketBlockDesc{}.Hdr)) + int(unsafe.Offsetof(unix.TpacketHdrV1{}.Num_pkts))
	offFirstPkt    = int(unsafe.Offsetof(unix.TpacketBlockDesc{}.Hdr)) + int(unsafe.Offsetof(unix.TpacketHdrV1{}.Offset_to_first_pkt))
	// the sockaddr_ll after each frame header: TPACKET_ALIGN(sizeof(tpacket3_hdr))
	offSockaddr = (unix.SizeofTpacket3Hdr + tpacketAlign - 1) &^ (tpacketAlign - 1)
	offPkttype  = offSockaddr + int(unsafe.Offsetof(unix.RawSockaddrLinklayer{}.Pkttype))
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
	// the filter and the ring are in place before the first frame.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, &Error{Interface: cfg.Interface, Kind: ErrPermission, Err: err}
		}
		return nil, &Error{Interface: cfg.Interface, Detail: "packet socket", Err: err}
	}
	h := &Handle{iface: cfg.Interface, ifindex: ifi.Index, filter: cfg.Filter, snaplen: cfg.SnapLen, fd: fd, wake: -1, cur: -1}
	fail := func(e *Error) (*Handle, error) {
		h.release()
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
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V3); err != nil {
		return sockErr("TPACKET_V3 (Linux 3.2 or later)", err)
	}
	// Room in front of every frame to put back a VLAN tag the kernel took
	// off, as libpcap does (PACKET_RESERVE).
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_RESERVE, lenVLANTag); err != nil {
		return sockErr("PACKET_RESERVE", err)
	}
	h.bsz, h.nblk = ringGeometry(cfg.BufferSize)
	req := unix.TpacketReq3{
		Block_size:     uint32(h.bsz),
		Block_nr:       uint32(h.nblk),
		Frame_size:     uint32(h.bsz), // V3 packs frames of any size into a block
		Frame_nr:       uint32(h.nblk),
		Retire_blk_tov: blockTimeout,
	}
	if err := unix.SetsockoptTpacketReq3(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		if errors.Is(err, unix.EPERM) {
			return fail(&Error{Interface: cfg.Interface, Kind: ErrPermission, Err: err})
		}
		return sockErr(fmt.Sprintf("PACKET_RX_RING of %d blocks of %d KiB (-B)", h.nblk, h.bsz>>10), err)
	}
	h.ring, err = unix.Mmap(fd, 0, h.bsz*h.nblk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_LOCKED)
	if err != nil {
		// MAP_LOCKED fails beyond RLIMIT_MEMLOCK: the ring works unlocked.
		h.ring, err = unix.Mmap(fd, 0, h.bsz*h.nblk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			return sockErr("mapping the ring", err)
		}
	}
	if h.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return sockErr("eventfd", err)
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
	if ll, ok := sa.(*unix.SockaddrLinklayer); ok {
		if ll.Hatype != unix.ARPHRD_ETHER && ll.Hatype != unix.ARPHRD_LOOPBACK {
			return fail(&Error{Interface: cfg.Interface, Kind: ErrLinkType, Detail: hatypeName(ll.Hatype)})
		}
		h.loopback = ll.Hatype == unix.ARPHRD_LOOPBACK
	}
	if cfg.Promiscuous {
		mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			return sockErr("promiscuous mode", err)
		}
	}
	// Reading the statistics clears them: start from zero.
	if _, err := unix.GetsockoptTpacketStatsV3(fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err != nil {
		return sockErr("PACKET_STATISTICS", err)
	}
	h.pfd[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN | unix.POLLERR}
	h.pfd[1] = unix.PollFd{Fd: int32(h.wake), Events: unix.POLLIN}
	h.pending.frames = make([]frameDesc, 0, 256)
	return h, nil
}

// release unmaps the ring and closes the descriptors.
func (h *Handle) release() {
	if h.ring != nil {
		_ = unix.Munmap(h.ring)
		h.ring = nil
	}
	if h.wake >= 0 {
		unix.Close(h.wake)
		h.wake = -1
	}
	if h.fd >= 0 {
		unix.Close(h.fd)
		h.fd = -1
	}
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

// frameDesc locates one frame in a block.
type frameDesc struct {
	off     int32 // from the block's start
	caplen  int32
	wirelen int32
	sec     uint32
	nsec    uint32
}

// blockFrames are the frames of one block, as scanFrames found them.
type blockFrames struct {
	frames []frameDesc
	// losing: the kernel dropped frames before this block was handed
	// over (TP_STATUS_LOSING).
	losing bool
	// first is the number of the block's first frame in the capture (a
	// Capture's; 0 for ReadPacket).
	first uint64
	// dropped counts the frames the kernel dropped just before the block
	// (a Capture's), lostBefore those the engine did not see just before
	// it: dropped here and before blocks the analysis skipped.
	dropped, lostBefore uint64
}

func (h *Handle) block(i int) []byte { return h.ring[i*h.bsz : (i+1)*h.bsz] }

func (h *Handle) blockStatus(i int) *uint32 {
	return (*uint32)(unsafe.Pointer(&h.ring[i*h.bsz+offBlockStatus]))
}

// blockReady reports whether the kernel handed block i over.
func (h *Handle) blockReady(i int) bool {
	return atomic.LoadUint32(h.blockStatus(i))&unix.TP_STATUS_USER != 0
}

// giveBack returns block i to the kernel.
func (h *Handle) giveBack(i int) {
	atomic.StoreUint32(h.blockStatus(i), unix.TP_STATUS_KERNEL)
}

// scanFrames lists the frames of block i (handed over) into bf: outgoing
// frames on loopback are left out (each frame shows twice there, as it
// leaves and as it comes back, and libpcap keeps the second), and a VLAN
// tag the kernel took off is put back in place in the ring, in the room
// PACKET_RESERVE left in front of the frame.
func (h *Handle) scanFrames(i int, bf *blockFrames) {
	b := h.block(i)
	bf.frames = bf.frames[:0]
	bf.losing = atomic.LoadUint32(h.blockStatus(i))&unix.TP_STATUS_LOSING != 0
	n := int(binary.NativeEndian.Uint32(b[offNumPkts:]))
	off := int(binary.NativeEndian.Uint32(b[offFirstPkt:]))
	for range n {
		if off <= 0 || off+offSockaddr+int(unsafe.Sizeof(unix.RawSockaddrLinklayer{})) > len(b) {
			break
		}
		hdr := (*unix.Tpacket3Hdr)(unsafe.Pointer(&b[off]))
		next := int(hdr.Next_offset)
		if h.loopback && b[off+offPkttype] == unix.PACKET_OUTGOING {
			off += next
			continue
		}
		mac := off + int(hdr.Mac)
		caplen := int(hdr.Snaplen)
		wire := int(hdr.Len)
		if mac+caplen > len(b) {
			break
		}
		if hdr.Status&unix.TP_STATUS_VLAN_VALID != 0 && caplen >= 2*6 && int(hdr.Mac) >= offSockaddr+int(unsafe.Sizeof(unix.RawSockaddrLinklayer{}))+lenVLANTag {
			// Put the tag back between the MAC addresses and the
			// EtherType, where it was on the wire (IEEE 802.1Q 9.3).
			tpid := uint16(0x8100)
			if hdr.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
				tpid = hdr.Hv1.Vlan_tpid
			}
			copy(b[mac-lenVLANTag:mac+12-lenVLANTag], b[mac:mac+12])
			mac -= lenVLANTag
			binary.BigEndian.PutUint16(b[mac+12:], tpid)
			binary.BigEndian.PutUint16(b[mac+14:], uint16(hdr.Hv1.Vlan_tci))
			caplen = min(caplen+lenVLANTag, h.snaplen)
			wire += lenVLANTag
		}
		bf.frames = append(bf.frames, frameDesc{off: int32(mac), caplen: int32(caplen), wirelen: int32(max(wire, caplen)), sec: hdr.Sec, nsec: hdr.Nsec})
		if next == 0 {
			break
		}
		off += next
	}
}

// frameAt returns a frame of block i.
func (h *Handle) frameAt(i int, f *frameDesc) ([]byte, Info) {
	return frameIn(h.block(i), f)
}

// frameIn returns a frame of block b (in the ring, or a copy of it).
func frameIn(b []byte, f *frameDesc) ([]byte, Info) {
	return b[f.off : f.off+f.caplen], Info{
		Timestamp:     time.Unix(int64(f.sec), int64(f.nsec)),
		CaptureLength: int(f.caplen),
		Length:        int(f.wirelen),
	}
}

// errInterrupted: a wait for a block ended because SetDeadline or Close
// woke it; the caller looks at why.
var errInterrupted = errors.New("interrupted")

// waitBlock waits until block i is handed over, until the deadline (an
// error for which errors.Is(err, os.ErrDeadlineExceeded)), or until the
// handle is closed. With interruptible, a SetDeadline call also ends the
// wait (errInterrupted).
func (h *Handle) waitBlock(i int, until time.Time, interruptible bool) error {
	for {
		if h.closed.Load() {
			return errClosedHandle
		}
		if h.blockReady(i) {
			return nil
		}
		timeout := -1
		if !until.IsZero() {
			d := time.Until(until)
			if d <= 0 {
				return errDeadline
			}
			timeout = int((d + time.Millisecond - 1) / time.Millisecond)
		}
		h.pfd[0].Revents, h.pfd[1].Revents = 0, 0
		_, err := unix.Poll(h.pfd[:], timeout)
		if err != nil && err != unix.EINTR {
			return &Error{Interface: h.iface, Detail: "waiting for frames", Err: err}
		}
		if h.pfd[1].Revents&unix.POLLIN != 0 {
			var buf [8]byte
			_, _ = unix.Read(h.wake, buf[:])
			if interruptible {
				return errInterrupted
			}
		}
		if h.pfd[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 && !h.blockReady(i) {
			if h.closed.Load() {
				return errClosedHandle
			}
			serr, gerr := unix.GetsockoptInt(h.fd, unix.SOL_SOCKET, unix.SO_ERROR)
			switch {
			case gerr != nil:
				return &Error{Interface: h.iface, Detail: "reading", Err: gerr}
			case unix.Errno(serr) == unix.ENETDOWN:
				return &Error{Interface: h.iface, Kind: ErrInterfaceDown, Detail: "went down during the capture", Err: unix.ENETDOWN}
			case serr != 0:
				return &Error{Interface: h.iface, Detail: "reading", Err: unix.Errno(serr)}
			}
		}
	}
}

// ReadPacket returns the next frame. The bytes are in the ring and valid
// until the next call. It blocks until a frame arrives, the deadline passes
// (an error for which errors.Is(err, os.ErrDeadlineExceeded)), or the
// handle is closed.
func (h *Handle) ReadPacket() ([]byte, Info, error) {
	h.readMu.Lock()
	defer h.readMu.Unlock()
	for h.left == 0 {
		if h.cur >= 0 {
			h.giveBack(h.cur)
			h.cur = -1
			h.next = (h.next + 1) % h.nblk
		}
		for {
			var until time.Time
			if d := h.deadline.Load(); d != 0 {
				until = time.Unix(0, d)
			}
			err := h.waitBlock(h.next, until, true)
			if err == errInterrupted {
				continue // the deadline changed
			}
			if err != nil {
				return nil, Info{}, err
			}
			break
		}
		h.cur = h.next
		h.scanFrames(h.cur, &h.pending)
		if h.pending.losing {
			_, _ = h.Stats()
		}
		h.left, h.off = len(h.pending.frames), 0
	}
	f := &h.pending.frames[h.off]
	h.off++
	h.left--
	data, info := h.frameAt(h.cur, f)
	return data, info, nil
}

// SetDeadline makes a blocked or later ReadPacket return at t; a zero t
// means no deadline. A past t wakes a blocked reader at once.
func (h *Handle) SetDeadline(t time.Time) error {
	if t.IsZero() {
		h.deadline.Store(0)
	} else {
		h.deadline.Store(t.UnixNano())
	}
	return h.kick()
}

// kick wakes a waiting reader.
func (h *Handle) kick() error {
	h.closeMu.Lock()
	defer h.closeMu.Unlock()
	if h.wake < 0 {
		return errClosedHandle
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, err := unix.Write(h.wake, one[:])
	if err == unix.EAGAIN {
		err = nil
	}
	return err
}

// Stats returns the kernel's counters since Open.
func (h *Handle) Stats() (Stats, error) {
	h.statsMu.Lock()
	defer h.statsMu.Unlock()
	if h.fd < 0 {
		return h.cumulated, nil // closed: the counters as they were
	}
	st := &h.statsBuf
	l := uint32(unix.SizeofTpacketStatsV3)
	// Not unix.GetsockoptTpacketStatsV3, which allocates its result: the
	// ring's reader reads the counters once a block.
	if _, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(h.fd), unix.SOL_PACKET, unix.PACKET_STATISTICS,
		uintptr(unsafe.Pointer(st)), uintptr(unsafe.Pointer(&l)), 0); e != 0 {
		return h.cumulated, e
	}
	// Each read clears the kernel's counters: add them up.
	h.cumulated.Packets += uint64(st.Packets)
	h.cumulated.Drops += uint64(st.Drops)
	return h.cumulated, nil
}

// Close ends the capture: a waiting ReadPacket returns, a Capture on the
// handle stops. It unmaps the ring and closes the socket once the reader
// has let go of the ring (for a Capture: once its engine and writer have);
// Stats then returns the last counters.
func (h *Handle) Close() error {
	if h.closed.Swap(true) {
		return nil
	}
	_ = h.kick()
	h.readMu.Lock()
	defer h.readMu.Unlock()
	h.closeMu.Lock()
	defer h.closeMu.Unlock()
	h.statsMu.Lock()
	defer h.statsMu.Unlock()
	h.release()
	return nil
}

// Interface is the interface's name.
func (h *Handle) Interface() string { return h.iface }

// Filter is the filter running in the kernel.
func (h *Handle) Filter() Filter { return h.filter }

// SnapLen is the most bytes kept of a frame.
func (h *Handle) SnapLen() int { return h.snaplen }

// LinkType is the link type of the frames: Ethernet.
func (h *Handle) LinkType() layers.LinkType { return layers.LinkTypeEthernet }

// Loopback tells whether the interface is a loopback one, where outgoing
// frames are left out.
func (h *Handle) Loopback() bool { return h.loopback }

// RingSize is the ring's size in bytes and blocks.
func (h *Handle) RingSize() (bytes, blocks int) { return h.bsz * h.nblk, h.nblk }
