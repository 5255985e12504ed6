package decode

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// Analyzer follows the conversations of a capture, packet by packet, in
// capture order: it pairs the two directions of each queue-pair connection
// (from CM REQ/REP on QP1, from the TCP exchange of ibv_*_pingpong and
// perftest, else from responses that answer outstanding requests), tracks
// each direction's PSNs as tcp.analysis tracks sequence numbers
// (gaps, retransmissions, out-of-order packets, go-back-N after a NAK,
// implied ACK timeouts), reassembles messages, matches requests with their
// responses for latency, counts congestion marks, and reports every anomaly
// as a Finding.
//
// Memory is bounded: state grows with the live connections (at most
// MaxLive, each with fixed-size rings of recent PSNs and outstanding
// requests) and never with the capture's length. A connection that ends
// (CM DREP, REJ) or stays idle is retired: its summary joins a capped list
// and its state is recycled. Analyze allocates nothing once a connection's
// state exists, but for the latency samples a connection keeps exactly
// (the first LatencyExact, 8 KiB, then fixed buckets). An Analyzer is not safe for concurrent use; it does no I/O.
type Analyzer struct {
	opts    AnalyzerOptions
	dirs    map[dirKey]*direction
	expect  map[dirKey]expectation    // directions announced by CM or an out-of-band exchange
	waiting map[hostPair][]*direction // directions not yet paired, by sender and receiver
	cm      cmTable
	oob     oobTable
	ud      map[udSender]*udTrack
	lru     conv // sentinel of the list of live conversations, most recent first
	live    int
	nextID  uint32
	done    []*Conversation
	dropped int // retired conversations left out of done (over MaxDone)
	expert  Expert
	now     time.Duration
	frame   uint32
	// pfcActive says a pause frame was seen, so RoCE packets are checked
	// against the pauses; beside now and frame, which every packet writes.
	pfcActive bool
	// ccActive says a congestion mark or CNP was seen, so the DCQCN rate
	// analysis runs (analysis_dcqcn.go).
	ccActive bool
	pkt      *Packet
	cache    [dirCacheSize]*direction // recently used directions, by dirCacheIndex
	key      dirKey                   // the current packet's
	free     struct {
		req  []*reqState
		resp []*respState
	}
	finished   bool
	lastExpire time.Duration
	nv         nvmeState // NVMe-oF (nvme.go)
	rpc        rpcState  // RPC over RDMA (rpcrdma.go)
	smbd       smbdState // SMB Direct (smbdirect.go)
	iser       iserState // iSER (iser.go)
	pfc        pfcTimeline
	cc         ccState
}

// AnalyzerOptions bound and tune an Analyzer. The zero value is usable.
type AnalyzerOptions struct {
	// MaxLive is how many connections are followed at once (default 16384);
	// beyond it the least recently active one is retired.
	MaxLive int
	// MaxDone is how many retired connections keep their summary (default
	// 65536); later ones are only counted.
	MaxDone int
	// IdleTimeout retires a connection with no packet for that long, in
	// capture time (default 2 minutes).
	IdleTimeout time.Duration
	// EndedLinger keeps a connection that ended (DREP, REJ) this long for
	// late packets (default 1 s).
	EndedLinger time.Duration
	// ReorderWindow: a PSN behind the highest, not seen before and with no
	// NAK or timeout to explain it, is out of order when it comes within
	// this time of the highest (default 1 ms); later, it is a retransmission.
	ReorderWindow time.Duration
	// MaxExampleFrames is how many frames each -z expert row keeps (default 20).
	MaxExampleFrames int
	// OnFinding, when set, sees every finding as it is made.
	OnFinding func(Finding)
	// OnLatency, when set, sees every request answered: a coalesced ACK
	// answers several, while the packet's ibwire.analysis.latency holds one.
	OnLatency func(Latency)
	// NVMeQPs are QPs whose connections carry NVMe-oF whatever their set-up
	// says ("-d qp==0x11,nvme-rdma").
	NVMeQPs []uint32
	// RPCRDMAQPs are QPs whose connections carry RPC over RDMA whatever
	// their set-up says ("-d qp==0x11,rpcrdma").
	RPCRDMAQPs []uint32
	// NoRPCRDMA turns off RPC-over-RDMA decoding, NoRPCRDMADetect only its
	// detection by content (--disable-protocol/--disable-heuristic rpcrdma).
	NoRPCRDMA, NoRPCRDMADetect bool
	// NoSMBDirect turns off SMB Direct decoding, NoSMBDirectDetect only its
	// detection by content (--disable-protocol/--disable-heuristic
	// smb_direct).
	NoSMBDirect, NoSMBDirectDetect bool
	// ISERQPs are QPs whose connections carry iSER whatever their set-up
	// says ("-d qp==0x11,iser"); NoISER turns off iSER decoding,
	// NoISERDetect only its detection by content.
	ISERQPs              []uint32
	NoISER, NoISERDetect bool
	// NoULP turns off the upper-layer (NVMe-oF) decoding; NoULPDetect only
	// its detection by content, for connections with no CM set-up.
	NoULP, NoULPDetect bool
	// Links makes a two-pass run: an Analyzer given NewFrameLinks() records
	// what later frames say about earlier ones; after Links.SecondPass, a
	// new Analyzer over the same packets reads it back into each packet
	// (ResponseFrame, findings about earlier frames). Memory then grows
	// with the capture.
	Links *FrameLinks
	// Lookahead, given NewLookahead() on a run over the start of a capture
	// file and then, after its Done, on the run that prints, decodes a
	// connection the content detection found from its first packet.
	Lookahead *Lookahead
	// PFC tunes the pause timeline (link speed, storm window).
	PFC PFCOptions
	// DCQCN tunes the rate analysis (its interval).
	DCQCN DCQCNOptions
}

