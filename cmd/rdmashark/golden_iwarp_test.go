package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// iwarpKnownDifferences are the documented ways rdmashark's iWARP fields
// differ from tshark 4.0's (testdata/KNOWN-DIFFERENCES.md, same IDs). As for
// RoCE, each must still occur.
var iwarpKnownDifferences = []knownDifference{
	{id: "KD-MPA-RES-ENHANCED", field: "iwarp_mpa.res",
		applies: func(ts, ours string, row map[string]string) bool {
			// tshark 4.0 counts the enhanced-connection flag (0x10) in
			// Res; rdmashark shows it as iwarp_mpa.enhanced_flag and Res
			// without it. Only on MPA revision 2 frames.
			return row["iwarp_mpa.rev"] == "2" && ts == "0x10" && ours == "0x00"
		}},
}

func iwarpGoldenFields(t *testing.T) []string {
	return listFile(t, "../../testdata/tshark/fields-iwarp.txt")
}

// TestTsharkFieldsIWARP runs `rdmashark dissect -T fields` with every field
// of testdata/tshark/fields-iwarp.txt on every siw capture and requires
// tshark 4.0's value on every packet, but for the documented known
// differences. tshark frames MPA over its TCP reassembly and shows each FPDU
// in the frame that completes it, as rdmashark does, so the FPDUs of a frame
// compare one to one (several FPDUs in a frame: comma-separated in order).
func TestTsharkFieldsIWARP(t *testing.T) {
	caps, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pcaps", "siw-*.pcap"))
	if err != nil || len(caps) < 7 {
		t.Fatalf("siw captures: %v (%d)", err, len(caps))
	}
	fpdus, reqreps := 0, 0
	goldenSuite{
		fields:   "fields-iwarp.txt",
		suffix:   "iwarp.tsv",
		captures: caps,
		context:  []string{"_ws.malformed", "_ws.expert.message"},
		known:    iwarpKnownDifferences,
		visit: func(f, ts string) {
			if f == "iwarp_mpa.ulpdulength" && ts != "" {
				fpdus += strings.Count(ts, ",") + 1
			}
			if f == "iwarp_mpa.rev" && ts != "" {
				reqreps++
			}
		},
	}.run(t)
	// Every siw capture has MPA set-up and FPDUs of every kind: an empty
	// comparison would prove nothing.
	if fpdus < 10000 || reqreps < 30 {
		t.Errorf("only %d FPDUs and %d MPA Requests/Replies compared", fpdus, reqreps)
	}
	t.Logf("%d FPDUs and %d MPA Requests/Replies compared with tshark", fpdus, reqreps)
}

