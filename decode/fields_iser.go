package decode

import (
	"github.com/ibwire/ibwire/layers"
)

// iserFields are Wireshark 4.0's iser.* and iscsi.* fields for what the
// iSER analysis (iser.go) found in a packet, with tshark's names, types
// and bases, present on the PDUs tshark's iscsi dissector puts them on
// (RFC 7143's layout, the draft-era fields absent); plus ibwire.iscsi.*
// for the task matching: the task a response or an RDMA transfer belongs
// to, its SCSI command (CDB operation code, LBA, blocks) and latency.
// Every getter starts with one check, p.Analysis.ISER != nil.
func iserFields() []*Field {
	I := func(p *Packet) *ISERPacket { return p.Analysis.ISER }
	msg := func(p *Packet) bool {
		i := I(p)
		return i != nil && i.Kind == ISERMessage && (i.Err == nil || i.HasPDU)
	}
	ctrl := func(p *Packet) bool { return msg(p) && I(p).Hdr.Opcode == layers.ISERControl }
	hello := func(p *Packet) bool { return msg(p) && I(p).Hdr.Opcode == layers.ISERHello }
	helloReply := func(p *Packet) bool { return msg(p) && I(p).Hdr.Opcode == layers.ISERHelloReply }
	pdu := func(p *Packet) bool { i := I(p); return i != nil && i.HasPDU }
	op := func(ops ...layers.ISCSIOpcode) func(p *Packet) bool {
		var set [64]bool
		for _, o := range ops {
			set[o] = true
		}
		return func(p *Packet) bool { return pdu(p) && set[I(p).PDU.Opcode&0x3f] }
	}
	u := func(name, title string, t FieldType, base Base, has func(*Packet) bool, get func(*ISERPacket) uint64) *Field {
		return uintField(name, title, t, base, func(p *Packet) (uint64, bool) {
			if !has(p) {
				return 0, false
			}
			return get(I(p)), true
		})
	}
	flag := func(name, title string, has func(*Packet) bool, bit uint8, get func(*ISERPacket) uint8) *Field {
		return boolField(name, title, func(p *Packet) (bool, bool) {
			if !has(p) {
				return false, false
			}
			return get(I(p))&bit != 0, true
		})
	}
	// tfs draws a flag bit as tshark draws a boolean with true and false
	// strings: "1... .... = F: Final PDU in sequence".
	tfs := func(f *Field, mask uint8, set, clear string) *Field {
		title := f.Title
		return withLabel(withBoolBits(f, 8, uint64(mask)), func(buf []byte, _ *Packet, v *Value) ([]byte, bool) {
			var b uint8
			text := clear
			if v.U != 0 {
				b, text = mask, set
			}
			buf = appendBits8(buf, b, mask)
			buf = append(buf, " = "...)
			buf = append(buf, title...)
			buf = append(buf, ": "...)
			return append(buf, text...), true
		})
	}
	iflags := func(i *ISERPacket) uint8 { return i.Hdr.Flags }
	pflags := func(i *ISERPacket) uint8 { return i.PDU.Flags }

	const (
		nopOut   = layers.ISCSINOPOut
		cmd      = layers.ISCSISCSICommand
		tmf      = layers.ISCSITaskMgmtReq
		login    = layers.ISCSILoginReq
		text     = layers.ISCSITextReq
		dataOut  = layers.ISCSIDataOut
		logout   = layers.ISCSILogoutReq
		snack    = layers.ISCSISNACKReq
		nopIn    = layers.ISCSINOPIn
		resp     = layers.ISCSISCSIResponse
		tmfResp  = layers.ISCSITaskMgmtResp
		loginRsp = layers.ISCSILoginResp
		textRsp  = layers.ISCSITextResp
		dataIn   = layers.ISCSIDataIn
		logoutRs = layers.ISCSILogoutResp
		r2t      = layers.ISCSIR2T
		async    = layers.ISCSIAsyncMessage
		reject   = layers.ISCSIReject
	)
	// Which PDUs carry which BHS fields, as tshark's iscsi dissector adds them.
	iBit := op(nopOut, cmd, tmf, text, logout)
	flagsByte := op(cmd, resp, text, textRsp, dataOut, dataIn)
	ahsDSL := op(nopOut, nopIn, cmd, resp, tmf, login, loginRsp, text, textRsp, dataOut, dataIn, logout, logoutRs, snack, r2t, async, reject)
	itt := op(nopOut, nopIn, cmd, resp, tmf, tmfResp, login, loginRsp, text, textRsp, dataOut, dataIn, logout, logoutRs, snack, r2t)
	ttt := op(nopOut, nopIn, text, textRsp, dataOut, dataIn, snack, r2t)
	cmdSN := op(nopOut, cmd, tmf, login, text, logout)
	expStatSN := op(nopOut, cmd, tmf, login, text, dataOut, logout, snack)
	statSN := op(nopIn, resp, tmfResp, loginRsp, textRsp, dataIn, logoutRs, r2t, async, reject)
	dataSN := op(dataOut, dataIn, reject)
	bufOff := op(dataOut, dataIn, r2t)
	isLogin := op(login, loginRsp)
	isResp, isCmd, isDataIn, isText := op(resp), op(cmd), op(dataIn), op(login, loginRsp, text, textRsp)
	// padded: the PDUs whose data segment tshark shows with its padding
	// (a SCSI Response's sense data it hands to the SCSI dissector).
	padded := op(login, loginRsp, text, textRsp, nopOut, nopIn, cmd)
	dataInS := func(p *Packet) bool { return isDataIn(p) && I(p).PDU.Flags&0x01 != 0 }
	keyValues := func(p *Packet) bool { return isText(p) && len(I(p).KeyValues) > 0 }
	data := func(hf func(*Packet) bool) func(p *Packet) ([]byte, bool) {
		return func(p *Packet) ([]byte, bool) {
			if !hf(p) || len(I(p).PDU.Data) == 0 {
				return nil, false
			}
			return I(p).PDU.Data, true
		}
	}
	// kv returns key=value pair n of the data segment.
	kv := func(i *ISERPacket, n int) (string, bool) {
		if n >= len(i.KeyValues) {
			return "", false
		}
		return i.KeyValues[n], true
	}
	keyValue := &Field{Name: "iscsi.keyvalue", Title: "KeyValue", Type: FTString, get: func(p *Packet, v *Value) bool {
		if !keyValues(p) {
			return false
		}
		var ok bool
		v.S, ok = kv(I(p), 0)
		return ok
	}}
	keyValue.nth = func(p *Packet, n int, v *Value) bool {
		if !keyValues(p) {
			return false
		}
		var ok bool
		v.S, ok = kv(I(p), n)
		return ok
	}
	isid := func(shift, bits uint) func(i *ISERPacket) uint64 {
		return func(i *ISERPacket) uint64 { return i.PDU.ISID() >> shift & (1<<bits - 1) }
	}
	fields := []*Field{
		protoField("iser", "iSCSI Extensions for RDMA", msg),
		withLabel(opens(u("iser.flags", "Flags", FTUint8, BaseHex, msg, func(i *ISERPacket) uint64 { return uint64(i.Hdr.Flags) })), iserFlagsLabel),
		withMask(withNames(u("iser.flags.opcode", "Opcode", FTUint8, BaseHex, msg, func(i *ISERPacket) uint64 { return uint64(i.Hdr.Opcode) }),
			func(v uint64) (string, bool) { o := layers.ISEROpcode(v); return o.String(), o.Known() }, nil), 0xf0),
		withBoolBits(flag("iser.flags.wsv", "WSV", ctrl, layers.ISERFlagWSV, iflags), 8, layers.ISERFlagWSV),
		withBoolBits(flag("iser.flags.rsv", "RSV", ctrl, layers.ISERFlagRSV, iflags), 8, layers.ISERFlagRSV),
		withBoolBits(flag("iser.flags.rej", "REJ", helloReply, layers.ISERFlagREJ, iflags), 8, layers.ISERFlagREJ),
		u("iser.write_stag", "Write STag", FTUint32, BaseHex, ctrl, func(i *ISERPacket) uint64 { return uint64(i.Hdr.WriteSTag) }),
		u("iser.write_base_offset", "Write Base Offset", FTUint64, BaseHex, ctrl, func(i *ISERPacket) uint64 { return i.Hdr.WriteVA }),
		u("iser.read_stag", "Read STag", FTUint32, BaseHex, ctrl, func(i *ISERPacket) uint64 { return uint64(i.Hdr.ReadSTag) }),
		u("iser.read_base_offset", "Read Base Offset", FTUint64, BaseHex, ctrl, func(i *ISERPacket) uint64 { return i.Hdr.ReadVA }),
		u("iser.ird", "iSER-IRD", FTUint16, BaseHex, hello, func(i *ISERPacket) uint64 { return uint64(i.Hdr.IRDORD) }),
		u("iser.ord", "iSER-ORD", FTUint16, BaseHex, helloReply, func(i *ISERPacket) uint64 { return uint64(i.Hdr.IRDORD) }),

		protoField("iscsi", "iSCSI", pdu),
		withMask(withNames(u("iscsi.opcode", "Opcode", FTUint8, BaseHex, pdu, func(i *ISERPacket) uint64 { return uint64(i.PDU.Opcode) }),
			func(v uint64) (string, bool) { o := layers.ISCSIOpcode(v); return o.String(), o.Known() }, nil), 0x3f),
		tfs(boolField("iscsi.I", "I", func(p *Packet) (bool, bool) { return iBit(p) && I(p).PDU.Immediate, iBit(p) }), 0x40,
			"Immediate delivery", "Queued delivery"),
		withLabel(opens(u("iscsi.flags", "Flags", FTUint8, BaseHex, flagsByte, func(i *ISERPacket) uint64 { return uint64(i.PDU.Flags) })), iscsiFlagsLabel),
		withParent("iscsi.flags", tfs(flag("iscsi.scsicommand.F", "F", op(cmd), layers.ISCSIFlagF, pflags), layers.ISCSIFlagF, "Final PDU in sequence", "Not final PDU in sequence")),
		withParent("iscsi.flags", tfs(flag("iscsi.scsicommand.R", "R", op(cmd), layers.ISCSIFlagR, pflags), layers.ISCSIFlagR,
			"Data will be read from target", "No data will be read from target")),
		withParent("iscsi.flags", tfs(flag("iscsi.scsicommand.W", "W", op(cmd), layers.ISCSIFlagW, pflags), layers.ISCSIFlagW,
			"Data will be written to target", "No data will be written to target")),
		withParent("iscsi.flags", withMask(withNames(u("iscsi.scsicommand.attr", "Attr", FTUint8, BaseHex, op(cmd), func(i *ISERPacket) uint64 { return uint64(i.PDU.Attr()) }),
			iscsiTaskAttrName, nil), 0x07)),
		withParent("iscsi.flags", tfs(flag("iscsi.scsiresponse.o", "o", op(resp), layers.ISCSIFlagBidi, pflags), layers.ISCSIFlagBidi,
			"Read part of bi-directional command overflowed", "No overflow of read part of bi-directional command")),
		withParent("iscsi.flags", tfs(flag("iscsi.scsiresponse.u", "u", op(resp), layers.ISCSIFlagBidU, pflags), layers.ISCSIFlagBidU,
			"Read part of bi-directional command underflowed", "No underflow of read part of bi-directional command")),
		withParent("iscsi.flags", tfs(flag("iscsi.scsiresponse.O", "O", op(resp), layers.ISCSIFlagO, pflags), layers.ISCSIFlagO,
			"Residual overflow occurred", "No residual overflow occurred")),
		withParent("iscsi.flags", tfs(flag("iscsi.scsiresponse.U", "U", op(resp), layers.ISCSIFlagU, pflags), layers.ISCSIFlagU,
			"Residual underflow occurred", "No residual underflow occurred")),
		u("iscsi.scsiresponse.response", "Response", FTUint8, BaseHex, op(resp), func(i *ISERPacket) uint64 { return uint64(i.PDU.B2) }),
		withNames(u("iscsi.scsiresponse.status", "Status", FTUint8, BaseHex, func(p *Packet) bool { return isResp(p) || dataInS(p) },
			func(i *ISERPacket) uint64 { return uint64(i.PDU.B3) }),
			func(v uint64) (string, bool) { return layers.SCSIStatus(v).Name() }, nil),
		withParent("iscsi.flags", tfs(flag("iscsi.text.F", "F", op(text, textRsp), layers.ISCSIFlagF, pflags), layers.ISCSIFlagF, "Final PDU in sequence", "Not final PDU in sequence")),
		withParent("iscsi.flags", tfs(flag("iscsi.text.C", "C", op(text, textRsp), layers.ISCSIFlagR, pflags), layers.ISCSIFlagR, "Text is incomplete", "Text is complete")),
		withParent("iscsi.flags", tfs(flag("iscsi.scsidata.F", "F", op(dataOut, dataIn), layers.ISCSIFlagF, pflags), layers.ISCSIFlagF, "Final PDU in sequence", "Not final PDU in sequence")),
		withParent("iscsi.flags", tfs(flag("iscsi.scsidata.A", "A", op(dataIn), layers.ISCSIFlagR, pflags), layers.ISCSIFlagR, "Acknowledge requested", "Acknowledge not requested")),
		withParent("iscsi.flags", tfs(flag("iscsi.scsidata.O", "O", op(dataIn), layers.ISCSIFlagO, pflags), layers.ISCSIFlagO, "Residual overflow", "No residual overflow")),
		withParent("iscsi.flags", tfs(flag("iscsi.scsidata.U", "U", op(dataIn), layers.ISCSIFlagU, pflags), layers.ISCSIFlagU, "Residual underflow", "No residual underflow")),
		withParent("iscsi.flags", tfs(flag("iscsi.scsidata.S", "S", op(dataIn), layers.ISCSIFlagS, pflags), layers.ISCSIFlagS,
			"Response contains SCSI status", "Response does not contain SCSI status")),
		tfs(flag("iscsi.login.T", "T", isLogin, layers.ISCSIFlagF, pflags), layers.ISCSIFlagF, "Transit to next login stage", "Stay in current login stage"),
		tfs(flag("iscsi.login.C", "C", isLogin, layers.ISCSIFlagR, pflags), layers.ISCSIFlagR, "Text is incomplete", "Text is complete"),
		withMask(withNames(u("iscsi.login.csg", "CSG", FTUint8, BaseHex, isLogin, func(i *ISERPacket) uint64 { return uint64(i.PDU.CSG()) }),
			iscsiLoginStageName, nil), 0x0c),
		withMask(withNames(u("iscsi.login.nsg", "NSG", FTUint8, BaseHex, func(p *Packet) bool { return isLogin(p) && I(p).PDU.Transit() },
			func(i *ISERPacket) uint64 { return uint64(i.PDU.NSG()) }), iscsiLoginStageName, nil), 0x03),
		u("iscsi.versionmax", "VersionMax", FTUint8, BaseHex, isLogin, func(i *ISERPacket) uint64 { return uint64(i.PDU.B2) }),
		u("iscsi.versionmin", "VersionMin", FTUint8, BaseHex, op(login), func(i *ISERPacket) uint64 { return uint64(i.PDU.B3) }),
		u("iscsi.versionactive", "VersionActive", FTUint8, BaseHex, op(loginRsp), func(i *ISERPacket) uint64 { return uint64(i.PDU.B3) }),
		u("iscsi.taskmanfun.function", "Function", FTUint8, BaseHex, op(tmf), func(i *ISERPacket) uint64 { return uint64(i.PDU.TaskMgmtFunction()) }),
		u("iscsi.taskmanfun.response", "Response", FTUint8, BaseHex, op(tmfResp), func(i *ISERPacket) uint64 { return uint64(i.PDU.B2) }),
		u("iscsi.logout.reason", "Reason", FTUint8, BaseHex, op(logout), func(i *ISERPacket) uint64 { return uint64(i.PDU.LogoutReason()) }),
		u("iscsi.logout.response", "Response", FTUint8, BaseHex, op(logoutRs), func(i *ISERPacket) uint64 { return uint64(i.PDU.B2) }),
		u("iscsi.reject.reason", "Reason", FTUint8, BaseHex, op(reject), func(i *ISERPacket) uint64 { return uint64(i.PDU.B2) }),
		u("iscsi.snack.type", "S", FTUint8, BaseDec, op(snack), func(i *ISERPacket) uint64 { return uint64(i.PDU.Flags & 0xf) }),
		u("iscsi.totalahslength", "TotalAHSLength", FTUint8, BaseDecHex, ahsDSL, func(i *ISERPacket) uint64 { return uint64(i.PDU.TotalAHSLength) }),
		u("iscsi.datasegmentlength", "DataSegmentLength", FTUint32, BaseDecHex, ahsDSL, func(i *ISERPacket) uint64 { return uint64(i.PDU.DataLength) }),
		opens(bytesField("iscsi.isid", "ISID", FTBytes, func(p *Packet) ([]byte, bool) {
			if !isLogin(p) {
				return nil, false
			}
			return I(p).isid[:], true
		})),
		withMask(withNames(u("iscsi.isid.t", "ISID_t", FTUint8, BaseHex, isLogin, func(i *ISERPacket) uint64 { return uint64(i.PDU.ISID()>>40&0xc0) >> 6 }),
			iscsiISIDTypeName, nil), 0xc0),
		withMask(u("iscsi.isid.a", "ISID_a", FTUint8, BaseHex, isLogin, isid(40, 6)), 0x3f),
		u("iscsi.isid.b", "ISID_b", FTUint16, BaseHex, isLogin, isid(24, 16)),
		u("iscsi.isid.c", "ISID_c", FTUint8, BaseHex, isLogin, isid(16, 8)),
		u("iscsi.isid.d", "ISID_d", FTUint16, BaseHex, isLogin, isid(0, 16)),
		u("iscsi.tsih", "TSIH", FTUint16, BaseHex, isLogin, func(i *ISERPacket) uint64 { return uint64(i.PDU.TSIH()) }),
		u("iscsi.initiatortasktag", "InitiatorTaskTag", FTUint32, BaseHex, itt, func(i *ISERPacket) uint64 { return uint64(i.PDU.ITT) }),
		u("iscsi.cid", "CID", FTUint16, BaseHex, op(login, logout), func(i *ISERPacket) uint64 { return uint64(i.PDU.CID()) }),
		u("iscsi.scsicommand.expecteddatatransferlength", "ExpectedDataTransferLength", FTUint32, BaseDecHex, op(cmd),
			func(i *ISERPacket) uint64 { return uint64(i.PDU.EDTL()) }),
		u("iscsi.taskmanfun.referencedtasktag", "ReferencedTaskTag", FTUint32, BaseHex, op(tmf), func(i *ISERPacket) uint64 { return uint64(i.PDU.ReferencedTaskTag()) }),
		u("iscsi.targettransfertag", "TargetTransferTag", FTUint32, BaseHex, ttt, func(i *ISERPacket) uint64 { return uint64(i.PDU.TTT()) }),
		u("iscsi.cmdsn", "CmdSN", FTUint32, BaseDecHex, cmdSN, func(i *ISERPacket) uint64 { return uint64(i.PDU.CmdSN()) }),
		u("iscsi.expstatsn", "ExpStatSN", FTUint32, BaseDecHex, expStatSN, func(i *ISERPacket) uint64 { return uint64(i.PDU.ExpStatSN()) }),
		u("iscsi.statsn", "StatSN", FTUint32, BaseDecHex, statSN, func(i *ISERPacket) uint64 { return uint64(i.PDU.StatSN()) }),
		u("iscsi.expcmdsn", "ExpCmdSN", FTUint32, BaseDecHex, statSN, func(i *ISERPacket) uint64 { return uint64(i.PDU.ExpCmdSN()) }),
		u("iscsi.maxcmdsn", "MaxCmdSN", FTUint32, BaseDecHex, statSN, func(i *ISERPacket) uint64 { return uint64(i.PDU.MaxCmdSN()) }),
		u("iscsi.refcmdsn", "RefCmdSN", FTUint32, BaseDecHex, op(tmf), func(i *ISERPacket) uint64 { return uint64(i.PDU.RefCmdSN()) }),
		u("iscsi.expdatasn", "ExpDataSN", FTUint32, BaseHex, op(resp), func(i *ISERPacket) uint64 { return uint64(i.PDU.ExpDataSN()) }),
		u("iscsi.r2tsn", "R2TSN", FTUint32, BaseDecHex, op(r2t), func(i *ISERPacket) uint64 { return uint64(i.PDU.DataSN()) }),
		u("iscsi.datasn", "DataSN", FTUint32, BaseDecHex, dataSN, func(i *ISERPacket) uint64 { return uint64(i.PDU.DataSN()) }),
		u("iscsi.bufferOffset", "BufferOffset", FTUint32, BaseDecHex, bufOff, func(i *ISERPacket) uint64 { return uint64(i.PDU.BufferOffset()) }),
		u("iscsi.desireddatalength", "DesiredDataLength", FTUint32, BaseDecHex, op(r2t), func(i *ISERPacket) uint64 { return uint64(i.PDU.DesiredDataLength()) }),
		u("iscsi.scsiresponse.bidireadresidualcount", "BidiReadResidualCount", FTUint32, BaseDecHex, op(resp),
			func(i *ISERPacket) uint64 { return uint64(i.PDU.BidiResidualCount()) }),
		u("iscsi.scsiresponse.residualcount", "ResidualCount", FTUint32, BaseDecHex, op(resp), func(i *ISERPacket) uint64 { return uint64(i.PDU.ResidualCount()) }),
		u("iscsi.scsidata.readresidualcount", "ResidualCount", FTUint32, BaseDecHex, op(dataIn), func(i *ISERPacket) uint64 { return uint64(i.PDU.ResidualCount()) }),
		u("iscsi.login.status", "Status", FTUint16, BaseHex, op(loginRsp), func(i *ISERPacket) uint64 { return uint64(i.PDU.LoginStatus()) }),
		u("iscsi.time2wait", "Time2Wait", FTUint16, BaseHex, op(logoutRs), func(i *ISERPacket) uint64 { return uint64(i.PDU.Time2Wait()) }),
		u("iscsi.time2retain", "Time2Retain", FTUint16, BaseHex, op(logoutRs), func(i *ISERPacket) uint64 { return uint64(i.PDU.Time2Retain()) }),
		u("iscsi.asyncevent", "AsyncEvent", FTUint8, BaseHex, op(async), func(i *ISERPacket) uint64 { return uint64(i.PDU.W[4] >> 24) }),
		u("iscsi.eventvendorcode", "EventVendorCode", FTUint8, BaseHex, op(async), func(i *ISERPacket) uint64 { return uint64(i.PDU.W[4] >> 16 & 0xff) }),
		u("iscsi.parameter1", "Parameter1", FTUint16, BaseHex, op(async), func(i *ISERPacket) uint64 { return uint64(i.PDU.W[4] & 0xffff) }),
		u("iscsi.parameter2", "Parameter2", FTUint16, BaseHex, op(async), func(i *ISERPacket) uint64 { return uint64(i.PDU.W[5] >> 16) }),
		u("iscsi.parameter3", "Parameter3", FTUint16, BaseHex, op(async), func(i *ISERPacket) uint64 { return uint64(i.PDU.W[5] & 0xffff) }),
		u("iscsi.snack.begrun", "BegRun", FTUint32, BaseHex, op(snack), func(i *ISERPacket) uint64 { return uint64(i.PDU.W[5]) }),
		u("iscsi.snack.runlength", "RunLength", FTUint32, BaseDecHex, op(snack), func(i *ISERPacket) uint64 { return uint64(i.PDU.W[6]) }),
		keyValue,
		bytesField("iscsi.padding", "Padding", FTBytes, func(p *Packet) ([]byte, bool) {
			if !padded(p) || len(I(p).PDU.Pad) == 0 || len(I(p).PDU.Data) == 0 {
				return nil, false
			}
			return I(p).PDU.Pad, true
		}),
		u("iscsi.scsiresponse.senselength", "SenseLength", FTUint16, BaseDecHex, func(p *Packet) bool {
			if !isResp(p) {
				return false
			}
			_, ok := I(p).PDU.SenseLength()
			return ok
		}, func(i *ISERPacket) uint64 { n, _ := i.PDU.SenseLength(); return uint64(n) }),
		bytesField("iscsi.pingdata", "PingData", FTBytes, data(op(nopOut, nopIn))),
		bytesField("iscsi.immediatedata", "ImmediateData", FTBytes, data(op(cmd))),
		u("iscsi.request_frame", "Request in", FTUint32, BaseDec, func(p *Packet) bool { return isResp(p) && I(p).HasTask },
			func(i *ISERPacket) uint64 { return uint64(i.Task.Frame) }),
		{Name: "iscsi.time", Title: "Time from request", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			if !isResp(p) || !I(p).HasTask {
				return false
			}
			v.D = I(p).Latency
			return true
		}},
		u("iscsi.response_frame", "Response in", FTUint32, BaseDec, func(p *Packet) bool { return isCmd(p) && I(p).ResponseFrame != 0 },
			func(i *ISERPacket) uint64 { return uint64(i.ResponseFrame) }),
	}
	return append(fields, ibwireISCSIFields(I)...)
}

