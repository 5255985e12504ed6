package decode

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// NVMe over Fabrics on RDMA (the wire layout is in layers/nvmeof.go).
//
// A connection carries NVMe-oF when the CM REQ that set it up named the
// IP-CM service of port 4420, when the user says so (-d qp==N,nvme-rdma),
// or, for a capture that starts after the set-up, when its content shows
// it: a 64-byte SEND whose SQE has a known opcode and an SGL (NVMe-oF
// commands always use SGLs), answered on the reverse direction by a
// 16-byte SEND whose CQE carries the same command id. Until then nothing
// on the connection is called NVMe: a wrong guess is worse than none.
//
// On an NVMe-oF connection the host's SENDs are command capsules, each
// reassembled from its FIRST/MIDDLE/LAST packets (a 4 KiB in-capsule Write
// is five packets); the controller's SENDs are response capsules. Each
// command is matched with its completion by command id (the connection is
// one queue, so the id is unique among its outstanding commands), and
// with its data: the controller's RDMA WRITEs (a Read's data, to the host)
// and RDMA READs (a Write's data, from the host) use the SGL's key as
// their R_Key. Resent packets are skipped: each command counts once.

// NVMeKind says what an NVMe-oF packet carries.
type NVMeKind uint8

// NVMe-oF packet kinds.
const (
	NVMeNone       NVMeKind = iota
	NVMeCommand             // the packet completes a command capsule
	NVMeCompletion          // a response capsule
	NVMeData                // an RDMA WRITE or READ moving a command's data, or a packet of a capsule
)

// NVMePacket is what the analysis found of NVMe-oF in one packet; the
// nvme.* and ibwire.nvme.* fields read it. It belongs to the Analyzer and
// is valid until the next packet.
type NVMePacket struct {
	Kind   NVMeKind
	QID    uint16
	HasQID bool
	// Admin says the queue is an admin queue (qid 0); when the qid is not
	// known (a capture without the queue's Connect or CM REQ) it is
	// guessed from the command.
	Admin bool
	SQE   layers.NVMeSQE // Kind NVMeCommand
	CQE   layers.NVMeCQE // Kind NVMeCompletion
	// Connect holds the Connect data of a Connect with in-capsule data.
	Connect    layers.NVMeConnectData
	HasConnect bool
	// InCapsule is the bytes of data the command capsule carried after its SQE.
	InCapsule int
	// Cmd is the command a completion or a data transfer belongs to.
	Cmd      NVMeCommandInfo
	HasCmd   bool
	Latency  time.Duration // command to completion, on the completion
	ToData   time.Duration // command to its first data, on the first data packet
	HasToDat bool
	// Resent says the packet is a copy of one the analysis counted: its
	// capsule is decoded for display, matched with nothing (HasCmd is
	// false) and counts nowhere (no Outstanding).
	Resent bool
	// Outstanding is, on a command or a completion, how many commands of
	// the queue wait for their completion once the packet is counted: the
	// queue depth over time (-z io,stat,0.01,MAX(ibwire.nvme.outstanding)).
	Outstanding uint16
	cqeBytes    [layers.NVMeCQELength]byte
	sqeBytes    [layers.NVMeSQELength]byte
	// Data transfers: the previous packet of the same RDMA WRITE data, and
	// for a READ response the READ request's frame and the response's
	// previous packet.
	PrevFrame, ReadReqFrame, ReadPrevFrame uint32
	Payload                                []byte // a READ response's payload
	// data is what an RDMA WRITE packet holds of the structure its
	// command's data is (an Identify's, a log page's), and strs the
	// analysis' copies of its strings (fields_nvme_data.go).
	data nvmeData
	strs map[string]string
}

// Clone returns a copy of n that shares nothing with the Analyzer or the
// frame, for a renderer that keeps the packet past the next one.
func (n *NVMePacket) Clone() *NVMePacket {
	c := *n
	c.SQE.InCapsule = nil // read only while the packet is analyzed (Connect)
	c.Connect.HostID = append([]byte(nil), n.Connect.HostID...)
	c.Payload = append([]byte(nil), n.Payload...)
	if c.Connect.Raw != nil {
		c.Connect.Raw = append([]byte(nil), n.Connect.Raw...)
		c.Connect.HostID = c.Connect.Raw[:16]
	}
	if c.data.kind != nvmeDataNone {
		// Its own copy of the data and of its strings: the Analyzer's go.
		c.data.payload = append([]byte(nil), n.data.payload...)
		var st nvmeState
		st.intern(&c.data)
		c.strs = st.strs
	}
	return &c
}