// NewAnalyzer returns an analyzer.
func NewAnalyzer(opts AnalyzerOptions) *Analyzer {
	if opts.MaxLive <= 0 {
		opts.MaxLive = 16384
	}
	if opts.MaxDone <= 0 {
		opts.MaxDone = 65536
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 2 * time.Minute
	}
	if opts.EndedLinger <= 0 {
		opts.EndedLinger = time.Second
	}
	if opts.ReorderWindow <= 0 {
		opts.ReorderWindow = time.Millisecond
	}
	a := &Analyzer{opts: opts, dirs: map[dirKey]*direction{}, expect: map[dirKey]expectation{},
		waiting: map[hostPair][]*direction{}, ud: map[udSender]*udTrack{}}
	a.expert.MaxFrames = opts.MaxExampleFrames
	a.lru.next, a.lru.prev = &a.lru, &a.lru
	a.pfc.opts = opts.PFC.withDefaults()
	return a
}

// Expert returns the findings collected so far.
func (a *Analyzer) Expert() *Expert { return &a.expert }

// Live is the number of connections followed now.
func (a *Analyzer) Live() int { return a.live }

// dirKey names one direction: sender, receiver, destination QP, and for UD
// the DETH source QP (with bit 31 set). It is plain words, so the map
// hashes it in one go and == compares it inline.
type dirKey struct {
	src, dst addrKey
	qp       uint32
	udSrc    uint32
}

const udSrcFlag = 1 << 31

// addrKey is an Endpoint as words: the 16 address bytes (IPv4 mapped into
// IPv6) and the LID.
type addrKey struct {
	hi, lo uint64
	lid    uint32
	_      uint32
}

func addrKeyOf(e Endpoint) (k addrKey) {
	if e.Addr.IsValid() {
		b := e.Addr.As16()
		k.hi, k.lo = binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	}
	k.lid = uint32(e.LID)
	return k
}

// v4Mapped is the word above an IPv4 address in the low half of its
// addrKey: the address mapped into IPv6 (::ffff:a.b.c.d).
const v4Mapped = 0xffff << 32

func addrKeyOfBytes(b []byte) (k addrKey) {
	switch len(b) {
	case 4:
		k.lo = v4Mapped | uint64(binary.BigEndian.Uint32(b))
	case 16:
		k.hi, k.lo = binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	}
	return k
}

// ipv4 returns the IPv4 address a key of one holds (addrKeyOfBytes's
// mapping, no LID), and false for any other key.
func (k addrKey) ipv4() (uint32, bool) {
	return uint32(k.lo), k.hi == 0 && k.lo&^0xffffffff == v4Mapped && k.lid == 0
}

func (k addrKey) endpoint() Endpoint {
	if k.hi == 0 && k.lo == 0 {
		return Endpoint{LID: uint16(k.lid)}
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], k.hi)
	binary.BigEndian.PutUint64(b[8:], k.lo)
	return Endpoint{Addr: netip.AddrFrom16(b).Unmap()}
}