var iserKindNames = [...]string{"", "message", "data"}

// appendBits8 writes a byte's bits under mask as the -V tree draws a bit
// field's ("..1. ...."), the others as dots.
func appendBits8(buf []byte, b, mask uint8) []byte {
	for i := 7; i >= 0; i-- {
		switch {
		case mask>>i&1 == 0:
			buf = append(buf, '.')
		case b>>i&1 != 0:
			buf = append(buf, '1')
		default:
			buf = append(buf, '0')
		}
		if i == 4 {
			buf = append(buf, ' ')
		}
	}
	return buf
}

// iserFlagsLabel is the iSER header's flags line as tshark writes it:
// "Flags: 0x14, Opcode: iSCSI Control-Type PDU, RSV" (the opcode, and
// the STag valid bits that are set).
func iserFlagsLabel(buf []byte, p *Packet, v *Value) ([]byte, bool) {
	h := &p.Analysis.ISER.Hdr
	buf = append(buf, "Flags: "...)
	buf = appendHexByte(buf, uint8(v.U))
	buf = append(buf, ", Opcode: "...)
	buf = append(buf, h.Opcode.String()...)
	if h.Opcode == layers.ISERControl {
		if h.WSV() {
			buf = append(buf, ", WSV"...)
		}
		if h.RSV() {
			buf = append(buf, ", RSV"...)
		}
	}
	return buf, true
}