// NVMeCommandInfo is what a completion's or data transfer's command was.
type NVMeCommandInfo struct {
	Frame   uint32
	Opcode  layers.NVMeOpcode
	Fabrics layers.NVMeFabricsType
	Admin   bool
	NSID    uint32
	SLBA    uint64
	Blocks  uint32
	Bytes   uint32
	CID     uint16
	CDW10   uint32
	CDW11   uint32 // a Property Get's offset, which its completion's data is read by
	// data is the structure the command's data is, from lpo on.
	data nvmeDataKind
	lpo  uint64
}

// nvmeFeatureNumQueues is the Number of Queues feature.
const nvmeFeatureNumQueues layers.NVMeFeature = 0x07

// Name names the command: "Read", "Identify", "Fabrics Connect".
func (c *NVMeCommandInfo) Name() string { return nvmeCommandName(c.Opcode, c.Fabrics, c.Admin) }

func nvmeCommandName(op layers.NVMeOpcode, ft layers.NVMeFabricsType, admin bool) string {
	if op == layers.NVMeOpFabrics {
		if n, ok := nvmeFabricsCommandNames[ft]; ok {
			return n
		}
		return "Fabrics"
	}
	if admin {
		if n, ok := op.AdminName(); ok {
			return n
		}
	} else if n, ok := op.IOName(); ok {
		return n
	}
	return "Unknown"
}

// nvmeFabricsCommandNames are the Fabrics commands' names, built once so
// that naming a command does not allocate.
var nvmeFabricsCommandNames = func() map[layers.NVMeFabricsType]string {
	m := map[layers.NVMeFabricsType]string{}
	for t := range 256 {
		if ft := layers.NVMeFabricsType(t); ft.Known() {
			m[ft] = "Fabrics " + ft.String()
		}
	}
	return m
}()

// nvmeCmd is an outstanding command.
type nvmeCmd struct {
	info     NVMeCommandInfo
	at       time.Duration
	key      uint32 // SGL key, 0 when none
	hasData  bool   // its first data was seen
	dataAt   time.Duration
	inflight bool
	// trBytes counts the data the controller's RDMA WRITEs have moved;
	// count is the entry count the data's header gave (-1 until then).
	trBytes uint64
	count   int
}

// nvmeConn is the NVMe-oF state of one connection (one queue).
type nvmeConn struct {
	host   uint8 // the side that sends commands
	qid    uint16
	hasQID bool
	asm    nvmeAssembly
	cmds   map[uint16]*nvmeCmd
	byKey  map[uint32]*nvmeCmd
	free   []*nvmeCmd
	conv   uint32
	// The data transfer in progress: the controller's current RDMA WRITE
	// and the host's current READ response, and the READs asked for, by
	// PSN (a READ's responses start at its PSN).
	write, read nvmeXfer
	reads       map[layers.PSN]nvmeXfer
	// span is the controller's latest RDMA WRITE of a command's data, by
	// PSN, and recent the frames of its latest WRITE packets: a packet
	// resent in it (go-back-N after a NAK) is shown with its command.
	span   nvmeSpan
	recent [16]nvmePSNFrame
	nrec   int
}

// nvmeSpan is the PSNs an RDMA WRITE of command info's data took.
type nvmeSpan struct {
	info        NVMeCommandInfo
	first, last layers.PSN
	ok          bool
}

type nvmePSNFrame struct {
	psn   layers.PSN
	frame uint32
}

// nvmeXfer is one RDMA data transfer of a command.
type nvmeXfer struct {
	info  NVMeCommandInfo
	frame uint32 // the READ request, or the previous WRITE packet
	prev  uint32 // a READ response's previous packet
	// cmd is an RDMA WRITE's command, whose data's structure it reads while
	// its packets come in order (next is the PSN the next one has).
	cmd  *nvmeCmd
	next layers.PSN
	ok   bool
}

// nvmeAssembly reassembles a multi-packet command capsule as the target
// takes its packets: in PSN order, each once, however often it was sent.
type nvmeAssembly struct {
	active bool
	frame  uint32
	first  layers.PSN // the SEND FIRST's
	next   layers.PSN
	buf    []byte
	total  int // the capsule's bytes so far; buf keeps only its start
}

// nvmeProbe keeps a connection's recent candidate command capsules until a
// completion answers one (content detection).
type nvmeProbe struct {
	cands [8]nvmeCandidate
	n     int
}

type nvmeCandidate struct {
	side  uint8
	frame uint32
	at    time.Duration
	sqe   [layers.NVMeSQELength]byte
}

// maxNVMeProbes bounds the connections whose candidate commands are kept
// at once (about 600 bytes each).
const maxNVMeProbes = 4096

// nvmeState is the Analyzer's NVMe-oF state.
type nvmeState struct {
	conns  map[uint32]*nvmeConn // by conversation id
	probes map[uint32]*nvmeProbe
	pkt    NVMePacket
	srt    NVMeSRT
	strs   map[string]string // the data structures' strings (fields_nvme_data.go)
}

