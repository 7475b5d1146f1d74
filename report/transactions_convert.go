package report

import "github.com/rdmashark/rdmashark/ulp/rpcordma"

// ConvertTransaction returns a finished transaction (an
// rpcordma.OnTransaction callback argument) as `transactions --format json`
// writes it, for other views of the same data (the HTML report) to build
// on the same document instead of a second conversion.
func ConvertTransaction(t *rpcordma.Transaction) Transaction { return convertTxn(t) }