// iscsiFlagsLabel is the BHS flags byte's line as tshark 4.0 writes it:
// a SCSI Command's and a SCSI Response's with the bits that are set and
// a command's task attribute ("Flags: 0xc1, F, R, Attr: Simple",
// "Flags: 0x82, U"), the other PDUs' with the byte alone.
func iscsiFlagsLabel(buf []byte, p *Packet, v *Value) ([]byte, bool) {
	pdu := &p.Analysis.ISER.PDU
	f := uint8(v.U)
	buf = append(buf, "Flags: "...)
	buf = appendHexByte(buf, f)
	var bits []struct {
		mask uint8
		name string
	}
	switch pdu.Opcode {
	case layers.ISCSISCSICommand:
		bits = iscsiCommandBits
	case layers.ISCSISCSIResponse:
		bits = iscsiResponseBits
	default:
		return buf, true
	}
	for _, b := range bits {
		if f&b.mask != 0 {
			buf = append(buf, ", "...)
			buf = append(buf, b.name...)
		}
	}
	if pdu.Opcode == layers.ISCSISCSICommand {
		buf = append(buf, ", Attr: "...)
		name, ok := iscsiTaskAttrName(uint64(pdu.Attr()))
		if !ok {
			name = "Unknown"
		}
		buf = append(buf, name...)
	}
	return buf, true
}

