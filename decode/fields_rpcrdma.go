package decode

import (
	"strconv"

	"github.com/ibwire/ibwire/layers"
)

// rpcrdmaFields are Wireshark 4.0's rpcordma.*, rpc.* and (a subset of)
// nfs.* fields for what the RPC-over-RDMA analysis (rpcrdma.go) found in
// a packet, with tshark's names, types and bases; plus ibwire.rpc.* for
// the call/reply matching tshark spreads over several fields (the
// procedure's name, the call a chunk transfer belongs to, the latency).
// Every getter starts with one check, p.Analysis.RPCRDMA != nil.
func rpcrdmaFields() []*Field {
	R := func(p *Packet) *RPCRDMAPacket { return p.Analysis.RPCRDMA }
	hdr := func(p *Packet) bool {
		r := R(p)
		return r != nil && r.Kind == RPCRDMAMessage && (r.Err == nil || r.HasRPC || r.Hdr.Length > 0)
	}
	lists := func(p *Packet) bool {
		if !hdr(p) {
			return false
		}
		switch R(p).Hdr.Proc {
		case layers.RPCRDMAMsg, layers.RPCRDMANoMsg, layers.RPCRDMAMsgP:
			return true
		}
		return false
	}
	isErr := func(p *Packet) bool { return hdr(p) && R(p).Hdr.Proc == layers.RPCRDMAError }
	msgp := func(p *Packet) bool { return hdr(p) && R(p).Hdr.Proc == layers.RPCRDMAMsgP }
	// rpc: the RPC message is shown where it is whole (a call that goes
	// on in a read chunk, on the READ response that completes it).
	rpc := func(p *Packet) bool { r := R(p); return r != nil && r.HasRPC && !r.InReadChunk }
	call := func(p *Packet) bool { return rpc(p) && R(p).RPC.Type == layers.RPCCall }
	reply := func(p *Packet) bool { return rpc(p) && R(p).RPC.Type == layers.RPCReply }
	// matched: a call, or a reply whose call is known.
	matched := func(p *Packet) bool { return call(p) || reply(p) && R(p).HasCall }
	accepted := func(p *Packet) bool { return reply(p) && R(p).RPC.ReplyStat == layers.RPCAccepted }
	prog := func(p *Packet, prog, vers uint32) bool {
		return matched(p) && R(p).Call.Program == prog && (vers == 0 || R(p).Call.Version == vers)
	}
	nfs := func(p *Packet) bool { return prog(p, layers.RPCProgNFS, 0) }
	nfs3 := func(p *Packet) bool { return prog(p, layers.RPCProgNFS, 3) }
	nfs4 := func(p *Packet) bool { return prog(p, layers.RPCProgNFS, 4) }
	// nfsLayer: tshark hands the RPC message to the NFS or NFSACL
	// dissector, which repeats the program version.
	nfsLayer := func(p *Packet) bool { return nfs(p) || prog(p, layers.RPCProgNFSACL, 0) }
	compound := func(p *Packet) bool { return call(p) && R(p).HasCompound }
	compoundRes := func(p *Packet) bool { return reply(p) && R(p).HasCompoundRes }
	status := func(p *Packet) bool { r := R(p); return r != nil && r.HasNFSStatus }
	u := func(name, title string, t FieldType, base Base, has func(*Packet) bool, get func(*RPCRDMAPacket) uint64) *Field {
		return uintField(name, title, t, base, func(p *Packet) (uint64, bool) {
			if !has(p) {
				return 0, false
			}
			return get(R(p)), true
		})
	}
	// nthU makes a field with one occurrence per item of a list.
	nthU := func(name, title string, t FieldType, base Base, get func(r *RPCRDMAPacket, i int) (uint64, bool)) *Field {
		f := uintField(name, title, t, base, func(p *Packet) (uint64, bool) {
			if r := R(p); r != nil && hdr(p) {
				return get(r, 0)
			}
			return 0, false
		})
		f.nth = func(p *Packet, i int, v *Value) bool {
			r := R(p)
			if r == nil || !hdr(p) {
				return false
			}
			var ok bool
			v.U, ok = get(r, i)
			return ok
		}
		return f
	}
	// seg returns segment i of the header's read, write and reply
	// lists, in wire order.
	seg := func(r *RPCRDMAPacket, i int) (*layers.RPCRDMASegment, bool) {
		h := &r.Hdr
		switch {
		case i < len(h.Reads):
			return &h.Reads[i], true
		case i < len(h.Reads)+len(h.Writes):
			return &h.Writes[i-len(h.Reads)], true
		case i < len(h.Reads)+len(h.Writes)+len(h.Reply):
			return &h.Reply[i-len(h.Reads)-len(h.Writes)], true
		}
		return nil, false
	}
	segField := func(name, title string, t FieldType, base Base, get func(s *layers.RPCRDMASegment) uint64) *Field {
		f := nthU(name, title, t, base, func(r *RPCRDMAPacket, i int) (uint64, bool) {
			s, ok := seg(r, i)
			if !ok {
				return 0, false
			}
			return get(s), true
		})
		f.shapeOf().row = rpcrdmaSegmentRow
		return f
	}
	position := nthU("rpcordma.position", "Position in XDR", FTUint32, BaseDec, func(r *RPCRDMAPacket, i int) (uint64, bool) {
		if i < len(r.Hdr.Reads) {
			return uint64(r.Hdr.Reads[i].Position), true
		}
		return 0, false
	})
	position.shapeOf().row = rpcrdmaSegmentRow
	// segmentCount: one per write chunk, then one for the reply chunk.
	segmentCount := nthU("rpcordma.segment_count", "Write chunk segment count", FTUint32, BaseDec, func(r *RPCRDMAPacket, i int) (uint64, bool) {
		h := &r.Hdr
		if i < h.WriteChunks {
			n := 0
			for _, s := range h.Writes {
				if int(s.Chunk) == i {
					n++
				}
			}
			return uint64(n), true
		}
		if i == h.WriteChunks && h.HasReply {
			return uint64(len(h.Reply)), true
		}
		return 0, false
	})
	authFlavor := uintField("rpc.auth.flavor", "Flavor", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
		if call(p) {
			return uint64(R(p).RPC.Cred.Flavor), true
		}
		if !accepted(p) {
			return 0, false
		}
		return uint64(R(p).RPC.Verf.Flavor), true
	})
	// The credential's, then (on a call) the verifier's: one row of the
	// -V tree each.
	authFlavor.nth = func(p *Packet, i int, v *Value) bool {
		if i != 1 || !call(p) {
			return false
		}
		v.U = uint64(R(p).RPC.Verf.Flavor)
		return true
	}
	authFlavor.shapeOf().row = rpcAuthRow
	authLength := uintField("rpc.auth.length", "Length", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
		if call(p) {
			return uint64(len(R(p).RPC.Cred.Body)), true
		}
		if !accepted(p) {
			return 0, false
		}
		return uint64(len(R(p).RPC.Verf.Body)), true
	})
	// The credential's, then (on a call) the verifier's: one row of the
	// -V tree each.
	authLength.nth = func(p *Packet, i int, v *Value) bool {
		if i != 1 || !call(p) {
			return false
		}
		v.U = uint64(len(R(p).RPC.Verf.Body))
		return true
	}
	authLength.shapeOf().row = rpcAuthRow
	unix := func(p *Packet) bool { return call(p) && R(p).RPC.Cred.Unix }
	progVersion := u("rpc.programversion", "Program Version", FTUint32, BaseDec, matched, func(r *RPCRDMAPacket) uint64 { return uint64(r.Call.Version) })
	progVersion.second = func(p *Packet, v *Value) bool {
		if !nfsLayer(p) {
			return false
		}
		v.U = uint64(R(p).Call.Version)
		return true
	}
	// The procedure's name depends on the program: the -V line says it
	// ("Procedure: GETACL (1)"), as Wireshark's does.
	procedure := u("rpc.procedure", "Procedure", FTUint32, BaseDec, matched, func(r *RPCRDMAPacket) uint64 { return uint64(r.Call.Procedure) })
	procedure.shapeOf().label = func(buf []byte, p *Packet, v *Value) ([]byte, bool) {
		c := &R(p).Call
		n, ok := layers.RPCProcedureName(c.Program, c.Version, c.Procedure)
		if !ok {
			return buf, false
		}
		buf = append(append(append(buf, "Procedure: "...), n...), " ("...)
		return append(strconv.AppendUint(buf, uint64(c.Procedure), 10), ')'), true
	}
	// An RDMA_NOMSG reply is reassembled from the reply chunk's WRITEs:
	// tshark lists them as its fragments.
	fragments := func(p *Packet) bool { r := R(p); return r != nil && r.HasRPC && r.FragmentCount > 0 }
	fragment := uintField("rpcordma.fragment", "RPCoRDMA fragment", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
		if !fragments(p) {
			return 0, false
		}
		return uint64(R(p).Fragments[0]), true
	})
	fragment.nth = func(p *Packet, i int, v *Value) bool {
		if !fragments(p) || i >= len(R(p).Fragments) {
			return false
		}
		v.U = uint64(R(p).Fragments[i])
		return true
	}
	fragment.shapeOf().row = rpcFragmentRow
	fields := []*Field{
		protoField("rpcordma", "RPC over RDMA", hdr),
		u("rpcordma.xid", "XID", FTUint32, BaseHex, hdr, func(r *RPCRDMAPacket) uint64 { return uint64(r.Hdr.XID) }),
		u("rpcordma.version", "Version", FTUint32, BaseDec, hdr, func(r *RPCRDMAPacket) uint64 { return uint64(r.Hdr.Version) }),
		u("rpcordma.flow_control", "Flow Control", FTUint32, BaseDec, hdr, func(r *RPCRDMAPacket) uint64 { return uint64(r.Hdr.Credits) }),
		withNames(u("rpcordma.msg_type", "Message Type", FTUint32, BaseDec, hdr, func(r *RPCRDMAPacket) uint64 { return uint64(r.Hdr.Proc) }),
			func(v uint64) (string, bool) { p := layers.RPCRDMAProc(v); return p.String(), p.Known() }, nil),
		u("rpcordma.reads_count", "Read list", FTUint32, BaseDec, lists, func(r *RPCRDMAPacket) uint64 { return uint64(len(r.Hdr.Reads)) }),
		u("rpcordma.writes_count", "Write list", FTUint32, BaseDec, lists, func(r *RPCRDMAPacket) uint64 { return uint64(r.Hdr.WriteChunks) }),
		u("rpcordma.reply_count", "Reply list", FTUint32, BaseDec, lists, func(r *RPCRDMAPacket) uint64 {
			if r.Hdr.HasReply {
				return 1
			}
			return 0
		}),
		segmentCount,
		position,
		segField("rpcordma.rdma_handle", "RDMA handle", FTUint32, BaseHex, func(s *layers.RPCRDMASegment) uint64 { return uint64(s.Handle) }),
		segField("rpcordma.rdma_length", "RDMA length", FTUint32, BaseDec, func(s *layers.RPCRDMASegment) uint64 { return uint64(s.Length) }),
		segField("rpcordma.rdma_offset", "RDMA offset", FTUint64, BaseHex, func(s *layers.RPCRDMASegment) uint64 { return s.Offset }),
		noneField("rpcordma.fragments", "Reassembled RPCoRDMA fragments", fragments),
		fragment,
		u("rpcordma.fragment.count", "Fragment count", FTUint32, BaseDec, fragments, func(r *RPCRDMAPacket) uint64 { return uint64(r.FragmentCount) }),
		u("rpcordma.reassembled.length", "Reassembled RPCoRDMA length", FTUint32, BaseDec, fragments, func(r *RPCRDMAPacket) uint64 { return uint64(r.FragmentBytes) }),
		bytesField("rpcordma.reassembled.data", "Reassembled RPCoRDMA data", FTBytes, func(p *Packet) ([]byte, bool) {
			if !fragments(p) {
				return nil, false
			}
			return R(p).Reassembled, true
		}),
		u("rpcordma.rdma_align", "RDMA align", FTUint32, BaseDec, msgp, func(r *RPCRDMAPacket) uint64 { return uint64(r.Hdr.Align) }),
		u("rpcordma.rdma_thresh", "RDMA threshold", FTUint32, BaseDec, msgp, func(r *RPCRDMAPacket) uint64 { return uint64(r.Hdr.Threshold) }),
		withNames(u("rpcordma.errcode", "Error code", FTUint32, BaseDec, isErr, func(r *RPCRDMAPacket) uint64 { return uint64(r.Hdr.ErrCode) }),
			func(v uint64) (string, bool) {
				e := layers.RPCRDMAErrCode(v)
				return e.String(), e == layers.RPCRDMAErrVers || e == layers.RPCRDMAErrChunk
			}, nil),
		u("rpcordma.vers_low", "Version low", FTUint32, BaseDec, func(p *Packet) bool { return isErr(p) && R(p).Hdr.ErrCode == layers.RPCRDMAErrVers },
			func(r *RPCRDMAPacket) uint64 { return uint64(r.Hdr.VersLow) }),
		u("rpcordma.vers_high", "Version high", FTUint32, BaseDec, func(p *Packet) bool { return isErr(p) && R(p).Hdr.ErrCode == layers.RPCRDMAErrVers },
			func(r *RPCRDMAPacket) uint64 { return uint64(r.Hdr.VersHigh) }),

		protoField("rpc", "Remote Procedure Call", rpc),
		u("rpc.xid", "XID", FTUint32, BaseHexDec, rpc, func(r *RPCRDMAPacket) uint64 { return uint64(r.RPC.XID) }),
		withNames(u("rpc.msgtyp", "Message Type", FTUint32, BaseDec, rpc, func(r *RPCRDMAPacket) uint64 { return uint64(r.RPC.Type) }),
			func(v uint64) (string, bool) { return layers.RPCMsgType(v).String(), v <= 1 }, nil),
		u("rpc.version", "RPC Version", FTUint32, BaseDec, call, func(r *RPCRDMAPacket) uint64 { return uint64(r.RPC.RPCVersion) }),
		withNames(u("rpc.program", "Program", FTUint32, BaseDec, matched, func(r *RPCRDMAPacket) uint64 { return uint64(r.Call.Program) }),
			func(v uint64) (string, bool) { return layers.RPCProgramName(uint32(v)) }, nil),
		progVersion,
		procedure,
		withNames(u("rpc.replystat", "Reply State", FTUint32, BaseDec, reply, func(r *RPCRDMAPacket) uint64 { return uint64(r.RPC.ReplyStat) }),
			func(v uint64) (string, bool) { return layers.RPCReplyStat(v).String(), v <= 1 }, nil),
		u("rpc.repframe", "Reply Frame", FTUint32, BaseDec, func(p *Packet) bool { return reply(p) && R(p).HasCall },
			func(r *RPCRDMAPacket) uint64 { return uint64(r.MsgFrame) }),
		// From the frame that showed the call (ibwire.rpc.latency is from
		// the call's SEND).
		{Name: "rpc.time", Title: "Time from request", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			if !reply(p) || !R(p).HasCall {
				return false
			}
			v.D = R(p).MsgLatency
			return true
		}},
		u("rpc.reqframe", "Request Frame", FTUint32, BaseDec, func(p *Packet) bool { return call(p) && R(p).ReplyFrame != 0 },
			func(r *RPCRDMAPacket) uint64 { return uint64(r.ReplyFrame) }),
		withNames(authFlavor, func(v uint64) (string, bool) {
			f := layers.RPCAuthFlavor(v)
			return f.String(), v <= 3 || v == 6
		}, nil),
		authLength,
		u("rpc.auth.stamp", "Stamp", FTUint32, BaseHex, unix, func(r *RPCRDMAPacket) uint64 { return uint64(r.RPC.Cred.Stamp) }),
		{Name: "rpc.auth.machinename", Title: "Machine Name", Type: FTString, get: func(p *Packet, v *Value) bool {
			if !unix(p) {
				return false
			}
			v.S = R(p).MachineName
			return true
		}},
		u("rpc.auth.uid", "UID", FTUint32, BaseDec, unix, func(r *RPCRDMAPacket) uint64 { return uint64(r.RPC.Cred.UID) }),
		u("rpc.auth.gid", "GID", FTUint32, BaseDec, unix, func(r *RPCRDMAPacket) uint64 { return uint64(r.RPC.Cred.GID) }),
		withNames(u("rpc.state_accept", "Accept State", FTUint32, BaseDec, accepted, func(r *RPCRDMAPacket) uint64 { return uint64(r.RPC.AcceptStat) }),
			func(v uint64) (string, bool) { return layers.RPCAcceptStat(v).String(), v <= 5 }, nil),
		withNames(u("rpc.state_reply", "Reject State", FTUint32, BaseDec, func(p *Packet) bool { return reply(p) && R(p).RPC.ReplyStat == layers.RPCDenied },
			func(r *RPCRDMAPacket) uint64 { return uint64(r.RPC.RejectStat) }),
			func(v uint64) (string, bool) { return layers.RPCRejectStat(v).String(), v <= 1 }, nil),

		protoField("nfs", "Network File System", nfs),
		withNames(u("nfs.procedure_v3", "V3 Procedure", FTUint32, BaseDec, nfs3, func(r *RPCRDMAPacket) uint64 { return uint64(r.Call.Procedure) }),
			func(v uint64) (string, bool) { return layers.RPCProcedureName(layers.RPCProgNFS, 3, uint32(v)) }, nil),
		withNames(u("nfs.procedure_v4", "V4 Procedure", FTUint32, BaseDec, nfs4, func(r *RPCRDMAPacket) uint64 { return uint64(r.Call.Procedure) }),
			func(v uint64) (string, bool) { return layers.RPCProcedureName(layers.RPCProgNFS, 4, uint32(v)) }, nil),
		withNames(u("nfs.status3", "Status", FTUint32, BaseDec, func(p *Packet) bool { return status(p) && nfs3(p) },
			func(r *RPCRDMAPacket) uint64 { return uint64(r.NFSStatus) }),
			func(v uint64) (string, bool) { return layers.NFS3Status(v).Name() }, nil),
		nfsStatus(R, status, compoundRes, "nfs.status", "Status"),
		withNames(nfsStatus(R, func(*Packet) bool { return false }, compoundRes, "nfs.nfsstat4", "Status"),
			func(v uint64) (string, bool) { return layers.NFS4Status(v).Name() }, nil),
		u("nfs.minorversion", "minorversion", FTUint32, BaseDec, compound, func(r *RPCRDMAPacket) uint64 { return uint64(r.Compound.MinorVersion) }),
		nfs4Opcode(R, compound, compoundRes),
		nfs4MainOpcode(R, compound, compoundRes),
	}
	return append(fields, ibwireRPCFields(R)...)
}

