package output

import (
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// AppendInfo appends Wireshark's Info column for an IB packet: the opcode's
// OpCodeMap name and "QP=0x%06x ", with the NAK's error in brackets; MADs
// add their method and attribute; CM messages replace it with "CM: <name>".
func AppendInfo(buf []byte, p *decode.Packet) []byte {
	b := p.BTH()
	if b == nil {
		if p.HasMACControl() {
			return appendMACControlInfo(buf, &p.Headers.MACControl)
		}
		return buf
	}
	if p.HasMAD() && p.Headers.MAD.MgmtClass == layers.MgmtClassCM {
		return append(buf, p.Headers.MAD.Info()...) // CM replaces the column
	}
	e := b.Info()
	if e.Info == "Unknown OpCode" || !e.Known {
		buf = append(buf, "Unknown OpCode"...)
	} else {
		buf = append(append(buf, e.Info...), ' ')
	}
	buf = append(buf, "QP="...)
	buf = appendHex(buf, uint64(b.DestQP), 6)
	buf = append(buf, ' ')
	if b.HasETH(layers.HdrAETH) && b.AETH.Syndrome.IsNak() && e.WiresharkDissects() {
		buf = append(append(append(buf, '['), b.AETH.Syndrome.NAKCode().String()...), "] "...)
	}
	if p.HasMAD() {
		buf = append(buf, p.Headers.MAD.Info()...)
	}
	return buf
}

const hexDigits = "0123456789abcdef"

func appendHex(buf []byte, u uint64, width int) []byte {
	buf = append(buf, '0', 'x')
	for i := width - 1; i >= 0; i-- {
		buf = append(buf, hexDigits[(u>>(4*uint(i)))&0xF])
	}
	return buf
}