// NVMeSRT collects the service response time of every NVMe-oF command
// matched with its completion, by queue kind and command (-z nvme,srt).
type NVMeSRT struct {
	rows map[nvmeSRTKey]*NVMeSRTRow
}

type nvmeSRTKey struct {
	admin   bool
	opcode  layers.NVMeOpcode
	fabrics layers.NVMeFabricsType
}

// NVMeSRTRow is one command's response times.
type NVMeSRTRow struct {
	Queue      string // "admin" or "I/O"
	Command    string
	Opcode     layers.NVMeOpcode
	Errors     int // completions with an error status
	SRTSamples     // command to completion
}

func (s *NVMeSRT) add(c *NVMeCommandInfo, lat time.Duration, ok bool) {
	if s.rows == nil {
		s.rows = map[nvmeSRTKey]*NVMeSRTRow{}
	}
	k := nvmeSRTKey{admin: c.Admin, opcode: c.Opcode}
	if c.Opcode == layers.NVMeOpFabrics {
		k.fabrics = c.Fabrics
	}
	r := s.rows[k]
	if r == nil {
		q := "I/O"
		if c.Admin {
			q = "admin"
		}
		r = &NVMeSRTRow{Queue: q, Command: c.Name(), Opcode: c.Opcode}
		s.rows[k] = r
	}
	r.Samples = append(r.Samples, lat)
	if !ok {
		r.Errors++
	}
}

// Add counts p when it is an NVMe-oF completion matched with its command:
// ibdump feeds the packets -Y shows, as tshark's -z tables count them.
func (s *NVMeSRT) Add(p *Packet) {
	if n := p.Analysis.NVMe; n != nil && n.Kind == NVMeCompletion && n.HasCmd {
		s.add(&n.Cmd, n.Latency, n.CQE.Status.OK())
	}
}

// Rows returns the rows, admin commands first, then by opcode; each row's
// samples sorted.
func (s *NVMeSRT) Rows() []*NVMeSRTRow {
	var out []*NVMeSRTRow
	keys := make([]nvmeSRTKey, 0, len(s.rows))
	for k := range s.rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.admin != b.admin {
			return a.admin
		}
		if a.opcode != b.opcode {
			return a.opcode < b.opcode
		}
		return a.fabrics < b.fabrics
	})
	for _, k := range keys {
		r := s.rows[k]
		sort.Slice(r.Samples, func(i, j int) bool { return r.Samples[i] < r.Samples[j] })
		out = append(out, r)
	}
	return out
}

// NVMeSRT returns the NVMe-oF service response times collected so far.
func (a *Analyzer) NVMeSRT() *NVMeSRT { return &a.nv.srt }

// isNVMeServiceID reports the RDMA CM service ID of NVMe-oF: IP-CM, TCP
// port space, port 4420.
func isNVMeServiceID(sid uint64) bool {
	s := layers.ServiceID(sid)
	return s.IsIPCM() && s.Port() == layers.NVMeOFPort
}

// nvmeSendOpcodes has a bit for each RC opcode that can carry an NVMe-oF
// capsule: SEND FIRST, MIDDLE, LAST, ONLY, and LAST and ONLY with
// Invalidate (a controller's CQE may invalidate the host's key); never
// with immediate data (layers' opcode table names them).
var nvmeSendOpcodes = func() (m uint32) {
	for op := range layers.Opcode(32) {
		if i := op.Info(); i.Operation == layers.OpSend && i.Service == layers.ServiceRC && !i.Has(layers.HdrImmDt) {
			m |= 1 << op
		}
	}
	return m
}()