// keyOf is the key of a flow (udSrc 0).
func keyOf(f FlowKey) dirKey {
	return dirKey{src: addrKeyOf(f.Src), dst: addrKeyOf(f.Dst), qp: f.DestQP}
}

// equal compares k and o field by field, without a call.
func (k *dirKey) equal(o *dirKey) bool {
	return k.qp == o.qp && k.src.lo == o.src.lo && k.dst.lo == o.dst.lo && k.src.hi == o.src.hi &&
		k.dst.hi == o.dst.hi && k.src.lid == o.src.lid && k.dst.lid == o.dst.lid && k.udSrc == o.udSrc
}

// flow is the FlowKey of k.
func (k dirKey) flow() FlowKey {
	return FlowKey{Src: k.src.endpoint(), Dst: k.dst.endpoint(), DestQP: k.qp}
}

// packetKey builds the key of an IB packet's direction straight from its
// headers.
func packetKey(k *dirKey, p *Packet, qp uint32) {
	h := p.Headers
	switch {
	case p.has&hasIPv4 != 0:
		k.src, k.dst = addrKeyOfBytes(ipv4Bytes(h.IPv4.SrcIP)), addrKeyOfBytes(ipv4Bytes(h.IPv4.DstIP))
	case p.has&hasIPv6 != 0:
		k.src, k.dst = addrKeyOfBytes(h.IPv6.SrcIP), addrKeyOfBytes(h.IPv6.DstIP)
	case p.has&hasGRH != 0:
		k.src, k.dst = addrKeyOfBytes(h.GRH.SGID), addrKeyOfBytes(h.GRH.DGID)
	case p.has&hasLRH != 0:
		k.src, k.dst = addrKey{lid: uint32(h.LRH.SLID)}, addrKey{lid: uint32(h.LRH.DLID)}
	default:
		k.src, k.dst = addrKey{}, addrKey{}
	}
	k.qp, k.udSrc = qp, 0
}

// hostPair is a sender and receiver, for finding directions to pair.
type hostPair struct{ src, dst addrKey }

// direction is one direction of a conversation: what its sender sends.
// Requests it carries are the sender's; responses it carries answer the
// requests of the opposite direction.
type direction struct {
	// What every packet reads comes first, in as few cache lines as can be.
	// v4 and v4QP are the key of an IPv4 direction as cachedIPv4 compares
	// it: the source address in the upper half, the destination's in the
	// lower, and the QP; noV4 in v4QP, which no 24-bit QP equals, for the
	// other keys.
	v4       uint64
	v4QP     uint32
	key      dirKey
	conv     *conv
	req      *reqState
	resp     *respState
	side     uint8 // 0: A→B, 1: B→A
	svc      layers.ServiceType
	unpaired bool // listed in Analyzer.waiting
	msnValid bool
	msn      uint32
	lastCE   uint32 // the last frame with ECN CE or FECN, for the CNP that follows
	lastReq  time.Duration
	nvme     *nvmeConn // the NVMe-oF queue the connection carries, nil for other traffic
	rpc      *rpcConn  // the RPC-over-RDMA state of the connection, nil for other traffic
	smbd     *smbdConn // the SMB Direct state of the connection, nil for other traffic
	iser     *iserConn // the iSER state of the connection, nil for other traffic
	cc       *ccFlow   // the DCQCN rate analysis, nil until it runs
	st       DirStats
	flow     FlowKey // key, for display
}

// DirStats counts one direction of a conversation.
type DirStats struct {
	Packets, Bytes, Payload uint64
	Goodput                 uint64 // payload bytes carried for the first time
	First, Last             time.Duration
	Messages                uint64
	Ops                     [NumOpClasses]uint64
	Retransmissions         uint64 // request and READ-response packets sent again
	RetransLost             uint64 // of those, ones whose first transmission was not captured
	Duplicates              uint64 // responses to duplicate requests
	PSNGaps, GapPSNs        uint64
	OutOfOrder              uint64
	AckTimeouts, GoBackN    uint64
	NAKs                    [8]uint64 // sent by this direction, by NAK code (7: 7 and above)
	RNRNAKs                 uint64
	CNPs, ECNCE, FECN, BECN uint64
	ECN                     [4]uint64 // packets by IP ECN codepoint (ECNNotECT ... ECNCE); none for packets without IP
	ICRCErrors, Malformed   uint64
	GSORuns                 uint64 // UDP GSO runs captured before segmentation (not ICRC errors)
	SeqErrors               uint64 // bad opcode sequences and length mismatches
	MSNProgress             uint64 // messages the AETH MSNs this direction sent moved on
}

