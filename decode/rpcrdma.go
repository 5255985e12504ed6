package decode

import (
	"encoding/binary"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// RPC over RDMA version 1 (the wire layout is in layers/rpcrdma.go and
// layers/rpc.go), the transport of NFS over RDMA.
//
// A connection carries RPC-over-RDMA when the CM REQ that set it up named
// the IP-CM service of port 20049, when the user says so (-d
// qp==N,rpcrdma), or, for a capture that starts after the set-up, when
// its content shows it: a SEND whose transport header says version 1 with
// a credit value and decodes whole, carrying an RPC call whose XID is the
// header's, answered on the reverse direction by a SEND whose header
// carries the same XID. Until then nothing on the connection is called
// RPC: a wrong guess is worse than none (the NVMe-oF detection in nvme.go
// follows the same rule).
//
// Every SEND on such a connection is one transport header. A call is
// matched with its reply by XID; the reply's program, version and
// procedure are its call's. Chunks tie the RDMA traffic to the calls: the
// server's RDMA WRITEs into a write or reply chunk's segment, and its
// READs of a read chunk's (with the client's READ responses), use the
// segment's handle as their R_Key and an address within it. A reply sent
// as RDMA_NOMSG is read from the reply chunk the server wrote before it.
// Resent packets are skipped: each call counts once.

// RPCRDMAKind says what an RPC-over-RDMA packet carries.
type RPCRDMAKind uint8

// RPC-over-RDMA packet kinds.
const (
	RPCRDMANone    RPCRDMAKind = iota
	RPCRDMAMessage             // a SEND: a transport header, and an RPC message when HasRPC
	RPCRDMAChunk               // an RDMA WRITE or READ (request or response) moving a chunk
)

// RPCRDMAPacket is what the analysis found of RPC-over-RDMA in one
// packet; the rpcordma.*, rpc.*, nfs.* and ibwire.rpc.* fields read it.
// It belongs to the Analyzer and is valid until the next packet.
type RPCRDMAPacket struct {
	Kind RPCRDMAKind
	Hdr  layers.RPCRDMAHeader
	// RPC is the call or reply the message carries (inline for RDMA_MSG,
	// from the reply chunk for an RDMA_NOMSG reply), when HasRPC.
	RPC    layers.RPCMsg
	HasRPC bool
	// ChunkFrame is the last frame of the RDMA WRITE that carried an
	// RDMA_NOMSG reply's RPC message.
	ChunkFrame uint32
	// Fragments are the frames an RPC message was reassembled from: the
	// RDMA WRITE packets that carried an RDMA_NOMSG reply's reply chunk, or
	// a call's RDMA_MSG and the READ responses that carried its read chunk
	// (on the last of them); at most rpcMaxFragments of FragmentCount.
	// FragmentBytes are their bytes, Reassembled the message they make
	// (nil when it was not kept: longer than rpcKeepMax).
	Fragments     []uint32
	FragmentCount int
	FragmentBytes uint32
	Reassembled   []byte
	// InReadChunk says, on an RDMA_MSG call, that the RPC message goes on
	// in a read chunk: the rpc.* and nfs.* fields show it on the READ
	// response that completes it, as tshark's do (RFC 8166 §3.5.3: the
	// read chunk's data are part of the message).
	InReadChunk bool
	// MsgFrame is, on a reply, the frame that showed its call's RPC
	// message (the call's, or the last READ response of its read chunk),
	// and MsgLatency the time since: rpc.repframe and rpc.time.
	MsgFrame   uint32
	MsgLatency time.Duration
	// Call is the call a reply or a chunk transfer belongs to (a call's
	// own, on the call).
	Call    RPCCallInfo
	HasCall bool
	Latency time.Duration // call to reply, on the reply
	// Outstanding is, on a message, how many calls of the connection wait
	// for their replies once it is counted (the depth over time, with
	// -z io,stat).
	Outstanding uint16
	// ReplyFrame is, on a call, the frame of its reply when a first pass
	// found it (ibdump -2), 0 otherwise.
	ReplyFrame uint32
	// ChunkKind names the chunk a transfer moves: "read", "write", "reply".
	ChunkKind string
	// NFSStatus is an NFSv3 or NFSACL reply's status (an nfsstat3),
	// when HasNFSStatus.
	NFSStatus    uint32
	HasNFSStatus bool
	// Compound is an NFSv4 COMPOUND call's operations.
	Compound    layers.NFS4Compound
	HasCompound bool
	// CompoundRes is an NFSv4 COMPOUND reply's operations and statuses.
	CompoundRes    layers.NFS4CompoundRes
	HasCompoundRes bool
	// MachineName is an AUTH_UNIX credential's machine name.
	MachineName string
	// Resent says the packet is a copy of a SEND the analysis counted:
	// its message is decoded for display, matched with nothing (no Call)
	// and counts nowhere (no Outstanding).
	Resent bool
	// Err is the transport header's or the RPC message's decoding error.
	Err error
}

// Clone returns a copy of r that shares nothing with the Analyzer or the
// frame, for a renderer that keeps the packet past the next one.
func (r *RPCRDMAPacket) Clone() *RPCRDMAPacket {
	c := *r
	c.Hdr.Reads = append([]layers.RPCRDMASegment(nil), r.Hdr.Reads...)
	c.Hdr.Writes = append([]layers.RPCRDMASegment(nil), r.Hdr.Writes...)
	c.Hdr.Reply = append([]layers.RPCRDMASegment(nil), r.Hdr.Reply...)
	c.Hdr.Body, c.RPC.Body = nil, nil
	c.RPC.Cred.Body = append([]byte(nil), r.RPC.Cred.Body...)
	c.RPC.Cred.MachineName = append([]byte(nil), r.RPC.Cred.MachineName...)
	c.RPC.Verf.Body = append([]byte(nil), r.RPC.Verf.Body...) // rpc.auth.length shows its length
	c.RPC.Verf.MachineName = append([]byte(nil), r.RPC.Verf.MachineName...)
	c.Compound.Tag = append([]byte(nil), r.Compound.Tag...)
	c.CompoundRes.Tag = append([]byte(nil), r.CompoundRes.Tag...)
	c.Fragments = append([]uint32(nil), r.Fragments...)
	c.Reassembled = append([]byte(nil), r.Reassembled...)
	return &c
}

// RPCCallInfo is what a call was.
type RPCCallInfo struct {
	Frame                       uint32
	XID                         uint32
	Program, Version, Procedure uint32
	// Ops are an NFSv4 COMPOUND's first operations.
	Ops  [4]layers.NFS4Op
	NOps uint8
}

// ProcName names the call's procedure: "READ", "COMPOUND", "GETACL".
func (c *RPCCallInfo) ProcName() string {
	if n, ok := layers.RPCProcedureName(c.Program, c.Version, c.Procedure); ok {
		return n
	}
	return "proc " + itoa(uint64(c.Procedure))
}

// ProgName names the program with its version: "NFSv3", "NFSACLv3",
// "prog 100099 v1".
func (c *RPCCallInfo) ProgName() string {
	return rpcProgVersName(c.Program, c.Version)
}

func rpcProgVersName(prog, vers uint32) string {
	if n, ok := layers.RPCProgramName(prog); ok {
		return n + "v" + itoa(uint64(vers))
	}
	return "prog " + itoa(uint64(prog)) + " v" + itoa(uint64(vers))
}

// rpcCall is an outstanding call.
type rpcCall struct {
	info RPCCallInfo
	at   time.Duration
	// segs are the call's chunk segments, by kind, for the transfers.
	segs []rpcSeg
	// reply is what the server wrote into the reply chunk: an RDMA_NOMSG
	// reply's RPC message (its first rpcReplyKeep bytes at least).
	reply      []byte
	replyFrame uint32
	// replyFrames are the RDMA WRITE packets into the reply chunk (its
	// fragments, as tshark lists them), at most rpcMaxFragments of
	// replyN, and replyBytes the bytes they wrote.
	replyFrames []uint32
	replyN      int
	replyBytes  uint32
	// replyCut says the capture cut a WRITE into the reply chunk: reply
	// then has holes.
	replyCut bool
	// A call whose message goes on in a read chunk: msg is the message
	// being reassembled (the RDMA_MSG's inline part with the chunk's data
	// at its position; nil when longer than the keep allows), inline the
	// inline part, readPos the chunk's position, readLen its bytes,
	// readGot those the READ responses brought, readFrames the
	// fragments (the RDMA_MSG, then the READ responses) of readN.
	msg, inline []byte
	readPos     int
	readLen     int
	readGot     int
	readFrames  []uint32
	readN       int
	// msgFrame is the frame that showed the call's RPC message, msgAt
	// its time.
	msgFrame uint32
	msgAt    time.Duration
}

// rpcMaxFragments bounds the fragments a call remembers.
const rpcMaxFragments = 2048

// rpcReplyKeep is how much of a reply chunk is kept at least: the RPC
// reply header and the NFS status (an AUTH_NULL reply's header is 24
// bytes).
const rpcReplyKeep = 256

// rpcKeepMax bounds the bytes of one reassembled message kept, and
// rpcKeepTotal those of every open call together: past them a reply chunk
// keeps its first rpcReplyKeep bytes and a read chunk none, and
// rpcordma.reassembled.data is absent.
const (
	rpcKeepMax   = 4 << 20
	rpcKeepTotal = 64 << 20
)

type rpcSeg struct {
	seg  layers.RPCRDMASegment
	kind uint8 // rpcChunkRead, rpcChunkWrite, rpcChunkReply
}

const (
	rpcChunkRead uint8 = iota + 1
	rpcChunkWrite
	rpcChunkReply
)

var rpcChunkNames = [...]string{"", "read", "write", "reply"}

// rpcConn is the RPC-over-RDMA state of one connection.
type rpcConn struct {
	conv     uint32
	calls    map[uint32]*rpcCall // outstanding, by XID
	byHandle map[uint32]*rpcCall // by chunk segment handle (the R_Key)
	// The data transfer in progress: the server's current RDMA WRITE and
	// the client's current READ response, and the READs asked for, by PSN.
	write, read rpcXfer
	reads       map[layers.PSN]rpcXfer
}

// rpcXfer is one chunk transfer.
type rpcXfer struct {
	call *rpcCall
	kind uint8
	off  int // bytes of the segment moved before this packet
	seg  int // the segment's index in call.segs
	ok   bool
}

// rpcProbe keeps a connection's recent candidate calls until a reply
// answers one (content detection).
type rpcProbe struct {
	cands [8]rpcCandidate
	n     int
}

type rpcCandidate struct {
	side  uint8
	frame uint32
	at    time.Duration
	info  RPCCallInfo
}

// maxRPCProbes bounds the connections whose candidate calls are kept.
const maxRPCProbes = 4096

// rpcState is the Analyzer's RPC-over-RDMA state.
type rpcState struct {
	conns       map[uint32]*rpcConn
	probes      map[uint32]*rpcProbe
	pkt         RPCRDMAPacket
	srt         RPCSRT
	lastMachine string
	free        []*rpcCall // calls answered, whose memory the next ones reuse
	kept        int        // the bytes open calls keep of their messages
	probe       struct {
		hdr layers.RPCRDMAHeader
		msg layers.RPCMsg
	}
}

// machineName returns b as a string, allocating only when it differs
// from the last one (a client sends the same name with every call).
func (s *rpcState) machineName(b []byte) string {
	if string(b) != s.lastMachine {
		s.lastMachine = string(b)
	}
	return s.lastMachine
}

// rpcProcLabels name the procedures ibwire knows, with their program
// ("NFSv3 READ"), built once so that naming one does not allocate.
var rpcProcLabels = func() map[rpcSRTKey]string {
	m := map[rpcSRTKey]string{}
	for _, pv := range [][2]uint32{{layers.RPCProgNFS, 3}, {layers.RPCProgNFS, 4}, {layers.RPCProgNFSACL, 3}} {
		for proc := uint32(0); ; proc++ {
			n, ok := layers.RPCProcedureName(pv[0], pv[1], proc)
			if !ok || proc > 0 && n == "NULL" {
				break
			}
			m[rpcSRTKey{pv[0], pv[1], proc}] = rpcProgVersName(pv[0], pv[1]) + " " + n
		}
	}
	return m
}()

// RPCProcLabel names c's procedure with its program: "NFSv3 READ"; for a
// procedure ibwire does not know, "RPC" (rpc.program and rpc.procedure
// give the numbers).
func RPCProcLabel(c *RPCCallInfo) string {
	if n, ok := rpcProcLabels[rpcSRTKey{c.Program, c.Version, c.Procedure}]; ok {
		return n
	}
	return "RPC"
}

// isRPCRDMAServiceID reports the RDMA CM service ID of NFS over RDMA:
// IP-CM, TCP port space, port 20049.
func isRPCRDMAServiceID(sid uint64) bool {
	s := layers.ServiceID(sid)
	return s.IsIPCM() && s.Port() == layers.RPCRDMAPort
}

// rpcrdmaOverride reports a connection the user declared RPC-over-RDMA by
// one of its QPs.
func (a *Analyzer) rpcrdmaOverride(d *direction) bool { return d.declared(a.opts.RPCRDMAQPs) }

// rpcFollow follows an RC packet of a connection known to carry
// RPC-over-RDMA, or a SEND of one not yet known.
func (a *Analyzer) rpcFollow(d *direction, p *Packet, b *layers.BTH, info *layers.OpcodeInfo) {
	// A packet the capture cut (a snapshot length) is followed when it is
	// an RDMA WRITE: its RETH names the chunk it writes.
	if a.opts.NoRPCRDMA || p.Err != nil && !(p.Cut() && info.Operation == layers.OpRDMAWrite) || d.svc != layers.ServiceRC {
		return
	}
	c := d.conv
	r := d.rpc
	if r == nil {
		r = a.rpc.conns[c.id]
		if l := a.opts.Links; r == nil && l != nil && l.second && l.rpc[d.key] {
			r = a.rpcNewConn(c) // a first pass found it
		}
		if l := a.opts.Lookahead; r == nil && l != nil && !a.opts.NoRPCRDMADetect && l.found(l.rpc, d) {
			r = a.rpcNewConn(c) // a look-ahead found it
		}
		if r == nil {
			if info.Operation != layers.OpSend || info.Position != layers.PosOnly || p.Analysis.Info&InfoNewData == 0 {
				return
			}
			r = a.rpcLabel(d, b)
			if r == nil {
				return
			}
		}
		for _, dd := range c.dirs {
			if dd != nil {
				dd.rpc = r
			}
		}
		if l := a.opts.Links; l != nil {
			a.linkDirs(c, &l.rpc)
		}
		if l := a.opts.Lookahead; l != nil {
			l.record(c, &l.rpc)
		}
	}
	pk := &a.rpc.pkt
	pk.reset()
	newData := p.Analysis.Info&InfoNewData != 0 || info.Response
	switch info.Operation {
	case layers.OpSend:
		p.Analysis.RPCRDMA = pk
		if !newData && !a.rpcReplyDue(r, b, pk) {
			// A resent SEND: its message counted once, at its first
			// copy; this one shows what it carries (tshark decodes it too).
			a.rpcResent(b, pk)
			return
		}
		a.rpcMessage(r, p, b, pk)
		pk.Outstanding = uint16(min(len(r.calls), 0xFFFF))
	case layers.OpRDMAWrite, layers.OpRDMAReadRequest:
		if newData {
			a.rpcRequestData(r, p, b, info, pk)
		}
	case layers.OpRDMAReadResponse:
		if newData {
			a.rpcReadResponse(r, p, b, info, pk)
		}
	}
}

// rpcResent shows a resent SEND's message: its transport header and the
// RPC call or reply it carries inline, matched with nothing (no Call) and
// counted nowhere (no Outstanding); a reply chunk's message was shown on
// the copy that counted.
func (a *Analyzer) rpcResent(b *layers.BTH, pk *RPCRDMAPacket) {
	pk.Kind, pk.Resent = RPCRDMAMessage, true
	h := &pk.Hdr
	if err := h.DecodeFromBytes(b.PacketPayload()); err != nil {
		pk.Err = err
		return
	}
	if h.Proc != layers.RPCRDMAMsg && h.Proc != layers.RPCRDMAMsgP {
		return
	}
	if err := pk.RPC.DecodeFromBytes(h.Body); err != nil {
		pk.Err = err
		return
	}
	pk.HasRPC = true
	if m := &pk.RPC; m.Type == layers.RPCCall {
		// The call's own program and procedure (the rpc.* fields read
		// them from Call), with no frame: it starts nothing.
		pk.Call = RPCCallInfo{XID: m.XID, Program: m.Program, Version: m.ProgVersion, Procedure: m.Procedure}
		if m.Cred.Unix {
			pk.MachineName = a.rpc.machineName(m.Cred.MachineName)
		}
		if m.Program == layers.RPCProgNFS && m.ProgVersion == 4 && m.Procedure == 1 {
			pk.HasCompound = pk.Compound.DecodeFromBytes(m.Body) == nil
			for i := 0; i < pk.Compound.NOps && i < len(pk.Call.Ops); i++ {
				pk.Call.Ops[i] = pk.Compound.Ops[i]
				pk.Call.NOps++
			}
		}
	}
}

// rpcReplyDue reports a resent RDMA_NOMSG reply whose first copy came
// before the reply chunk it reads: the client dropped that copy (its
// PSN came after one lost, the RDMA WRITE of the chunk) and takes this
// one, after the resent WRITE. Its call is still open, so the reply is
// counted once, here.
func (a *Analyzer) rpcReplyDue(r *rpcConn, b *layers.BTH, pk *RPCRDMAPacket) bool {
	h := &pk.Hdr
	due := h.DecodeFromBytes(b.PacketPayload()) == nil && h.Proc == layers.RPCRDMANoMsg
	if due {
		c := r.calls[h.XID]
		due = c != nil && c.replyN > 0
	}
	if !due {
		pk.reset()
	}
	return due
}

// reset empties the packet record, keeping its slices' memory.
func (pk *RPCRDMAPacket) reset() {
	h := pk.Hdr
	*pk = RPCRDMAPacket{}
	pk.Hdr.Reads, pk.Hdr.Writes, pk.Hdr.Reply = h.Reads[:0], h.Writes[:0], h.Reply[:0]
}

// rpcLabel decides whether d's connection carries RPC-over-RDMA, on a
// SEND ONLY: by the CM service ID, by the user's -d, or by content.
func (a *Analyzer) rpcLabel(d *direction, b *layers.BTH) *rpcConn {
	c := d.conv
	if isRPCRDMAServiceID(c.serviceID) || a.rpcrdmaOverride(d) {
		return a.rpcNewConn(c)
	}
	if a.opts.NoRPCRDMADetect {
		return nil
	}
	pr := &a.rpc.probe
	pl := b.PacketPayload()
	if !layers.RPCRDMAPlausible(pl, &pr.hdr, &pr.msg) {
		return nil
	}
	if pr.hdr.Proc == layers.RPCRDMAMsg && pr.msg.Type == layers.RPCCall {
		if a.rpc.probes == nil {
			a.rpc.probes = map[uint32]*rpcProbe{}
		}
		p := a.rpc.probes[c.id]
		if p == nil {
			if len(a.rpc.probes) >= maxRPCProbes {
				clear(a.rpc.probes) // bounded memory, as nvmeLabel does
			}
			p = &rpcProbe{}
			a.rpc.probes[c.id] = p
		}
		cd := &p.cands[p.n%len(p.cands)]
		p.n++
		m := &pr.msg
		*cd = rpcCandidate{side: d.side, frame: a.frame, at: a.now,
			info: RPCCallInfo{Frame: a.frame, XID: m.XID, Program: m.Program, Version: m.ProgVersion, Procedure: m.Procedure}}
		return nil
	}
	// A reply (RDMA_MSG with an RPC reply, or RDMA_NOMSG): does it answer
	// a candidate call of the other direction?
	p := a.rpc.probes[c.id]
	if p == nil {
		return nil
	}
	for i := range min(p.n, len(p.cands)) {
		cd := &p.cands[i]
		if cd.side == d.side || cd.info.XID != pr.hdr.XID {
			continue
		}
		delete(a.rpc.probes, c.id)
		r := a.rpcNewConn(c)
		a.rpcStartCall(r, cd.info, cd.at)
		return r
	}
	return nil
}

func (a *Analyzer) rpcNewConn(c *conv) *rpcConn {
	if a.rpc.conns == nil {
		a.rpc.conns = map[uint32]*rpcConn{}
	}
	r := &rpcConn{conv: c.id, calls: map[uint32]*rpcCall{}, byHandle: map[uint32]*rpcCall{}}
	a.rpc.conns[c.id] = r
	return r
}

// rpcStartCall records a call.
func (a *Analyzer) rpcStartCall(r *rpcConn, info RPCCallInfo, at time.Duration) *rpcCall {
	if old := r.calls[info.XID]; old != nil {
		a.rpcDone(r, old) // the XID reused: its reply was not captured
	}
	if len(r.calls) >= maxULPOpen {
		// Calls no reply answers (a capture of one direction, or a flood):
		// said as such, and forgotten, so memory stays bounded.
		a.rpcOutstanding(r.conv, r)
		for _, old := range r.calls {
			a.rpcDone(r, old)
		}
	}
	var c *rpcCall
	if k := len(a.rpc.free); k > 0 {
		c, a.rpc.free = a.rpc.free[k-1], a.rpc.free[:k-1]
	} else {
		c = &rpcCall{}
	}
	*c = rpcCall{info: info, at: at, segs: c.segs[:0], replyFrames: c.replyFrames[:0], reply: c.reply[:0], msg: c.msg[:0],
		inline: c.inline[:0], readFrames: c.readFrames[:0], msgFrame: info.Frame, msgAt: at}
	r.calls[info.XID] = c
	return c
}

// rpcDone forgets call c.
func (a *Analyzer) rpcDone(r *rpcConn, c *rpcCall) {
	delete(r.calls, c.info.XID)
	for _, s := range c.segs {
		if r.byHandle[s.seg.Handle] == c {
			delete(r.byHandle, s.seg.Handle)
		}
	}
	if r.write.call == c {
		r.write.ok = false
	}
	if r.read.call == c {
		r.read.ok = false
	}
	for psn, x := range r.reads {
		if x.call == c {
			delete(r.reads, psn)
		}
	}
	a.rpc.kept -= len(c.reply) + len(c.msg)
	if cap(c.reply) > 64<<10 {
		c.reply = nil // a large message's memory is not held for the next
	}
	if cap(c.msg) > 64<<10 {
		c.msg = nil
	}
	a.rpc.free = append(a.rpc.free, c) // its memory serves the next call
}

// rpcPut writes pl at offset off of buf, a message being reassembled,
// within limit bytes and the keep of every open call; what does not fit
// is dropped (the message's data then incomplete).
func (s *rpcState) rpcPut(buf []byte, off int, pl []byte, limit, floor int) []byte {
	if s.kept >= rpcKeepTotal {
		// Past the total keep, a message grows no further than it has,
		// or than its floor: a reply chunk's RPC header and status.
		limit = min(limit, max(len(buf), floor))
	}
	if off >= limit {
		return buf
	}
	pl = pl[:min(len(pl), limit-off)]
	if end := off + len(pl); end > len(buf) {
		s.kept += end - len(buf)
		buf = append(buf, make([]byte, end-len(buf))...)
	}
	copy(buf[off:], pl)
	return buf
}

// rpcMessage follows a SEND: a transport header and what it carries.
func (a *Analyzer) rpcMessage(r *rpcConn, p *Packet, b *layers.BTH, pk *RPCRDMAPacket) {
	pk.Kind = RPCRDMAMessage
	if err := pk.Hdr.DecodeFromBytes(b.PacketPayload()); err != nil {
		pk.Err = err
		a.finding(Finding{Kind: FindULPMalformed, Sub: ULPFieldRPCRDMAHdr, Frame: a.frame, Conv: r.conv, PSN: b.PSN})
		return
	}
	h := &pk.Hdr
	switch h.Proc {
	case layers.RPCRDMAMsg, layers.RPCRDMAMsgP:
		if err := pk.RPC.DecodeFromBytes(h.Body); err != nil {
			pk.Err = err
			a.finding(Finding{Kind: FindULPMalformed, Sub: ULPFieldRPCMsg, Frame: a.frame, Conv: r.conv, PSN: b.PSN})
			return
		}
		pk.HasRPC = true
	case layers.RPCRDMANoMsg:
		// A reply the server wrote into the reply chunk, or a call the
		// server is to READ from the read list at position 0 (its RPC
		// header is not in this frame: the call is named when its chunk
		// is read).
		c := r.calls[h.XID]
		if c == nil || c.replyN == 0 {
			return
		}
		if pk.RPC.DecodeFromBytes(c.reply) != nil || pk.RPC.Type != layers.RPCReply {
			// The capture cut the WRITE before the RPC reply's header: the
			// WRITE into the reply chunk, then this NOMSG in order, say
			// the call is answered (RFC 8166 §4.2.1), with what status
			// the capture does not tell.
			pk.Call, pk.HasCall = c.info, true
			pk.Latency = a.now - c.at
			pk.MsgFrame, pk.MsgLatency = c.msgFrame, a.now-c.msgAt
			a.rpc.srt.add(&c.info, pk.Latency, true)
			a.rpcDone(r, c)
			return
		}
		pk.HasRPC, pk.ChunkFrame = true, c.replyFrame
		pk.Fragments, pk.FragmentCount, pk.FragmentBytes = c.replyFrames, c.replyN, c.replyBytes
		if len(c.reply) == int(c.replyBytes) && !c.replyCut {
			pk.Reassembled = c.reply
		}
	case layers.RPCRDMAError:
		// The server's RDMA_ERROR answers the call of its XID: the call
		// failed, and is done (RFC 8166 §4.2.4).
		if c := r.calls[h.XID]; c != nil {
			pk.Call, pk.HasCall = c.info, true
			pk.Latency = a.now - c.at
			a.rpc.srt.add(&c.info, pk.Latency, false)
			a.finding(Finding{Kind: FindRPCError, Frame: a.frame, Ref: c.info.Frame, Conv: r.conv})
			a.rpcDone(r, c)
		}
		return
	default:
		return
	}
	if !pk.HasRPC {
		return
	}
	m := &pk.RPC
	switch m.Type {
	case layers.RPCCall:
		if m.Cred.Unix {
			pk.MachineName = a.rpc.machineName(m.Cred.MachineName)
		}
		info := RPCCallInfo{Frame: a.frame, XID: m.XID, Program: m.Program, Version: m.ProgVersion, Procedure: m.Procedure}
		if m.Program == layers.RPCProgNFS && m.ProgVersion == 4 && m.Procedure == 1 {
			pk.HasCompound = pk.Compound.DecodeFromBytes(m.Body) == nil
			for i := 0; i < pk.Compound.NOps && i < len(info.Ops); i++ {
				info.Ops[i] = pk.Compound.Ops[i]
				info.NOps++
			}
		}
		c := a.rpcStartCall(r, info, a.now)
		for _, s := range h.Reads {
			a.rpcAddSeg(r, c, s, rpcChunkRead)
		}
		for _, s := range h.Writes {
			a.rpcAddSeg(r, c, s, rpcChunkWrite)
		}
		for _, s := range h.Reply {
			a.rpcAddSeg(r, c, s, rpcChunkReply)
		}
		pk.InReadChunk = a.rpcReadChunk(c, h)
		pk.Call, pk.HasCall = info, true
		if l := a.opts.Links; l != nil && l.second {
			pk.ReplyFrame = l.rpcReply[a.frame]
		}
	case layers.RPCReply:
		c := r.calls[m.XID]
		if c == nil {
			return
		}
		pk.Call, pk.HasCall = c.info, true
		pk.Latency = a.now - c.at
		pk.MsgFrame, pk.MsgLatency = c.msgFrame, a.now-c.msgAt
		if l := a.opts.Links; l != nil && !l.second {
			if l.rpcReply == nil {
				l.rpcReply = map[uint32]uint32{}
			}
			l.rpcReply[c.msgFrame] = a.frame
		}
		if m.ReplyStat == layers.RPCAccepted && m.AcceptStat == layers.RPCSuccess && c.info.Procedure != 0 && len(m.Body) >= 4 &&
			(c.info.Program == layers.RPCProgNFS && c.info.Version == 3 || c.info.Program == layers.RPCProgNFSACL) {
			// NFSv3's and NFSACL's results open with their status.
			pk.NFSStatus, pk.HasNFSStatus = binary.BigEndian.Uint32(m.Body), true
		}
		ok := m.ReplyStat == layers.RPCAccepted && m.AcceptStat == layers.RPCSuccess
		if ok && c.info.Program == layers.RPCProgNFS && c.info.Version == 4 && c.info.Procedure == 1 {
			pk.HasCompoundRes = pk.CompoundRes.DecodeFromBytes(m.Body) == nil
		}
		a.rpc.srt.add(&c.info, pk.Latency, ok)
		if !ok {
			a.finding(Finding{Kind: FindRPCError, Frame: a.frame, Ref: c.info.Frame, Conv: r.conv})
		}
		a.rpcDone(r, c)
	}
}

// rpcReadChunk starts reassembling call c's message when it goes on in a
// read chunk (RFC 8166 §3.5.3): the chunk's data stand at its position of
// the inline part. It handles one read chunk (every segment at one
// position), as an NFS WRITE sends; it reports whether it did.
func (a *Analyzer) rpcReadChunk(c *rpcCall, h *layers.RPCRDMAHeader) bool {
	if len(h.Reads) == 0 {
		return false
	}
	pos, n := h.Reads[0].Position, 0
	for _, s := range h.Reads {
		if s.Position != pos {
			return false
		}
		n += int(s.Length)
	}
	if pos == 0 || int(pos) > len(h.Body) || n == 0 {
		return false
	}
	c.readPos, c.readLen, c.readGot = int(pos), n, 0
	c.inline = append(c.inline[:0], h.Body...)
	if size := n + len(h.Body); size <= rpcKeepMax && a.rpc.kept+size <= rpcKeepTotal {
		c.msg = slices.Grow(c.msg[:0], size)[:size]
		copy(c.msg, h.Body[:pos])
		clear(c.msg[pos : int(pos)+n])
		copy(c.msg[int(pos)+n:], h.Body[pos:])
		a.rpc.kept += size
	}
	c.readFrames = append(c.readFrames[:0], a.frame)
	c.readN = 1
	return true
}

// rpcReadData places a READ response's bytes in the message of the call
// whose read chunk it carries; the response that completes the chunk
// shows the call's RPC message, reassembled, with its fragments.
func (a *Analyzer) rpcReadData(x *rpcXfer, pl []byte, pk *RPCRDMAPacket) {
	c := x.call
	if c.readLen == 0 {
		return
	}
	off := c.readPos + x.off
	for _, s := range c.segs[:x.seg] {
		off += int(s.seg.Length)
	}
	if len(c.msg) > 0 {
		c.msg = a.rpc.rpcPut(c.msg, off, pl, len(c.msg), 0)
	}
	x.off += len(pl)
	c.readGot += len(pl)
	if len(c.readFrames) < rpcMaxFragments {
		c.readFrames = append(c.readFrames, a.frame)
	}
	c.readN++
	if c.readGot < c.readLen {
		return
	}
	c.readLen = 0
	msg := c.msg
	if len(msg) == 0 {
		msg = c.inline // the header and the arguments before the chunk
	}
	if pk.RPC.DecodeFromBytes(msg) != nil || pk.RPC.Type != layers.RPCCall {
		return
	}
	m := &pk.RPC
	pk.HasRPC = true
	if m.Cred.Unix {
		pk.MachineName = a.rpc.machineName(m.Cred.MachineName)
	}
	if m.Program == layers.RPCProgNFS && m.ProgVersion == 4 && m.Procedure == 1 {
		pk.HasCompound = pk.Compound.DecodeFromBytes(m.Body) == nil
	}
	pk.Fragments, pk.FragmentCount = c.readFrames, c.readN
	pk.FragmentBytes = uint32(len(c.inline) + c.readGot)
	if len(c.msg) > 0 {
		pk.Reassembled = c.msg
	}
	c.msgFrame, c.msgAt = a.frame, a.now
	if l := a.opts.Links; l != nil && l.second {
		pk.ReplyFrame = l.rpcReply[a.frame]
	}
}

func (a *Analyzer) rpcAddSeg(r *rpcConn, c *rpcCall, s layers.RPCRDMASegment, kind uint8) {
	c.segs = append(c.segs, rpcSeg{seg: s, kind: kind})
	if s.Handle != 0 {
		r.byHandle[s.Handle] = c
	}
}

// firstReplySeg is the index of the reply chunk's first segment among the
// call's segments (read chunks come first, then write chunks); -1 when the
// call offers no reply chunk.
func (c *rpcCall) firstReplySeg() int {
	for i := range c.segs {
		if c.segs[i].kind == rpcChunkReply {
			return i
		}
	}
	return -1
}

// rpcFind finds the call whose chunk segment a transfer with this R_Key
// and address falls in.
func (r *rpcConn) rpcFind(rkey uint32, va uint64) (*rpcCall, int) {
	c := r.byHandle[rkey]
	if c == nil {
		return nil, 0
	}
	for i, s := range c.segs {
		if s.seg.Handle == rkey && va >= s.seg.Offset && (va-s.seg.Offset < uint64(s.seg.Length) || s.seg.Length == 0 && va == s.seg.Offset) {
			return c, i
		}
	}
	return nil, 0
}

// rpcRequestData follows the server's RDMA WRITE (into a write or reply
// chunk) or READ request (of a read chunk).
func (a *Analyzer) rpcRequestData(r *rpcConn, p *Packet, b *layers.BTH, info *layers.OpcodeInfo, pk *RPCRDMAPacket) {
	if info.Operation == layers.OpRDMAReadRequest {
		if !b.HasETH(layers.HdrRETH) {
			return
		}
		c, i := r.rpcFind(b.RETH.RKey, b.RETH.VA)
		if c == nil {
			return
		}
		a.rpcChunkPacket(p, pk, c, c.segs[i].kind)
		if r.reads == nil {
			r.reads = map[layers.PSN]rpcXfer{}
		}
		r.reads[b.PSN] = rpcXfer{call: c, kind: c.segs[i].kind, seg: i, off: int(b.RETH.VA - c.segs[i].seg.Offset), ok: true}
		return
	}
	w := &r.write
	switch info.Position {
	case layers.PosFirst, layers.PosOnly:
		w.ok = false
		if b.HasETH(layers.HdrRETH) {
			if c, i := r.rpcFind(b.RETH.RKey, b.RETH.VA); c != nil {
				*w = rpcXfer{call: c, kind: c.segs[i].kind, seg: i, off: int(b.RETH.VA - c.segs[i].seg.Offset), ok: true}
			}
		}
	}
	if !w.ok || r.calls[w.call.info.XID] != w.call {
		w.ok = false
		return
	}
	a.rpcChunkPacket(p, pk, w.call, w.kind)
	pl := b.PacketPayload()
	n := p.PayloadLength() // pl is less when the capture cut the packet
	if c := w.call; w.kind == rpcChunkReply {
		if len(c.replyFrames) < rpcMaxFragments {
			c.replyFrames = append(c.replyFrames, a.frame)
		}
		c.replyN++
		c.replyBytes += uint32(n)
		c.replyCut = c.replyCut || len(pl) < n
		// The reply chunk's segments hold the RPC reply, in order, each
		// filled before the next.
		off := w.off
		for _, s := range c.segs[c.firstReplySeg():w.seg] {
			off += int(s.seg.Length)
		}
		c.reply = a.rpc.rpcPut(c.reply, off, pl, rpcKeepMax, rpcReplyKeep)
		if w.call.segs[w.seg].seg.Offset == w.call.segs[c.firstReplySeg()].seg.Offset {
			c.replyFrame = a.frame // the reply chunk's first segment holds the RPC reply's start
		}
	}
	w.off += n
	if info.Position == layers.PosLast || info.Position == layers.PosOnly {
		w.ok = false
	}
}

// rpcReadResponse follows a client's READ response: a read chunk's data.
func (a *Analyzer) rpcReadResponse(r *rpcConn, p *Packet, b *layers.BTH, info *layers.OpcodeInfo, pk *RPCRDMAPacket) {
	x := &r.read
	if info.Position == layers.PosFirst || info.Position == layers.PosOnly {
		*x = r.reads[b.PSN]
		delete(r.reads, b.PSN)
	}
	if !x.ok {
		return
	}
	a.rpcChunkPacket(p, pk, x.call, x.kind)
	if x.kind == rpcChunkRead {
		a.rpcReadData(x, b.PacketPayload(), pk)
	}
	if info.Position == layers.PosLast || info.Position == layers.PosOnly {
		x.ok = false
	}
}

func (a *Analyzer) rpcChunkPacket(p *Packet, pk *RPCRDMAPacket, c *rpcCall, kind uint8) {
	p.Analysis.RPCRDMA = pk
	pk.Kind = RPCRDMAChunk
	pk.Call, pk.HasCall = c.info, true
	pk.ChunkKind = rpcChunkNames[kind]
}

// rpcFinish reports the calls still outstanding at the end.
func (a *Analyzer) rpcFinish() {
	for _, id := range slices.Sorted(maps.Keys(a.rpc.conns)) {
		a.rpcOutstanding(id, a.rpc.conns[id])
	}
}

// rpcRetire forgets the RPC-over-RDMA state of a connection that ends,
// reporting the calls it leaves without a reply unless the capture has
// ended (rpcFinish reports them then).
func (a *Analyzer) rpcRetire(id uint32) {
	if r := a.rpc.conns[id]; r != nil {
		if !a.finished {
			a.rpcOutstanding(id, r)
		}
		for _, c := range r.calls {
			a.rpc.kept -= len(c.reply) + len(c.msg) // their bytes leave the total keep
		}
		delete(a.rpc.conns, id)
	}
	delete(a.rpc.probes, id)
}

func (a *Analyzer) rpcOutstanding(id uint32, r *rpcConn) {
	reportUnanswered(a, FindRPCNoReply, id, r.calls, func(c *rpcCall) uint32 { return c.info.Frame })
}

// RPCSRT collects the service response time of every RPC call matched
// with its reply, by program, version and procedure (-z rpc,srt).
type RPCSRT struct {
	rows map[rpcSRTKey]*RPCSRTRow
}

type rpcSRTKey struct{ prog, vers, proc uint32 }

// RPCSRTRow is one procedure's response times.
type RPCSRTRow struct {
	Program, Version, Procedure uint32
	Name                        string // "NFSv3 READ"
	Errors                      int    // replies other than accepted with SUCCESS
	SRTSamples                         // call to reply
}

func (s *RPCSRT) add(c *RPCCallInfo, lat time.Duration, ok bool) {
	if s.rows == nil {
		s.rows = map[rpcSRTKey]*RPCSRTRow{}
	}
	k := rpcSRTKey{c.Program, c.Version, c.Procedure}
	r := s.rows[k]
	if r == nil {
		r = &RPCSRTRow{Program: c.Program, Version: c.Version, Procedure: c.Procedure, Name: c.ProgName() + " " + c.ProcName()}
		s.rows[k] = r
	}
	r.Samples = append(r.Samples, lat)
	if !ok {
		r.Errors++
	}
}

// Add counts p when it is an RPC reply matched with its call: ibdump feeds
// the packets -Y shows, as tshark's -z tables count them.
func (s *RPCSRT) Add(p *Packet) {
	if r := p.Analysis.RPCRDMA; r != nil && r.HasRPC && r.RPC.Type == layers.RPCReply && r.HasCall {
		s.add(&r.Call, r.Latency, r.RPC.ReplyStat == layers.RPCAccepted && r.RPC.AcceptStat == layers.RPCSuccess)
	}
}

// Rows returns the rows by program, version and procedure; each row's
// samples sorted.
func (s *RPCSRT) Rows() []*RPCSRTRow {
	out := make([]*RPCSRTRow, 0, len(s.rows))
	for _, r := range s.rows {
		sort.Slice(r.Samples, func(i, j int) bool { return r.Samples[i] < r.Samples[j] })
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Program != b.Program {
			return a.Program < b.Program
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Procedure < b.Procedure
	})
	return out
}

// RPCSRT returns the RPC service response times collected so far.
func (a *Analyzer) RPCSRT() *RPCSRT { return &a.rpc.srt }
