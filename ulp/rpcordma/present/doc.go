// Package present is RPC-over-RDMA's presentation: its parts of analyze's
// report (text and JSON), export's tables and diff's profile, registered
// through each consumer's registration point (report.RegisterULP,
// export.Register, diff.Register) by Register, which the command's one
// registration list calls (cmd/rdmashark/ulps.go). It is a package of its
// own, not part of the plug-in ulp/rpcordma, because report, export and
// diff import check, which still reads the plug-in's model: the plug-in
// may not import them back. Only cmd/rdmashark imports it.
package present
