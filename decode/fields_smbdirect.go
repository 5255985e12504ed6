package decode

import (
	"github.com/ibwire/ibwire/layers"
)

// smbDirectFields are Wireshark 4.0's smb_direct.* fields for what the SMB
// Direct analysis (smbdirect.go) found in a packet, with tshark's names,
// types and bases; plus ibwire.smb2.* for what tshark spreads over the
// SMB2 dissector's many fields: each command's name, its MessageId, the
// request a response answers and the time between them. Every getter
// starts with one check, p.Analysis.SMBDirect != nil.
func smbDirectFields() []*Field {
	S := func(p *Packet) *SMBDirectPacket { return p.Analysis.SMBDirect }
	msg := func(p *Packet) bool { s := S(p); return s != nil && s.HasMsg }
	kind := func(k layers.SMBDirectKind) func(*Packet) bool {
		return func(p *Packet) bool { return msg(p) && S(p).Msg.Kind == k }
	}
	negReq, negRsp, data := kind(layers.SMBDirectNegotiateRequest), kind(layers.SMBDirectNegotiateResponse), kind(layers.SMBDirectDataTransfer)
	negotiate := func(p *Packet) bool { return negReq(p) || negRsp(p) }
	credits := func(p *Packet) bool { return negRsp(p) || data(p) }
	u := func(name, title string, t FieldType, base Base, has func(*Packet) bool, get func(m *layers.SMBDirectMsg) uint64) *Field {
		return uintField(name, title, t, base, func(p *Packet) (uint64, bool) {
			if !has(p) {
				return 0, false
			}
			return get(&S(p).Msg), true
		})
	}
	fragments := func(p *Packet) bool { s := S(p); return s != nil && len(s.Fragments) > 1 }
	fragment := uintField("smb_direct.fragment", "SMB Direct Fragment", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
		if !fragments(p) {
			return 0, false
		}
		return uint64(S(p).Fragments[0]), true
	})
	fragment.nth = func(p *Packet, i int, v *Value) bool {
		if !fragments(p) || i >= len(S(p).Fragments) {
			return false
		}
		v.U = uint64(S(p).Fragments[i])
		return true
	}
	// The three messages are FT_NONE items that open subtrees; a field sits
	// under each message that carries it, as tshark's tree has it.
	const nReq, nRsp, nData = "smb_direct.negotiate_request", "smb_direct.negotiate_response", "smb_direct.data_message"
	under := func(f *Field, parents ...string) *Field {
		f.parent, f.alsoParents = parents[0], parents[1:]
		return f
	}
	flags := under(opens(u("smb_direct.flags", "Flags", FTUint16, BaseHex, data, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.Flags) })), nData)
	flags.shapeOf().suffix = func(buf []byte, v *Value, _ int) []byte {
		// As tshark's bitmask item, the line names the flags set.
		if v.U&layers.SMBDirectResponseRequested != 0 {
			buf = append(buf, ", ResponseRequested"...)
		}
		return buf
	}
	status := u("smb_direct.status", "Status", FTUint32, BaseHex, negRsp, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.Status) })
	status = withNames(status, ntStatusName, nil)
	return []*Field{
		protoField("smb_direct", "SMB-Direct (SMB RDMA Transport)", msg),
		opens(noneField(nReq, "NegotiateRequest", negReq)),
		opens(noneField(nRsp, "NegotiateResponse", negRsp)),
		opens(noneField(nData, "DataMessage", data)),
		under(u("smb_direct.version.min", "MinVersion", FTUint16, BaseHex, negotiate, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.MinVersion) }), nReq, nRsp),
		under(u("smb_direct.version.max", "MaxVersion", FTUint16, BaseHex, negotiate, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.MaxVersion) }), nReq, nRsp),
		under(u("smb_direct.version.negotiated", "NegotiatedVersion", FTUint16, BaseHex, negRsp, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.NegotiatedVersion) }), nRsp),
		under(u("smb_direct.credits.requested", "CreditsRequested", FTUint16, BaseDec, msg, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.CreditsRequested) }), nReq, nRsp, nData),
		under(u("smb_direct.credits.granted", "CreditsGranted", FTUint16, BaseDec, credits, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.CreditsGranted) }), nRsp, nData),
		under(status, nRsp),
		under(u("smb_direct.max_read_write_size", "MaxReadWriteSize", FTUint32, BaseDec, negRsp, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.MaxReadWriteSize) }), nRsp),
		under(u("smb_direct.preferred_send_size", "PreferredSendSize", FTUint32, BaseDec, negotiate, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.PreferredSendSize) }), nReq, nRsp),
		under(u("smb_direct.max_receive_size", "MaxReceiveSize", FTUint32, BaseDec, negotiate, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.MaxReceiveSize) }), nReq, nRsp),
		under(u("smb_direct.max_fragmented_size", "MaxFragmentedSize", FTUint32, BaseDec, negotiate, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.MaxFragmentedSize) }), nReq, nRsp),
		flags,
		withBoolBits(boolField("smb_direct.flags.response_requested", "ResponseRequested", func(p *Packet) (bool, bool) {
			return data(p) && S(p).Msg.Flags&layers.SMBDirectResponseRequested != 0, data(p)
		}), 16, layers.SMBDirectResponseRequested),
		under(u("smb_direct.remaining_length", "RemainingLength", FTUint32, BaseDec, data, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.RemainingLength) }), nData),
		under(u("smb_direct.data_offset", "DataOffset", FTUint32, BaseDec, data, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.DataOffset) }), nData),
		under(u("smb_direct.data_length", "DataLength", FTUint32, BaseDec, data, func(m *layers.SMBDirectMsg) uint64 { return uint64(m.DataLength) }), nData),
		noneField("smb_direct.fragments", "Reassembled SMB Direct Fragments", fragments),
		fragment,
		uintField("smb_direct.fragment.count", "Fragment count", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			if !fragments(p) {
				return 0, false
			}
			return uint64(len(S(p).Fragments)), true
		}),
		uintField("smb_direct.reassembled.length", "Reassembled SMB Direct length", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			if !fragments(p) {
				return 0, false
			}
			return uint64(S(p).FragmentBytes), true
		}),
	}
}

