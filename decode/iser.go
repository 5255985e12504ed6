package decode

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// iSER, iSCSI over RDMA (the wire layout is in layers/iser.go).
//
// A connection carries iSER when the CM REQ that set it up named the
// IP-CM service of port 3260 (as tshark keys on it), when the user says so
// (-d qp==N,iser), or, for a capture that starts after the set-up, when
// its content shows it: a SEND whose iSER header and iSCSI request decode
// whole (opcode 1, no reserved bit, no STag without its valid flag, a
// known iSCSI opcode, a data segment the SEND holds), answered on the
// reverse direction by a SEND whose iSCSI response carries the request's
// Initiator Task Tag with the opcode that answers it. Until then nothing
// on the connection is called iSER: a wrong guess is worse than none (the
// NVMe-oF and RPC-over-RDMA detections follow the same rule).
//
// Every SEND on such a connection is one iSER message: a Hello, a
// HelloReply, or an iSCSI PDU. A SEND longer than the path MTU (a 4 KiB
// WRITE with its immediate data) is decoded from its FIRST packet, which
// holds the iSER header and the BHS: the task starts there, as the
// initiator sent it, and the MIDDLE and LAST packets are its data. A request
// is matched with its response by Initiator Task Tag (a SCSI Command with
// its SCSI Response, a Login with its Login Response ...), and a SCSI
// command with its data by the STags its iSER header names: the target
// RDMA WRITEs a READ's data into the Read STag's buffer and RDMA READs a
// WRITE's data from the Write STag's. Resent packets are skipped: each
// command counts once.

// ISERKind says what an iSER packet carries.
type ISERKind uint8

// iSER packet kinds.
const (
	ISERNone    ISERKind = iota
	ISERMessage          // a SEND: an iSER header, and an iSCSI PDU when HasPDU
	ISERData             // an RDMA WRITE or READ moving a SCSI command's data, or a packet of a long SEND
)

// ISERPacket is what the analysis found of iSER in one packet; the
// iser.*, iscsi.* and ibwire.iscsi.* fields read it. It belongs to the
// Analyzer and is valid until the next packet.
type ISERPacket struct {
	Kind   ISERKind
	Hdr    layers.ISERHeader
	PDU    layers.ISCSIPDU
	HasPDU bool
	// Task is the task a response or a data transfer belongs to (a
	// request's own, on the request).
	Task    ISCSITaskInfo
	HasTask bool
	Latency time.Duration // request to response, on the response
	// Outstanding is, on an iSCSI PDU, how many tasks of the connection
	// wait for their responses once it is counted (the depth over time,
	// with -z io,stat).
	Outstanding uint16
	// ToData is the time from a SCSI command to its first data, on the
	// first data packet.
	ToData    time.Duration
	HasToData bool
	// ResponseFrame is, on a request, the frame of its response when a
	// first pass found it (ibdump -2), 0 otherwise.
	ResponseFrame uint32
	// Continued says the message goes on in the SEND's next packets: the
	// PDU is decoded from its first packet, as far as that packet holds
	// its data segment (tshark decodes it there too).
	Continued bool
	// KeyValues are a Login's or Text's key=value pairs, as far as the
	// packet holds them.
	KeyValues []string
	// Resent says the packet is a copy of one the analysis counted: its
	// message is decoded for display, matched with nothing (no Task),
	// and counts nowhere (no Outstanding).
	Resent bool
	// Err is the iSER header's or the iSCSI PDU's decoding error.
	Err  error
	isid [6]byte
}

// Clone returns a copy of i that shares nothing with the Analyzer or the
// frame, for a renderer that keeps the packet past the next one.
func (i *ISERPacket) Clone() *ISERPacket {
	c := *i
	c.Hdr.Body = nil
	c.PDU.AHS = append([]byte(nil), i.PDU.AHS...)
	c.PDU.Data = append([]byte(nil), i.PDU.Data...)
	c.PDU.Pad = append([]byte(nil), i.PDU.Pad...)
	c.KeyValues = append([]string(nil), i.KeyValues...)
	return &c
}