var (
	iscsiCommandBits = []struct {
		mask uint8
		name string
	}{{layers.ISCSIFlagF, "F"}, {layers.ISCSIFlagR, "R"}, {layers.ISCSIFlagW, "W"}}
	iscsiResponseBits = []struct {
		mask uint8
		name string
	}{{layers.ISCSIFlagBidi, "o"}, {layers.ISCSIFlagBidU, "u"}, {layers.ISCSIFlagO, "O"}, {layers.ISCSIFlagU, "U"}}
)

func appendHexByte(buf []byte, b uint8) []byte {
	const digits = "0123456789abcdef"
	return append(buf, '0', 'x', digits[b>>4], digits[b&15])
}

// iscsiTaskAttrName and iscsiLoginStageName are Wireshark 4.0's names of a
// SCSI Command's task attribute (RFC 7143 §11.4.1) and of a login stage
// (§11.12.3), as its -V tree shows them.
func iscsiTaskAttrName(v uint64) (string, bool) {
	names := [...]string{"Untagged", "Simple", "Ordered", "Head of Queue", "ACA"}
	if v < uint64(len(names)) {
		return names[v], true
	}
	return "", false
}

// iscsiISIDTypeName is Wireshark 4.0's name of an ISID's type (RFC 7143
// §11.12.5).
func iscsiISIDTypeName(v uint64) (string, bool) {
	names := [...]string{"IEEE OUI", "IANA Enterprise Number", "Random"}
	if v < uint64(len(names)) {
		return names[v], true
	}
	return "", false
}

