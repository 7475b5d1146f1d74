// Package live captures frames from a network interface as they arrive and
// hands them to the dissect engine.
//
// The capture is pure Go on Linux AF_PACKET sockets (packet(7)): no cgo and
// no libpcap. Frames arrive in a TPACKET_V3 ring mapped into memory
// (Handle). A Capture's reader copies each block the kernel hands over
// into a buffer allocated once and gives the block back; a writer
// goroutine writes the frames to the file from the copy and hands it to
// the engine, which reads them in place on a goroutine of its own. A
// Filter, compiled to classic BPF (golang.org/x/net/bpf), runs
// in the kernel and also sets the snap length; the socket gets the filter
// before it is bound to the interface, so no frame the filter rejects is
// ever queued. VLAN tags the kernel took off a frame (802.1Q acceleration)
// are put back from the packet's auxiliary data, so frames are written as
// they were on the wire. On loopback, where the kernel shows every frame
// twice (leaving and coming back), the outgoing copy is left out, as
// libpcap does. The kernel's drop counter (PACKET_STATISTICS) is read each
// time a block goes back to the kernel, so that Capture.Losses places the
// drops before the first frame the kernel then puts into that block, and
// when the capture ends.
//
// FileRing writes dumpcap's ring buffer of pcapng files.
//
// Capture.Stream and StreamSource carry the frames from a capture process
// (rdmashark capture's reader, in a process of its own) to the analysing
// one through a pipe, as pcapng whose packets keep their numbers
// (epb_packetid) and the losses before them (epb_dropcount).
//
// Interface problems come back as *Error values wrapping ErrNoInterface,
// ErrPermission, ErrInterfaceDown or ErrLinkType, each with a one-line
// message that says what to do.
//
// Saver writes pcapng while capturing and keeps the file readable up to
// the last whole packet at every moment, so a killed capture leaves a
// file other tools open.
//
// Interfaces lists the network interfaces with the Soft-RoCE (rxe) and
// soft-iWARP (siw) devices, or any other RDMA device, bound to each, from
// /sys/class/infiniband.
package live
