package fields

import "strconv"

// exchangeKeys are how each ULP writes the key of its exchanges
// (dissect.Exchange.Key) in every output: the listing of `rdmashark
// exchanges`, its export table. A ULP without an entry has its key in
// decimal.
var exchangeKeys = map[string]func(dst []byte, key uint64) []byte{}

// RegisterExchangeKey sets how the exchanges of the named ULP write their
// key, before any output is made: a plug-in's format, registered by the
// command's list of plug-ins (cmd/rdmashark/ulps.go).
func RegisterExchangeKey(ulp string, f func(dst []byte, key uint64) []byte) { exchangeKeys[ulp] = f }

// AppendExchangeKey appends the key of an exchange of the named ULP as
// that ULP writes it (decimal for a ULP that has no format of its own).
func AppendExchangeKey(dst []byte, ulp string, key uint64) []byte {
	if f := exchangeKeys[ulp]; f != nil {
		return f(dst, key)
	}
	return strconv.AppendUint(dst, key, 10)
}

// ExchangeKey is AppendExchangeKey as a string.
func ExchangeKey(ulp string, key uint64) string {
	return string(AppendExchangeKey(nil, ulp, key))
}