func iscsiLoginStageName(v uint64) (string, bool) {
	switch v {
	case 0:
		return "Security negotiation", true
	case 1:
		return "Operational negotiation", true
	case 3:
		return "Full feature phase", true
	}
	return "", false
}

// ibwireISCSIFields are ibwire's per-task fields: on a request, its
// response and its RDMA data transfers alike, so one filter
// (ibwire.iscsi.itt == 0x1f) selects a task's whole exchange.
func ibwireISCSIFields(I func(p *Packet) *ISERPacket) []*Field {
	has := func(p *Packet) bool { i := I(p); return i != nil && i.HasTask }
	scsi := func(p *Packet) bool { return has(p) && I(p).Task.Opcode == layers.ISCSISCSICommand }
	rng := func(p *Packet) bool { return scsi(p) && I(p).Task.HasRange }
	u := func(name, title string, t FieldType, base Base, ok func(*Packet) bool, get func(*ISERPacket) uint64) *Field {
		return uintField(name, title, t, base, func(p *Packet) (uint64, bool) {
			if !ok(p) {
				return 0, false
			}
			return get(I(p)), true
		})
	}
	return []*Field{
		protoField("ibwire.iscsi", "iSER analysis", func(p *Packet) bool { i := I(p); return i != nil && i.Kind != ISERNone }),
		{Name: "ibwire.iscsi.kind", Title: "iSER packet", Type: FTString, get: func(p *Packet, v *Value) bool {
			i := I(p)
			if i == nil || i.Kind == ISERNone {
				return false
			}
			v.S = iserKindNames[i.Kind]
			return true
		}},
		u("ibwire.iscsi.itt", "Initiator Task Tag of the task", FTUint32, BaseHex, has, func(i *ISERPacket) uint64 { return uint64(i.Task.ITT) }),
		{Name: "ibwire.iscsi.command", Title: "Command", Type: FTString, get: func(p *Packet, v *Value) bool {
			if !has(p) {
				return false
			}
			v.S = I(p).Task.Name()
			return true
		}},
		withNames(u("ibwire.iscsi.cdb_opcode", "SCSI operation code", FTUint8, BaseHex, scsi, func(i *ISERPacket) uint64 { return uint64(i.Task.CDBOpcode) }),
			func(v uint64) (string, bool) { return layers.SCSIOpcode(v).Name() }, nil),
		u("ibwire.iscsi.lba", "Logical block address", FTUint64, BaseDec, rng, func(i *ISERPacket) uint64 { return i.Task.LBA }),
		u("ibwire.iscsi.blocks", "Transfer length (blocks)", FTUint32, BaseDec, rng, func(i *ISERPacket) uint64 { return uint64(i.Task.Blocks) }),
		u("ibwire.iscsi.bytes", "Expected data transfer length", FTUint32, BaseDec, scsi, func(i *ISERPacket) uint64 { return uint64(i.Task.EDTL) }),
		u("ibwire.iscsi.request_frame", "Request in frame", FTUint32, BaseDec, has, func(i *ISERPacket) uint64 { return uint64(i.Task.Frame) }),
		u("ibwire.iscsi.outstanding", "Tasks outstanding on the connection", FTUint16, BaseDec,
			func(p *Packet) bool { i := I(p); return i != nil && i.Kind == ISERMessage && i.HasPDU && !i.Resent },
			func(i *ISERPacket) uint64 { return uint64(i.Outstanding) }),
		{Name: "ibwire.iscsi.latency", Title: "Request to response", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			i := I(p)
			if !has(p) || !i.HasPDU || !i.PDU.Opcode.FromTarget() || i.Latency == 0 && i.Task.Frame == 0 {
				return false
			}
			if r, _ := i.Task.Opcode.Response(); r != i.PDU.Opcode {
				return false
			}
			v.D = i.Latency
			return true
		}},
		{Name: "ibwire.iscsi.to_data", Title: "Command to first data", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			i := I(p)
			if i == nil || !i.HasToData {
				return false
			}
			v.D = i.ToData
			return true
		}},
		withNames(u("ibwire.iscsi.status", "SCSI status", FTUint8, BaseHex, func(p *Packet) bool {
			i := I(p)
			return i != nil && i.HasPDU && i.PDU.Opcode == layers.ISCSISCSIResponse
		}, func(i *ISERPacket) uint64 { return uint64(i.PDU.Status()) }),
			func(v uint64) (string, bool) { return layers.SCSIStatus(v).Name() }, nil),
	}
}