// nvmeFollow follows an RC packet of a direction known to carry NVMe-oF,
// or a SEND of one not yet known.
func (a *Analyzer) nvmeFollow(d *direction, p *Packet, b *layers.BTH, info *layers.OpcodeInfo) {
	if a.opts.NoULP || p.Err != nil || d.svc != layers.ServiceRC {
		return
	}
	c := d.conv
	n := d.nvme
	if n == nil {
		n = a.nv.conns[c.id]
		if n == nil {
			if l := a.opts.Links; l != nil && l.second {
				// A first pass found this direction's protocol.
				if host, ok := l.nvme[d.key]; ok {
					side := d.side
					if !host {
						side = 1 - side
					}
					n = a.nvmeNewConn(c, side)
				}
			}
		}
		if l := a.opts.Lookahead; n == nil && l != nil && !a.opts.NoULPDetect && l.found(l.nvme, d) {
			// A look-ahead found it, and which side is the host.
			side := d.side
			if !l.nvme[d.key] {
				side = 1 - side
			}
			n = a.nvmeNewConn(c, side)
		}
		if n == nil {
			if info.Operation != layers.OpSend {
				return
			}
			n = a.nvmeLabel(d, p, b, info)
			if n == nil {
				return
			}
		}
		a.nvmeAttach(d, n)
	}
	pk := &a.nv.pkt
	*pk = NVMePacket{QID: n.qid, HasQID: n.hasQID, Admin: n.hasQID && n.qid == 0}
	p.Analysis.NVMe = pk
	newData := p.Analysis.Info&InfoNewData != 0 || info.Response
	switch info.Operation {
	case layers.OpSend:
		if d.side == n.host {
			// A resent packet may complete a capsule whose first copy
			// was lost: the assembly takes it when it is the PSN due.
			a.nvmeCapsule(n, p, b, info, pk, newData)
		} else if !newData {
			a.nvmeResentResponse(b.PacketPayload(), pk)
		} else {
			a.nvmeResponse(n, p, b.PacketPayload(), pk)
		}
		pk.Outstanding = uint16(min(len(n.cmds), 0xFFFF))
	case layers.OpRDMAWrite, layers.OpRDMAReadRequest:
		pk.Kind = NVMeData
		if d.side != n.host {
			if newData {
				a.nvmeRequestData(n, b, info, pk)
			}
			if info.Operation == layers.OpRDMAWrite {
				n.resentWrite(b, pk, a.frame)
			}
		}
	case layers.OpRDMAReadResponse:
		pk.Kind = NVMeData
		if d.side == n.host && newData {
			a.nvmeReadResponse(n, b, info, pk)
		}
	default:
		p.Analysis.NVMe = nil // ACKs are the transport's: tshark gives them no nvme-rdma
	}
}

// nvmeLabel decides whether d's connection carries NVMe-oF, on a SEND: by
// the CM service ID, by the user's -d, or by content.
func (a *Analyzer) nvmeLabel(d *direction, p *Packet, b *layers.BTH, info *layers.OpcodeInfo) *nvmeConn {
	if info.Operation != layers.OpSend {
		return nil
	}
	c := d.conv
	if isNVMeServiceID(c.serviceID) || a.nvmeOverride(d) {
		// The host speaks first (Connect); a 16-byte SEND is a controller's CQE.
		host := d.side
		if len(b.PacketPayload()) == layers.NVMeCQELength && info.Position == layers.PosOnly {
			host = 1 - d.side
		}
		return a.nvmeNewConn(c, host)
	}
	if a.opts.NoULPDetect || info.Position != layers.PosOnly || p.Analysis.Info&InfoNewData == 0 {
		return nil
	}
	pl := b.PacketPayload()
	switch len(pl) {
	case layers.NVMeSQELength:
		var s layers.NVMeSQE
		if s.DecodeFromBytes(pl) != nil || !nvmePlausibleSQE(&s) {
			return nil
		}
		if a.nv.probes == nil {
			a.nv.probes = map[uint32]*nvmeProbe{}
		}
		pr := a.nv.probes[c.id]
		if pr == nil {
			if len(a.nv.probes) >= maxNVMeProbes {
				// Bounded memory: forget the evidence of every connection;
				// a queue that is NVMe-oF shows it again with its next
				// command.
				clear(a.nv.probes)
			}
			pr = &nvmeProbe{}
			a.nv.probes[c.id] = pr
		}
		cd := &pr.cands[pr.n%len(pr.cands)]
		pr.n++
		cd.side, cd.frame, cd.at = d.side, a.frame, a.now
		copy(cd.sqe[:], pl)
	case layers.NVMeCQELength:
		pr := a.nv.probes[c.id]
		if pr == nil {
			return nil
		}
		var q layers.NVMeCQE
		_ = q.DecodeFromBytes(pl)
		for i := range min(pr.n, len(pr.cands)) {
			cd := &pr.cands[i]
			if cd.side == d.side || cd.sqe[2] != byte(q.CID) || cd.sqe[3] != byte(q.CID>>8) {
				continue
			}
			// Consistent evidence: a command and its completion.
			delete(a.nv.probes, c.id)
			n := a.nvmeNewConn(c, cd.side)
			n.qid, n.hasQID = q.SQID, true
			var s layers.NVMeSQE
			_ = s.DecodeFromBytes(cd.sqe[:])
			a.nvmeStart(n, &s, len(s.InCapsule), cd.frame, cd.at, nil)
			return n
		}
	}
	return nil
}

