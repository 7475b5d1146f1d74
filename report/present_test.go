package report

import "github.com/rdmashark/rdmashark/ulp/rpcordma"

// Present is RPC-over-RDMA's presentation (ulp/rpcordma/present) as
// report's internal tests see it: present imports report, so these tests
// cannot import it; present_hook_test.go (package report_test, in the
// same test binary) registers it (RegisterULP, as the command does) and
// fills Present in.
var Present struct {
	// List is present.ListTransactions: the rpcordma.OnTransaction
	// callback that adds each transaction to a list.
	List func(*TransactionList) func(*rpcordma.Transaction)
}

// addTxn adds a finished transaction to l as the command does
// (Present.List).
func (l *TransactionList) addTxn(t *rpcordma.Transaction) { Present.List(l)(t) }