// ISCSITaskInfo is what a task (an iSCSI request) was.
type ISCSITaskInfo struct {
	Frame  uint32
	ITT    uint32
	Opcode layers.ISCSIOpcode
	LUN    uint64
	// A SCSI Command's CDB operation code, its Expected Data Transfer
	// Length, and for a READ or WRITE its LBA and blocks (HasRange).
	CDBOpcode layers.SCSIOpcode
	EDTL      uint32
	LBA       uint64
	Blocks    uint32
	HasRange  bool
	Read      bool // the R flag
	Write     bool // the W flag
}

// Name names the task: "READ(10)" for a SCSI Command, the iSCSI opcode's
// name otherwise ("Login Command").
func (t *ISCSITaskInfo) Name() string {
	if t.Opcode == layers.ISCSISCSICommand {
		return t.CDBOpcode.String()
	}
	return t.Opcode.String()
}

// iscsiTask is an outstanding task.
type iscsiTask struct {
	info    ISCSITaskInfo
	at      time.Duration
	hasData bool
	// readSTag/readVA and writeSTag/writeVA are the buffers the iSER
	// header named (0 STag when none).
	readSTag, writeSTag uint32
	readVA, writeVA     uint64
}

// iserConn is the iSER state of one connection.
type iserConn struct {
	conv  uint32
	tasks map[uint32]*iscsiTask // outstanding, by ITT
	// bySTag finds the task whose buffer a transfer's R_Key names.
	bySTag map[uint32]*iscsiTask
	free   []*iscsiTask
	// A SEND in several packets, by direction side.
	cont [2]iserCont
	// The data transfer in progress: the target's current RDMA WRITE and
	// the initiator's current READ response, and the READs asked for, by
	// PSN.
	write, read iserXfer
	reads       map[layers.PSN]iserXfer
}

type iserXfer struct {
	task *iscsiTask
	ok   bool
}

// iserCont follows a SEND longer than one packet after its first.
type iserCont struct {
	active bool
	next   layers.PSN
	task   ISCSITaskInfo
	ok     bool // task holds the request the SEND carries
}

// iserProbe keeps a connection's recent candidate requests until a
// response answers one (content detection).
type iserProbe struct {
	cands [8]iserCandidate
	n     int
}

type iserCandidate struct {
	side uint8
	at   time.Duration
	task ISCSITaskInfo
}

// maxISERProbes bounds the connections whose candidate requests are kept.
const maxISERProbes = 4096

// iserState is the Analyzer's iSER state.
type iserState struct {
	conns  map[uint32]*iserConn
	probes map[uint32]*iserProbe
	pkt    ISERPacket
	srt    ISCSISRT
	probe  struct {
		hdr layers.ISERHeader
		pdu layers.ISCSIPDU
	}
}

// isISERServiceID reports the RDMA CM service ID of iSER: IP-CM, TCP port
// space, port 3260.
func isISERServiceID(sid uint64) bool {
	s := layers.ServiceID(sid)
	return s.IsIPCM() && s.Port() == layers.ISERPort
}

// iserOverride reports a connection the user declared iSER by one of its QPs.
func (a *Analyzer) iserOverride(d *direction) bool { return d.declared(a.opts.ISERQPs) }