// nvmePlausibleSQE reports a command a host could send over RDMA: a known
// opcode, an SGL (PSDT 01: NVMe-oF requires SGLs), no fused operation, and
// a keyed or in-capsule descriptor.
func nvmePlausibleSQE(s *layers.NVMeSQE) bool {
	if !s.Opcode.Known() || s.PSDT != 1 || s.Fuse != 0 {
		return false
	}
	if s.IsFabrics() && !s.FabricsType().Known() {
		return false
	}
	return s.SGL.Type == layers.NVMeSGLKeyedDataBlock || s.SGL.Type == layers.NVMeSGLDataBlock
}

// nvmeOverride reports a connection the user declared NVMe-oF by one of its QPs.
func (a *Analyzer) nvmeOverride(d *direction) bool { return d.declared(a.opts.NVMeQPs) }

// declared reports a connection the user named by one of its QPs (-d
// qp==N,PROTO): d's own QP or its peer direction's is among qps.
func (d *direction) declared(qps []uint32) bool {
	for _, qp := range qps {
		if d.key.qp == qp {
			return true
		}
		if pd := d.peer(); pd != nil && pd.key.qp == qp {
			return true
		}
	}
	return false
}

// linkDirs records, on a first pass (ibdump -2), every direction of c in
// *seen: the second pass knows the connection's upper layer from its
// first packet.
func (a *Analyzer) linkDirs(c *conv, seen *map[dirKey]bool) {
	if l := a.opts.Links; l != nil && !l.second {
		markDirs(c, seen)
	}
}

func (a *Analyzer) nvmeNewConn(c *conv, host uint8) *nvmeConn {
	if a.nv.conns == nil {
		a.nv.conns = map[uint32]*nvmeConn{}
	}
	n := &nvmeConn{host: host, cmds: map[uint16]*nvmeCmd{}, byKey: map[uint32]*nvmeCmd{}, conv: c.id}
	a.nv.conns[c.id] = n
	for _, d := range c.dirs {
		if d != nil {
			a.nvmeAttach(d, n)
		}
	}
	return n
}

// nvmeAttach marks direction d as carrying n's queue, and tells a second
// pass.
func (a *Analyzer) nvmeAttach(d *direction, n *nvmeConn) {
	d.nvme = n
	if l := a.opts.Links; l != nil && !l.second {
		markDir(&l.nvme, d.key, d.side == n.host)
	}
	if l := a.opts.Lookahead; l != nil && !l.reading {
		markDir(&l.nvme, d.key, d.side == n.host)
	}
}

// nvmeCapsule follows a host SEND: a command capsule whole, or a packet of
// one. newData is false for a copy of a PSN already seen: it is taken only
// as the packet an unfinished capsule waits for (go-back-N after a NAK or
// a timeout resends the packets after a lost one), so a command is
// decoded once, on the packet that completed it.
func (a *Analyzer) nvmeCapsule(n *nvmeConn, p *Packet, b *layers.BTH, info *layers.OpcodeInfo, pk *NVMePacket, newData bool) {
	pl := b.PacketPayload()
	as := &n.asm
	var capsule []byte
	switch info.Position {
	case layers.PosOnly:
		if !newData {
			a.nvmeResentCapsule(n, pl, pk)
			return
		}
		as.active = false
		capsule = pl
		as.total = len(pl)
	case layers.PosFirst:
		pk.Kind = NVMeData
		if !newData && (!as.active || b.PSN != as.first) {
			return
		}
		as.active, as.frame, as.first, as.next = true, a.frame, b.PSN, b.PSN.Add(1)
		as.buf = appendCapsule(as.buf[:0], pl)
		as.total = len(pl)
		if len(pl) >= layers.NVMeSQELength && !n.hasQID && pl[0] == byte(layers.NVMeOpFabrics) && pl[4] == byte(layers.NVMeFabricsConnect) {
			// A Connect with its data in the capsule: its queue is known
			// from its first packet, as tshark knows it from the CM REQ.
			var s layers.NVMeSQE
			_ = s.DecodeFromBytes(pl)
			n.qid, n.hasQID = s.ConnectQID(), true
			pk.QID, pk.HasQID = n.qid, true
		}
		return
	case layers.PosMiddle, layers.PosLast:
		pk.Kind = NVMeData
		if !as.active || b.PSN != as.next {
			// A packet after one lost (the target drops it and the
			// host resends both), or a copy of one already taken.
			return
		}
		as.buf = appendCapsule(as.buf, pl)
		as.total += len(pl)
		as.next = as.next.Add(1)
		if info.Position == layers.PosMiddle {
			return
		}
		as.active = false
		capsule = as.buf
	}
	if len(capsule) < layers.NVMeSQELength {
		// Not a command: said, and the connection goes on.
		a.finding(Finding{Kind: FindULPMalformed, Sub: ULPFieldNVMeSQE, Frame: a.frame, Conv: n.conv, PSN: b.PSN})
		return
	}
	pk.Kind = NVMeCommand
	_ = pk.SQE.DecodeFromBytes(capsule)
	copy(pk.sqeBytes[:], capsule)
	a.nvmeStart(n, &pk.SQE, as.total-layers.NVMeSQELength, a.frame, a.now, pk)
}

