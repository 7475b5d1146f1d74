package iwarp

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
)

// castagnoli is the CRC32c polynomial MPA shares with iSCSI (RFC 5044
// section 4 points to [iSCSI]; RFC 3385 chose the polynomial).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32c returns the CRC32c of the concatenation of parts as the MPA CRC
// field holds it: the four CRC octets in wire order, read as a big-endian
// number. This is the number tshark shows as iwarp_mpa.crc.
//
// MPA sends the CRC the way iSCSI does (RFC 3720 / RFC 7143 appendix B.4):
// the least significant octet of the standard CRC32c register first, so 32
// zero octets, whose CRC32c is 0x8a9136aa, go on the wire as aa 36 91 8a
// and CRC32c returns 0xaa36918a.
func CRC32c(parts ...[]byte) uint32 {
	var c uint32
	for _, p := range parts {
		c = crc32.Update(c, castagnoli, p)
	}
	return bits.ReverseBytes32(c)
}

// crcUpdate continues a standard CRC32c over p.
func crcUpdate(c uint32, p []byte) uint32 { return crc32.Update(c, castagnoli, p) }

// putCRC writes a standard CRC32c value in MPA wire order.
func putCRC(b []byte, c uint32) { binary.LittleEndian.PutUint32(b, c) }
