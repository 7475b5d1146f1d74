package present

import (
	"github.com/rdmashark/rdmashark/diff"
	"github.com/rdmashark/rdmashark/report"
)

// Register registers RPC-over-RDMA's presentation with report, export and
// diff. The command calls it once, from its registration list's init.
func Register() {
	registerExport()
	diff.Register(diffULP)
	report.RegisterULP(reportULP)
}
