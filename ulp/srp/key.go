package srp

// AppendKey appends an SRP exchange key, the command's tag, as
// "tag:0x%016x" (its eight octets in wire order), for
// fields.RegisterExchangeKey.
func AppendKey(dst []byte, key uint64) []byte {
	const hexd = "0123456789abcdef"
	dst = append(dst, "tag:0x"...)
	for i := 60; i >= 0; i -= 4 {
		dst = append(dst, hexd[key>>uint(i)&0xf])
	}
	return dst
}

func exchangeKey(tag uint64) string { return string(AppendKey(nil, tag)) }