// rpcrdmaSegmentRow groups an RDMA segment's fields in the -V tree, and
// rpcAuthRow an opaque_auth's.
const (
	rpcrdmaSegmentRow = 200
	rpcAuthRow        = 201
	rpcFragmentRow    = 202
)

// nfs4Opcode is nfs.opcode: one occurrence per COMPOUND operation, of a
// call or of a reply.
func nfs4Opcode(R func(p *Packet) *RPCRDMAPacket, compound, compoundRes func(*Packet) bool) *Field {
	op := func(p *Packet, i int) (uint64, bool) {
		switch {
		case compound(p) && i < R(p).Compound.NOps:
			return uint64(R(p).Compound.Ops[i]), true
		case compoundRes(p) && i < R(p).CompoundRes.NOps:
			return uint64(R(p).CompoundRes.Ops[i]), true
		}
		return 0, false
	}
	f := withNames(uintField("nfs.opcode", "Opcode", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return op(p, 0) }),
		func(v uint64) (string, bool) { return layers.NFS4Op(v).Name() }, nil)
	f.nth = func(p *Packet, i int, v *Value) bool {
		var ok bool
		v.U, ok = op(p, i)
		return ok
	}
	return f
}

// nfs4OpTier ranks a COMPOUND's operations as Wireshark's NFS dissector
// does to name what the COMPOUND is about (nfs.main_opcode): the
// operations of the lowest tier; those not listed are tier 1, the work
// itself (READ, OPEN, LOOKUP, CLOSE, EXCHANGE_ID...), before ACCESS, then
// GETATTR and the PUTROOTFH/PUTPUBFH that start a walk, then the
// bookkeeping around them (SEQUENCE, PUTFH, GETFH, SAVEFH, RESTOREFH).
var nfs4OpTier = map[layers.NFS4Op]uint8{
	layers.NFS4OpAccess:  2,
	layers.NFS4OpGetAttr: 3, layers.NFS4OpPutPubFH: 3, layers.NFS4OpPutRootFH: 3,
	layers.NFS4OpGetFH: 4, layers.NFS4OpPutFH: 4, layers.NFS4OpRestoreFH: 4, layers.NFS4OpSaveFH: 4, layers.NFS4OpSequence: 4,
}

