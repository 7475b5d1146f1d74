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
//   - either of them gzip-compressed (magic 0x1f 0x8b, as tcpdump -w - | gzip
//     or Wireshark's .pcapng.gz write it).
//
// Every record is checked whole before any of it is used, so that a damaged
// file gives an error naming the packet rather than garbage:
//
//   - pcap: a record header must be complete, its captured length at most
//     MaxRecordLength (262144, libpcap's and Wireshark's limit) and the whole
//     record present. A captured length above the file's snap length but
//     within MaxRecordLength is accepted, as tcpdump and Wireshark accept it
//     (some writers do not truncate to the snap length they declare).
//   - pcapng: block length at least the block type's minimum, a multiple of
//     4, at most maxBlockLength, equal to the copy at the end of the block,
//     all present; options fit the block; a packet names an interface its
//     section has described and its captured length fits its block.
//     Interface Statistics, Name Resolution, Decryption Secrets, custom and
//     unknown blocks are checked for framing and skipped.
//   - gzip is undone before the magic is read; byte offsets in errors count
//     bytes of the uncompressed capture, and a gzip stream cut short is
//     reported like a truncated file.
//
// The formats are read here rather than with gopacket's pcapgo (v1.7.7):
// its package also holds live-capture code that needs golang.org/x/net, and
// its pcapng reader trusts the lengths this package checks (a block length
// under 12 wraps around, a captured length larger than its block reads into
// the next blocks, the trailing length is never compared), reports a cut
// file as a bare io.ErrUnexpectedEOF, and copies every record.
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
// ErrNotCapture, ErrUnsupported, ErrTruncated, ErrBadLength or ErrBadBlock
// (test with errors.Is), or an I/O or gzip error. Messages read like
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