// TestAnalyzeIWARPNFS3 checks `analyze --format json` on the real siw NFSv3
// capture against the bytes of its MPA frames (tshark -x, frame 39 from
// octet 0x42 of the frame):
//
//	Request, frame 39 (192.0.2.2:42249 → 192.0.2.1:20049):
//	  4d50412049442052 6571204672616d65   "MPA ID Req Frame"
//	  10                                  M=0 C=0 R=0, 0x10: RFC 6581 enhanced data follows
//	  02                                  Rev 2
//	  000c                                PD_Length 12
//	  0080 0000                           RFC 6581: A=0 B=0 IRD=128, C=0 D=0 ORD=0
//	  f6ab0e18 01 01 03 03                RFC 8797: format identifier, version 1,
//	                                      R=1 (low bit of the flags octet), send size
//	                                      (3+1)*1024 = 4096, receive size 4096
//	Reply, frame 41 (20049 → 42249): the same but "MPA ID Rep Frame",
//	  0000 0080                           IRD=0, ORD=128
//	  f6ab0e18 01 00 03 03                version 1, R=0, send 4096, receive 4096
//
// so (RFC 8797 section 4.2) the client-to-server threshold is min(client
// send 4096, server receive 4096) = 4096, server-to-client min(4096, 4096)
// = 4096, and remote invalidation is not negotiated (section 4.1: the
// server's R is 0). The second mount (frames 2021/2023, port 58750) sent
// the same bytes.
func TestAnalyzeIWARPNFS3(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"analyze", "--format", "json", "../../testdata/pcaps/siw-nfs3.pcap"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var doc struct {
		Connections []struct {
			Transport string `json:"transport"`
			State     string `json:"state"`
			Client    struct {
				Address string `json:"address"`
				Port    *int   `json:"port"`
			} `json:"client"`
			Server struct {
				Address string `json:"address"`
				Port    *int   `json:"port"`
			} `json:"server"`
			ServicePort *int `json:"service_port"`
			PrivateData map[string]struct {
				Seen             bool `json:"seen"`
				Present          bool `json:"present"`
				Packet           int  `json:"packet"`
				Offset           *int `json:"offset"`
				Version          *int `json:"version"`
				RemoteInvalidate bool `json:"remote_invalidate"`
				SendSize         *int `json:"send_size"`
				ReceiveSize      *int `json:"receive_size"`
				Length           int  `json:"length"`
			} `json:"private_data"`
			InlineThreshold *struct {
				C2S int `json:"client_to_server"`
				S2C int `json:"server_to_client"`
			} `json:"inline_threshold"`
			RemoteInvalidate *bool `json:"remote_invalidation_negotiated"`
			IWARP            *struct {
				Negotiated bool            `json:"negotiated"`
				Revision   map[string]int  `json:"revision"`
				Markers    map[string]bool `json:"markers"`
				CRC        map[string]bool `json:"crc"`
				IRDORD     map[string]struct {
					IRD int `json:"ird"`
					ORD int `json:"ord"`
				} `json:"ird_ord"`
				FPDUs     map[string]uint64 `json:"fpdus"`
				CRCErrors map[string]uint64 `json:"crc_errors"`
				LostSync  map[string]uint64 `json:"lost_sync"`
			} `json:"iwarp"`
		} `json:"connections"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Connections) != 2 {
		t.Fatalf("%d connections, want the two NFS mounts", len(doc.Connections))
	}
	for i, c := range doc.Connections {
		port := []int{42249, 58750}[i]
		pkts := [][2]int{{39, 41}, {2021, 2023}}[i]
		if c.Transport != "iwarp" || c.State != "closed" || c.Client.Address != "192.0.2.2" || c.Client.Port == nil ||
			*c.Client.Port != port || c.Server.Address != "192.0.2.1" || c.Server.Port == nil || *c.Server.Port != 20049 ||
			c.ServicePort == nil || *c.ServicePort != 20049 {
			t.Errorf("connection %d: %s %s %s:%v → %s:%v", i+1, c.Transport, c.State, c.Client.Address, c.Client.Port, c.Server.Address, c.Server.Port)
		}
		for side, want := range map[string]struct {
			packet int
			r      bool
		}{"client": {pkts[0], true}, "server": {pkts[1], false}} {
			pd := c.PrivateData[side]
			if !pd.Seen || !pd.Present || pd.Packet != want.packet || pd.Length != 12 ||
				pd.Offset == nil || *pd.Offset != 4 || pd.Version == nil || *pd.Version != 1 ||
				pd.RemoteInvalidate != want.r || pd.SendSize == nil || *pd.SendSize != 4096 ||
				pd.ReceiveSize == nil || *pd.ReceiveSize != 4096 {
				t.Errorf("connection %d %s private data: %+v", i+1, side, pd)
			}
		}
		if c.InlineThreshold == nil || c.InlineThreshold.C2S != 4096 || c.InlineThreshold.S2C != 4096 {
			t.Errorf("connection %d thresholds: %+v", i+1, c.InlineThreshold)
		}
		if c.RemoteInvalidate == nil || *c.RemoteInvalidate {
			t.Errorf("connection %d: remote invalidation negotiated %v, want false", i+1, c.RemoteInvalidate)
		}
		iw := c.IWARP
		if iw == nil {
			t.Fatalf("connection %d: no iwarp object", i+1)
		}
		if !iw.Negotiated || iw.Revision["client"] != 2 || iw.Revision["server"] != 2 ||
			iw.IRDORD["client"].IRD != 128 || iw.IRDORD["client"].ORD != 0 ||
			iw.IRDORD["server"].IRD != 0 || iw.IRDORD["server"].ORD != 128 {
			t.Errorf("connection %d MPA: %+v", i+1, iw)
		}
		for _, d := range []string{"client_to_server", "server_to_client"} {
			if iw.Markers[d] || iw.CRC[d] || iw.FPDUs[d] == 0 || iw.CRCErrors[d] != 0 || iw.LostSync[d] != 0 {
				t.Errorf("connection %d %s: markers %v crc %v fpdus %d crc errors %d lost sync %d",
					i+1, d, iw.Markers[d], iw.CRC[d], iw.FPDUs[d], iw.CRCErrors[d], iw.LostSync[d])
			}
		}
	}
}
