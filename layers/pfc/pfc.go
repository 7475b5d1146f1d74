// Package pfc decodes IEEE 802.3 MAC Control frames (EtherType 0x8808):
// PAUSE (opcode 0x0001, IEEE 802.3 Annex 31B) and Priority-based Flow
// Control (opcode 0x0101, IEEE 802.1Qbb; IEEE 802.3 Annex 31D), the
// per-priority pause that lossless RoCE fabrics run on. A switch mirror
// port shows them; a host capture usually does not (the NIC consumes them).
//
// MACControl is a gopacket layer (LayerTypeMACControl) usable with a
// DecodingLayerParser.
package pfc

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// EtherTypeMACControl is the EtherType of MAC Control frames (IEEE 802.3
// clause 31).
const EtherTypeMACControl layers.EthernetType = 0x8808

// LayerTypeMACControl is the MAC Control frame.
var LayerTypeMACControl = gopacket.RegisterLayerType(1790, gopacket.LayerTypeMetadata{Name: "MACControl", Decoder: gopacket.DecodeFunc(decodeMACControl)})

// Opcode is the MAC Control opcode (IEEE 802.3 Table 31A-1).
type Opcode uint16

// Opcodes.
const (
	OpPause Opcode = 0x0001 // PAUSE (Annex 31B)
	OpPFC   Opcode = 0x0101 // Priority-based Flow Control (Annex 31D, 802.1Qbb)
)

func (o Opcode) String() string {
	switch o {
	case OpPause:
		return "PAUSE"
	case OpPFC:
		return "PFC"
	}
	return fmt.Sprintf("opcode 0x%04x", uint16(o))
}

// Priorities is the number of priorities PFC pauses separately.
const Priorities = 8

// MACControl is one MAC Control frame. For PAUSE, Quanta[0] is the pause
// time; for PFC, ClassEnable bit i says whether Quanta[i] applies to
// priority i (a time of 0 resumes it). Quanta count 512 bit times.
type MACControl struct {
	layers.BaseLayer
	Opcode      Opcode
	ClassEnable uint8 // priority-enable vector (PFC), the low octet of its 16 bits
	// ClassEnableVector is the PFC frame's whole 16-bit field (802.1Qbb
	// 36.1.3.2: the high octet is reserved, zero).
	ClassEnableVector uint16
	Quanta            [Priorities]uint16
}

// LayerType returns LayerTypeMACControl.
func (m *MACControl) LayerType() gopacket.LayerType { return LayerTypeMACControl }

// CanDecode returns LayerTypeMACControl.
func (m *MACControl) CanDecode() gopacket.LayerClass { return LayerTypeMACControl }

// NextLayerType returns gopacket.LayerTypeZero: the frame ends it.
func (m *MACControl) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// Paused lists whether each priority is told to pause (PFC: enabled with a
// non-zero time; PAUSE: every priority when its time is non-zero).
func (m *MACControl) Paused() (out [Priorities]bool) {
	for i := range out {
		switch m.Opcode {
		case OpPFC:
			out[i] = m.ClassEnable&(1<<i) != 0 && m.Quanta[i] != 0
		case OpPause:
			out[i] = m.Quanta[0] != 0
		}
	}
	return out
}

// ErrTooShort is returned for a frame shorter than its opcode needs.
var ErrTooShort = errors.New("MAC Control frame too short")

// DecodeFromBytes decodes the MAC Control header from data (the Ethernet
// payload).
func (m *MACControl) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 2 {
		df.SetTruncated()
		return ErrTooShort
	}
	*m = MACControl{Opcode: Opcode(binary.BigEndian.Uint16(data))}
	n := 2
	switch m.Opcode {
	case OpPause:
		if len(data) < 4 {
			df.SetTruncated()
			return ErrTooShort
		}
		m.Quanta[0] = binary.BigEndian.Uint16(data[2:])
		n = 4
	case OpPFC:
		if len(data) < 4+2*Priorities {
			df.SetTruncated()
			return ErrTooShort
		}
		m.ClassEnable = data[3]
		m.ClassEnableVector = binary.BigEndian.Uint16(data[2:])
		for i := range m.Quanta {
			m.Quanta[i] = binary.BigEndian.Uint16(data[4+2*i:])
		}
		n = 4 + 2*Priorities
	}
	m.BaseLayer = layers.BaseLayer{Contents: data[:n], Payload: data[n:]}
	return nil
}

// SerializeTo writes the frame (without padding to the Ethernet minimum,
// which the Ethernet layer adds when asked to).
func (m *MACControl) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	n := 2
	switch m.Opcode {
	case OpPause:
		n = 4
	case OpPFC:
		n = 4 + 2*Priorities
	}
	d, err := b.PrependBytes(n)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(d, uint16(m.Opcode))
	switch m.Opcode {
	case OpPause:
		binary.BigEndian.PutUint16(d[2:], m.Quanta[0])
	case OpPFC:
		d[2], d[3] = 0, m.ClassEnable
		for i, q := range m.Quanta {
			binary.BigEndian.PutUint16(d[4+2*i:], q)
		}
	}
	return nil
}

func decodeMACControl(data []byte, p gopacket.PacketBuilder) error {
	m := &MACControl{}
	if err := m.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(m)
	return nil
}