// nvmeCapsuleKept is how much of a capsule sent in several packets the
// analysis keeps: the SQE and a Connect's data, all it reads of one; the
// rest of the in-capsule data (a Write's) is counted from the SGL, so a
// long message costs no more memory than a short one.
const nvmeCapsuleKept = layers.NVMeSQELength + layers.NVMeConnectDataLength

func appendCapsule(buf, pl []byte) []byte {
	return append(buf, pl[:min(len(pl), max(nvmeCapsuleKept-len(buf), 0))]...)
}

// nvmeStart records command s, sent at frame/at with inCapsule bytes of
// data after it in its capsule (s.InCapsule may hold only their start).
func (a *Analyzer) nvmeStart(n *nvmeConn, s *layers.NVMeSQE, inCapsule int, frame uint32, at time.Duration, pk *NVMePacket) {
	if s.IsFabrics() && s.FabricsType() == layers.NVMeFabricsConnect {
		n.qid, n.hasQID = s.ConnectQID(), true
	}
	info := nvmeCommandInfo(n, s, inCapsule, frame)
	if pk != nil {
		pk.showCommand(n, s, &info, inCapsule)
		pk.HasCmd = true
	}
	if old := n.cmds[s.CID]; old != nil {
		// The id was reused before its completion was seen: the completion
		// was lost before the capture point.
		a.nvmeDone(n, old)
	}
	var c *nvmeCmd
	if k := len(n.free); k > 0 {
		c, n.free = n.free[k-1], n.free[:k-1]
	} else {
		c = &nvmeCmd{}
	}
	*c = nvmeCmd{info: info, at: at, inflight: true, count: -1}
	n.cmds[s.CID] = c
	if s.SGL.Keyed() && s.SGL.Key != 0 && len(s.InCapsule) == 0 {
		c.key = s.SGL.Key
		n.byKey[c.key] = c
	}
}

// nvmeCommandInfo is what command s, sent in frame with inCapsule bytes
// of data after it, is on queue n; it changes nothing.
func nvmeCommandInfo(n *nvmeConn, s *layers.NVMeSQE, inCapsule int, frame uint32) NVMeCommandInfo {
	admin := n.hasQID && n.qid == 0
	if !n.hasQID {
		admin = nvmeGuessAdmin(s)
	}
	info := NVMeCommandInfo{Frame: frame, Opcode: s.Opcode, Admin: admin, CID: s.CID, NSID: s.NSID, Bytes: s.SGL.Length, CDW10: s.CDW[0], CDW11: s.CDW[1]}
	if s.IsFabrics() {
		info.Fabrics, info.NSID = s.FabricsType(), 0
	} else if !admin && (s.Opcode == layers.NVMeOpRead || s.Opcode == layers.NVMeOpWrite || s.Opcode == layers.NVMeOpWriteZeroes) {
		info.SLBA, info.Blocks = s.SLBA(), s.Blocks()
	} else {
		info.data, info.lpo = nvmeDataKindOf(s, admin)
	}
	if inCapsule > 0 {
		info.Bytes = uint32(inCapsule)
	}
	return info
}

// showCommand puts command s, whose info is info, in pk for display.
func (pk *NVMePacket) showCommand(n *nvmeConn, s *layers.NVMeSQE, info *NVMeCommandInfo, inCapsule int) {
	pk.QID, pk.HasQID, pk.Admin = n.qid, n.hasQID, info.Admin
	pk.Cmd = *info
	pk.InCapsule = inCapsule
	if s.IsFabrics() && s.FabricsType() == layers.NVMeFabricsConnect && len(s.InCapsule) >= layers.NVMeConnectDataLength {
		pk.HasConnect = pk.Connect.DecodeFromBytes(s.InCapsule) == nil
	}
}

// nvmeResentCapsule shows a resent SEND ONLY of the host: the command
// capsule its first copy carried, counted and matched there. A command
// still outstanding by its id is shown as its first copy was (its queue
// kind, its data bytes).
func (a *Analyzer) nvmeResentCapsule(n *nvmeConn, pl []byte, pk *NVMePacket) {
	pk.Kind, pk.Resent = NVMeData, true
	if len(pl) < layers.NVMeSQELength {
		return // its first copy was said malformed
	}
	pk.Kind = NVMeCommand
	_ = pk.SQE.DecodeFromBytes(pl)
	copy(pk.sqeBytes[:], pl)
	info := nvmeCommandInfo(n, &pk.SQE, len(pl)-layers.NVMeSQELength, a.frame)
	if c := n.cmds[pk.SQE.CID]; c != nil && c.info.Opcode == info.Opcode {
		info = c.info
	}
	pk.showCommand(n, &pk.SQE, &info, len(pl)-layers.NVMeSQELength)
}

