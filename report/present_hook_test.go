package report_test

import (
	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/ulp/rpcordma/present"
)

func init() {
	present.Register()
	report.Present.List = present.ListTransactions
}
