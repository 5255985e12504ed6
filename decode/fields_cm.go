package decode

import (
	"github.com/ibwire/ibwire/layers"
)

// cmNode is the item tshark files a CM message's fields under: the MAD's
// data, which it titles "CM ConnectRequest" and so on. Its value is the 232
// bytes of the message.
const cmNode = "infiniband.smplid.smpdata"

// cmFields are Wireshark's infiniband.cm.* fields (tshark 4.0 dissects
// REQ, REP, RTU, REJ, DREQ and DREP), in the order of its tree, with its
// names, types and bases; the values come from the CM body layers already
// decoded, so a field costs nothing until it is asked for.
func cmFields() []*Field {
	isCM := func(p *Packet) bool {
		return p.has&hasMAD != 0 && p.Headers.MAD.MgmtClass == layers.MgmtClassCM && p.Headers.MAD.CM.Contents != nil
	}
	C := func(p *Packet) *layers.CM { return &p.Headers.MAD.CM }
	is := func(a layers.CMAttribute) func(p *Packet) bool {
		return func(p *Packet) bool { return isCM(p) && C(p).AttributeID == a }
	}
	req, rep, rtu, rej, dreq, drep := is(layers.CMAttrREQ), is(layers.CMAttrREP), is(layers.CMAttrRTU),
		is(layers.CMAttrREJ), is(layers.CMAttrDREQ), is(layers.CMAttrDREP)
	R := func(p *Packet) *layers.CMReq { return &C(p).REQ }
	ipcm := func(p *Packet) bool { return req(p) && R(p).ServiceID.IsIPCM() }
	noIPCM := func(p *Packet) bool { return req(p) && !R(p).ServiceID.IsIPCM() }
	ipcm4 := func(p *Packet) bool { return ipcm(p) && R(p).IPCM.IPVersion == 4 }
	ipcm6 := func(p *Packet) bool { return ipcm(p) && R(p).IPCM.IPVersion != 4 }
	// tshark shows the primary path's GIDs as IPv4 addresses (their last
	// four bytes) when the packet's destination address is IPv4: RoCEv2 over IPv4.
	gid4 := func(p *Packet) bool { return req(p) && p.has&hasIPv4 != 0 }
	gid6 := func(p *Packet) bool { return req(p) && p.has&hasIPv4 == 0 }
	P := func(p *Packet) *layers.CMRep { return &C(p).REP }
	J := func(p *Packet) *layers.CMRej { return &C(p).REJ }

	u := func(name, title string, t FieldType, has func(*Packet) bool, get func(*Packet) uint64) *Field {
		f := uintField(name, title, t, BaseHex, func(p *Packet) (uint64, bool) {
			if !has(p) {
				return 0, false
			}
			return get(p), true
		})
		f.parent = cmNode
		return f
	}
	u8 := func(name, title string, has func(*Packet) bool, get func(*Packet) uint8) *Field {
		return u(name, title, FTUint8, has, func(p *Packet) uint64 { return uint64(get(p)) })
	}
	b := func(name, title string, t FieldType, has func(*Packet) bool, get func(*Packet) []byte) *Field {
		f := bytesField(name, title, t, func(p *Packet) ([]byte, bool) {
			if !has(p) {
				return nil, false
			}
			return get(p), true
		})
		f.parent = cmNode
		return f
	}
	// reserved is the message's reserved span i, where the tree shows it.
	reserved := func(has func(p *Packet) bool, i int) *Field {
		return reservedItem(cmNode, func(p *Packet) []byte {
			if !has(p) {
				return nil
			}
			return C(p).ReservedBytes(i)
		})
	}
	flag := func(v bool) uint8 {
		if v {
			return 1
		}
		return 0
	}
	// path builds the fields of the primary or alternate path of a REQ.
	type pathNames struct{ prefix, title string }
	path := func(n pathNames, get func(p *Packet) *layers.CMPath) []*Field {
		x, t := "infiniband.cm.req."+n.prefix+"_", n.title+" "
		var gids []*Field
		if n.prefix == "prim" {
			gids = []*Field{
				b(x+"localgid", t+"Local Port GID", FTIPv6, gid6, func(p *Packet) []byte { return get(p).LocalGID }),
				b(x+"remotegid", t+"Remote Port GID", FTIPv6, gid6, func(p *Packet) []byte { return get(p).RemoteGID }),
				b(x+"localgid_ipv4", t+"Local Port GID", FTIPv4, gid4, func(p *Packet) []byte { return get(p).LocalGID[12:] }),
				b(x+"remotegid_ipv4", t+"Remote Port GID", FTIPv4, gid4, func(p *Packet) []byte { return get(p).RemoteGID[12:] }),
			}
		} else {
			gids = []*Field{
				b(x+"localgid", t+"Local Port GID", FTBytes, req, func(p *Packet) []byte { return get(p).LocalGID }),
				b(x+"remotegid", t+"Remote Port GID", FTBytes, req, func(p *Packet) []byte { return get(p).RemoteGID }),
			}
		}
		lids := []*Field{
			withBase(u(x+"locallid", t+"Local Port LID", FTUint16, req, func(p *Packet) uint64 { return uint64(get(p).LocalLID) }), BaseDec),
			withBase(u(x+"remotelid", t+"Remote Port LID", FTUint16, req, func(p *Packet) uint64 { return uint64(get(p).RemoteLID) }), BaseDec),
		}
		reserved1 := withMask(u8(x+"reserved1", "Reserved", req, func(p *Packet) uint8 { return get(p).Reserved1 }), 0x07)
		rest := []*Field{
			withMask(u(x+"flowlabel", t+"Flow Label", FTUint32, req, func(p *Packet) uint64 { return uint64(get(p).FlowLabel) }), 0xfffff000),
			withMask(u(x+"reserved0", "Reserved", FTUint32, req, func(p *Packet) uint64 { return uint64(get(p).Reserved0) }), 0xfc0),
			withMask(u(x+"pktrate", t+"Packet Rate", FTUint32, req, func(p *Packet) uint64 { return uint64(get(p).PacketRate) }), 0x3f),
			u8(x+"tfcclass", t+"Traffic Class", req, func(p *Packet) uint8 { return get(p).TrafficClass }),
			u8(x+"hoplim", t+"Hop Limit", req, func(p *Packet) uint8 { return get(p).HopLimit }),
			withMask(u8(x+"sl", t+"SL", req, func(p *Packet) uint8 { return get(p).SL }), 0xf0),
			withMask(u8(x+"subnetlocal", t+"Subnet Local", req, func(p *Packet) uint8 { return flag(get(p).SubnetLocal) }), 0x08),
			reserved1,
			withMask(u8(x+"localacktout", t+"Local ACK Timeout", req, func(p *Packet) uint8 { return get(p).LocalACKTimeout }), 0xf8),
		}
		if n.prefix == "prim" {
			rest = append(rest, withMask(u8(x+"reserved2", "Reserved", req, func(p *Packet) uint8 { return get(p).Reserved2 }), 0x07))
		} else {
			// Wireshark registers the alternate path's last reserved bits
			// under alt_reserved1 too: the field has two values, the
			// second shown after the Local ACK Timeout.
			second := withMask(u8(reserved1.Name, "Reserved", req, func(p *Packet) uint8 { return get(p).Reserved2 }), 0x07)
			reserved1.second = second.get
			second.shapeOf().treeOnly = true
			rest = append(rest, second)
		}
		return append(append(lids, gids...), rest...)
	}

	fields := []*Field{
		nodeField(cmNode, "SMP Data", func(p *Packet) ([]byte, bool) { return C(p).Contents, isCM(p) }),

		// REQ (ConnectRequest)
		u("infiniband.cm.req", "Local Communication ID", FTUint32, req, func(p *Packet) uint64 { return uint64(R(p).LocalCommID) }),
		reserved(req, 0),
		withLabel(opens(u("infiniband.cm.req.serviceid", "ServiceID", FTUint64, req, func(p *Packet) uint64 { return uint64(R(p).ServiceID) })),
			func(buf []byte, p *Packet, _ *Value) ([]byte, bool) {
				return append(buf, "IP CM ServiceID"...), R(p).ServiceID.IsIPCM()
			}),
		b("infiniband.cm.req.serviceid.prefix", "Prefix", FTBytes, ipcm, func(p *Packet) []byte { return C(p).ServiceIDPrefix() }),
		u8("infiniband.cm.req.serviceid.protocol", "Protocol", ipcm, func(p *Packet) uint8 { return R(p).ServiceID.Protocol() }),
		u("infiniband.cm.req.serviceid.dport", "Destination Port", FTUint16, ipcm, func(p *Packet) uint64 { return uint64(R(p).ServiceID.Port()) }),
		u("infiniband.cm.req.localcaguid", "Local CA GUID", FTUint64, req, func(p *Packet) uint64 { return R(p).LocalCAGUID }),
		reserved(req, 1),
		u("infiniband.cm.req.localqkey", "Local Q_Key", FTUint32, req, func(p *Packet) uint64 { return uint64(R(p).LocalQKey) }),
		u("infiniband.cm.req.localqpn", "Local QPN", FTUint24, req, func(p *Packet) uint64 { return uint64(R(p).LocalQPN) }),
		u8("infiniband.cm.req.responderres", "Responder Resources", req, func(p *Packet) uint8 { return R(p).ResponderResources }),
		u("infiniband.cm.req.localeecn", "Local EECN", FTUint24, req, func(p *Packet) uint64 { return uint64(R(p).LocalEECN) }),
		u8("infiniband.cm.req.initdepth", "Initiator Depth", req, func(p *Packet) uint8 { return R(p).InitiatorDepth }),
		u("infiniband.cm.req.remoteeecn", "Remote EECN", FTUint24, req, func(p *Packet) uint64 { return uint64(R(p).RemoteEECN) }),
		withMask(u8("infiniband.cm.req.remoteresptout", "Remote CM Response Timeout", req, func(p *Packet) uint8 { return R(p).RemoteCMResponseTimeout }), 0xf8),
		withMask(u8("infiniband.cm.req.transpsvctype", "Transport Service Type", req, func(p *Packet) uint8 { return uint8(R(p).TransportServiceType) }), 0x06),
		withMask(u8("infiniband.cm.req.e2eflowctrl", "End-to-End Flow Control", req, func(p *Packet) uint8 { return flag(R(p).EndToEndFlowControl) }), 0x01),
		u("infiniband.cm.req.startpsn", "Starting PSN", FTUint24, req, func(p *Packet) uint64 { return uint64(R(p).StartingPSN) }),
		withMask(u8("infiniband.cm.req.localresptout", "Local CM Response Timeout", req, func(p *Packet) uint8 { return R(p).LocalCMResponseTimeout }), 0xf8),
		withMask(u8("infiniband.cm.req.retrcount", "Retry Count", req, func(p *Packet) uint8 { return R(p).RetryCount }), 0x07),
		u("infiniband.cm.req.pkey", "Partition Key", FTUint16, req, func(p *Packet) uint64 { return uint64(R(p).PKey) }),
		withMask(u8("infiniband.cm.req.pppmtu", "Path Packet Payload MTU", req, func(p *Packet) uint8 { return uint8(R(p).PathMTU) }), 0xf0),
		withMask(u8("infiniband.cm.req.rdcexist", "RDC Exists", req, func(p *Packet) uint8 { return flag(R(p).RDCExists) }), 0x08),
		withMask(u8("infiniband.cm.req.rnrretrcount", "RNR Retry Count", req, func(p *Packet) uint8 { return R(p).RNRRetryCount }), 0x07),
		withMask(u8("infiniband.cm.req.maxcmretr", "Max CM Retries", req, func(p *Packet) uint8 { return R(p).MaxCMRetries }), 0xf0),
		withMask(u8("infiniband.cm.req.srq", "SRQ", req, func(p *Packet) uint8 { return flag(R(p).SRQ) }), 0x08),
		withMask(u8("infiniband.cm.req.ext_transport", "Extended Transport", req, func(p *Packet) uint8 { return uint8(R(p).ExtendedTransportType) }), 0x07),
	}
	fields = append(fields, path(pathNames{"prim", "Primary"}, func(p *Packet) *layers.CMPath { return &R(p).Primary })...)
	fields = append(fields, path(pathNames{"alt", "Alternate"}, func(p *Packet) *layers.CMPath { return &R(p).Alternate })...)
	fields = append(fields,
		b("infiniband.cm.req.private", "PrivateData", FTBytes, noIPCM, func(p *Packet) []byte { return R(p).PrivateData }),
		withLabel(opens(b("infiniband.cm.req.ip_cm", "IP CM Request Msg", FTBytes, ipcm, func(p *Packet) []byte { return R(p).PrivateData })),
			func(buf []byte, _ *Packet, _ *Value) ([]byte, bool) {
				return append(buf, "IP CM Private Data"...), true
			}),
		withMask(u8("infiniband.cm.req.ip_cm.majv", "IP CM Major Version", ipcm, func(p *Packet) uint8 { return R(p).IPCM.MajorVersion }), 0xf0),
		withMask(u8("infiniband.cm.req.ip_cm.minv", "IP CM Minor Version", ipcm, func(p *Packet) uint8 { return R(p).IPCM.MinorVersion }), 0x0f),
		withMask(u8("infiniband.cm.req.ip_cm.ipv", "IP CM IP Version", ipcm, func(p *Packet) uint8 { return R(p).IPCM.IPVersion }), 0xf0),
		withMask(u8("infiniband.cm.req.ip_cm.reserved", "IP CM Reserved", ipcm, func(p *Packet) uint8 { return R(p).IPCM.Reserved }), 0x0f),
		u("infiniband.cm.req.ip_cm.sport", "IP CM Source Port", FTUint16, ipcm, func(p *Packet) uint64 { return uint64(R(p).IPCM.SrcPort) }),
		b("infiniband.cm.req.ip_cm.sip6", "IP CM Source IP", FTIPv6, ipcm6, func(p *Packet) []byte { return R(p).IPCM.SrcIP }),
		b("infiniband.cm.req.ip_cm.dip6", "IP CM Destination IP", FTIPv6, ipcm6, func(p *Packet) []byte { return R(p).IPCM.DstIP }),
		b("infiniband.cm.req.ip_cm.sip4", "IP CM Source IP", FTIPv4, ipcm4, func(p *Packet) []byte { return R(p).IPCM.SrcIP }),
		b("infiniband.cm.req.ip_cm.dip4", "IP CM Destination IP", FTIPv4, ipcm4, func(p *Packet) []byte { return R(p).IPCM.DstIP }),
		b("infiniband.cm.req.ip_cm.private", "IP CM Consumer PrivateData", FTBytes, ipcm, func(p *Packet) []byte { return R(p).IPCM.ConsumerPrivateData }),

		// REP (ConnectReply)
		u("infiniband.cm.rep", "Local Communication ID", FTUint32, rep, func(p *Packet) uint64 { return uint64(P(p).LocalCommID) }),
		u("infiniband.cm.rep.remotecommid", "Remote Communication ID", FTUint32, rep, func(p *Packet) uint64 { return uint64(P(p).RemoteCommID) }),
		u("infiniband.cm.rep.localqkey", "Local Q_Key", FTUint32, rep, func(p *Packet) uint64 { return uint64(P(p).LocalQKey) }),
		u("infiniband.cm.rep.localqpn", "Local QPN", FTUint24, rep, func(p *Packet) uint64 { return uint64(P(p).LocalQPN) }),
		reserved(rep, 0),
		u("infiniband.cm.rep.localeecn", "Local EE Context Number", FTUint24, rep, func(p *Packet) uint64 { return uint64(P(p).LocalEECN) }),
		reserved(rep, 1),
		u("infiniband.cm.rep.startpsn", "Starting PSN", FTUint24, rep, func(p *Packet) uint64 { return uint64(P(p).StartingPSN) }),
		reserved(rep, 2),
		u8("infiniband.cm.rep.respres", "Responder Resources", rep, func(p *Packet) uint8 { return P(p).ResponderResources }),
		u8("infiniband.cm.rep.initdepth", "Initiator Depth", rep, func(p *Packet) uint8 { return P(p).InitiatorDepth }),
		withMask(u8("infiniband.cm.rep.tgtackdelay", "Target ACK Delay", rep, func(p *Packet) uint8 { return P(p).TargetACKDelay }), 0xf8),
		withMask(u8("infiniband.cm.rep.failoveracc", "Failover Accepted", rep, func(p *Packet) uint8 { return uint8(P(p).FailoverAccepted) }), 0x06),
		withMask(u8("infiniband.cm.rep.e2eflowctrl", "End-To-End Flow Control", rep, func(p *Packet) uint8 { return flag(P(p).EndToEndFlowControl) }), 0x01),
		withMask(u8("infiniband.cm.rep.rnrretrcount", "RNR Retry Count", rep, func(p *Packet) uint8 { return P(p).RNRRetryCount }), 0xe0),
		withMask(u8("infiniband.cm.rep.srq", "SRQ", rep, func(p *Packet) uint8 { return flag(P(p).SRQ) }), 0x10),
		withMask(u8("infiniband.cm.rep.reserved", "Reserved", rep, func(p *Packet) uint8 { return P(p).Reserved27 }), 0x0f),
		u("infiniband.cm.rep.localcaguid", "Local CA GUID", FTUint64, rep, func(p *Packet) uint64 { return P(p).LocalCAGUID }),
		b("infiniband.cm.rep.private", "PrivateData", FTBytes, rep, func(p *Packet) []byte { return P(p).PrivateData }),

		// RTU (ReadyToUse)
		u("infiniband.cm.rtu.localcommid", "Local Communication ID", FTUint32, rtu, func(p *Packet) uint64 { return uint64(C(p).RTU.LocalCommID) }),
		u("infiniband.cm.rtu.remotecommid", "Remote Communication ID", FTUint32, rtu, func(p *Packet) uint64 { return uint64(C(p).RTU.RemoteCommID) }),
		b("infiniband.cm.rtu.private", "PrivateData", FTBytes, rtu, func(p *Packet) []byte { return C(p).RTU.PrivateData }),

		// REJ (ConnectReject)
		u("infiniband.cm.rej.localcommid", "Local Communication ID", FTUint32, rej, func(p *Packet) uint64 { return uint64(J(p).LocalCommID) }),
		u("infiniband.cm.rej.remotecommid", "Remote Communication ID", FTUint32, rej, func(p *Packet) uint64 { return uint64(J(p).RemoteCommID) }),
		withMask(u8("infiniband.cm.rej.msgrej", "Message REJected", rej, func(p *Packet) uint8 { return uint8(J(p).MessageRejected) }), 0xc0),
		withMask(u8("infiniband.cm.rej.reserved0", "Reserved", rej, func(p *Packet) uint8 { return J(p).Reserved8 }), 0x03),
		withMask(u8("infiniband.cm.rej.rejinfolen", "Reject Info Length", rej, func(p *Packet) uint8 { return J(p).RejectInfoLength }), 0xfe),
		withMask(u8("infiniband.cm.rej.reserved1", "Reserved", rej, func(p *Packet) uint8 { return J(p).Reserved9 }), 0x01),
		withNames(u("infiniband.cm.rej.reason", "Reason", FTUint16, rej, func(p *Packet) uint64 { return uint64(J(p).Reason) }),
			cmRejectReasonName, cmRejectReasonByName),
		b("infiniband.cm.rej.ari", "Additional Reject Information (ARI)", FTBytes, rej, func(p *Packet) []byte { return J(p).ARI }),
		b("infiniband.cm.rej.private", "PrivateData", FTBytes, rej, func(p *Packet) []byte { return J(p).PrivateData }),

		// DREQ (DisconnectRequest); Wireshark names its QPN field under req.
		u("infiniband.cm.dreq.localcommid", "Local Communication ID", FTUint32, dreq, func(p *Packet) uint64 { return uint64(C(p).DREQ.LocalCommID) }),
		u("infiniband.cm.dreq.remotecommid", "Remote Communication ID", FTUint32, dreq, func(p *Packet) uint64 { return uint64(C(p).DREQ.RemoteCommID) }),
		u("infiniband.cm.req.remoteqpneecn", "Remote QPN/EECN", FTUint24, dreq, func(p *Packet) uint64 { return uint64(C(p).DREQ.RemoteQPN) }),
		reserved(dreq, 0),
		b("infiniband.cm.dreq.private", "PrivateData", FTBytes, dreq, func(p *Packet) []byte { return C(p).DREQ.PrivateData }),

		// DREP (DisconnectReply), "drsp" to Wireshark
		u("infiniband.cm.drsp.localcommid", "Local Communication ID", FTUint32, drep, func(p *Packet) uint64 { return uint64(C(p).DREP.LocalCommID) }),
		u("infiniband.cm.drsp.remotecommid", "Remote Communication ID", FTUint32, drep, func(p *Packet) uint64 { return uint64(C(p).DREP.RemoteCommID) }),
		b("infiniband.cm.drsp.private", "PrivateData", FTBytes, drep, func(p *Packet) []byte { return C(p).DREP.PrivateData }),
	)
	return fields
}