// Analyze follows p, the next packet in capture order, and fills
// p.Analysis. It never allocates once the packet's connection is known.
func (a *Analyzer) Analyze(p *Packet) {
	a.pkt = p
	a.frame = uint32(p.Number)
	a.now = p.RelTime
	switch {
	case p.IsIB():
		a.transport(p)
		if a.pfcActive {
			a.pfcCheck(p)
		}
	case p.HasTCP() && p.Err == nil:
		a.tcp(p)
	case p.HasMACControl():
		a.pfcPause(p)
	}
	if p.Err != nil && p.IBMalformed() {
		kind := FindMalformed
		if errors.Is(p.Err, layers.ErrTruncated) {
			kind = FindTruncated
		}
		a.finding(Finding{Kind: kind, Frame: a.frame})
	}
	if a.opts.Links != nil {
		a.opts.Links.apply(p)
	}
	// Unsigned, the time since lastExpire is large too when time went back.
	if uint64(a.now-a.lastExpire) >= uint64(expireEvery) || a.live > a.opts.MaxLive {
		a.expire()
	}
	a.pkt = nil
}

// finding records f, marks the current packet when f is about it, and
// tells the listener.
func (a *Analyzer) finding(f Finding) {
	if f.Severity == SevNone {
		f.Severity = f.Kind.Severity()
	}
	if p := a.pkt; p != nil && f.Frame == a.frame {
		p.Analysis.Findings |= 1 << f.Kind
		p.Analysis.Severity = max(p.Analysis.Severity, f.Severity)
		if f.Ref != 0 && p.Analysis.RefFrame == 0 {
			p.Analysis.RefFrame = f.Ref
			p.Analysis.Info |= InfoRef
		}
		if f.Conv == 0 {
			f.Conv = p.Analysis.Conv
		}
	} else if a.opts.Links != nil {
		a.opts.Links.flag(f.Frame, f.Kind, f.Severity)
	}
	a.expert.Add(&f)
	if a.opts.OnFinding != nil {
		a.opts.OnFinding(f)
	}
}

