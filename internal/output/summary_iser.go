package output

import (
	"strconv"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// appendISER summarizes an iSER message:
//
//	, iSER SCSI Command itt 0x11000000 READ(10) lba 0 blocks 8 length 4096, read stag 0x0000167d
//	, iSER SCSI Response itt 0x11000000 Good [READ(10), latency 1737 µs]
//	, iSER Login Command itt 0x00000000 CSG 1 NSG 3
//	, iSER Hello
func appendISER(buf []byte, i *decode.ISERPacket) []byte {
	buf = append(buf, ", iSER "...)
	if i.Err != nil && !i.HasPDU {
		return append(append(append(buf, "[malformed: "...), i.Err.Error()...), ']')
	}
	switch i.Hdr.Opcode {
	case layers.ISERHello:
		return append(buf, "Hello"...)
	case layers.ISERHelloReply:
		buf = append(buf, "HelloReply"...)
		if i.Hdr.Reject() {
			buf = append(buf, " reject"...)
		}
		return buf
	}
	u := &i.PDU
	buf = append(buf, u.Opcode.String()...)
	buf = append(buf, " itt "...)
	buf = appendHex(buf, uint64(u.ITT), 8)
	switch u.Opcode {
	case layers.ISCSISCSICommand:
		buf = append(buf, ' ')
		buf = append(buf, layers.SCSIOpcode(u.CDB[0]).String()...)
		if lba, n, ok := layers.CDBRange(u.CDB[:]); ok {
			buf = append(buf, " lba "...)
			buf = strconv.AppendUint(buf, lba, 10)
			buf = append(buf, " blocks "...)
			buf = strconv.AppendUint(buf, uint64(n), 10)
		}
		buf = append(buf, " length "...)
		buf = strconv.AppendUint(buf, uint64(u.EDTL()), 10)
		if i.Hdr.RSV() {
			buf = append(buf, ", read stag "...)
			buf = appendHex(buf, uint64(i.Hdr.ReadSTag), 8)
		}
		if i.Hdr.WSV() {
			buf = append(buf, ", write stag "...)
			buf = appendHex(buf, uint64(i.Hdr.WriteSTag), 8)
		}
	case layers.ISCSISCSIResponse:
		buf = append(buf, ' ')
		buf = append(buf, u.Status().String()...)
	case layers.ISCSILoginReq, layers.ISCSILoginResp:
		buf = append(buf, " CSG "...)
		buf = strconv.AppendUint(buf, uint64(u.CSG()), 10)
		if u.Transit() {
			buf = append(buf, " NSG "...)
			buf = strconv.AppendUint(buf, uint64(u.NSG()), 10)
		}
		if u.Opcode == layers.ISCSILoginResp && u.LoginStatus() != 0 {
			buf = append(buf, " status "...)
			buf = appendHex(buf, uint64(u.LoginStatus()), 4)
		}
	}
	if i.Err != nil {
		buf = append(append(append(buf, " [malformed: "...), i.Err.Error()...), ']')
	}
	if i.HasTask && u.Opcode.FromTarget() && i.Task.Frame != 0 {
		if r, _ := i.Task.Opcode.Response(); r == u.Opcode {
			buf = append(buf, " ["...)
			buf = append(buf, i.Task.Name()...)
			buf = append(buf, ", latency "...)
			buf = strconv.AppendInt(buf, i.Latency.Microseconds(), 10)
			buf = append(buf, " µs]"...)
		}
	}
	return buf
}

// appendISERData names the task an RDMA transfer moves data for:
// ", iSCSI READ(10) itt 0x0000001f data".
func appendISERData(buf []byte, i *decode.ISERPacket) []byte {
	buf = append(buf, ", iSCSI "...)
	buf = append(buf, i.Task.Name()...)
	buf = append(buf, " itt "...)
	buf = appendHex(buf, uint64(i.Task.ITT), 8)
	return append(buf, " data"...)
}