// iserFollow follows an RC packet of a connection known to carry iSER,
// or a SEND of one not yet known.
func (a *Analyzer) iserFollow(d *direction, p *Packet, b *layers.BTH, info *layers.OpcodeInfo) {
	if a.opts.NoISER || p.Err != nil || d.svc != layers.ServiceRC {
		return
	}
	c := d.conv
	r := d.iser
	if r == nil {
		r = a.iser.conns[c.id]
		if l := a.opts.Links; r == nil && l != nil && l.second && l.iser[d.key] {
			r = a.iserNewConn(c) // a first pass found it
		}
		if l := a.opts.Lookahead; r == nil && l != nil && !a.opts.NoISERDetect && l.found(l.iser, d) {
			r = a.iserNewConn(c) // a look-ahead found it
		}
		if r == nil {
			if info.Operation != layers.OpSend {
				return
			}
			r = a.iserLabel(d, p, b, info)
			if r == nil {
				return
			}
		}
		for _, dd := range c.dirs {
			if dd != nil {
				dd.iser = r
			}
		}
		if l := a.opts.Links; l != nil {
			a.linkDirs(c, &l.iser)
		}
		if l := a.opts.Lookahead; l != nil {
			l.record(c, &l.iser)
		}
	}
	pk := &a.iser.pkt
	pk.reset()
	newData := p.Analysis.Info&InfoNewData != 0 || info.Response
	switch info.Operation {
	case layers.OpSend:
		p.Analysis.ISER = pk
		pk.Kind = ISERData
		if !newData {
			// A resent SEND: its PDU counted once, at its first copy;
			// this one shows what it carries (tshark decodes it too).
			pk.Resent = true
			if info.Position == layers.PosOnly || info.Position == layers.PosFirst {
				pk.Continued = info.Position == layers.PosFirst
				pk.decodeMessage(b.PacketPayload())
			}
			return
		}
		a.iserSend(r, d, b, info, pk)
		pk.Outstanding = uint16(min(len(r.tasks), 0xFFFF))
	case layers.OpRDMAWrite, layers.OpRDMAReadRequest:
		if newData {
			a.iserRequestData(r, p, b, info, pk)
		}
	case layers.OpRDMAReadResponse:
		if newData {
			a.iserReadResponse(r, p, b, info, pk)
		}
	}
}

// reset empties the packet record, keeping its slices' memory.
func (pk *ISERPacket) reset() {
	kv := pk.KeyValues
	*pk = ISERPacket{KeyValues: kv[:0]}
}

// iserLabel decides whether d's connection carries iSER, on a SEND: by
// the CM service ID, by the user's -d, or by content.
func (a *Analyzer) iserLabel(d *direction, p *Packet, b *layers.BTH, info *layers.OpcodeInfo) *iserConn {
	c := d.conv
	if isISERServiceID(c.serviceID) || a.iserOverride(d) {
		return a.iserNewConn(c)
	}
	if a.opts.NoISERDetect || info.Position != layers.PosOnly || p.Analysis.Info&InfoNewData == 0 {
		return nil
	}
	pr := &a.iser.probe
	if !layers.ISERPlausible(b.PacketPayload(), &pr.hdr, &pr.pdu) {
		return nil
	}
	op := pr.pdu.Opcode
	if _, isReq := op.Response(); isReq && pr.pdu.ITT != layers.ISCSIReservedITT {
		if a.iser.probes == nil {
			a.iser.probes = map[uint32]*iserProbe{}
		}
		q := a.iser.probes[c.id]
		if q == nil {
			if len(a.iser.probes) >= maxISERProbes {
				clear(a.iser.probes) // bounded memory, as nvmeLabel does
			}
			q = &iserProbe{}
			a.iser.probes[c.id] = q
		}
		cd := &q.cands[q.n%len(q.cands)]
		q.n++
		*cd = iserCandidate{side: d.side, at: a.now, task: iscsiTaskOf(&pr.pdu, a.frame)}
		return nil
	}
	if !op.FromTarget() {
		return nil
	}
	q := a.iser.probes[c.id]
	if q == nil {
		return nil
	}
	for i := range min(q.n, len(q.cands)) {
		cd := &q.cands[i]
		if resp, _ := cd.task.Opcode.Response(); cd.side == d.side || cd.task.ITT != pr.pdu.ITT || resp != op {
			continue
		}
		// Consistent evidence: a request and its response.
		delete(a.iser.probes, c.id)
		r := a.iserNewConn(c)
		a.iserStart(r, cd.task, cd.at, nil)
		return r
	}
	return nil
}