// nvmeResentResponse shows a resent SEND of the controller: the response
// capsule its first copy carried, matched with its command there.
func (a *Analyzer) nvmeResentResponse(pl []byte, pk *NVMePacket) {
	pk.Kind, pk.Resent = NVMeData, true
	if pk.CQE.DecodeFromBytes(pl) != nil {
		return
	}
	pk.Kind = NVMeCompletion
	copy(pk.cqeBytes[:], pl)
}

// nvmeGuessAdmin says whether a command on a queue of unknown id is an
// admin command: admin commands address no namespace or all of them,
// I/O commands a namespace.
func nvmeGuessAdmin(s *layers.NVMeSQE) bool {
	if _, io := s.Opcode.IOName(); !io {
		return true
	}
	if _, adm := s.Opcode.AdminName(); !adm {
		return false
	}
	return s.NSID == 0 || s.NSID == 0xffffffff
}

// nvmeDone forgets command c.
func (a *Analyzer) nvmeDone(n *nvmeConn, c *nvmeCmd) {
	delete(n.cmds, c.info.CID)
	if c.key != 0 && n.byKey[c.key] == c {
		delete(n.byKey, c.key)
	}
	c.inflight = false
	n.free = append(n.free, c)
}

// nvmeResponse follows a controller SEND: a response capsule.
func (a *Analyzer) nvmeResponse(n *nvmeConn, p *Packet, pl []byte, pk *NVMePacket) {
	if pk.CQE.DecodeFromBytes(pl) != nil {
		// Not a completion: said, and the connection goes on.
		a.finding(Finding{Kind: FindULPMalformed, Sub: ULPFieldNVMeCQE, Frame: a.frame, Conv: n.conv})
		return
	}
	pk.Kind = NVMeCompletion
	copy(pk.cqeBytes[:], pl)
	if !n.hasQID {
		// The controller names the submission queue it answers for.
		n.qid, n.hasQID = pk.CQE.SQID, true
		pk.QID, pk.HasQID = n.qid, true
	}
	c := n.cmds[pk.CQE.CID]
	if c == nil {
		return
	}
	pk.Cmd, pk.HasCmd = c.info, true
	pk.Admin = c.info.Admin
	pk.Latency = a.now - c.at
	ok := pk.CQE.Status.OK()
	a.nv.srt.add(&c.info, pk.Latency, ok)
	if !ok {
		a.finding(Finding{Kind: FindNVMeError, Frame: a.frame, Ref: c.info.Frame, Conv: n.conv})
	}
	a.nvmeDone(n, c)
}

// nvmeData ties a controller's RDMA WRITE or READ to the command whose SGL
// key it uses.
func (a *Analyzer) nvmeData(n *nvmeConn, rkey uint32, pk *NVMePacket) *nvmeCmd {
	c := n.byKey[rkey]
	if c == nil {
		return nil
	}
	pk.Cmd, pk.HasCmd = c.info, true
	if !c.hasData {
		c.hasData, c.dataAt = true, a.now
		pk.ToData, pk.HasToDat = a.now-c.at, true
	}
	return c
}

// nvmeWriteData reads what an RDMA WRITE packet of command c's data holds
// of the structure the command's data is, at the offset its earlier
// packets reached.
func (a *Analyzer) nvmeWriteData(c *nvmeCmd, pl []byte, pk *NVMePacket) {
	at := c.trBytes
	c.trBytes += uint64(len(pl))
	if c.info.data == nvmeDataNone {
		return
	}
	d := &pk.data
	*d = nvmeData{kind: c.info.data, off: c.info.lpo + at, payload: pl, count: c.count}
	if at == 0 {
		c.count = nvmeHeaderCount(d)
		d.count = c.count
	}
	a.nv.intern(d)
	pk.strs = a.nv.strs
}