func nfs4Tier(op layers.NFS4Op) uint8 {
	if t, ok := nfs4OpTier[op]; ok {
		return t
	}
	return 1
}

// nfs4MainOpcode is nfs.main_opcode: the operations of a COMPOUND call or
// reply whose tier (nfs4OpTier) is the lowest among its operations, in
// their order.
func nfs4MainOpcode(R func(p *Packet) *RPCRDMAPacket, compound, compoundRes func(*Packet) bool) *Field {
	ops := func(p *Packet) []layers.NFS4Op {
		switch {
		case compound(p):
			return R(p).Compound.Ops[:R(p).Compound.NOps]
		case compoundRes(p):
			return R(p).CompoundRes.Ops[:R(p).CompoundRes.NOps]
		}
		return nil
	}
	nth := func(p *Packet, i int) (uint64, bool) {
		all := ops(p)
		best := uint8(255)
		for _, op := range all {
			best = min(best, nfs4Tier(op))
		}
		for _, op := range all {
			if nfs4Tier(op) == best {
				if i == 0 {
					return uint64(op), true
				}
				i--
			}
		}
		return 0, false
	}
	f := withNames(uintField("nfs.main_opcode", "Main Opcode", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return nth(p, 0) }),
		func(v uint64) (string, bool) { return layers.NFS4Op(v).Name() }, nil)
	f.nth = func(p *Packet, i int, v *Value) bool {
		var ok bool
		v.U, ok = nth(p, i)
		return ok
	}
	return f
}

