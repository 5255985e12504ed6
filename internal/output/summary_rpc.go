package output

import (
	"strconv"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// appendRPCRDMA summarizes an RPC-over-RDMA message:
//
//	, RPC-over-RDMA MSG xid 0x2dc3b52a NFSv3 FSINFO Call
//	, RPC-over-RDMA MSG xid 0x3fc3b52a NFSv3 WRITE Call, read list 2 segments 262144 bytes
//	, RPC-over-RDMA NOMSG xid 0x33c3b52a NFSACLv3 GETACL Reply [latency 3081 µs]
//	, RPC-over-RDMA MSG xid 0x54c3b52a NFSv3 LOOKUP Reply NFS3ERR_NOENT [latency 3067 µs]
//	, RPC-over-RDMA MSG xid 0xad4b249f NFSv4 COMPOUND Reply NFS4ERR_NOENT (LOOKUP) [latency 921 µs]
func appendRPCRDMA(buf []byte, r *decode.RPCRDMAPacket) []byte {
	buf = append(buf, ", RPC-over-RDMA "...)
	h := &r.Hdr
	if r.Err != nil && !r.HasRPC && h.Length == 0 {
		return append(append(append(buf, "[malformed: "...), r.Err.Error()...), ']')
	}
	buf = append(buf, h.Proc.Short()...)
	buf = append(buf, " xid "...)
	buf = appendHex(buf, uint64(h.XID), 8)
	if h.Proc == layers.RPCRDMAError {
		buf = append(buf, ' ')
		return append(buf, h.ErrCode.String()...)
	}
	if r.Err != nil {
		return append(append(append(buf, " [malformed: "...), r.Err.Error()...), ']')
	}
	if !r.HasRPC {
		if r.HasCall && h.Proc == layers.RPCRDMANoMsg {
			// The reply chunk's WRITE was cut before the RPC reply.
			buf = append(buf, ' ')
			buf = append(buf, decode.RPCProcLabel(&r.Call)...)
			buf = append(buf, " Reply (its RPC message not captured) [latency "...)
			buf = appendMicros(buf, r.Latency)
			return append(buf, ']')
		}
		return appendChunkLists(buf, h)
	}
	m := &r.RPC
	buf = append(buf, ' ')
	if r.HasCall || r.Resent && m.Type == layers.RPCCall {
		// A resent call names its own program and procedure; it
		// starts nothing, so it has no latency.
		buf = append(buf, decode.RPCProcLabel(&r.Call)...)
	} else {
		buf = append(buf, "RPC"...)
	}
	buf = append(buf, ' ')
	buf = append(buf, m.Type.String()...)
	if m.Type == layers.RPCCall {
		if r.HasCompound {
			for _, op := range r.Compound.Ops[:r.Compound.NOps] {
				buf = append(buf, ' ')
				buf = append(buf, op.String()...)
			}
			if r.Compound.Partial {
				buf = append(buf, " ..."...)
			}
		}
		return appendChunkLists(buf, h)
	}
	switch {
	case m.ReplyStat == layers.RPCDenied:
		buf = append(buf, " denied "...)
		buf = append(buf, m.RejectStat.String()...)
	case m.AcceptStat != layers.RPCSuccess:
		buf = append(buf, " ("...)
		buf = append(buf, m.AcceptStat.String()...)
		buf = append(buf, ')')
	case r.HasNFSStatus && r.NFSStatus != 0:
		buf = append(buf, ' ')
		buf = append(buf, layers.NFS3Status(r.NFSStatus).String()...)
	case r.HasCompoundRes && r.CompoundRes.Status != 0:
		// The operation that failed ends the COMPOUND.
		c := &r.CompoundRes
		buf = append(buf, ' ')
		buf = append(buf, c.Status.String()...)
		if c.NOps > 0 {
			buf = append(buf, " ("...)
			buf = append(buf, c.Ops[c.NOps-1].String()...)
			buf = append(buf, ')')
		}
	}
	if r.HasCall {
		buf = append(buf, " [latency "...)
		buf = appendMicros(buf, r.Latency)
		buf = append(buf, ']')
	}
	return buf
}

// appendChunkLists says what chunks a call offers: ", read list 2
// segments 262144 bytes, write list 1 segment 4096 bytes, reply chunk 3
// segments 28932 bytes".
func appendChunkLists(buf []byte, h *layers.RPCRDMAHeader) []byte {
	list := func(buf []byte, name string, segs []layers.RPCRDMASegment) []byte {
		if len(segs) == 0 {
			return buf
		}
		var bytes uint64
		for _, s := range segs {
			bytes += uint64(s.Length)
		}
		buf = append(buf, ", "...)
		buf = append(buf, name...)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(len(segs)), 10)
		if len(segs) == 1 {
			buf = append(buf, " segment "...)
		} else {
			buf = append(buf, " segments "...)
		}
		buf = strconv.AppendUint(buf, bytes, 10)
		return append(buf, " bytes"...)
	}
	buf = list(buf, "read list", h.Reads)
	buf = list(buf, "write list", h.Writes)
	return list(buf, "reply chunk", h.Reply)
}

// appendRPCChunk names the call an RDMA WRITE or READ moves a chunk of:
// ", NFSv3 READ write chunk xid 0x3cc3b52a".
func appendRPCChunk(buf []byte, r *decode.RPCRDMAPacket) []byte {
	buf = append(buf, ", "...)
	buf = append(buf, decode.RPCProcLabel(&r.Call)...)
	buf = append(buf, ' ')
	buf = append(buf, r.ChunkKind...)
	buf = append(buf, " chunk xid "...)
	return appendHex(buf, uint64(r.Call.XID), 8)
}
