package decode

import (
	"maps"
	"slices"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// SMB Direct ([MS-SMBD]; the wire layout is in layers/smbdirect.go), the
// RDMA transport of SMB 3.
//
// A connection carries SMB Direct when the CM REQ that set it up named the
// IP-CM service of port 445 (InfiniBand and RoCE) or 5445 (iWARP's), or,
// for a capture that starts after the set-up, when a SEND ONLY's content
// shows it: a Data Transfer header whose data, at offset 24, opens with
// an SMB2 header — four magic bytes and a structure size that no other
// protocol puts there. Wireshark instead tries a loose heuristic on every
// SEND of every connection; a connection ibwire has not labelled is not
// called SMB Direct.
//
// Each direction's first message is its negotiate (a Negotiate Request
// from the active side, a Negotiate Response from the passive side) when
// it has a negotiate's exact form; every other message is a Data
// Transfer. A message longer than the path MTU travels as SEND FIRST ...
// LAST; it is read at its FIRST, which holds its headers (Wireshark reads
// it there too), and its length is checked at its LAST. The
// data of consecutive Data Transfers whose RemainingLength is not 0 make
// one SMB2 message, reassembled at its last fragment as Wireshark does.
// The SMB2 headers at the start of a message (a compound chains up to
// smb2Chain of them, read as far as the first packet holds them) say what
// it was; a response is matched with its
// request by MessageId, and the time between them is its latency. An
// interim response (STATUS_PENDING) leaves the request outstanding.

// SMBDirectPacket is what the analysis found of SMB Direct in one packet;
// the smb_direct.* and ibwire.smb2.* fields read it. It belongs to the
// Analyzer and is valid until the next packet.
type SMBDirectPacket struct {
	// Msg is the message the packet carries whole (SEND ONLY) or begins
	// (SEND FIRST), when HasMsg.
	Msg    layers.SMBDirectMsg
	HasMsg bool
	// SMB2 are the SMB2 headers a message's data starts with (NSMB2 of
	// them), and Req, for a response, the request each answers (when
	// Matched[i]), with Latency[i].
	SMB2    [smb2Chain]layers.SMB2Header
	NSMB2   int
	Req     [smb2Chain]SMB2RequestInfo
	Matched [smb2Chain]bool
	Latency [smb2Chain]time.Duration
	// Fragments are the frames whose Data Transfers made the SMB2 message
	// this packet completes (more than one), FragmentBytes its length.
	Fragments     []uint32
	FragmentBytes uint32
	// Outstanding is, on a message that starts SMB2 commands, how many
	// requests of the connection wait for their final responses once it
	// is counted (the depth over time, with -z io,stat).
	Outstanding uint16
	// Resent says the packet is a copy of a SEND the analysis counted:
	// its SMB Direct message is decoded for display, its SMB2 headers
	// not (they are on the copy that counted), and it counts nowhere.
	Resent bool
	Err    error
}

// SMB2RequestInfo is what a request was.
type SMB2RequestInfo struct {
	Frame     uint32
	Command   layers.SMB2Command
	MessageID uint64
}

// Clone returns a copy of s that shares nothing with the Analyzer or the
// frame, for a renderer that keeps the packet past the next one.
func (s *SMBDirectPacket) Clone() *SMBDirectPacket {
	c := *s
	c.Msg.Data = nil
	c.Fragments = append([]uint32(nil), s.Fragments...)
	return &c
}

// smb2Chain bounds the compound SMB2 commands read from one message.
const smb2Chain = 4

// smbdConn is the SMB Direct state of one connection.
type smbdConn struct {
	conv       uint32
	negotiated [2]bool       // the side's first message was seen
	negPSN     [2]layers.PSN // the PSN of the side's first message
	asm        [2]smbdAssembly
	frag       [2]smbdFragments
	pending    map[uint64]smb2Pending
}

// smbdAssembly follows a multi-packet SEND: its packets in order, and
// the length its first packet's header says it must reach.
type smbdAssembly struct {
	active     bool
	next       layers.PSN
	bytes, end uint64
}

// maxSMBDFragments bounds the Data Transfers one SMB2 message is followed
// over, and so the memory a stream whose RemainingLength never reaches 0
// can take.
const maxSMBDFragments = 1024

// smbdFragments follows an SMB2 message sent in several Data Transfers.
type smbdFragments struct {
	active bool
	frames []uint32
	bytes  uint32
}

type smb2Pending struct {
	info SMB2RequestInfo
	at   time.Duration
}

// smbdState is the Analyzer's SMB Direct state.
type smbdState struct {
	conns map[uint32]*smbdConn
	pkt   SMBDirectPacket
}

func isSMBDirectServiceID(sid uint64) bool {
	s := layers.ServiceID(sid)
	return s.IsIPCM() && s.PortSpace() == layers.PortSpaceTCP && (s.Port() == layers.SMBDirectPort || s.Port() == layers.SMBDirectPortIWARP)
}

// smbdFollow follows an RC SEND of a connection known to carry SMB
// Direct, or a SEND ONLY of one not yet known.
func (a *Analyzer) smbdFollow(d *direction, p *Packet, b *layers.BTH, info *layers.OpcodeInfo) {
	if a.opts.NoSMBDirect || p.Err != nil || d.svc != layers.ServiceRC || info.Operation != layers.OpSend {
		return
	}
	c := d.conv
	s := d.smbd
	if s == nil {
		s = a.smbd.conns[c.id]
		if s == nil {
			// Found before this packet: by a first pass (ibdump -2) or a
			// look-ahead, by the content of a later SEND ONLY.
			l, la := a.opts.Links, a.opts.Lookahead
			found := l != nil && l.second && l.smbd[d.key] || la != nil && !a.opts.NoSMBDirectDetect && la.found(la.smbd, d)
			if !found && (info.Position != layers.PosOnly || p.Analysis.Info&InfoNewData == 0) {
				return
			}
			if !found && !isSMBDirectServiceID(c.serviceID) && (a.opts.NoSMBDirectDetect || !layers.SMBDirectCarriesSMB2(b.PacketPayload())) {
				return
			}
			if a.smbd.conns == nil {
				a.smbd.conns = map[uint32]*smbdConn{}
			}
			s = &smbdConn{conv: c.id, pending: map[uint64]smb2Pending{}}
			a.smbd.conns[c.id] = s
		}
		for _, dd := range c.dirs {
			if dd != nil {
				dd.smbd = s
			}
		}
		if l := a.opts.Links; l != nil {
			a.linkDirs(c, &l.smbd)
		}
		if l := a.opts.Lookahead; l != nil {
			l.record(c, &l.smbd)
		}
	}
	pk := &a.smbd.pkt
	*pk = SMBDirectPacket{Fragments: pk.Fragments[:0]}
	p.Analysis.SMBDirect = pk
	side := d.side & 1
	pl := b.PacketPayload()
	if p.Analysis.Info&InfoNewData == 0 {
		// A resent SEND: its message counted once, at its first copy.
		s.resent(side, pl, b, info, pk)
		return
	}
	as := &s.asm[side]
	switch info.Position {
	case layers.PosOnly:
		as.active = false
		a.smbdMessage(s, side, pl, true, b, pk)
	case layers.PosFirst:
		// The headers are in the first packet: the message is read there,
		// as Wireshark reads it, and its length checked at its LAST.
		as.active, as.next, as.bytes = true, b.PSN.Add(1), uint64(len(pl))
		as.end = 0
		if a.smbdMessage(s, side, pl, false, b, pk) {
			as.end = pk.Msg.End()
		}
	default:
		if !as.active || b.PSN != as.next {
			as.active = false // a packet of it was not captured
			return
		}
		as.bytes += uint64(len(pl))
		as.next = as.next.Add(1)
		if info.Position == layers.PosMiddle {
			return
		}
		as.active = false
		if as.end > as.bytes {
			pk.Err = &layers.DecodeError{Layer: "SMBDirect", Field: "DataLength", Need: int(min(as.end, 1<<31)), Have: int(as.bytes),
				Err: layers.ErrTruncated, Detail: "the message ends before its data"}
			a.finding(Finding{Kind: FindULPMalformed, Sub: ULPFieldSMBDirect, Frame: a.frame, Conv: s.conv, PSN: b.PSN})
		}
	}
}

// resent shows the SMB Direct message a resent SEND ONLY or FIRST
// carries (the negotiate message when it is its side's first), for
// display only: its SMB2 headers are not read (they start requests and
// answer them, on the copy that counted), nothing is matched or counted.
func (s *smbdConn) resent(side uint8, pl []byte, b *layers.BTH, info *layers.OpcodeInfo, pk *SMBDirectPacket) {
	pk.Resent = true
	if info.Position != layers.PosOnly && info.Position != layers.PosFirst {
		return
	}
	kind := layers.SMBDirectDataTransfer
	if s.negotiated[side] && b.PSN == s.negPSN[side] {
		if k := layers.SMBDirectNegotiateForm(pl); k != layers.SMBDirectUnknown {
			kind = k
		}
	}
	decode := layers.DecodeSMBDirect
	if info.Position == layers.PosFirst {
		decode = layers.DecodeSMBDirectFirst
	}
	pk.HasMsg = decode(pl, kind, &pk.Msg) == nil
}

// smbdMessage reads the message a SEND ONLY carries whole, or a SEND
// FIRST begins, and reports whether it decoded.
func (a *Analyzer) smbdMessage(s *smbdConn, side uint8, msg []byte, whole bool, b *layers.BTH, pk *SMBDirectPacket) bool {
	kind := layers.SMBDirectDataTransfer
	if !s.negotiated[side] {
		s.negotiated[side], s.negPSN[side] = true, b.PSN
		if k := layers.SMBDirectNegotiateForm(msg); k != layers.SMBDirectUnknown {
			kind = k
		}
	}
	decode := layers.DecodeSMBDirect
	if !whole {
		decode = layers.DecodeSMBDirectFirst
	}
	if err := decode(msg, kind, &pk.Msg); err != nil {
		pk.Err = err
		a.finding(Finding{Kind: FindULPMalformed, Sub: ULPFieldSMBDirect, Frame: a.frame, Conv: s.conv, PSN: b.PSN})
		return false
	}
	pk.HasMsg = true
	if kind == layers.SMBDirectDataTransfer && pk.Msg.DataLength > 0 {
		a.smbdData(s, side, pk)
	}
	return true
}

// smbdData follows a Data Transfer's data: the start of an SMB2 message,
// or a fragment of one.
func (a *Analyzer) smbdData(s *smbdConn, side uint8, pk *SMBDirectPacket) {
	m := &pk.Msg
	fr := &s.frag[side]
	if fr.active {
		if len(fr.frames) >= maxSMBDFragments {
			// A message no sender splits so far ([MS-SMBD]'s fragments
			// fill the peer's receive size, 1 KiB or more, of at most a
			// MaxFragmentedSize of 1 MiB by default): said, and its
			// fragments no longer kept.
			fr.active = false
			a.finding(Finding{Kind: FindULPMalformed, Sub: ULPFieldSMBDirectFragments, Frame: a.frame, Ref: fr.frames[0], Conv: s.conv})
			return
		}
		fr.frames = append(fr.frames, a.frame)
		fr.bytes += m.DataLength
		if m.RemainingLength == 0 {
			fr.active = false
			pk.Fragments = append(pk.Fragments, fr.frames...)
			pk.FragmentBytes = fr.bytes
		}
		return
	}
	if m.RemainingLength > 0 {
		fr.active, fr.frames, fr.bytes = true, append(fr.frames[:0], a.frame), m.DataLength
	}
	data := m.Data
	for off := 0; pk.NSMB2 < smb2Chain && off+layers.SMB2HeaderLen <= len(data); {
		h := &pk.SMB2[pk.NSMB2]
		if layers.DecodeSMB2Header(data[off:], h) != nil {
			break
		}
		i := pk.NSMB2
		pk.NSMB2++
		a.smb2Match(s, h, pk, i)
		if h.NextCommand == 0 || h.NextCommand%8 != 0 {
			break
		}
		off += int(h.NextCommand)
	}
	pk.Outstanding = uint16(min(len(s.pending), 0xFFFF))
}

// smb2Match records request h, or matches response h with its request.
func (a *Analyzer) smb2Match(s *smbdConn, h *layers.SMB2Header, pk *SMBDirectPacket, i int) {
	if !h.Response() {
		if h.Command == layers.SMB2Cancel { // it reuses its target's MessageId and has no response
			return
		}
		if len(s.pending) >= maxULPOpen {
			// Requests no response answers: said as such, and forgotten,
			// so memory stays bounded.
			a.smbdOutstanding(s.conv, s)
			clear(s.pending)
		}
		s.pending[h.MessageID] = smb2Pending{info: SMB2RequestInfo{Frame: a.frame, Command: h.Command, MessageID: h.MessageID}, at: a.now}
		return
	}
	q, ok := s.pending[h.MessageID]
	if !ok || q.info.Command != h.Command {
		return
	}
	pk.Req[i], pk.Matched[i], pk.Latency[i] = q.info, true, a.now-q.at
	if !h.Interim() {
		delete(s.pending, h.MessageID)
		if h.Failed() {
			a.finding(Finding{Kind: FindSMB2Error, Frame: a.frame, Ref: q.info.Frame, Conv: s.conv})
		}
	}
}

// smbdFinish reports the SMB2 requests still outstanding at the end.
func (a *Analyzer) smbdFinish() {
	for _, id := range slices.Sorted(maps.Keys(a.smbd.conns)) {
		a.smbdOutstanding(id, a.smbd.conns[id])
	}
}

// smbdRetire forgets the SMB Direct state of a connection that ends,
// reporting the requests it leaves without a response unless the capture
// has ended (smbdFinish reports them then).
func (a *Analyzer) smbdRetire(id uint32) {
	if s := a.smbd.conns[id]; s != nil {
		if !a.finished {
			a.smbdOutstanding(id, s)
		}
		delete(a.smbd.conns, id)
	}
}

func (a *Analyzer) smbdOutstanding(id uint32, s *smbdConn) {
	reportUnanswered(a, FindSMB2NoResponse, id, s.pending, func(q smb2Pending) uint32 { return q.info.Frame })
}

// SMB2SRT is -z smb2,srt: per SMB2 command, the service response time of
// every request answered (to its final response: an interim
// STATUS_PENDING is not one).
type SMB2SRT struct {
	rows map[layers.SMB2Command]*SMB2SRTRow
}

// SMB2SRTRow is one command's response times.
type SMB2SRTRow struct {
	Command layers.SMB2Command
	// Errors counts responses whose NT status says the request failed
	// (layers.SMB2Header.Failed: error severity, but for SESSION_SETUP's
	// STATUS_MORE_PROCESSING_REQUIRED); a warning (0x8...,
	// STATUS_BUFFER_OVERFLOW) is not one.
	Errors int
	SRTSamples
}

// Add counts p's final SMB2 responses matched with their requests: ibdump
// feeds the packets -Y shows, as tshark's -z tables count them.
func (s *SMB2SRT) Add(p *Packet) {
	pk := p.Analysis.SMBDirect
	if pk == nil {
		return
	}
	for i := range pk.NSMB2 {
		h := &pk.SMB2[i]
		if !pk.Matched[i] || h.Interim() {
			continue
		}
		if s.rows == nil {
			s.rows = map[layers.SMB2Command]*SMB2SRTRow{}
		}
		r := s.rows[h.Command]
		if r == nil {
			r = &SMB2SRTRow{Command: h.Command}
			s.rows[h.Command] = r
		}
		r.Samples = append(r.Samples, pk.Latency[i])
		if h.Failed() {
			r.Errors++
		}
	}
}

// Rows returns the rows by command code, each row's samples sorted.
func (s *SMB2SRT) Rows() []*SMB2SRTRow {
	out := make([]*SMB2SRTRow, 0, len(s.rows))
	for _, r := range s.rows {
		slices.Sort(r.Samples)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *SMB2SRTRow) int { return int(a.Command) - int(b.Command) })
	return out
}