// nfsStatus is nfs.status (or nfs.nfsstat4): an NFSv3 or NFSACL reply's
// status (when v3), or an NFSv4 COMPOUND reply's, then each operation's
// (when v4), as tshark lists them.
func nfsStatus(R func(p *Packet) *RPCRDMAPacket, v3, v4 func(*Packet) bool, name, title string) *Field {
	st := func(p *Packet, i int) (uint64, bool) {
		switch r := R(p); {
		case v3(p) && i == 0:
			return uint64(r.NFSStatus), true
		case v4(p) && i == 0:
			return uint64(r.CompoundRes.Status), true
		case v4(p) && i <= r.CompoundRes.NOps:
			return uint64(r.CompoundRes.Statuses[i-1]), true
		}
		return 0, false
	}
	f := uintField(name, title, FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return st(p, 0) })
	f.nth = func(p *Packet, i int, v *Value) bool {
		var ok bool
		v.U, ok = st(p, i)
		return ok
	}
	return f
}

var rpcrdmaKindNames = [...]string{"", "message", "chunk"}

// ibwireRPCFields are ibwire's per-call fields: on a call, its reply and
// its chunk transfers alike, so one filter (ibwire.rpc.xid == 0x2dc3b52a)
// selects a call's whole exchange.
func ibwireRPCFields(R func(p *Packet) *RPCRDMAPacket) []*Field {
	has := func(p *Packet) bool { r := R(p); return r != nil && r.HasCall }
	// isReply: an RPC reply, or the RDMA_NOMSG that ends one the capture
	// did not keep (rpcMessage).
	isReply := func(p *Packet) bool {
		r := R(p)
		return has(p) && (r.HasRPC && r.RPC.Type == layers.RPCReply || !r.HasRPC && r.Kind == RPCRDMAMessage && r.Hdr.Proc == layers.RPCRDMANoMsg)
	}
	u := func(name, title string, t FieldType, base Base, ok func(*Packet) bool, get func(*RPCRDMAPacket) uint64) *Field {
		return uintField(name, title, t, base, func(p *Packet) (uint64, bool) {
			if !ok(p) {
				return 0, false
			}
			return get(R(p)), true
		})
	}
	return []*Field{
		protoField("ibwire.rpc", "RPC-over-RDMA analysis", func(p *Packet) bool { r := R(p); return r != nil && r.Kind != RPCRDMANone }),
		{Name: "ibwire.rpc.kind", Title: "RPC-over-RDMA packet", Type: FTString, get: func(p *Packet, v *Value) bool {
			r := R(p)
			if r == nil || r.Kind == RPCRDMANone {
				return false
			}
			v.S = rpcrdmaKindNames[r.Kind]
			return true
		}},
		u("ibwire.rpc.xid", "XID of the call", FTUint32, BaseHex, has, func(r *RPCRDMAPacket) uint64 { return uint64(r.Call.XID) }),
		{Name: "ibwire.rpc.procedure", Title: "Procedure", Type: FTString, get: func(p *Packet, v *Value) bool {
			if !has(p) {
				return false
			}
			v.S = RPCProcLabel(&R(p).Call)
			return true
		}},
		u("ibwire.rpc.call_frame", "Call in frame", FTUint32, BaseDec, has, func(r *RPCRDMAPacket) uint64 { return uint64(r.Call.Frame) }),
		u("ibwire.rpc.outstanding", "Calls outstanding on the connection", FTUint16, BaseDec,
			func(p *Packet) bool { r := R(p); return r != nil && r.Kind == RPCRDMAMessage && r.HasRPC && !r.Resent },
			func(r *RPCRDMAPacket) uint64 { return uint64(r.Outstanding) }),
		{Name: "ibwire.rpc.latency", Title: "Call to reply", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			if !isReply(p) {
				return false
			}
			v.D = R(p).Latency
			return true
		}},
		{Name: "ibwire.rpc.chunk", Title: "Chunk moved", Type: FTString, get: func(p *Packet, v *Value) bool {
			r := R(p)
			if r == nil || r.Kind != RPCRDMAChunk {
				return false
			}
			v.S = r.ChunkKind
			return true
		}},
		u("ibwire.rpc.reply_chunk_frame", "RPC reply written in frame", FTUint32, BaseDec,
			func(p *Packet) bool { r := R(p); return r != nil && r.ChunkFrame != 0 }, func(r *RPCRDMAPacket) uint64 { return uint64(r.ChunkFrame) }),
	}
}