func (a *Analyzer) iserNewConn(c *conv) *iserConn {
	if a.iser.conns == nil {
		a.iser.conns = map[uint32]*iserConn{}
	}
	r := &iserConn{conv: c.id, tasks: map[uint32]*iscsiTask{}, bySTag: map[uint32]*iscsiTask{}}
	a.iser.conns[c.id] = r
	return r
}

// iserSend follows a SEND: an iSER message whole, or a packet of one.
func (a *Analyzer) iserSend(r *iserConn, d *direction, b *layers.BTH, info *layers.OpcodeInfo, pk *ISERPacket) {
	msg := b.PacketPayload()
	ct := &r.cont[d.side&1]
	switch info.Position {
	case layers.PosOnly:
		ct.active = false
	case layers.PosFirst:
		*ct = iserCont{active: true, next: b.PSN.Add(1)}
		pk.Continued = true
	case layers.PosMiddle, layers.PosLast:
		if !ct.active || b.PSN != ct.next {
			ct.active = false // a packet of it was not captured
			return
		}
		ct.next = ct.next.Add(1)
		if ct.ok {
			pk.Task, pk.HasTask = ct.task, true
		}
		if info.Position == layers.PosLast {
			ct.active = false
		}
		return
	}
	defer func() {
		if ct.active && pk.HasTask {
			ct.task, ct.ok = pk.Task, true
		}
	}()
	if sub := pk.decodeMessage(msg); sub != ULPFieldNone {
		a.finding(Finding{Kind: FindULPMalformed, Sub: sub, Frame: a.frame, Conv: r.conv, PSN: b.PSN})
		if !pk.HasPDU {
			return
		}
	} else if !pk.HasPDU {
		return // Hello, HelloReply
	}
	if info.Position == layers.PosOnly && (pk.Err != nil || len(pk.PDU.Data) < int(pk.PDU.DataLength)) {
		// A whole SEND that ends before the AHS or the data segment its
		// BHS announces (a longer one's rest is in its next packets).
		a.finding(Finding{Kind: FindULPMalformed, Sub: ULPFieldISCSIData, Frame: a.frame, Conv: r.conv, PSN: b.PSN})
	}
	u := &pk.PDU
	if _, isReq := u.Opcode.Response(); isReq {
		if u.Opcode == layers.ISCSINOPOut && u.ITT == layers.ISCSIReservedITT {
			return // answers a target's NOP-In: no response
		}
		a.iserStart(r, iscsiTaskOf(u, a.frame), a.now, pk)
		return
	}
	if !u.Opcode.FromTarget() {
		return // Data-Out, SNACK
	}
	tk := r.tasks[u.ITT]
	if tk == nil {
		return
	}
	pk.Task, pk.HasTask = tk.info, true
	switch u.Opcode {
	case layers.ISCSIDataIn, layers.ISCSIR2T:
		return // a part of the task, not its end
	}
	if resp, _ := tk.info.Opcode.Response(); resp != u.Opcode {
		return // a Reject, or an Asynchronous Message
	}
	pk.Latency = a.now - tk.at
	if l := a.opts.Links; l != nil && !l.second {
		if l.iscsiResp == nil {
			l.iscsiResp = map[uint32]uint32{}
		}
		l.iscsiResp[tk.info.Frame] = a.frame
	}
	ok := ISCSIResponseOK(u)
	a.iser.srt.add(&tk.info, pk.Latency, ok)
	if !ok {
		a.finding(Finding{Kind: FindISCSIError, Frame: a.frame, Ref: tk.info.Frame, Conv: r.conv})
	}
	if !(u.Opcode == layers.ISCSILoginResp || u.Opcode == layers.ISCSITextResp) || u.Final() {
		a.iserDone(r, tk)
	}
}