// transport follows an IB transport packet.
func (a *Analyzer) transport(p *Packet) {
	b := &p.Headers.BTH
	info := b.Opcode.Info()
	svc := serviceOf(b.Opcode)
	var d *direction
	if p.has&hasIPv4 != 0 && svc != layers.ServiceUD {
		if s, t := p.Headers.IPv4.SrcIP, p.Headers.IPv4.DstIP; len(s) == 4 && len(t) == 4 {
			d = a.cachedIPv4(binary.BigEndian.Uint32(s), binary.BigEndian.Uint32(t), b.DestQP)
		}
	}
	if d == nil {
		k := &a.key
		packetKey(k, p, b.DestQP)
		if svc == layers.ServiceUD && b.HasETH(layers.HdrDETH) && (p.Err == nil || p.Cut()) {
			k.udSrc = udSrcFlag | b.DETH.SrcQP
		}
		d = a.direction(k, svc)
	}
	if r := d.req; r != nil && !info.Response {
		if dd := b.PSN.Diff(r.next); uint(dd+instanceIdleJump) > 2*instanceIdleJump {
			// More than instanceIdleJump from the PSN expected, either way.
			d = a.instance(d, p, svc)
		}
	}
	c := d.conv
	an := &p.Analysis
	an.Conv, an.Dir = c.id, d.side+1
	c.touch(a)
	if !c.seen {
		c.seen, c.first = true, a.now
	}
	if d.svc == layers.ServiceCNP && svc != layers.ServiceCNP {
		d.svc = svc
		if c.svc == layers.ServiceCNP {
			c.svc = svc
		}
	}

	st := &d.st
	st.Packets++
	st.Bytes += uint64(p.Length)
	if st.Packets == 1 {
		st.First = a.now
	}
	st.Last = a.now
	payload := p.PayloadLength()
	ecn, hasIP := ecnOf(p)
	if hasIP {
		st.ECN[ecn&3]++ // 2 bits: no bounds check
	}
	// One test keeps the common packet off the rare paths: damage, an
	// unknown opcode, a congestion mark.
	// A packet the capture cut is no damage: its headers are what was sent.
	bad := p.Err != nil && !p.Cut() || p.ICRC == layers.CRCBad || p.VCRC == layers.CRCBad
	if bad || !info.Known || info.Operation == layers.OpUnknown || b.FECN || b.BECN || ecn == ECNCE ||
		b.PadCount != uint8(-payload&3) { // pad to whole words
		a.unusual(d, p, b, info)
	}
	if p.Err == nil || p.Cut() {
		st.Payload += uint64(payload)
	}

	switch {
	case svc == layers.ServiceCNP:
		a.cnp(d)
	case svc == layers.ServiceUD:
		if p.HasMAD() && p.Headers.MAD.MgmtClass == layers.MgmtClassCM && p.Err == nil {
			a.cmMessage(p, d)
		}
		if b.DestQP > 1 && p.Err == nil && d.key.udSrc&^udSrcFlag > 1 {
			a.udPSN(d, p, b)
		}
		if p.Err == nil || p.Cut() {
			st.Goodput += uint64(payload)
			if st.Packets > 0 {
				st.Messages++
				st.Ops[OpClassSend]++
			}
		}
	case info.Response:
		an.Info |= InfoResponsePacket
		a.response(d, p, b, info)
	default:
		// RC, UC, RD and XRC requests, and unknown opcodes of those
		// services (they still use a PSN).
		an.Info |= InfoRequestPacket
		a.request(d, p, b, info, bad)
	}
	if a.ccActive && svc != layers.ServiceCNP {
		a.ccPacket(d, p)
	}
	if k := d.conv.cm; k != nil {
		a.cmCheck(d, k, p, b, info)
	}
	// One test for the packets of other traffic but RC SENDs without
	// immediate data (NVMe-oF's capsules), which may start an NVMe-oF
	// connection seen mid-stream, and a direction's first packet, which may
	// join one.
	if d.nvme != nil || d.rpc != nil || d.iser != nil || d.smbd != nil || b.Opcode < 32 && nvmeSendOpcodes&(1<<b.Opcode) != 0 || st.Packets == 1 {
		// A connection carries one upper layer: once one claims it, the
		// others do not look.
		if d.rpc == nil && d.iser == nil && d.smbd == nil {
			a.nvmeFollow(d, p, b, info)
		}
		if d.nvme == nil && d.iser == nil && d.smbd == nil {
			a.rpcFollow(d, p, b, info)
		}
		if d.nvme == nil && d.rpc == nil && d.smbd == nil {
			a.iserFollow(d, p, b, info)
		}
		if d.nvme == nil && d.rpc == nil && d.iser == nil {
			a.smbdFollow(d, p, b, info)
		}
	}
}

// A request PSN this far from the highest PSN of its direction, either
// way, belongs to a new connection on the same QP numbers (QPs destroyed
// and their numbers reused, with no set-up traffic in the capture: ibdump
// -i records only UDP 4791): instanceJump at once, instanceIdleJump after
// instanceIdle without a packet. No requester resends or skips that many
// (rxe keeps at most 128 PSNs unacknowledged); a new connection starts at
// a random PSN.
const (
	instanceJump     = 1 << 22
	instanceIdleJump = 4096
	instanceIdle     = 100 * time.Millisecond
)

// instance returns the direction of request p, far from the PSNs d used:
// d, or, when p starts a new connection on the same QP numbers (the capture
// holds no set-up traffic to say so), a new direction, the old connection
// retired.
func (a *Analyzer) instance(d *direction, p *Packet, svc layers.ServiceType) *direction {
	hi, ok := d.req.win.Highest()
	if !ok || p.Err != nil || svc == layers.ServiceUD || svc == layers.ServiceCNP {
		return d
	}
	diff := p.Headers.BTH.PSN.Diff(hi)
	if diff < 0 {
		diff = -diff
	}
	if diff <= instanceJump && (diff <= instanceIdleJump || a.now-d.st.Last < instanceIdle) {
		return d
	}
	a.retire(d.conv)
	a.key = d.key
	return a.direction(&a.key, svc)
}