// smb2Fields are ibwire.smb2.*: per SMB2 header a message starts with (one
// occurrence each for a compound), the command, its MessageId, whether it
// is a response, and for a response the request it answers and the
// latency.
func smb2Fields() []*Field {
	S := func(p *Packet) *SMBDirectPacket { return p.Analysis.SMBDirect }
	has := func(p *Packet) bool { s := S(p); return s != nil && s.NSMB2 > 0 }
	// each makes a field with one occurrence per SMB2 header.
	each := func(f *Field, get func(s *SMBDirectPacket, i int, v *Value) bool) *Field {
		f.get = func(p *Packet, v *Value) bool { return has(p) && get(S(p), 0, v) }
		f.nth = func(p *Packet, i int, v *Value) bool {
			s := S(p)
			return s != nil && i < s.NSMB2 && get(s, i, v)
		}
		return f
	}
	return []*Field{
		protoField("ibwire.smb2", "SMB2 over SMB Direct", has),
		each(&Field{Name: "ibwire.smb2.command", Title: "Command", Type: FTString}, func(s *SMBDirectPacket, i int, v *Value) bool {
			v.S = s.SMB2[i].Command.String()
			return true
		}),
		each(&Field{Name: "ibwire.smb2.msg_id", Title: "Message ID", Type: FTUint64, Base: BaseDec}, func(s *SMBDirectPacket, i int, v *Value) bool {
			v.U = s.SMB2[i].MessageID
			return true
		}),
		each(&Field{Name: "ibwire.smb2.response", Title: "Response", Type: FTBool}, func(s *SMBDirectPacket, i int, v *Value) bool {
			v.U = 0
			if s.SMB2[i].Response() {
				v.U = 1
			}
			return true
		}),
		each(withNames(&Field{Name: "ibwire.smb2.nt_status", Title: "NT Status", Type: FTUint32, Base: BaseHex}, ntStatusName, nil),
			func(s *SMBDirectPacket, i int, v *Value) bool {
				v.U = uint64(s.SMB2[i].Status)
				return s.SMB2[i].Response()
			}),
		uintField("ibwire.smb2.outstanding", "Requests outstanding on the connection", FTUint16, BaseDec, func(p *Packet) (uint64, bool) {
			if !has(p) {
				return 0, false
			}
			return uint64(S(p).Outstanding), true
		}),
		each(&Field{Name: "ibwire.smb2.request_frame", Title: "Request in frame", Type: FTUint32, Base: BaseDec}, func(s *SMBDirectPacket, i int, v *Value) bool {
			v.U = uint64(s.Req[i].Frame)
			return s.Matched[i]
		}),
		each(&Field{Name: "ibwire.smb2.latency", Title: "Request to response", Type: FTRelTime}, func(s *SMBDirectPacket, i int, v *Value) bool {
			v.D = s.Latency[i]
			return s.Matched[i]
		}),
	}
}

// ntStatusName names an NTSTATUS for the tree (layers.NTStatusName).
func ntStatusName(v uint64) (string, bool) { return layers.NTStatusName(uint32(v)) }