// decodeMessage decodes the iSER message msg starts (the SEND's first
// packet) into pk: its iSER header and, for iSCSI control, its PDU with a
// Login's or Text's key=value pairs. It returns the field a malformed
// message breaks at (ULPFieldNone when none stops it); HasPDU says
// whether the BHS decoded. It matches nothing: a resent SEND is shown
// with it alone.
func (pk *ISERPacket) decodeMessage(msg []byte) uint8 {
	pk.Kind = ISERMessage
	if err := pk.Hdr.DecodeFromBytes(msg); err != nil {
		pk.Err = err
		return ULPFieldISERHdr
	}
	if pk.Hdr.Opcode != layers.ISERControl {
		return ULPFieldNone // Hello, HelloReply
	}
	if err := pk.PDU.DecodeFromBytes(pk.Hdr.Body); err != nil {
		pk.Err = err
		if len(pk.Hdr.Body) < layers.ISCSIBHSLength {
			return ULPFieldISCSIBHS
		}
	}
	pk.HasPDU = true
	u := &pk.PDU
	switch u.Opcode {
	case layers.ISCSILoginReq, layers.ISCSILoginResp, layers.ISCSITextReq, layers.ISCSITextResp:
		u.KeyValues(func(kv []byte) bool {
			pk.KeyValues = append(pk.KeyValues, string(kv))
			return true
		})
		for k := range pk.isid {
			pk.isid[k] = byte(u.LUN >> (56 - 8*k))
		}
	}
	return ULPFieldNone
}

// iscsiTaskOf is the task request u, sent in frame, starts.
func iscsiTaskOf(u *layers.ISCSIPDU, frame uint32) ISCSITaskInfo {
	t := ISCSITaskInfo{Frame: frame, ITT: u.ITT, Opcode: u.Opcode, LUN: u.LUN}
	if u.Opcode == layers.ISCSISCSICommand {
		t.CDBOpcode, t.EDTL, t.Read, t.Write = layers.SCSIOpcode(u.CDB[0]), u.EDTL(), u.ReadFlag(), u.WriteFlag()
		t.LBA, t.Blocks, t.HasRange = layers.CDBRange(u.CDB[:])
	}
	return t
}

// ISCSIResponseOK reports whether response u says its request succeeded:
// a SCSI Response with iSCSI response 0 and status Good, a Login Response
// without an error class, a Task Management or Logout Response with
// response 0; any other PDU says nothing against it.
func ISCSIResponseOK(u *layers.ISCSIPDU) bool {
	switch u.Opcode {
	case layers.ISCSISCSIResponse:
		return u.Response() == 0 && u.Status() == layers.SCSIGood
	case layers.ISCSILoginResp:
		return u.LoginStatus()>>8 == 0
	case layers.ISCSITaskMgmtResp, layers.ISCSILogoutResp:
		return u.B2 == 0
	}
	return true
}

// iserStart records task t, sent at at; pk is the request's packet.
func (a *Analyzer) iserStart(r *iserConn, t ISCSITaskInfo, at time.Duration, pk *ISERPacket) {
	if old := r.tasks[t.ITT]; old != nil {
		// The tag reused: its response was not captured, or a Login or
		// Text negotiation goes on with its next request (its response
		// said Transit or Final 0).
		a.iserDone(r, old)
	}
	if len(r.tasks) >= maxULPOpen {
		// Tasks no response answers: said as such, and forgotten, so
		// memory stays bounded.
		a.iserOutstanding(r.conv, r)
		for _, old := range r.tasks {
			a.iserDone(r, old)
		}
	}
	var k *iscsiTask
	if n := len(r.free); n > 0 {
		k, r.free = r.free[n-1], r.free[:n-1]
	} else {
		k = &iscsiTask{}
	}
	*k = iscsiTask{info: t, at: at}
	r.tasks[t.ITT] = k
	if pk != nil {
		pk.Task, pk.HasTask = t, true
		if l := a.opts.Links; l != nil && l.second {
			pk.ResponseFrame = l.iscsiResp[t.Frame]
		}
		h := &pk.Hdr
		if h.RSV() && h.ReadSTag != 0 {
			k.readSTag, k.readVA = h.ReadSTag, h.ReadVA
			r.bySTag[h.ReadSTag] = k
		}
		if h.WSV() && h.WriteSTag != 0 {
			k.writeSTag, k.writeVA = h.WriteSTag, h.WriteVA
			r.bySTag[h.WriteSTag] = k
		}
	}
}

