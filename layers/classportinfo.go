package layers

import (
	"encoding/binary"
	"fmt"
)

// ClassPortInfoLength is the size of the ClassPortInfo attribute.
const ClassPortInfoLength = 72

// ClassPortInfo is the ClassPortInfo attribute (IBTA Vol 1 §13.4.8.1,
// attribute 0x0001 of every GSI class): what a class agent supports and
// where to redirect requests and send traps. Offsets count from the
// attribute's start (the SA data, or the PerfMgt data after its 40
// reserved bytes).
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  BaseVersion  | ClassVersion  |        CapabilityMask         | 0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            CapabilityMask2 (27)                 |RespTimeValue| 4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     RedirectGID (16 bytes)                    | 8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  RedirectTC   |  SL   |          RedirectFL (20)              | 24
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|         RedirectLID           |        RedirectP_Key          | 28
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Reserved    |                 RedirectQP                    | 32
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        RedirectQ_Key                          | 36
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       TrapGID (16 bytes)                      | 40
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|    TrapTC     |  SL   |            TrapFL (20)                | 56
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           TrapLID             |          TrapP_Key            | 60
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   TrapHL      |                   TrapQP                      | 64
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          TrapQ_Key                            | 68
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Byte 64 is TrapHL in IBTA 1.2 and later (reserved before); Wireshark
// shows it, like byte 32, as Reserved.
type ClassPortInfo struct {
	BaseVersion     uint8
	ClassVersion    uint8
	CapabilityMask  uint16
	CapabilityMask2 uint32 // 27 bits
	RespTimeValue   uint8  // 5 bits
	RedirectGID     []byte // 16 bytes
	RedirectTC      uint8
	RedirectSL      uint8  // 4 bits
	RedirectFL      uint32 // 20 bits
	RedirectLID     uint16
	RedirectPKey    uint16
	Reserved        uint8
	RedirectQP      uint32 // 24 bits
	RedirectQKey    uint32
	TrapGID         []byte // 16 bytes
	TrapTC          uint8
	TrapSL          uint8  // 4 bits
	TrapFL          uint32 // 20 bits
	TrapLID         uint16
	TrapPKey        uint16
	TrapHL          uint8 // Reserved before IBTA 1.2
	TrapQP          uint32
	TrapQKey        uint32
}

// DecodeClassPortInfo decodes a ClassPortInfo from the first 72 bytes of d.
func DecodeClassPortInfo(d []byte) ClassPortInfo {
	_ = d[ClassPortInfoLength-1]
	be := binary.BigEndian
	return ClassPortInfo{
		BaseVersion: d[0], ClassVersion: d[1], CapabilityMask: be.Uint16(d[2:4]),
		CapabilityMask2: be.Uint32(d[4:8]) >> 5, RespTimeValue: d[7] & 0x1F,
		RedirectGID: d[8:24:24], RedirectTC: d[24], RedirectSL: d[25] >> 4, RedirectFL: get24(d[25:28]) & 0xFFFFF,
		RedirectLID: be.Uint16(d[28:30]), RedirectPKey: be.Uint16(d[30:32]), Reserved: d[32],
		RedirectQP: get24(d[33:36]), RedirectQKey: be.Uint32(d[36:40]),
		TrapGID: d[40:56:56], TrapTC: d[56], TrapSL: d[57] >> 4, TrapFL: get24(d[57:60]) & 0xFFFFF,
		TrapLID: be.Uint16(d[60:62]), TrapPKey: be.Uint16(d[62:64]), TrapHL: d[64],
		TrapQP: get24(d[65:68]), TrapQKey: be.Uint32(d[68:72]),
	}
}

// MarshalTo writes the attribute into the first 72 bytes of d.
func (c *ClassPortInfo) MarshalTo(d []byte) error {
	if len(d) < ClassPortInfoLength {
		return fmt.Errorf("classportinfo: needs %d bytes, have %d", ClassPortInfoLength, len(d))
	}
	be := binary.BigEndian
	d[0], d[1] = c.BaseVersion, c.ClassVersion
	be.PutUint16(d[2:4], c.CapabilityMask)
	be.PutUint32(d[4:8], c.CapabilityMask2<<5|uint32(c.RespTimeValue&0x1F))
	if err := putBytes("classportinfo", "RedirectGID", d[8:24], c.RedirectGID); err != nil {
		return err
	}
	d[24] = c.RedirectTC
	put24(d[25:28], uint32(c.RedirectSL)<<20|c.RedirectFL&0xFFFFF)
	be.PutUint16(d[28:30], c.RedirectLID)
	be.PutUint16(d[30:32], c.RedirectPKey)
	d[32] = c.Reserved
	put24(d[33:36], c.RedirectQP)
	be.PutUint32(d[36:40], c.RedirectQKey)
	if err := putBytes("classportinfo", "TrapGID", d[40:56], c.TrapGID); err != nil {
		return err
	}
	d[56] = c.TrapTC
	put24(d[57:60], uint32(c.TrapSL)<<20|c.TrapFL&0xFFFFF)
	be.PutUint16(d[60:62], c.TrapLID)
	be.PutUint16(d[62:64], c.TrapPKey)
	d[64] = c.TrapHL
	put24(d[65:68], c.TrapQP)
	be.PutUint32(d[68:72], c.TrapQKey)
	return nil
}

// ClassPortInfo returns the ClassPortInfo an SA MAD carries.
func (s *SA) ClassPortInfo() (ClassPortInfo, bool) {
	if s.AttributeID != SAAttrClassPortInfo || len(s.Data) < ClassPortInfoLength {
		return ClassPortInfo{}, false
	}
	return DecodeClassPortInfo(s.Data), true
}

// ClassPortInfo returns the ClassPortInfo a PerfMgt MAD carries.
func (p *PerfMgt) ClassPortInfo() (ClassPortInfo, bool) {
	if p.AttributeID != PerfAttrClassPortInfo || len(p.Data) < ClassPortInfoLength {
		return ClassPortInfo{}, false
	}
	return DecodeClassPortInfo(p.Data), true
}
