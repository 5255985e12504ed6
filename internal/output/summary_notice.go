package output

import (
	"strconv"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// appendNotice says what a trap or a forwarded notice reports, after the
// method and attribute: the trap number and its name, then the subject of
// the trap under the names of its IBTA (and tshark) fields, LIDs in
// decimal as the line's other LIDs:
//
//	SubnTrap(Notice) lid 1 trap 128 (link state change) lidaddr 3
//	SubnTrap(Notice) lid 1 trap 257 (bad P_Key) key 0x8001ffff lidaddr1 3 qp1 0x000012 lidaddr2 4 qp2 0x000034 sl 0
//	SubnAdmReport(Notice) trap 64 (GID in service) gid fe80::2
//
// A vendor notice gives its device ID.
func appendNotice(buf []byte, p *decode.Packet) []byte {
	m := &p.Headers.MAD
	var n layers.Notice
	ok := false
	switch m.MgmtClass {
	case layers.MgmtClassSubnLID:
		n, ok = m.SMP.Notice()
	case layers.MgmtClassSubnDirected:
		n, ok = m.SMPDirected.Notice()
	case layers.MgmtClassSubnAdm:
		n, ok = m.SA.Notice()
	}
	if !ok {
		return buf
	}
	trap, generic := n.Trap()
	if !generic {
		buf = append(buf, " vendor device "...)
		return appendHex(buf, uint64(n.TrapNumberDeviceID), 4)
	}
	buf = append(buf, " trap "...)
	buf = strconv.AppendUint(buf, uint64(trap), 10)
	if trap.Known() {
		buf = append(buf, " ("...)
		buf = append(buf, trap.String()...)
		buf = append(buf, ')')
	}
	d := n.TrapDetails()
	dec := func(buf []byte, name string, u uint64) []byte {
		buf = append(buf, ' ')
		buf = append(buf, name...)
		buf = append(buf, ' ')
		return strconv.AppendUint(buf, u, 10)
	}
	hex := func(buf []byte, name string, u uint64, width int) []byte {
		buf = append(buf, ' ')
		buf = append(buf, name...)
		buf = append(buf, ' ')
		return appendHex(buf, u, width)
	}
	has := func(f layers.TrapField) bool { return d.Fields&f != 0 }
	if has(layers.TrapFieldGIDAddr) {
		buf = append(buf, " gid "...)
		buf = appendIP(buf, d.GIDAddr)
	}
	if has(layers.TrapFieldCompMask) {
		buf = hex(buf, "comp_mask", d.CompMask, 16)
	}
	if has(layers.TrapFieldLIDAddr) {
		buf = dec(buf, "lidaddr", uint64(d.LIDAddr))
	}
	if has(layers.TrapFieldPortNo) && !has(layers.TrapFieldSwLIDAddr) {
		buf = dec(buf, "port", uint64(d.PortNo))
	}
	if has(layers.TrapFieldCapabilityMask) {
		buf = hex(buf, "capmask", uint64(d.CapabilityMask), 8)
	}
	if has(layers.TrapFieldSystemImageGUID) {
		buf = hex(buf, "sysimageguid", d.SystemImageGUID, 16)
	}
	if has(layers.TrapFieldMKey) {
		buf = hex(buf, "mkey", d.MKey, 16)
		buf = append(buf, " method "...)
		buf = append(buf, d.Method.String()...)
		buf = hex(buf, "attr", uint64(d.AttributeID), 4)
	}
	if has(layers.TrapFieldKey) {
		buf = hex(buf, "key", uint64(d.Key), 8)
	}
	if has(layers.TrapFieldPKey) {
		buf = hex(buf, "pkey", uint64(d.PKey), 4)
	}
	if has(layers.TrapFieldLIDAddr1) {
		buf = dec(buf, "lidaddr1", uint64(d.LIDAddr1))
		buf = hex(buf, "qp1", uint64(d.QP1), 6)
		buf = dec(buf, "lidaddr2", uint64(d.LIDAddr2))
		buf = hex(buf, "qp2", uint64(d.QP2), 6)
		buf = dec(buf, "sl", uint64(d.SL))
	}
	if has(layers.TrapFieldSwLIDAddr) {
		buf = dec(buf, "swlidaddr", uint64(d.SwLIDAddr))
		buf = dec(buf, "port", uint64(d.PortNo))
	}
	return buf
}