// serviceOf is the transport service of an opcode, known or not.
func serviceOf(op layers.Opcode) layers.ServiceType {
	if s := op.Service(); s != layers.ServiceUnknown {
		return s
	}
	switch op >> 5 {
	case 0:
		return layers.ServiceRC
	case 1:
		return layers.ServiceUC
	case 2:
		return layers.ServiceRD
	case 3:
		return layers.ServiceUD
	case 4:
		return layers.ServiceCNP
	case 5:
		return layers.ServiceXRC
	}
	return layers.ServiceUnknown
}

// ecnCE reports an IP header marked ECN Congestion Experienced.
func (a *Analyzer) ecnCE(p *Packet) bool {
	ecn, ok := ecnOf(p)
	return ok && ecn == ECNCE
}

// unusual counts and reports what most packets do not have: damage (bad
// CRCs, decoding errors), an unknown opcode, a pad count that does not
// fit, congestion marks (ECN CE, FECN, BECN).
func (a *Analyzer) unusual(d *direction, p *Packet, b *layers.BTH, info *layers.OpcodeInfo) {
	st, c := &d.st, d.conv
	if p.Err != nil && !p.Cut() {
		st.Malformed++
	}
	if p.ICRC == layers.CRCBad {
		if _, _, gso := p.GSORun(); gso {
			st.GSORuns++
			a.finding(Finding{Kind: FindGSORun, Frame: a.frame, Conv: c.id, PSN: b.PSN})
		} else {
			st.ICRCErrors++
			a.finding(Finding{Kind: FindICRCBad, Frame: a.frame, Conv: c.id, PSN: b.PSN})
		}
	}
	if p.VCRC == layers.CRCBad {
		st.ICRCErrors++
		a.finding(Finding{Kind: FindVCRCBad, Frame: a.frame, Conv: c.id, PSN: b.PSN})
	}
	if a.ecnCE(p) || b.FECN {
		a.ccActivate()
	}
	if a.ecnCE(p) {
		st.ECNCE++
		d.lastCE = a.frame
		a.finding(Finding{Kind: FindECNCE, Frame: a.frame, Conv: c.id, PSN: b.PSN})
	}
	if b.FECN {
		st.FECN++
		d.lastCE = a.frame
		a.finding(Finding{Kind: FindFECN, Frame: a.frame, Conv: c.id, PSN: b.PSN})
	}
	if b.BECN {
		st.BECN++
	}
	if !info.Known || info.Operation == layers.OpUnknown {
		a.finding(Finding{Kind: FindUnknownOpcode, Frame: a.frame, Conv: c.id, PSN: b.PSN, Sub: uint8(b.Opcode & 31)})
	} else if p.Err == nil && b.PadCount != uint8((4-len(b.PacketPayload())%4)%4) {
		a.finding(Finding{Kind: FindMalformed, Frame: a.frame, Conv: c.id, PSN: b.PSN})
	}
}

// cnp counts a congestion notification and finds the marked packet that
// caused it: the last CE or FECN packet of the opposite direction.
func (a *Analyzer) cnp(d *direction) {
	d.st.CNPs++
	peer := d.peer()
	if peer == nil {
		peer = a.pairByCNP(d)
	}
	var ref uint32
	if peer != nil {
		ref, peer.lastCE = peer.lastCE, 0
		a.ccCNP(peer)
	}
	a.finding(Finding{Kind: FindCNP, Frame: a.frame, Ref: ref, Conv: d.conv.id})
}

// direction returns the state of direction k, creating it (and its
// conversation) on first sight.
func (a *Analyzer) direction(k *dirKey, svc layers.ServiceType) *direction {
	slot := &a.cache[k.cacheIndex()]
	if d := *slot; d != nil && d.key.equal(k) {
		return d
	}
	d, ok := a.dirs[*k]
	if !ok {
		d = a.newDirection(*k, svc)
	}
	*slot = d
	return d
}

// dirCacheSize is the size of the direct-mapped cache in front of the map of
// directions: most packets belong to one of a few recent directions.
const (
	dirCacheBits = 10
	dirCacheSize = 1 << dirCacheBits
)

func (k *dirKey) cacheIndex() int {
	return dirCacheIndex(k.qp^k.udSrc, uint32(k.src.lo)^k.src.lid, uint32(k.dst.lo)^k.dst.lid)
}

func dirCacheIndex(qp, src, dst uint32) int {
	return int((qp ^ src*31 ^ dst) * 0x9E3779B1 >> (32 - dirCacheBits))
}

