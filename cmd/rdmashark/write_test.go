package main

import (
	"bytes"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/source"
)

// TestWriteSelected carves packets out of real captures with -Y and -w and
// reads the pcapng back with the capture reader: exactly the frames -Y
// prints, each with its original bytes, lengths, timestamp and link type.
func TestWriteSelected(t *testing.T) {
	for _, c := range []struct{ capture, filter string }{
		{"rxe-nfs3.pcap", "rpcordma.xid == 0xa8ad315d or infiniband.cm.req"},
		{"siw-nfs41.pcap", "tcp.flags.syn == 1 || iwarp_mpa.key.req"},
		{"rxe-rping-any-sll2.pcap", "frame.number <= 5 or udp"},
		{"public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap", "ipv6 || infiniband.bth.opcode == 4"},
		{"synthetic/eth-sll2.pcapng", "frame.number > 0"}, // two interfaces
	} {
		path := filepath.Join("..", "..", "testdata", "pcaps", c.capture)
		var nums, errOut bytes.Buffer
		if code := run([]string{"dissect", "-Y", c.filter, "-T", "fields", "-e", "frame.number", path}, nil, &nums, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.capture, code, errOut.String())
		}
		want := map[int]bool{}
		for _, f := range strings.Fields(nums.String()) {
			n, _ := strconv.Atoi(f)
			want[n] = true
		}
		if len(want) == 0 {
			t.Fatalf("%s: %q selects nothing", c.capture, c.filter)
		}
		out := filepath.Join(t.TempDir(), "out.pcapng")
		if code := run([]string{"dissect", "-Y", c.filter, "-w", out, path}, nil, io.Discard, &errOut); code != 0 {
			t.Fatalf("%s: -w: exit %d: %s", c.capture, code, errOut.String())
		}
		orig, err := source.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := source.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		written := 0
		ifaceOf, origOf := map[int]int{}, map[int]int{} // input interface <-> output interface
		for {
			o, err := orig.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !want[o.Number] {
				continue
			}
			od := append([]byte(nil), o.Data...)
			g, err := got.Next()
			if err != nil {
				t.Fatalf("%s: frame %d not written: %v", c.capture, o.Number, err)
			}
			written++
			if w, ok := ifaceOf[o.CI.InterfaceIndex]; ok && w != g.CI.InterfaceIndex {
				t.Errorf("%s: frame %d: input interface %d written on %d and %d", c.capture, o.Number, o.CI.InterfaceIndex, w, g.CI.InterfaceIndex)
			}
			if r, ok := origOf[g.CI.InterfaceIndex]; ok && r != o.CI.InterfaceIndex {
				t.Errorf("%s: frame %d: output interface %d holds input interfaces %d and %d", c.capture, o.Number, g.CI.InterfaceIndex, r, o.CI.InterfaceIndex)
			}
			ifaceOf[o.CI.InterfaceIndex], origOf[g.CI.InterfaceIndex] = g.CI.InterfaceIndex, o.CI.InterfaceIndex
			if !bytes.Equal(g.Data, od) || !g.CI.Timestamp.Equal(o.CI.Timestamp) || g.CI.Length != o.CI.Length ||
				g.CI.CaptureLength != o.CI.CaptureLength || g.LinkType != o.LinkType {
				t.Errorf("%s: frame %d written as record %d differs: %d bytes at %v, %d long, link type %v; was %d at %v, %d, %v",
					c.capture, o.Number, g.Number, len(g.Data), g.CI.Timestamp, g.CI.Length, g.LinkType,
					len(od), o.CI.Timestamp, o.CI.Length, o.LinkType)
			}
		}
		if _, err := got.Next(); err != io.EOF {
			t.Errorf("%s: more records than selected: %v", c.capture, err)
		}
		if got.Format() != source.FormatPcapNG || written != len(want) {
			t.Errorf("%s: %v, %d of %d frames", c.capture, got.Format(), written, len(want))
		}
		orig.Close()
		got.Close()
	}
}

// TestBadFilter: a bad filter is a usage error naming the column, with the
// filter and a caret under the offending token.
func TestBadFilter(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"dissect", "-Y", "ip.src == 1.2.3", filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap")}, nil, &out, &errOut)
	if code != exitUsage || out.Len() != 0 {
		t.Fatalf("exit %d, output %q", code, out.String())
	}
	want := "rdmashark: -Y: column 11: \"1.2.3\" is not a valid IPv4 address\n    ip.src == 1.2.3\n              ^~~~~\n"
	if errOut.String() != want {
		t.Errorf("got\n%s\nwant\n%s", errOut.String(), want)
	}
}

// TestWriteKeepsInterfaces: -w gives each output interface the input
// interface's name, description and snap length (a pcap's snap length
// from its file header), read back with the capture reader; tshark and
// capinfos read the same (pcapwrite/testdata/sample.capinfos.txt).
func TestWriteKeepsInterfaces(t *testing.T) {
	named, snapped := false, false
	for _, capture := range []string{"synthetic/eth-sll2.pcapng", "rxe-nfs3.pcap", "rxe-rping-any-sll2.pcap"} {
		path := filepath.Join("..", "..", "testdata", "pcaps", capture)
		out := filepath.Join(t.TempDir(), "out.pcapng")
		var errOut bytes.Buffer
		if code := run([]string{"dissect", "-w", out, path}, nil, io.Discard, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", capture, code, errOut.String())
		}
		interfaces := func(name string) []source.Interface {
			r, err := source.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for {
				if _, err := r.Next(); err != nil {
					break
				}
			}
			return r.Interfaces()
		}
		in, got := interfaces(path), interfaces(out)
		if len(in) != len(got) {
			t.Fatalf("%s: %d interfaces written of %d", capture, len(got), len(in))
		}
		for i := range in {
			if got[i].Name != in[i].Name || got[i].Description != in[i].Description || got[i].SnapLen != in[i].SnapLen ||
				got[i].LinkType != in[i].LinkType {
				t.Errorf("%s: interface %d written as %+v, was %+v", capture, i, got[i], in[i])
			}
		}
		for _, ifc := range in {
			named = named || ifc.Name != ""
			snapped = snapped || ifc.SnapLen != 0
		}
	}
	if !named || !snapped {
		t.Errorf("no input interface with a name (%v) or a snap length (%v): the test proves nothing", named, snapped)
	}
}
