package nfs

import (
	"encoding/hex"
	"testing"
)

// TestHashesAsTshark checks FHHash and StateidHash against the values
// tshark 4.0.17 prints for the same bytes on rxe-nfs41.pcap
// (`tshark -2 -T fields -e nfs.fhandle -e nfs.fh.hash -e nfs.stateid
// -e nfs.stateid.hash -e nfs.stateid.other_hash`, frames 115, 118, 133).
func TestHashesAsTshark(t *testing.T) {
	for _, c := range []struct {
		fh   string
		hash uint32
	}{
		{"010007015f3b000000000000a23d092c09f1454f8d21cef8edc389752e3c0000880695d3", 0xa38fe1a1},
		{"010007015f3b000000000000a23d092c09f1454f8d21cef8edc389752f3c000075e8d186", 0x3741fd95},
		{"010007005f3b000000000000a23d092c09f1454f8d21cef8edc38975", 0xceeab11c}, // rxe-nfs3 frame 43
	} {
		b, _ := hex.DecodeString(c.fh)
		if got := FHHash(b); got != c.hash {
			t.Errorf("FHHash(%s) = %#08x, tshark %#08x", c.fh, got, c.hash)
		}
	}
	for _, c := range []struct {
		stateid string
		hash    uint16
		other   uint32
	}{
		{"00000001182a026b81a84e8d01000000", 0x002d, 0xe07c256d},
		{"00000000182a026b81a84e8d01000000", 0x0580, 0xe07c256d},
		{"00000001182a026b81a84e8d02000000", 0x25e0, 0xf2c98a83},
	} {
		b, _ := hex.DecodeString(c.stateid)
		if got := StateidHash(b); got != c.hash {
			t.Errorf("StateidHash(%s) = %#04x, tshark %#04x", c.stateid, got, c.hash)
		}
		if got := FHHash(b[4:]); got != c.other {
			t.Errorf("other hash of %s = %#08x, tshark %#08x", c.stateid, got, c.other)
		}
	}
}

// TestValuesREAD3 walks READ3args (RFC 1813 section 3.3.6) built by hand
// and checks the values: the handle, the offset, the count; and that
// Object names the handle.
func TestValuesREAD3(t *testing.T) {
	fh := []byte{1, 2, 3, 4, 5}
	body := []byte{0, 0, 0, 5, 1, 2, 3, 4, 5, 0, 0, 0, // nfs_fh3: length 5, bytes, pad
		0, 0, 0, 1, 0, 0, 0, 2, // offset 1<<32 | 2
		0, 0, 0x10, 0} // count 4096
	var in Info
	if err := in.Decode(uint32(ProgNFS), 3, 6, true, body, nil); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		k Key
		u uint64
	}{{KeyFH, 5}, {KeyOffset3, 1<<32 | 2}, {KeyCount3, 4096}}
	if len(in.Values) != len(want) {
		t.Fatalf("%d values %+v, want %d", len(in.Values), in.Values, len(want))
	}
	for i, w := range want {
		if v := in.Values[i]; Key(v.Key) != w.k || v.U != w.u || v.Op != -1 {
			t.Errorf("value %d: %v %d op %d, want %v %d op -1", i, Key(v.Key), v.U, v.Op, w.k, w.u)
		}
	}
	if got := in.Arena[in.Values[0].Off : in.Values[0].Off+in.Values[0].Len]; string(got) != string(fh) {
		t.Errorf("handle bytes %x, want %x", got, fh)
	}
	if o := in.Object(); !o.HasFH || o.FHHash != FHHash(fh) || o.NameLen != 0 {
		t.Errorf("Object %+v, want the handle's hash %#x and no name", o, FHHash(fh))
	}
}

// TestValuesBounded: a body with more values than MaxValues keeps
// MaxValues and counts the rest.
func TestValuesBounded(t *testing.T) {
	var in Info
	in.d.reset(nil, &in, nil)
	for i := 0; i < MaxValues+10; i++ {
		in.d.value(KeyCount4, uint64(i), 0)
	}
	if len(in.Values) != MaxValues || in.ValuesDropped != 10 {
		t.Errorf("%d values, %d dropped; want %d and 10", len(in.Values), in.ValuesDropped, MaxValues)
	}
}