// noV4 is direction.v4QP of a key that is not an IPv4 packet's.
const noV4 = ^uint32(0)

// cachedIPv4 returns the direction of an IPv4 packet from src to dst, QP
// qp (not UD: no DETH source QP in the key), when the cache in front of the map holds it,
// else nil. Its key is not built: the key of an IPv4 packet is its two
// addresses (mapped into IPv6 as addrKeyOfBytes maps them, no LID) and the
// QP, which direction.v4 and v4QP hold in two words, and its cache index
// is cacheIndex's of that key.
func (a *Analyzer) cachedIPv4(src, dst, qp uint32) *direction {
	if d := a.cache[dirCacheIndex(qp, src, dst)]; d != nil && d.v4 == uint64(src)<<32|uint64(dst) && d.v4QP == qp {
		return d
	}
	return nil
}

func (a *Analyzer) newDirection(k dirKey, svc layers.ServiceType) *direction {
	d := &direction{key: k, flow: k.flow(), svc: svc, v4QP: noV4}
	src, srcV4 := k.src.ipv4()
	dst, dstV4 := k.dst.ipv4()
	if srcV4 && dstV4 && k.udSrc == 0 {
		d.v4, d.v4QP = uint64(src)<<32|uint64(dst), k.qp
	}
	a.dirs[k] = d
	ek := k
	ek.udSrc = 0
	if e, ok := a.expect[ek]; ok && e.c.dirs[e.side] == nil {
		e.c.attach(d, e.side)
		delete(a.expect, ek)
		return d
	}
	if k.udSrc != 0 {
		// UD: the reverse direction is keyed by the same two QPs.
		rk := dirKey{src: k.dst, dst: k.src, qp: k.udSrc &^ udSrcFlag, udSrc: udSrcFlag | k.qp}
		if r, ok := a.dirs[rk]; ok && r != d && r.conv.dirs[1-r.side] == nil {
			r.conv.attach(d, 1-r.side)
			return d
		}
	}
	c := a.newConv()
	c.svc = svc
	c.attach(d, 0)
	if k.udSrc == 0 {
		hp := hostPair{k.src, k.dst}
		a.waiting[hp] = append(a.waiting[hp], d)
		d.unpaired = true
	}
	return d
}

// peer is the opposite direction, nil until the conversation is paired.
func (d *direction) peer() *direction { return d.conv.dirs[(d.side^1)&1] } // side is 0 or 1; the mask spares a bounds check

// expire retires the least recently active conversations that are idle,
// ended, or beyond MaxLive. It runs when capture time has moved on by
// expireEvery (or a conversation too many is live), and looks at a few.
func (a *Analyzer) expire() {
	a.lastExpire = a.now
	for range 64 {
		c := a.lru.prev
		if c == &a.lru {
			return
		}
		idle := a.now - c.last
		if a.live <= a.opts.MaxLive && idle < a.opts.IdleTimeout && !(c.ended && idle >= a.opts.EndedLinger) {
			if c.last-c.moved < lruSlack {
				return
			}
			// Active after all: its place was stale.
			c.moved = c.last
			c.unlink()
			c.insertFront(&a.lru)
			continue
		}
		a.retire(c)
	}
}

// expireEvery is how often, in capture time, expire looks for idle
// conversations.
const expireEvery = 10 * time.Millisecond

// Finish ends the capture: requests still outstanding become findings and
// every conversation gets its final summary. Call it once, after the last
// packet.
func (a *Analyzer) Finish() {
	if a.finished {
		return
	}
	a.finished = true
	for c := a.lru.next; c != &a.lru; c = c.next {
		a.unanswered(c)
	}
	a.cmUnansweredDREQs()
	a.nvmeFinish()
	a.rpcFinish()
	a.iserFinish()
	a.smbdFinish()
	a.pfcFinish()
	a.ccFinish()
}

// Conversations returns a summary of every conversation, retired ones and
// live ones, in order of appearance.
func (a *Analyzer) Conversations() []Conversation {
	out := make([]Conversation, 0, len(a.done)+a.live)
	for _, c := range a.done {
		out = append(out, *c)
	}
	for c := a.lru.next; c != &a.lru; c = c.next {
		out = append(out, c.summary())
	}
	sortConversations(out)
	return out
}

// Retired is the number of conversations that were retired without keeping
// their summary (beyond MaxDone).
func (a *Analyzer) Retired() int { return a.dropped }
