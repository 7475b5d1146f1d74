#!/usr/bin/env bash
# Regenerates the tshark reference of cmd/rdmashark/tshark_json_test.go:
# tshark -T json and -T ek of the first packets of rxe-rping.pcap (ARP,
# ICMP, RDMA-CM, RoCE) and siw-rping-any-sll.pcap (Linux cooked, TCP,
# iWARP), so that rdmashark's -T json and -T ek are checked against
# tshark's shape and values.
# Needs tshark; made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tshark -n -r "$here/../pcaps/rxe-rping.pcap" -c 20 -T json --no-duplicate-keys 2>/dev/null > "$here/rxe-rping.json"
tshark -n -r "$here/../pcaps/rxe-rping.pcap" -c 20 -T ek 2>/dev/null > "$here/rxe-rping.ek"
tshark -n -r "$here/../pcaps/siw-rping-any-sll.pcap" -c 12 -T json --no-duplicate-keys 2>/dev/null > "$here/siw-rping-any-sll.json"
