#!/usr/bin/env bash
# Regenerates tshark's and capinfos' reading of sample.pcapng (written by
# `go test ./pcapwrite -run TestSample -update`), which TestSample checks
# against what it wrote. Needs tshark and capinfos (Debian package tshark);
# made with TShark 4.0.17.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tshark -r "$here/sample.pcapng" -T fields -e frame.number -e frame.interface_id -e frame.time_epoch \
	-e frame.len -e frame.cap_len -e frame.comment 2>/dev/null > "$here/sample.tshark.txt"
capinfos "$here/sample.pcapng" 2>/dev/null | sed 's|^File name: .*|File name:           sample.pcapng|' > "$here/sample.capinfos.txt"
