package decode

import "slices"

// FrameLinks carries what a first pass learned about each frame to a
// second pass (ibdump -2): the responses a request drew, and findings made
// about a frame only later (a RETH length checked at the LAST packet, a
// request left unanswered). It grows with the capture: 16 bytes a frame.
type FrameLinks struct {
	second bool
	links  []frameLink
	// merged maps the id of a conversation that pairing merged into
	// another to that other's id: the second pass numbers conversations
	// as the first did, and gives each packet its conversation's final id,
	// so ibwire.analysis.conv_id == N finds every packet of the -z conv,qp
	// row N, those seen before the pairing too.
	merged map[uint32]uint32
	// nvme has the directions found to carry NVMe-oF (true: the host's),
	// so the second pass decodes a capture that starts mid-stream from its
	// first packet, not from the first completion that revealed it.
	nvme map[dirKey]bool
	// rpc has the directions found to carry RPC-over-RDMA, for the same
	// reason; rpcReply maps a call's frame to its reply's.
	rpc      map[dirKey]bool
	rpcReply map[uint32]uint32
	// iser has the directions found to carry iSER; iscsiResp maps a
	// request's frame to its response's.
	iser      map[dirKey]bool
	iscsiResp map[uint32]uint32
	// smbd has the directions found to carry SMB Direct.
	smbd map[dirKey]bool
}

type frameLink struct {
	resp, lastResp uint32
	findings       uint64
	sev            Severity
}

// NewFrameLinks returns links for a first pass.
func NewFrameLinks() *FrameLinks { return &FrameLinks{} }

// SecondPass switches from recording to reading back. Run a new Analyzer
// with the same links over the same packets.
func (l *FrameLinks) SecondPass() { l.second = true }

func (l *FrameLinks) at(frame uint32) *frameLink {
	for uint32(len(l.links)) <= frame {
		l.links = append(l.links, frameLink{})
	}
	return &l.links[frame]
}

// respond records that request frame req was answered first by frame
// first and last by frame last.
func (l *FrameLinks) respond(req, first, last uint32) {
	if l.second || req == 0 {
		return
	}
	f := l.at(req)
	if f.resp == 0 {
		f.resp = first
	}
	f.lastResp = last
}

// flag records a finding about an earlier frame.
func (l *FrameLinks) flag(frame uint32, k FindingKind, sev Severity) {
	if l.second || frame == 0 {
		return
	}
	f := l.at(frame)
	f.findings |= 1 << k
	f.sev = max(f.sev, sev)
}

// merge records that conversation from was merged into conversation into.
func (l *FrameLinks) merge(from, into uint32) {
	if l.second {
		return
	}
	if l.merged == nil {
		l.merged = map[uint32]uint32{}
	}
	l.merged[from] = into
}

// finalConv follows merges from id to the conversation that absorbed it.
func (l *FrameLinks) finalConv(id uint32) uint32 {
	for range len(l.merged) { // a merge chain is shorter than the map
		into, ok := l.merged[id]
		if !ok {
			break
		}
		id = into
	}
	return id
}

// apply copies what the first pass learned into p.Analysis.
func (l *FrameLinks) apply(p *Packet) {
	if !l.second {
		return
	}
	an := &p.Analysis
	if an.Conv != 0 {
		an.Conv = l.finalConv(an.Conv)
	}
	if p.Number <= 0 || p.Number >= len(l.links) {
		return
	}
	f := &l.links[p.Number]
	if f.resp != 0 {
		an.ResponseFrame, an.LastResponseFrame = f.resp, f.lastResp
		an.Info |= InfoResponse
	}
	an.Findings |= f.findings
	an.Severity = max(an.Severity, f.sev)
}

// unanswered reports the requests of c that never drew a response. A
// connection that a NAK ended, or whose other direction was never seen,
// reports none.
func (a *Analyzer) unanswered(c *conv) {
	if c.state == ConvError {
		return
	}
	for _, d := range c.dirs {
		if d == nil || d.req == nil || d.req.fatal || d.peer() == nil {
			continue
		}
		r := d.req
		for i := 0; i < r.outLen; i++ {
			if o := &r.out[(r.outHead+i)&(outRingSize-1)]; !o.done {
				a.finding(Finding{Kind: FindUnanswered, Frame: o.frame, Conv: c.id, PSN: o.first})
			}
		}
	}
}

// maxULPOpen bounds the requests an upper layer keeps waiting for their
// answers per connection (RPC calls, iSCSI tasks, SMB2 requests; NVMe-oF's
// command ids bound themselves): past it they are reported unanswered and
// forgotten.
const maxULPOpen = 1 << 16

// reportUnanswered reports, in frame order, the requests an upper-layer
// protocol's state of connection conv still holds without their answer
// (NVMe-oF commands, RPC calls, iSCSI tasks, SMB2 requests).
func reportUnanswered[K comparable, R any](a *Analyzer, kind FindingKind, conv uint32, open map[K]R, frame func(R) uint32) {
	frames := make([]uint32, 0, len(open))
	for _, r := range open {
		frames = append(frames, frame(r))
	}
	slices.Sort(frames)
	for _, f := range frames {
		a.finding(Finding{Kind: kind, Frame: f, Conv: conv})
	}
}
