// Command floor measures what any analysis of a RoCE capture must spend
// before it does anything of its own: reading the records, computing the
// CRC-32 an ICRC check needs over every frame, and decoding the headers down
// to the BTH. Issue 14's goal of 50× tshark is a wall-clock budget; these
// floors say how much of it is left for connection tracking, reassembly,
// the RPC layer and the checks.
//
//	go run ./bench/floor [-n 9] FILE...
//
// Each stage runs over the whole file n times, single-threaded, in this
// process (so the process's start is not counted: bench/run.sh times
// `rdmashark --version` for that); the medians are printed, each stage
// including the ones before it:
//
//	read    source.Reader.Next over every record (the project's reader,
//	        page cache to a reused buffer);
//	+crc    crc32.ChecksumIEEE over each frame after its Ethernet header,
//	        the bytes an ICRC covers (the masked copy of the first 40 to
//	        80 bytes that the real check makes costs nothing here);
//	+decode gopacket's Ethernet, IPv4, IPv6 and UDP and roce.BTH with
//	        its extended headers, through one DecodingLayerParser.
//
// Not a test; docs/speed.md ("What 50× would take") has the figures.
package main

import (
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/source"
)

type stage int

const (
	stageRead stage = iota
	stageCRC
	stageDecode
)

func (s stage) String() string {
	return [...]string{"read", "+crc", "+decode"}[s]
}

// tally is what a pass saw, so that the work cannot be optimised away and
// so that a file with no RoCE in it is noticed.
type tally struct {
	records, bytes, bths int
	crc                  uint32
}

func pass(name string, s stage) (tally, time.Duration, error) {
	var t tally
	r, err := source.Open(name)
	if err != nil {
		return t, 0, err
	}
	defer r.Close()
	var (
		eth     layers.Ethernet
		ip4     layers.IPv4
		ip6     layers.IPv6
		udp     layers.UDP
		bth     roce.BTH
		decoded []gopacket.LayerType
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &ip6, &udp, &bth)
	parser.IgnoreUnsupported = true
	start := time.Now()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return t, 0, err
		}
		t.records++
		t.bytes += len(rec.Data)
		if s >= stageCRC && len(rec.Data) > 14 {
			t.crc ^= crc32.ChecksumIEEE(rec.Data[14:])
		}
		if s >= stageDecode {
			// Errors (a frame that is not UDP, a cut frame) end the
			// frame's decoding, as they would anywhere.
			_ = parser.DecodeLayers(rec.Data, &decoded)
			if slices.Contains(decoded, roce.LayerTypeBTH) {
				t.bths++
			}
		}
	}
	return t, time.Since(start), nil
}

func main() {
	n := flag.Int("n", 9, "passes per stage; the median is printed")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: floor [-n passes] capture...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	for _, name := range flag.Args() {
		fmt.Printf("%s:\n", name)
		for s := stageRead; s <= stageDecode; s++ {
			times := make([]time.Duration, *n)
			var t tally
			for i := range times {
				var err error
				if t, times[i], err = pass(name, s); err != nil {
					fmt.Fprintln(os.Stderr, "floor:", err)
					os.Exit(1)
				}
			}
			slices.Sort(times)
			med := times[len(times)/2]
			fmt.Printf("  %-8s %7.1f ms median of %d (min %.1f)  %d records, %.0f MB, %.0f MB/s",
				s, ms(med), *n, ms(times[0]), t.records, float64(t.bytes)/1e6, float64(t.bytes)/med.Seconds()/1e6)
			if s == stageDecode {
				fmt.Printf(", %d BTHs", t.bths)
			}
			fmt.Println()
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