// iserDone forgets task k.
func (a *Analyzer) iserDone(r *iserConn, k *iscsiTask) {
	delete(r.tasks, k.info.ITT)
	for _, s := range [2]uint32{k.readSTag, k.writeSTag} {
		if s != 0 && r.bySTag[s] == k {
			delete(r.bySTag, s)
		}
	}
	if r.write.task == k {
		r.write.ok = false
	}
	if r.read.task == k {
		r.read.ok = false
	}
	for psn, x := range r.reads {
		if x.task == k {
			delete(r.reads, psn)
		}
	}
	r.free = append(r.free, k)
}

// iserFind finds the task whose buffer a transfer with this R_Key and
// address falls in: a READ's for an RDMA WRITE, a WRITE's for an RDMA
// READ.
func (r *iserConn) iserFind(rkey uint32, va uint64, write bool) *iscsiTask {
	k := r.bySTag[rkey]
	if k == nil {
		return nil
	}
	stag, base := k.writeSTag, k.writeVA
	if write {
		stag, base = k.readSTag, k.readVA
	}
	if stag != rkey || va < base || va-base >= uint64(k.info.EDTL) && va != base {
		return nil
	}
	return k
}

func (a *Analyzer) iserDataPacket(p *Packet, pk *ISERPacket, k *iscsiTask) {
	p.Analysis.ISER = pk
	pk.Kind = ISERData
	pk.Task, pk.HasTask = k.info, true
	if !k.hasData {
		k.hasData = true
		pk.ToData, pk.HasToData = a.now-k.at, true
	}
}

// iserRequestData follows the target's RDMA WRITE (a SCSI READ's data) or
// READ request (for a SCSI WRITE's data).
func (a *Analyzer) iserRequestData(r *iserConn, p *Packet, b *layers.BTH, info *layers.OpcodeInfo, pk *ISERPacket) {
	if info.Operation == layers.OpRDMAReadRequest {
		if !b.HasETH(layers.HdrRETH) {
			return
		}
		k := r.iserFind(b.RETH.RKey, b.RETH.VA, false)
		if k == nil {
			return
		}
		a.iserDataPacket(p, pk, k)
		if r.reads == nil {
			r.reads = map[layers.PSN]iserXfer{}
		}
		r.reads[b.PSN] = iserXfer{task: k, ok: true}
		return
	}
	w := &r.write
	switch info.Position {
	case layers.PosFirst, layers.PosOnly:
		w.ok = false
		if b.HasETH(layers.HdrRETH) {
			if k := r.iserFind(b.RETH.RKey, b.RETH.VA, true); k != nil {
				*w = iserXfer{task: k, ok: true}
			}
		}
	}
	if !w.ok || r.tasks[w.task.info.ITT] != w.task {
		w.ok = false
		return
	}
	a.iserDataPacket(p, pk, w.task)
	if info.Position == layers.PosLast || info.Position == layers.PosOnly {
		w.ok = false
	}
}

// iserReadResponse follows the initiator's READ response: a SCSI WRITE's data.
func (a *Analyzer) iserReadResponse(r *iserConn, p *Packet, b *layers.BTH, info *layers.OpcodeInfo, pk *ISERPacket) {
	x := &r.read
	if info.Position == layers.PosFirst || info.Position == layers.PosOnly {
		*x = r.reads[b.PSN]
		delete(r.reads, b.PSN)
	}
	if !x.ok {
		return
	}
	a.iserDataPacket(p, pk, x.task)
	if info.Position == layers.PosLast || info.Position == layers.PosOnly {
		x.ok = false
	}
}

