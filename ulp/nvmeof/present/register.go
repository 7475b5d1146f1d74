package present

// Register registers NVMe/RDMA's presentation: its nvme_commands table
// of the export. The command calls it once, from its registration list's
// init.
func Register() {
	registerExport()
}