// withMask gives a bit field its Wireshark bitmask.
func withMask(f *Field, mask uint64) *Field {
	f.shapeOf().mask = mask
	return f
}

// withBoolBits makes a boolean the bit mask of an integer of bits bits,
// as Wireshark's FT_BOOLEAN with a display width: the tree draws the bit
// pattern, -G fields gives the width.
func withBoolBits(f *Field, bits uint8, mask uint64) *Field {
	f.shapeOf().boolBits = bits
	return withMask(f, mask)
}

// opens makes the field head a subtree of the fields named under it.
func opens(f *Field) *Field {
	f.shapeOf().opens = true
	return f
}

// withLabel gives the field the -V line Wireshark writes for it, when
// label reports true.
func withLabel(f *Field, label func(buf []byte, p *Packet, v *Value) ([]byte, bool)) *Field {
	f.shapeOf().label = label
	return f
}

func withBase(f *Field, base Base) *Field {
	f.Base = base
	return f
}

// nodeField is a header or protocol of the tree whose -e value is its bytes,
// as tshark prints its FT_BYTES header items (infiniband.bth, .mad ...).
func nodeField(name, title string, get func(p *Packet) ([]byte, bool)) *Field {
	return &Field{Name: name, Title: title, Type: FTProtocol, node: true, get: func(p *Packet, v *Value) bool {
		b, ok := get(p)
		v.B = b
		return ok
	}}
}

func cmRejectReasonName(u uint64) (string, bool) {
	r := layers.CMRejectReason(u)
	return r.String(), u <= 0xFFFF && r.Known()
}

func cmRejectReasonByName(s string) (uint64, bool) {
	r, ok := layers.CMRejectReasonByName(s)
	return uint64(r), ok
}