// iserFinish reports the tasks still outstanding at the end.
func (a *Analyzer) iserFinish() {
	for _, id := range slices.Sorted(maps.Keys(a.iser.conns)) {
		a.iserOutstanding(id, a.iser.conns[id])
	}
}

// iserRetire forgets the iSER state of a connection that ends, reporting
// the tasks it leaves without a response unless the capture has ended
// (iserFinish reports them then).
func (a *Analyzer) iserRetire(id uint32) {
	if r := a.iser.conns[id]; r != nil {
		if !a.finished {
			a.iserOutstanding(id, r)
		}
		delete(a.iser.conns, id)
	}
	delete(a.iser.probes, id)
}

func (a *Analyzer) iserOutstanding(id uint32, r *iserConn) {
	reportUnanswered(a, FindISCSINoResponse, id, r.tasks, func(k *iscsiTask) uint32 { return k.info.Frame })
}

// ISCSISRT collects the service response time of every iSCSI request
// matched with its response, by opcode and, for SCSI commands, CDB
// operation code (-z iscsi,srt).
type ISCSISRT struct {
	rows map[iscsiSRTKey]*ISCSISRTRow
}

type iscsiSRTKey struct {
	op  layers.ISCSIOpcode
	cdb layers.SCSIOpcode
}

// ISCSISRTRow is one command's response times.
type ISCSISRTRow struct {
	Opcode    layers.ISCSIOpcode
	CDBOpcode layers.SCSIOpcode // SCSI Commands'
	Command   string            // "READ(10)", "Login Command"
	Errors    int               // responses that say the request failed
	SRTSamples
}

func (s *ISCSISRT) add(t *ISCSITaskInfo, lat time.Duration, ok bool) {
	if s.rows == nil {
		s.rows = map[iscsiSRTKey]*ISCSISRTRow{}
	}
	k := iscsiSRTKey{op: t.Opcode}
	if t.Opcode == layers.ISCSISCSICommand {
		k.cdb = t.CDBOpcode
	}
	row := s.rows[k]
	if row == nil {
		row = &ISCSISRTRow{Opcode: k.op, CDBOpcode: k.cdb, Command: t.Name()}
		s.rows[k] = row
	}
	row.Samples = append(row.Samples, lat)
	if !ok {
		row.Errors++
	}
}

// Add counts p when it is an iSCSI response matched with its request:
// ibdump feeds the packets -Y shows, as tshark's -z tables count them.
func (s *ISCSISRT) Add(p *Packet) {
	i := p.Analysis.ISER
	if i == nil || !i.HasPDU || !i.HasTask || !i.PDU.Opcode.FromTarget() {
		return
	}
	if resp, _ := i.Task.Opcode.Response(); resp == i.PDU.Opcode {
		s.add(&i.Task, i.Latency, ISCSIResponseOK(&i.PDU))
	}
}

// Rows returns the rows by opcode, SCSI commands by CDB operation code;
// each row's samples sorted.
func (s *ISCSISRT) Rows() []*ISCSISRTRow {
	out := make([]*ISCSISRTRow, 0, len(s.rows))
	for _, r := range s.rows {
		sort.Slice(r.Samples, func(i, j int) bool { return r.Samples[i] < r.Samples[j] })
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Opcode != out[j].Opcode {
			return out[i].Opcode < out[j].Opcode
		}
		return out[i].CDBOpcode < out[j].CDBOpcode
	})
	return out
}

// ISCSISRT returns the iSCSI service response times collected so far.
func (a *Analyzer) ISCSISRT() *ISCSISRT { return &a.iser.srt }