// nvmeRequestData follows a controller's RDMA WRITE (a Read's data) or
// READ request (for a Write's data).
func (a *Analyzer) nvmeRequestData(n *nvmeConn, b *layers.BTH, info *layers.OpcodeInfo, pk *NVMePacket) {
	if info.Operation == layers.OpRDMAReadRequest {
		if !b.HasETH(layers.HdrRETH) {
			return
		}
		a.nvmeData(n, b.RETH.RKey, pk)
		if pk.HasCmd {
			if n.reads == nil {
				n.reads = map[layers.PSN]nvmeXfer{}
			}
			n.reads[b.PSN] = nvmeXfer{info: pk.Cmd, frame: a.frame, ok: true}
		}
		return
	}
	w := &n.write
	switch info.Position {
	case layers.PosFirst, layers.PosOnly:
		w.ok = false
		if b.HasETH(layers.HdrRETH) {
			w.cmd = a.nvmeData(n, b.RETH.RKey, pk)
			w.info, w.ok = pk.Cmd, pk.HasCmd
		}
	default:
		if w.ok {
			pk.Cmd, pk.HasCmd, pk.PrevFrame = w.info, true, w.frame
		}
		if b.PSN != w.next {
			// A packet of the data was not captured: where the rest sits
			// in the structure is not known.
			w.cmd = nil
		}
	}
	if c := w.cmd; w.ok && c != nil && c.inflight && c.info.Frame == w.info.Frame {
		a.nvmeWriteData(c, b.PacketPayload(), pk)
	}
	w.frame, w.next = a.frame, b.PSN.Add(1)
	if info.Position == layers.PosLast || info.Position == layers.PosOnly {
		w.ok = false
	}
}

// resentWrite shows a controller's RDMA WRITE packet the analysis did not
// tie to a command, resent within the latest data transfer (go-back-N
// after a NAK resends its MIDDLE and LAST packets after the LAST was
// seen), with that command, as tshark does: linked for display, counted
// nowhere (HasCmd stays false). It records the frame of every WRITE
// packet by PSN for the next one's PrevFrame.
func (n *nvmeConn) resentWrite(b *layers.BTH, pk *NVMePacket, frame uint32) {
	sp := &n.span
	switch {
	case pk.HasCmd && b.HasETH(layers.HdrRETH):
		*sp = nvmeSpan{info: pk.Cmd, first: b.PSN, last: b.PSN, ok: true}
	case pk.HasCmd:
		if sp.ok && sp.info.Frame == pk.Cmd.Frame && b.PSN.Diff(sp.last) > 0 {
			sp.last = b.PSN
		}
	case sp.ok && b.PSN.Diff(sp.first) >= 0 && b.PSN.Diff(sp.last) <= 0:
		pk.Cmd, pk.Resent = sp.info, true
		if !b.HasETH(layers.HdrRETH) {
			prev := b.PSN.Add(-1)
			for i := range min(n.nrec, len(n.recent)) {
				if r := n.recent[(n.nrec-1-i)%len(n.recent)]; r.psn == prev {
					pk.PrevFrame = r.frame
					break
				}
			}
		}
	}
	n.recent[n.nrec%len(n.recent)] = nvmePSNFrame{b.PSN, frame}
	n.nrec++
}

// nvmeReadResponse follows a host's READ response: a Write's data, or a
// Connect's data.
func (a *Analyzer) nvmeReadResponse(n *nvmeConn, b *layers.BTH, info *layers.OpcodeInfo, pk *NVMePacket) {
	r := &n.read
	if info.Position == layers.PosFirst || info.Position == layers.PosOnly {
		*r = n.reads[b.PSN]
		delete(n.reads, b.PSN)
	}
	if !r.ok {
		return
	}
	pk.Cmd, pk.HasCmd, pk.ReadReqFrame = r.info, true, r.frame
	if info.Position == layers.PosMiddle || info.Position == layers.PosLast {
		pk.ReadPrevFrame = r.prev
	}
	r.prev = a.frame
	pk.Payload = b.PacketPayload()
	if info.Position == layers.PosOnly && r.info.Opcode == layers.NVMeOpFabrics && r.info.Fabrics == layers.NVMeFabricsConnect {
		pk.HasConnect = pk.Connect.DecodeFromBytes(pk.Payload) == nil
	}
	if info.Position == layers.PosLast || info.Position == layers.PosOnly {
		r.ok = false
	}
}

// nvmeFinish reports the commands still outstanding at the end.
func (a *Analyzer) nvmeFinish() {
	for _, id := range slices.Sorted(maps.Keys(a.nv.conns)) {
		a.nvmeOutstanding(id, a.nv.conns[id])
	}
}

// nvmeRetire forgets the NVMe-oF state of a connection that ends,
// reporting the commands it leaves without a completion unless the
// capture has ended (nvmeFinish reports them then).
func (a *Analyzer) nvmeRetire(id uint32) {
	if n := a.nv.conns[id]; n != nil {
		if !a.finished {
			a.nvmeOutstanding(id, n)
		}
		delete(a.nv.conns, id)
	}
	delete(a.nv.probes, id)
}

func (a *Analyzer) nvmeOutstanding(id uint32, n *nvmeConn) {
	reportUnanswered(a, FindNVMeNoCompletion, id, n.cmds, func(c *nvmeCmd) uint32 { return c.info.Frame })
}
