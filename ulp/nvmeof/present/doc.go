// Package present is NVMe/RDMA's presentation: its parts of the neutral
// consumers that its own model adds to — today export's nvme_commands
// table, one row per command with its opcode, namespace, LBA range, SGL
// and completion status (export.RegisterTable) — registered by Register,
// which the command's one registration list calls (cmd/rdmashark/ulps.go).
// It is a package of its own, not part of the plug-in ulp/nvmeof, for the
// reason ulp/rpcordma/present is: export imports check, which the plug-in
// registers its rules with; the plug-in may not import export back. Only
// cmd/rdmashark imports it.
package present
