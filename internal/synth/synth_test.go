package synth

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/pvtdata"
	"github.com/rdmashark/rdmashark/source"
)

// The LPCRC of FlowControlPacket is the VCRC's CRC: computed over an
// LRH-shaped buffer both must agree.
func TestCRC16MatchesVCRC(t *testing.T) {
	f, err := Build(Options{LinkType: LinkInfiniBand, Encap: IBLocal}, Client(), Server(),
		Send(roce.OpRCSendOnly, 5, 6), []byte("xyz"))
	if err != nil {
		t.Fatal(err)
	}
	end := len(f.Data) - 2
	v, err := roce.VCRC(f.Data)
	if err != nil {
		t.Fatal(err)
	}
	if got := crc16IB(f.Data[:end]); got != v || binary.BigEndian.Uint16(f.Data[end:]) != v {
		t.Errorf("crc16IB %#04x, roce.VCRC %#04x, wire % x", got, v, f.Data[end:])
	}
}

func TestBuildRejectsImpossibleCombinations(t *testing.T) {
	h := Send(roce.OpRCSendOnly, 1, 1)
	for _, o := range []Options{
		{LinkType: LinkEthernet, Encap: IBLocal},
		{LinkType: LinkInfiniBand, Encap: RoCEv2},
		{LinkType: LinkRaw, Encap: RoCEv1},
		{LinkType: LinkERF, Encap: RoCEv2, ERFType: 21},
		{LinkType: layers.LinkType(9)},
		{VLANs: []uint16{1, 2, 3}},
	} {
		if _, err := Build(o, Client(), Server(), h, nil); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := Build(Options{}, Client(), ServerV6(), h, nil); err == nil {
		t.Error("IPv4 to IPv6 accepted")
	}
}

func TestPrivateDataLayout(t *testing.T) {
	msg, err := RPCRDMAMessage(1, 0, true, 4096, 8192)
	if err != nil {
		t.Fatal(err)
	}
	// RFC 8797 section 4: identifier, version 1, flags with R = bit 0 of
	// octet 5, sizes (4096/1024)-1 = 3 and (8192/1024)-1 = 7.
	if want := []byte{0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 7}; !bytes.Equal(msg, want) {
		t.Errorf("message % x, want % x", msg, want)
	}
	h := &pvtdata.CMAHeader{IPVersion: 4, SrcPort: 35010, SrcAddr: Client().IP, DstAddr: Server().IP}
	pd, err := PrivateData(92, h, 36, msg)
	if err != nil {
		t.Fatal(err)
	}
	// The bytes of rxe-nfs3.pcap frame 36's REQ private data, with these sizes.
	if !bytes.Equal(pd[:4], []byte{0x00, 0x40, 0x88, 0xc2}) || !bytes.Equal(pd[16:20], []byte{192, 0, 2, 2}) ||
		!bytes.Equal(pd[32:36], []byte{192, 0, 2, 1}) || !bytes.Equal(pd[36:44], msg) || len(pd) != 92 {
		t.Errorf("private data % x", pd)
	}
	if _, err := PrivateData(92, h, 20, msg); err == nil {
		t.Error("a message over the CMA header accepted")
	}
	if _, err := PrivateData(40, nil, 36, msg); err == nil {
		t.Error("a message past the end accepted")
	}
	if _, err := RPCRDMAMessage(1, 0, false, 512, 1024); err == nil {
		t.Error("send size 512 accepted")
	}
}

// Written captures read back through source with the same records.
func TestWritersRoundTrip(t *testing.T) {
	s := &Sequence{Start: time.Unix(1700000000, 123456789), Step: time.Millisecond}
	s.Packet(Client(), Server(), Send(roce.OpRCSendOnly, 1, 1), []byte("a"))
	s.Packet(Server(), Client(), Ack(2, 1, 1, ACKSyndrome(1)), nil, WithSnap(40))
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	check := func(name string, data []byte, nanos bool) {
		r, err := source.NewReader(bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				if i != 2 {
					t.Errorf("%s: %d records", name, i)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			f := s.Frames[i]
			want := f.Time.Truncate(time.Microsecond)
			if nanos {
				want = f.Time
			}
			if !bytes.Equal(rec.Data, f.Data) || rec.CI.Length != f.Length || !rec.CI.Timestamp.Equal(want) ||
				rec.LinkType != LinkEthernet {
				t.Errorf("%s record %d: %d bytes of %d at %v", name, i+1, len(rec.Data), rec.CI.Length, rec.CI.Timestamp)
			}
		}
	}
	for _, o := range []PcapOptions{{}, {Nanosecond: true}, {BigEndian: true}, {Nanosecond: true, BigEndian: true}} {
		var b bytes.Buffer
		if err := WritePcap(&b, LinkEthernet, s.Frames, o); err != nil {
			t.Fatal(err)
		}
		check("pcap", b.Bytes(), o.Nanosecond)
	}
	var b bytes.Buffer
	if err := WritePcapNG(&b, []Interface{{LinkType: LinkEthernet, Name: "eth0"}}, s.Frames); err != nil {
		t.Fatal(err)
	}
	check("pcapng", b.Bytes(), false)
	if s.Cut[0] != 2 || len(s.Cut) != 1 {
		t.Errorf("cut frames %v", s.Cut)
	}
}

func TestCorpusIsDeterministic(t *testing.T) {
	a, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("%s differs between two runs", a[i].Name)
		}
	}
}
