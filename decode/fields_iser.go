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
		u("iser.flags", "Flags", FTUint8, BaseHex, msg, func(i *ISERPacket) uint64 { return uint64(i.Hdr.Flags) }),
		withNames(u("iser.flags.opcode", "Opcode", FTUint8, BaseHex, msg, func(i *ISERPacket) uint64 { return uint64(i.Hdr.Opcode) }),
			func(v uint64) (string, bool) { o := layers.ISEROpcode(v); return o.String(), o.Known() }, nil),
		flag("iser.flags.wsv", "WSV", ctrl, layers.ISERFlagWSV, iflags),
		flag("iser.flags.rsv", "RSV", ctrl, layers.ISERFlagRSV, iflags),
		flag("iser.flags.rej", "REJ", helloReply, layers.ISERFlagREJ, iflags),
		u("iser.write_stag", "Write STag", FTUint32, BaseHex, ctrl, func(i *ISERPacket) uint64 { return uint64(i.Hdr.WriteSTag) }),
		u("iser.write_base_offset", "Write Base Offset", FTUint64, BaseHex, ctrl, func(i *ISERPacket) uint64 { return i.Hdr.WriteVA }),
		u("iser.read_stag", "Read STag", FTUint32, BaseHex, ctrl, func(i *ISERPacket) uint64 { return uint64(i.Hdr.ReadSTag) }),
		u("iser.read_base_offset", "Read Base Offset", FTUint64, BaseHex, ctrl, func(i *ISERPacket) uint64 { return i.Hdr.ReadVA }),
		u("iser.ird", "iSER-IRD", FTUint16, BaseHex, hello, func(i *ISERPacket) uint64 { return uint64(i.Hdr.IRDORD) }),
		u("iser.ord", "iSER-ORD", FTUint16, BaseHex, helloReply, func(i *ISERPacket) uint64 { return uint64(i.Hdr.IRDORD) }),

		protoField("iscsi", "iSCSI", pdu),
		withNames(u("iscsi.opcode", "Opcode", FTUint8, BaseHex, pdu, func(i *ISERPacket) uint64 { return uint64(i.PDU.Opcode) }),
			func(v uint64) (string, bool) { o := layers.ISCSIOpcode(v); return o.String(), o.Known() }, nil),
		boolField("iscsi.I", "I", func(p *Packet) (bool, bool) { return iBit(p) && I(p).PDU.Immediate, iBit(p) }),
		u("iscsi.flags", "Flags", FTUint8, BaseHex, flagsByte, func(i *ISERPacket) uint64 { return uint64(i.PDU.Flags) }),
		flag("iscsi.scsicommand.F", "F", op(cmd), layers.ISCSIFlagF, pflags),
		flag("iscsi.scsicommand.R", "R", op(cmd), layers.ISCSIFlagR, pflags),
		flag("iscsi.scsicommand.W", "W", op(cmd), layers.ISCSIFlagW, pflags),
		u("iscsi.scsicommand.attr", "Attr", FTUint8, BaseHex, op(cmd), func(i *ISERPacket) uint64 { return uint64(i.PDU.Attr()) }),
		flag("iscsi.scsiresponse.o", "o", op(resp), layers.ISCSIFlagBidi, pflags),
		flag("iscsi.scsiresponse.u", "u", op(resp), layers.ISCSIFlagBidU, pflags),
		flag("iscsi.scsiresponse.O", "O", op(resp), layers.ISCSIFlagO, pflags),
		flag("iscsi.scsiresponse.U", "U", op(resp), layers.ISCSIFlagU, pflags),
		u("iscsi.scsiresponse.response", "Response", FTUint8, BaseHex, op(resp), func(i *ISERPacket) uint64 { return uint64(i.PDU.B2) }),
		withNames(u("iscsi.scsiresponse.status", "Status", FTUint8, BaseHex, func(p *Packet) bool { return isResp(p) || dataInS(p) },
			func(i *ISERPacket) uint64 { return uint64(i.PDU.B3) }),
			func(v uint64) (string, bool) { return layers.SCSIStatus(v).Name() }, nil),
		flag("iscsi.text.F", "F", op(text, textRsp), layers.ISCSIFlagF, pflags),
		flag("iscsi.text.C", "C", op(text, textRsp), layers.ISCSIFlagR, pflags),
		flag("iscsi.scsidata.F", "F", op(dataOut, dataIn), layers.ISCSIFlagF, pflags),
		flag("iscsi.scsidata.A", "A", op(dataIn), layers.ISCSIFlagR, pflags),
		flag("iscsi.scsidata.O", "O", op(dataIn), layers.ISCSIFlagO, pflags),
		flag("iscsi.scsidata.U", "U", op(dataIn), layers.ISCSIFlagU, pflags),
		flag("iscsi.scsidata.S", "S", op(dataIn), layers.ISCSIFlagS, pflags),
		flag("iscsi.login.T", "T", isLogin, layers.ISCSIFlagF, pflags),
		flag("iscsi.login.C", "C", isLogin, layers.ISCSIFlagR, pflags),
		u("iscsi.login.csg", "CSG", FTUint8, BaseHex, isLogin, func(i *ISERPacket) uint64 { return uint64(i.PDU.CSG()) }),
		u("iscsi.login.nsg", "NSG", FTUint8, BaseHex, func(p *Packet) bool { return isLogin(p) && I(p).PDU.Transit() },
			func(i *ISERPacket) uint64 { return uint64(i.PDU.NSG()) }),
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
		bytesField("iscsi.isid", "ISID", FTBytes, func(p *Packet) ([]byte, bool) {
			if !isLogin(p) {
				return nil, false
			}
			return I(p).isid[:], true
		}),
		u("iscsi.isid.t", "ISID_t", FTUint8, BaseHex, isLogin, func(i *ISERPacket) uint64 { return uint64(i.PDU.ISID()>>40&0xc0) >> 6 }),
		u("iscsi.isid.a", "ISID_a", FTUint8, BaseHex, isLogin, isid(40, 6)),
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
			func(p *Packet) bool { i := I(p); return i != nil && i.Kind == ISERMessage && i.HasPDU },
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
