// Package source opens a packet capture and hands out its records one at a
// time, streaming: a Reader holds one record and a fixed read buffer
// (bufferSize, 320 KiB), never the whole file, however long the stream.
//
// # Formats
//
// Open and NewReader detect the format by its magic number:
//
//   - pcap, microsecond (0xa1b2c3d4) and nanosecond (0xa1b23c4d) timestamps,
//     either byte order, version 2.4;
//   - pcapng, any number of sections (each with its own byte order) and of
//     interfaces with different link types and timestamp resolutions;
//   - either of them compressed (Compression): gzip (magic 0x1f 0x8b, as
//     tcpdump -w - | gzip or Wireshark's .pcapng.gz write it), Zstandard
//     (RFC 8878; zstd, tshark --compress zstd) or LZ4 frames (lz4, tshark
//     --compress lz4), each of several members or frames.
//
// Every record is checked whole before any of it is used, so that a damaged
// file gives an error naming the packet rather than garbage:
//
//   - pcap: a record header must be complete, its captured length at most
//     MaxRecordLength (262144, libpcap's and Wireshark's limit) and the whole
//     record present. A captured length above the file's snap length but
//     within MaxRecordLength is accepted, as tcpdump and Wireshark accept it
//     (some writers do not truncate to the snap length they declare), and
//     counted, pcap and pcapng alike, for the caller to warn (OverSnapLen).
//   - pcapng: block length at least the block type's minimum, a multiple of
//     4, at most maxBlockLength, equal to the copy at the end of the block,
//     all present; options fit the block; a packet names an interface its
//     section has described and its captured length fits its block.
//     Interface Statistics, Name Resolution, Decryption Secrets, custom and
//     unknown blocks are checked for framing and skipped.
//   - gzip is undone before the magic is read, member after member (RFC
//     1952 2.2); byte offsets in errors count bytes of the uncompressed
//     capture. A gzip stream cut short (in a member's header, data or
//     trailer) is ErrTruncated, "gzip stream cut short"; a bad checksum or
//     bytes after the last member that are not another member are
//     ErrCompressed. Zstandard and LZ4 likewise, frame after frame: cut
//     inside a frame, ErrTruncated ("zstd stream cut short"); a damaged
//     frame, a bad checksum, bytes after the last frame, or a Zstandard
//     frame asking for a window over 8 MiB (MaxZstdWindow), ErrCompressed.
//     A gzip file opened by name (not standard input) is inflated on a
//     goroutine of its own, ahead of Next (readahead.go): inflate is the
//     slowest thing a capture's reading does.
//   - a pcapng file whose interfaces so far all have link types this
//     package does not read (Supported) fails at its first packet with a
//     *LinkTypeError, as a pcap file of such a link type fails in the
//     caller's check after Open.
//
// The formats are read here rather than with gopacket's pcapgo. Checked
// against pcapgo v1.7.7 (the version in go.mod), whose own dependency on
// golang.org/x/net is no obstacle (the tests use pcapgo through
// internal/pcaptest, the live saver writes with it):
//
//   - pcapng framing is not checked: a block length under 8 (12 for a
//     Section Header Block) wraps its remaining-length counter around, the
//     trailing copy of the length is discarded without being compared, and
//     a captured length larger than its block wraps the counter too, so the
//     reader walks into the following blocks; here each is an error naming
//     the block.
//   - errors carry no context: a file cut short is a bare
//     io.ErrUnexpectedEOF, others plain strings ("Interface id 3 not
//     present in section"), with no record number, byte offset or kind to
//     test with errors.Is, and none says whether reading can go on; the
//     read loop cannot skip one damaged record and keep the rest.
//   - a pcapng NgReader reads one link type unless WantMixedLinkType, and
//     then hands the link type through CaptureInfo.AncillaryData, an
//     interface slice per packet; the readers are two types with two APIs
//     where the engine wants one Reader for both formats and for gzip.
//   - every record is copied out of the bufio.Reader into its own buffer
//     (ZeroCopyReadPacketData still copies); here Data points into the
//     read buffer.
//
// # Records and memory
//
// Next returns Record values whose Data slice belongs to the Reader and is
// overwritten by the next call to Next (it points into the read buffer, so
// reading copies nothing); copy it to keep it. Record numbers start at
// 1 and count every record of the file, as Wireshark's frame numbers do,
// including a record skipped with a recoverable error and the pcapng Custom
// and systemd Journal Export blocks, which Wireshark shows as frames but
// which are not packets (Next skips them). In steady state Next
// allocates nothing (see BenchmarkNext).
//
// # Errors
//
// Every error about the capture is an *Error naming the file, the record
// number (0 when the file header itself is at fault) and the byte offset of
// the record or block in the uncompressed stream. Its Err wraps one of
// ErrNotCapture, ErrUnsupported, ErrTruncated, ErrBadLength, ErrBadBlock or
// ErrCompressed (test with errors.Is), a *LinkTypeError, or an I/O error;
// Open of a directory is ErrIsDirectory. Messages read like
//
//	capture.pcap: packet 1234: truncated record: header says 1514 bytes, 600 present
//
// Error.Final says whether reading can go on:
//
//   - Final (Next returns the same error from then on; every record before it
//     has been delivered): not a capture file; unsupported version; a
//     truncated record, record header or block; a pcap record whose captured
//     length exceeds MaxRecordLength (pcap has no way to find the next record
//     after a length that lies); any pcapng block framing error (bad or
//     mismatched block length, block too large, bad byte-order magic), since
//     pcapng has no marker to resynchronise on; an Interface Description
//     Block with an impossible timestamp resolution, or more than 4096
//     interfaces in one section; I/O and gzip errors.
//   - Not final (the record is skipped, its number used, and the next call to
//     Next returns the following record): a record whose captured length is
//     larger than its original length; a pcapng packet block whose captured
//     length exceeds MaxRecordLength or does not fit its block, or whose
//     interface is undescribed. The block's own length keeps the framing
//     intact in these cases.
//
// io.EOF is returned, unwrapped, at the clean end of the capture.
package source
