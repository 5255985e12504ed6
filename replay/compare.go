package replay

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/netip"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/google/gopacket"

	"github.com/ibwire/ibwire/layers"
)

// Dest is what one side of an RC connection announces at set-up: the
// fields of ibv_rc_pingpong's and perftest's exchange message.
type Dest struct {
	LID      uint16
	QPN      uint32
	PSN      layers.PSN
	RKey     uint32
	VA       uint64
	GID      netip.Addr
	OutReads int
	// MTU is the path MTU of the peer's QP in bytes, when the set-up
	// tells it (0: unknown; the plan's is assumed).
	MTU int
}

func (d Dest) String() string {
	return fmt.Sprintf("QPN 0x%06x PSN %d rkey 0x%08x va 0x%x", d.QPN, d.PSN, d.RKey, d.VA)
}

// requester describes a requester: what it announces that matters.
func (d Dest) requester() string { return fmt.Sprintf("QPN 0x%06x PSN %d", d.QPN, d.PSN) }

// responder describes a responder: where requests go.
func (d Dest) responder() string {
	return fmt.Sprintf("QPN 0x%06x rkey 0x%08x va 0x%x", d.QPN, d.RKey, d.VA)
}

// Setup connects to the live peer out of band: it announces local, the
// requester the capture is played as, and returns what the peer announced.
type Setup interface {
	Exchange(ctx context.Context, local Dest) (remote Dest, err error)
}

// AssigningSetup is a Setup that cannot announce the QPN and first PSN it
// is asked to, because the set-up picks them: RDMA CM connects a QP of the
// player's own and the REQ/REP carry its QPN and PSNs. After Exchange,
// Assigned returns what was announced, and Compare plays as that.
type AssigningSetup interface {
	Setup
	Assigned() Dest
}

// Peer is the live responder, one datagram at a time: Send a request (BTH
// through ICRC; the transport fills the ICRC), Receive a response into buf
// within timeout, or fail with an error matching os.ErrDeadlineExceeded.
type Peer interface {
	Send(req []byte) error
	Receive(buf []byte, timeout time.Duration) (int, error)
}

// Plan is one captured RC connection cut into what compare mode plays: the
// requester's first transmissions and the responses the capture saw, in
// capture order.
type Plan struct {
	Capture *Capture
	Conv    uint32 // 1-based index into Capture.Convs
	Side    uint8  // the requester's direction: 1 (A→B) or 2 (B→A)
	// Requester is what the captured requester would have announced (its
	// QPN and first PSN); Responder is the captured responder's QPN, the
	// first R_Key its requests used and the lowest VA they touched.
	Requester, Responder Dest
	// RegionLen is how many bytes from Responder.VA the requests touch
	// (see RegionErr).
	RegionLen uint64
	// MTU is the connection's path MTU in bytes: the analyser's, else the
	// payload of a FIRST or MIDDLE packet (always a full MTU), else the
	// largest payload rounded up to a valid MTU, else 1024.
	MTU int
	// MTUMin and MTUMax are the smallest and largest IB path MTU at which
	// every message the plan plays, and every READ's responses, segment
	// as captured: a live peer at any MTU between them answers the same.
	// A capture of single-packet messages cannot tell the MTU, only that
	// it holds the largest packet; a FIRST or MIDDLE packet pins it.
	MTUMin, MTUMax int
	Steps          []Step
	// Left out: retransmitted requests, and responses that repeat an
	// earlier one's opcode and PSN.
	SkippedRequests, SkippedResponses int
}

// Step is one captured packet of the plan.
type Step struct {
	Frame   *Frame
	Request bool
	// Before is, for a request, how many of the plan's responses the
	// capture saw before it; BeforeOther how many of those were not plain
	// ACKs; Covered the highest PSN they answered, relative to the first
	// request (-1 for none). Compare mode waits until the live side has
	// caught up as far before it sends the request.
	Before, BeforeOther, Covered int
}

// NewPlan cuts conversation conv (1-based; 0 picks the first RC
// conversation with requests) of c into a plan, the requester being side
// (1: A→B, 2: B→A, 0: the side that sent the first request).
func NewPlan(c *Capture, conv uint32, side uint8) (*Plan, error) {
	if conv == 0 {
		for _, f := range c.Frames {
			if f.Selected && f.Conv != 0 && f.IB && f.Opcode.Info().IsRequest() && c.Convs[f.Conv-1].Service == layers.ServiceRC {
				conv = f.Conv
				break
			}
		}
		if conv == 0 {
			return nil, errors.New("no RC conversation with requests in the selected frames")
		}
	}
	if int(conv) > len(c.Convs) {
		return nil, fmt.Errorf("conversation %d: the capture has %d", conv, len(c.Convs))
	}
	cv := &c.Convs[conv-1]
	if cv.Service != layers.ServiceRC {
		return nil, fmt.Errorf("conversation %d is %v: compare mode plays RC connections", conv, cv.Service)
	}
	p := &Plan{Capture: c, Conv: conv, Side: side}
	vaLo, vaHi := uint64(1<<64-1), uint64(0)
	firstReq := true
	others, covered := 0, -1
	seenPSN := map[layers.PSN]bool{}
	seenResp := map[[2]uint32]bool{}
	responses := 0
	for i := range c.Frames {
		f := &c.Frames[i]
		if f.Conv != conv || !f.IB || f.PayloadEnd == 0 {
			continue
		}
		info := f.Opcode.Info()
		var b layers.BTH
		if b.DecodeFromBytes(f.Datagram(), gopacket.NilDecodeFeedback) != nil {
			continue
		}
		switch {
		case info.IsRequest():
			if p.Side == 0 {
				p.Side = f.Dir
			}
			if f.Dir != p.Side {
				continue
			}
			if f.Retransmission || seenPSN[b.PSN] {
				p.SkippedRequests++
				continue
			}
			seenPSN[b.PSN] = true
			if firstReq {
				p.Requester.PSN, p.Responder.QPN, firstReq = b.PSN, b.DestQP, false
			}
			var va uint64
			var rkey, n uint32
			switch {
			case info.Has(layers.HdrRETH):
				va, rkey, n = b.RETH.VA, b.RETH.RKey, b.RETH.DMALength
			case info.Has(layers.HdrAtomicETH):
				va, rkey, n = b.AtomicETH.VA, b.AtomicETH.RKey, 8
			}
			if rkey != 0 || va != 0 {
				if p.Responder.RKey == 0 {
					p.Responder.RKey = rkey
				}
				end := va + uint64(n)
				if end < va {
					end = 1<<64 - 1 // a malformed RETH: RegionErr reports it
				}
				vaLo, vaHi = min(vaLo, va), max(vaHi, end)
			}
			p.Steps = append(p.Steps, Step{Frame: f, Request: true, Before: responses, BeforeOther: others, Covered: covered})
		case info.Response:
			if p.Side != 0 && f.Dir == p.Side {
				continue // the other direction's responses: its own requests are not played
			}
			// The player sends each request once, and the peer answers
			// each PSN once: the first answer at a PSN is kept, even
			// when the analyzer paired it with a resent copy of the
			// request (rxe resends on its timer while the ACK is on its
			// way), and its repeats are left out.
			k := [2]uint32{uint32(b.Opcode), uint32(b.PSN)}
			if seenResp[k] {
				p.SkippedResponses++
				continue
			}
			seenResp[k] = true
			if p.Requester.QPN == 0 {
				p.Requester.QPN = b.DestQP
			}
			p.Steps = append(p.Steps, Step{Frame: f})
			responses++
			if !isPlainACK(&b) {
				others++
			}
			if !firstReq {
				covered = max(covered, b.PSN.Diff(p.Requester.PSN))
			}
		}
	}
	if len(p.Steps) == 0 || !p.Steps[0].Request {
		return nil, fmt.Errorf("conversation %d: no requests from side %d", conv, p.Side)
	}
	if p.Requester.QPN == 0 {
		if p.Side == 1 && cv.HasBA {
			p.Requester.QPN = cv.QPNBA
		} else if p.Side == 2 {
			p.Requester.QPN = cv.QPNAB
		}
	}
	if vaLo <= vaHi {
		p.Responder.VA, p.RegionLen = vaLo, vaHi-vaLo
	}
	p.MTU = cv.MTU
	if p.MTU <= 0 {
		p.MTU = p.inferMTU()
	}
	p.MTUMin, p.MTUMax = p.mtuRange()
	return p, nil
}

// inferMTU works the path MTU out of the packets' payloads.
func (p *Plan) inferMTU() int {
	largest := 0
	var b layers.BTH
	for _, s := range p.Steps {
		if b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback) != nil {
			continue
		}
		n := len(b.PacketPayload())
		switch b.Opcode.Info().Position {
		case layers.PosFirst, layers.PosMiddle:
			return n
		}
		largest = max(largest, n)
	}
	if largest == 0 {
		return 1024
	}
	mtu := 256
	for mtu < largest && mtu < 4096 {
		mtu *= 2
	}
	return mtu
}

// segments is how many packets of the plan's MTU carry length bytes (one
// for none).
func (p *Plan) segments(length uint32) int { return layers.Segments(int(length), p.MTU) }

// psnsUsed is how many PSNs request b takes: a READ one per response packet.
func (p *Plan) psnsUsed(b *layers.BTH) int {
	if b.Opcode.Info().Operation == layers.OpRDMAReadRequest {
		return p.segments(b.RETH.DMALength)
	}
	return 1
}

// Requests counts the plan's requests.
func (p *Plan) Requests() int {
	n := 0
	for _, s := range p.Steps {
		if s.Request {
			n++
		}
	}
	return n
}

// Messages counts the messages the plan's requests carry and their bytes:
// a SEND's payload, an RDMA WRITE's or READ's RETH length, an atomic's 8.
func (p *Plan) Messages() (n int, bytes uint64) {
	var b layers.BTH
	for _, s := range p.Steps {
		if !s.Request || b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback) != nil {
			continue
		}
		info := b.Opcode.Info()
		if info.Position == layers.PosFirst || info.Position == layers.PosOnly {
			n++
		}
		switch {
		case info.Has(layers.HdrRETH):
			bytes += uint64(b.RETH.DMALength)
		case info.Has(layers.HdrAtomicETH):
			bytes += 8
		case info.Operation != layers.OpRDMAWrite:
			bytes += uint64(len(b.PacketPayload()))
		}
	}
	return n, bytes
}

// Responses counts the plan's responses.
func (p *Plan) Responses() int { return len(p.Steps) - p.Requests() }

// maxRegion bounds the responder region replay builds in memory (Image,
// Written, the read-back). RegionLen spans whatever VAs the capture's RETHs
// and AtomicETHs name: two registrations far apart, or a malformed header,
// make it terabytes. perftest and the pingpongs register far less.
const maxRegion = 256 << 20

// RegionErr reports a region larger than replay builds in memory (256
// MiB), naming its span; nil when it is not. Image returns nil then, and
// Compare records it as the read-back's error instead of reading back.
func (p *Plan) RegionErr() error {
	if p.RegionLen > maxRegion {
		return fmt.Errorf("the requests span %d bytes of the responder's region from va 0x%x, more than the %d MiB replay builds in memory",
			p.RegionLen, p.Responder.VA, maxRegion>>20)
	}
	return nil
}

// Image returns the responder's region as the capture shows it, from
// Responder.VA for RegionLen bytes: the data each RDMA WRITE put there, the
// data each READ found there, the value each atomic found (as a
// little-endian host stores it), whichever the capture shows first for a
// byte. Seeding a live peer's region with it
// makes the payload comparison meaningful. Bytes the capture never shows
// are zero. It returns nil when the region is too large (RegionErr).
func (p *Plan) Image() []byte {
	img, _ := p.ImageShown()
	return img
}

// ImageShown is Image with, for each byte of the region, whether the
// capture shows it: a comparison with a live peer's region must skip the
// bytes nobody wrote or read (perftest places messages under 4 KiB at
// 64-byte strides, so the bytes between are never on the wire).
func (p *Plan) ImageShown() (img []byte, shown []bool) {
	if p.RegionErr() != nil {
		return nil, nil
	}
	img = make([]byte, p.RegionLen)
	known := make([]bool, p.RegionLen)
	put := func(va uint64, data []byte) {
		for i, b := range data {
			off := va + uint64(i) - p.Responder.VA
			if va+uint64(i) < p.Responder.VA || off >= p.RegionLen || known[off] {
				continue
			}
			img[off], known[off] = b, true
		}
	}
	writes := p.writePlacer()
	readVA := map[layers.PSN]uint64{} // READ response PSN → VA it carries
	atomicVA := map[layers.PSN]uint64{}
	var b layers.BTH
	for _, s := range p.Steps {
		if b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback) != nil {
			continue
		}
		info := b.Opcode.Info()
		data := b.PacketPayload()
		switch {
		case info.Operation == layers.OpRDMAWrite && s.Request:
			if va, ok := writes.place(&b); ok {
				put(va, data)
			}
		case info.Operation == layers.OpRDMAReadRequest:
			for i := range p.segments(b.RETH.DMALength) {
				readVA[b.PSN.Add(i)] = b.RETH.VA + uint64(i*p.MTU)
			}
		case info.Has(layers.HdrAtomicETH) && s.Request:
			atomicVA[b.PSN] = b.AtomicETH.VA
		case info.Operation == layers.OpRDMAReadResponse:
			if va, ok := readVA[b.PSN]; ok {
				put(va, data)
			}
		case info.Has(layers.HdrAtomicAckETH):
			if va, ok := atomicVA[b.PSN]; ok {
				// The wire carries the value big-endian; the responder's
				// memory holds it in host order, and rxe's hosts (and this
				// endpoint's) are little-endian.
				var v [8]byte
				binary.LittleEndian.PutUint64(v[:], b.AtomicAckETH.OrigRemoteData)
				put(va, v[:])
			}
		}
	}
	return img, known
}

// writePlacer finds where the plan's RDMA WRITE packets put their data,
// fed the WRITE requests in plan order.
type writePlacer struct {
	p  *Plan
	va map[layers.PSN]uint64 // WRITE packet PSN → VA its payload goes to
}

func (p *Plan) writePlacer() *writePlacer {
	return &writePlacer{p: p, va: map[layers.PSN]uint64{}}
}

// place returns the VA where WRITE packet b's payload goes, and false when
// the plan does not show it. A segment's place follows from its PSN and
// its message's FIRST (or ONLY), not from the packet before it: where a
// FIRST was lost before the capture point, the MIDDLEs after it belong to
// a message whose VA is not known until the retransmission, not where the
// previous message ended.
func (w *writePlacer) place(b *layers.BTH) (uint64, bool) {
	if b.Opcode.Info().Has(layers.HdrRETH) {
		for i := range w.p.segments(b.RETH.DMALength) {
			w.va[b.PSN.Add(i)] = b.RETH.VA + uint64(i*w.p.MTU)
		}
	}
	va, ok := w.va[b.PSN]
	return va, ok
}

// CompareOptions tune Compare.
type CompareOptions struct {
	// Local is what the player announces; its zero fields take the
	// captured requester's values (QPN and first PSN).
	Local Dest
	// Payload compares READ response data and atomic original values too,
	// and, when the plan has RDMA WRITEs, reads their span back from the
	// peer after the play (Result.Readback): the peer must allow remote
	// READs of its region.
	Payload bool
	// Timeout is how long to wait for a response the capture says is due
	// (default 1 s). After a wait runs out with nothing received during it,
	// the peer is taken for silent and the rest is sent without waiting.
	Timeout time.Duration
	// Linger is how long to wait after the last expected response for
	// responses the capture does not have (default Timeout/10).
	Linger time.Duration
	// StrictACKs counts a captured ACK the peer left out as a difference
	// even when a later ACK of the peer covers it. By default coalesced
	// ACKs are not differences: the IBTA lets a responder acknowledge
	// several requests with one ACK (rxe does not, the endpoint does).
	// Either way the player takes the peer to have answered as far as the
	// capture once a later ACK covers the PSN: a left-out ACK is never
	// waited for, so it is never a stall.
	StrictACKs bool
}

// Result is the outcome of a comparison.
type Result struct {
	Plan          *Plan
	Local, Remote Dest
	Sent          int
	Captured      []Response
	Live          []Response
	Hunks         []Hunk
	// Readback is, with Payload and RDMA WRITEs in the plan, what reading
	// the written span back found; nil otherwise.
	Readback *Readback
	// Coalesced counts the captured plain ACKs the peer left out and
	// covered with a later ACK (no differences unless StrictACKs).
	Coalesced int
	// Stalls are the frame numbers of the requests before which the peer
	// had not answered within Timeout as far as the capture had (0: the
	// wait for the last responses). A peer that coalesces ACKs still
	// catches up; one that holds its ACKs back, or answers only at the
	// end, does not, and that is a difference.
	Stalls []int
	// Dropped counts the datagrams for the player that the peer's wire
	// dropped before they were read (a SplitWire view whose queue was
	// full): responses the comparison never saw.
	Dropped uint64
	// RNRNaks counts the peer's RNR NAKs: its receive queue was empty
	// when a SEND came. Unless the capture has RNR NAKs of its own, the
	// player does what a requester does: after the NAK's timer it sends
	// the request again, and those after it (Resent counts them), up to
	// rnrRetries times for one request; the RNR NAKs, and the PSN
	// sequence NAKs for the same PSN before the retry, are then no
	// differences. RNRGaveUp is the frame number of the request the
	// player stopped retrying (the peer answered RNR NAK every time).
	RNRNaks, Resent int
	RNRGaveUp       int
	// Elapsed is the time from the first request sent to the last
	// response received (the read-back left out).
	Elapsed time.Duration
}

// Response is one response, reduced to what is compared.
type Response struct {
	Frame int    // captured frame number; 0 for a live response
	Index int    // 1-based position among the responses of its side
	Key   string // opcode, relative PSN, syndrome, MSN, length (and data)
	// PSN is relative to the first request; PlainACK says the response is
	// an RC ACKNOWLEDGE with an ACK syndrome, which a later one may cover.
	PSN      int
	PlainACK bool
	// Answers is the frame number of the captured request whose PSN the
	// response carries (a READ's for each of its responses); 0 for none.
	Answers int
	// rnr says the response is an RNR NAK, asking to wait rnrWait;
	// seqNAK that it is a NAK PSN sequence error.
	rnr, seqNAK bool
	rnrWait     time.Duration
}

// Hunk is one run of differences: captured responses missing from the
// live side (Del) and live responses the capture does not have (Add).
type Hunk struct {
	Del, Add []Response
	// CapturedAt and LiveAt are where the hunk starts on each side (0-based).
	CapturedAt, LiveAt int
}

// Differ reports whether the live responses differ from the captured ones.
func (r *Result) Differ() bool { return len(r.Hunks) > 0 || len(r.Stalls) > 0 || r.Readback.Failed() }

// Compare plays plan's requests against peer after setup and compares the
// responses. It returns an error only when the comparison could not be
// made (set-up failed, a send failed); differences are in the Result.
func Compare(ctx context.Context, plan *Plan, setup Setup, peer Peer, opts CompareOptions) (*Result, error) {
	local := opts.Local
	if local.QPN == 0 {
		local.QPN = plan.Requester.QPN
	}
	if local.PSN == 0 && opts.Local.QPN == 0 {
		local.PSN = plan.Requester.PSN
	}
	remote, err := setup.Exchange(ctx, local)
	if err != nil {
		return nil, fmt.Errorf("set-up: %w", err)
	}
	if a, ok := setup.(AssigningSetup); ok {
		local = a.Assigned()
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = time.Second
	}
	linger := opts.Linger
	if linger <= 0 {
		linger = timeout / 10
	}
	res := &Result{Plan: plan, Local: local, Remote: remote}
	rules := &Rules{}
	if plan.Responder.QPN != remote.QPN {
		rules.QPNs = map[uint32]uint32{plan.Responder.QPN: remote.QPN}
	}
	if d := local.PSN.Diff(plan.Requester.PSN); d != 0 {
		rules.PSNShift = map[uint32]int{plan.Responder.QPN: d}
	}
	if plan.Responder.RKey != remote.RKey && plan.Responder.RKey != 0 {
		rules.RKeys = map[uint32]uint32{plan.Responder.RKey: remote.RKey}
	}
	if plan.RegionLen > 0 && plan.Responder.VA != remote.VA {
		rules.VAs = []VARule{{From: plan.Responder.VA, To: remote.VA, Len: plan.RegionLen}}
	}
	rw, err := NewRewriter(rules, plan.Capture.Decode)
	if err != nil {
		return nil, err
	}
	base := plan.Requester.PSN
	for _, s := range plan.Steps {
		if !s.Request {
			r := describe(s.Frame.Datagram(), base, plan.Requester.QPN, opts.Payload)
			r.Frame, r.Index = s.Frame.Number, len(res.Captured)+1
			res.Captured = append(res.Captured, r)
		}
	}
	answers, _ := plan.requestFrames()
	buf := make([]byte, 1<<16)
	// The live side has caught up with the capture when it has sent as
	// many responses that are not plain ACKs and answered as far in the
	// PSN space, with StrictACKs too: a plain ACK the capture has and the
	// peer left out is one a later ACK of the peer covers, and a responder
	// never acknowledges a PSN below one it has acknowledged, so waiting
	// for it would wait out the timeout for nothing and report the peer
	// behind when it is not. StrictACKs changes what is a difference, not
	// when the peer has answered. missing counts the responses given up
	// on: once a wait runs out, the later waits expect that many fewer,
	// so one lost response costs one timeout and not one per request
	// after it.
	missing, others, covered := 0, 0, -1
	silent := false
	// An RNR NAK asks the requester to send the request again after its
	// timer; the player does, unless the capture has RNR NAKs of its own
	// (then the peer's are compared with them).
	retryRNR := true
	for _, r := range res.Captured {
		retryRNR = retryRNR && !r.rnr
	}
	type sentReq struct{ step, psn int } // index into plan.Steps, relative PSN
	var sent []sentReq
	rnrFor := map[int]int{} // relative PSN → RNR NAKs for it
	retryPSN, retryAt := -1, time.Time{}
	var firstSent, lastRecv time.Time
	send := func(i int) error {
		f := *plan.Steps[i].Frame
		f.Data = append([]byte(nil), f.Data...)
		rw.Rewrite(&f)
		if err := peer.Send(f.Datagram()); err != nil {
			return fmt.Errorf("frame %d: send: %w", f.Number, err)
		}
		return nil
	}
	resend := func() error {
		for _, s := range sent {
			if s.psn >= retryPSN {
				if err := send(s.step); err != nil {
					return err
				}
				res.Resent++
			}
		}
		retryPSN = -1
		return nil
	}
	caughtUp := func(other, psn int) bool {
		return others >= other-missing && covered >= psn
	}
	// receive reads responses for up to wait until the live side has
	// caught up with other and psn; open (the linger after the last)
	// reads until wait runs out.
	receive := func(open bool, other, psn int, wait time.Duration, at int) error {
		deadline := time.Now().Add(wait)
		had := len(res.Live)
		for open || !caughtUp(other, psn) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if retryPSN >= 0 && !time.Now().Before(retryAt) {
				if err := resend(); err != nil {
					return err
				}
			}
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			if retryPSN >= 0 {
				left = min(left, max(time.Until(retryAt), time.Microsecond))
			}
			n, err := peer.Receive(buf, left)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if retryPSN >= 0 {
					continue
				}
				break
			}
			if err != nil {
				return fmt.Errorf("receive: %w", err)
			}
			lastRecv = time.Now()
			r := describe(buf[:n], local.PSN, local.QPN, opts.Payload)
			r.Index, r.Answers = len(res.Live)+1, answers[r.PSN]
			if retryRNR {
				switch {
				case r.rnr && rnrFor[r.PSN] < rnrRetries:
					rnrFor[r.PSN]++
					res.RNRNaks++
					retryPSN, retryAt = r.PSN, time.Now().Add(r.rnrWait)
					deadline = later(deadline, retryAt.Add(wait))
					continue
				case r.rnr:
					res.RNRNaks++
					res.RNRGaveUp = r.Answers
				case r.seqNAK && rnrFor[r.PSN] > 0 && covered < r.PSN:
					// The requests after an RNR-NAKed one arrived out of
					// sequence; the retry sends them again.
					continue
				}
			}
			res.Live = append(res.Live, r)
			if !r.PlainACK {
				others++
			}
			covered = max(covered, r.PSN)
		}
		if !open && !caughtUp(other, psn) {
			res.Stalls = append(res.Stalls, at)
			// Nothing at all during a whole wait: the peer has stopped
			// answering, and waiting before every later request would only
			// multiply the timeout.
			silent = len(res.Live) == had
			missing = other - others
			covered = max(covered, psn)
		}
		return nil
	}
	for i, s := range plan.Steps {
		if !s.Request {
			continue
		}
		if !silent {
			if err := receive(false, s.BeforeOther, s.Covered, timeout, s.Frame.Number); err != nil {
				return nil, err
			}
		}
		if err := send(i); err != nil {
			return nil, err
		}
		if firstSent.IsZero() {
			firstSent = time.Now()
		}
		sent = append(sent, sentReq{i, reqPSN(s.Frame.Datagram(), plan.Requester.PSN)})
		res.Sent++
	}
	lastOther, lastPSN := 0, -1
	for _, r := range res.Captured {
		if !r.PlainACK {
			lastOther++
		}
		lastPSN = max(lastPSN, r.PSN)
	}
	if err := receive(false, lastOther, lastPSN, timeout, 0); err != nil {
		return nil, err
	}
	if err := receive(true, 0, 0, linger, 0); err != nil {
		return nil, err
	}
	if lastRecv.After(firstSent) {
		res.Elapsed = lastRecv.Sub(firstSent)
	}
	res.Hunks = diff(res.Captured, res.Live)
	if !opts.StrictACKs {
		res.Hunks, res.Coalesced = dropCoveredACKs(res.Captured, res.Hunks)
	}
	if opts.Payload {
		res.Readback = checkWrites(plan, peer, local, remote, timeout)
	}
	if d, ok := peer.(dropper); ok {
		res.Dropped = d.Dropped()
	}
	return res, nil
}

// reqPSN is the PSN of request dg relative to base.
func reqPSN(dg []byte, base layers.PSN) int {
	var b layers.BTH
	if b.DecodeFromBytes(dg, gopacket.NilDecodeFeedback) != nil {
		return 0
	}
	return b.PSN.Diff(base)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// requestFrames maps each PSN of the plan's requests, relative to the
// first, to the frame number of the request that used it (a READ uses one
// per response packet), and returns the PSN after the last of them.
func (p *Plan) requestFrames() (frames map[int]int, next int) {
	frames = map[int]int{}
	var b layers.BTH
	for _, s := range p.Steps {
		if !s.Request || b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback) != nil {
			continue
		}
		n := p.psnsUsed(&b)
		rel := b.PSN.Diff(p.Requester.PSN)
		for i := range n {
			frames[rel+i] = s.Frame.Number
		}
		next = max(next, rel+n)
	}
	return frames, next
}

// isPlainACK reports an RC ACKNOWLEDGE whose syndrome is an ACK.
func isPlainACK(b *layers.BTH) bool {
	return b.Opcode.Info().Operation == layers.OpAcknowledge && b.AETH.Syndrome.Type() == layers.AETHAck
}

// describe reduces a response (BTH through ICRC) to what is compared:
// opcode, PSN relative to base, AETH syndrome and MSN, payload length, and
// with payload a digest of the data and the atomic original value.
func describe(dg []byte, base layers.PSN, ourQPN uint32, payload bool) Response {
	var b layers.BTH
	if err := b.DecodeFromBytes(dg, gopacket.NilDecodeFeedback); err != nil {
		return Response{Key: fmt.Sprintf("undecodable (%d bytes): %v", len(dg), err), PSN: -1}
	}
	var s strings.Builder
	rel := b.PSN.Diff(base)
	fmt.Fprintf(&s, "%s psn %+d", b.Opcode, rel)
	if b.DestQP != ourQPN {
		fmt.Fprintf(&s, " to QP 0x%06x", b.DestQP)
	}
	info := b.Opcode.Info()
	if info.Has(layers.HdrAETH) {
		fmt.Fprintf(&s, " %v msn %d", b.AETH.Syndrome, b.AETH.MSN)
	}
	data := b.PacketPayload()
	fmt.Fprintf(&s, " len %d", len(data))
	if payload {
		if len(data) > 0 {
			fmt.Fprintf(&s, " data crc32 0x%08x", crc32.ChecksumIEEE(data))
		}
		if info.Has(layers.HdrAtomicAckETH) {
			fmt.Fprintf(&s, " orig 0x%x", b.AtomicAckETH.OrigRemoteData)
		}
	}
	r := Response{Key: s.String(), PSN: rel, PlainACK: isPlainACK(&b)}
	if info.Has(layers.HdrAETH) {
		r.rnr, r.rnrWait = b.AETH.Syndrome.IsRNRNak(), b.AETH.Syndrome.RNRTimer()
		r.seqNAK = b.AETH.Syndrome.IsNak() && b.AETH.Syndrome.NAKCode() == layers.NAKPSNSequenceError
	}
	return r
}

// dropCoveredACKs takes out of the hunks the captured plain ACKs that the
// live side left out and covered with a later ACK: those in a hunk with
// nothing live in their place, followed, before any other response, by a
// plain ACK the live side matched. It returns the hunks left and how many
// ACKs it took out.
func dropCoveredACKs(captured []Response, hunks []Hunk) ([]Hunk, int) {
	deleted := make(map[int]bool)
	omitted := make(map[int]bool)
	for _, h := range hunks {
		for _, d := range h.Del {
			deleted[d.Index] = true
			omitted[d.Index] = len(h.Add) == 0
		}
	}
	covered := make(map[int]bool)
	cover := false
	for i := len(captured) - 1; i >= 0; i-- {
		r := captured[i]
		switch {
		case !r.PlainACK:
			cover = false
		case !deleted[r.Index]:
			cover = true
		default:
			covered[r.Index] = cover && omitted[r.Index]
		}
	}
	var out []Hunk
	dropped := 0
	for _, h := range hunks {
		var del []Response
		for _, d := range h.Del {
			if covered[d.Index] {
				dropped++
			} else {
				del = append(del, d)
			}
		}
		h.Del = del
		if len(h.Del) > 0 || len(h.Add) > 0 {
			out = append(out, h)
		}
	}
	return out, dropped
}

// maxDiffCells bounds the longest-common-subsequence table.
const maxDiffCells = 1 << 24

// diff finds the hunks that turn a into b: a longest common subsequence of
// keys after trimming the common prefix and suffix.
func diff(a, b []Response) []Hunk {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre].Key == b[pre].Key {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf].Key == b[len(b)-1-suf].Key {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma) == 0 && len(mb) == 0 {
		return nil
	}
	if len(ma)*len(mb) > maxDiffCells || len(ma) == 0 || len(mb) == 0 {
		h := Hunk{CapturedAt: pre, LiveAt: pre}
		if len(ma) > 0 {
			h.Del = ma
		}
		if len(mb) > 0 {
			h.Add = mb
		}
		return []Hunk{h}
	}
	n, m := len(ma), len(mb)
	// lcs[i][j]: LCS length of ma[i:], mb[j:]
	lcs := make([]int32, (n+1)*(m+1))
	at := func(i, j int) *int32 { return &lcs[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if ma[i].Key == mb[j].Key {
				*at(i, j) = *at(i+1, j+1) + 1
			} else {
				*at(i, j) = max(*at(i+1, j), *at(i, j+1))
			}
		}
	}
	var hunks []Hunk
	var cur *Hunk
	flush := func() {
		if cur != nil {
			hunks = append(hunks, *cur)
			cur = nil
		}
	}
	open := func(i, j int) {
		if cur == nil {
			cur = &Hunk{CapturedAt: pre + i, LiveAt: pre + j}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && ma[i].Key == mb[j].Key:
			flush()
			i, j = i+1, j+1
		case j < m && (i == n || *at(i, j+1) >= *at(i+1, j)):
			open(i, j)
			cur.Add = append(cur.Add, mb[j])
			j++
		default:
			open(i, j)
			cur.Del = append(cur.Del, ma[i])
			i++
		}
	}
	flush()
	// Within a hunk show deletions before additions, as diff does.
	for k := range hunks {
		sort.SliceStable(hunks[k].Del, func(x, y int) bool { return hunks[k].Del[x].Index < hunks[k].Del[y].Index })
	}
	return hunks
}

// WriteDiff prints the differences like diff -u without context: a header
// naming both sides, then per hunk the captured responses missing from the
// live side (-, with their frame numbers) and the live responses the
// capture does not have (+, numbered in arrival order, with the frame
// number of the captured request whose PSN they carry).
func (r *Result) WriteDiff(w io.Writer, liveName string) {
	p := r.Plan
	cv := &p.Capture.Convs[p.Conv-1]
	fmt.Fprintf(w, "--- captured %s conversation %d (%v <-> %v), responder %s\n", p.Capture.Name, p.Conv, cv.A, cv.B, p.Responder.responder())
	fmt.Fprintf(w, "+++ live %s, responder %s\n", liveName, r.Remote.responder())
	for _, h := range r.Hunks {
		fmt.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", h.CapturedAt+1, len(h.Del), h.LiveAt+1, len(h.Add))
		for _, d := range h.Del {
			fmt.Fprintf(w, "-frame %-6d %s\n", d.Frame, d.Key)
		}
		for _, a := range h.Add {
			if a.Answers != 0 {
				fmt.Fprintf(w, "+live #%-5d %s (to frame %d)\n", a.Index, a.Key, a.Answers)
			} else {
				fmt.Fprintf(w, "+live #%-5d %s\n", a.Index, a.Key)
			}
		}
	}
}

// WriteSummary prints one paragraph on what was compared.
func (r *Result) WriteSummary(w io.Writer) {
	p := r.Plan
	del, add := 0, 0
	for _, h := range r.Hunks {
		del += len(h.Del)
		add += len(h.Add)
	}
	fmt.Fprintf(w, "compare: played %d requests of conversation %d as %s against %s\n", r.Sent, p.Conv, r.Local.requester(), r.Remote.responder())
	fmt.Fprintf(w, "compare: %d responses captured, %d received; ", len(r.Captured), len(r.Live))
	if len(r.Hunks) == 0 && r.Differ() {
		fmt.Fprintln(w, "the responses agree")
	} else if len(r.Hunks) == 0 {
		fmt.Fprintln(w, "no differences")
	} else {
		fmt.Fprintf(w, "%d %s (%d captured and %d live responses not matched)\n", len(r.Hunks), plural(len(r.Hunks), "difference"), del, add)
	}
	if r.Coalesced > 0 {
		fmt.Fprintf(w, "compare: %d received %s matched captured ones; the peer coalesced %d captured %s into later ones (a difference only with --strict-acks)\n",
			len(r.Live)-add, plural(len(r.Live)-add, "response"), r.Coalesced, plural(r.Coalesced, "ACK"))
	}
	if len(r.Stalls) > 0 {
		at := "the end"
		if r.Stalls[0] != 0 {
			at = fmt.Sprintf("frame %d", r.Stalls[0])
		}
		fmt.Fprintf(w, "compare: the peer had not answered as far as the capture within the timeout %d %s (first before %s)\n",
			len(r.Stalls), plural(len(r.Stalls), "time"), at)
	}
	r.writeRNRSummary(w)
	if r.Dropped > 0 {
		fmt.Fprintf(w, "compare: the wire dropped %d %s for the player before it read them (its queue was full)\n",
			r.Dropped, plural(int(r.Dropped), "datagram"))
	}
	if rb := r.Readback; rb != nil {
		fmt.Fprintf(w, "compare: read back the %d bytes the WRITEs span at va 0x%x: ", rb.Len, rb.VA)
		switch {
		case rb.Err != nil:
			fmt.Fprintf(w, "failed: %v\n", rb.Err)
		case rb.Wrong > 0:
			fmt.Fprintf(w, "%d of the %d bytes the capture's WRITEs left differ, the first at va 0x%x\n", rb.Wrong, rb.Checked, rb.VA+uint64(rb.FirstWrong))
		default:
			fmt.Fprintf(w, "the %d bytes the capture's WRITEs left are there\n", rb.Checked)
		}
	}
	if p.SkippedRequests > 0 || p.SkippedResponses > 0 {
		fmt.Fprintf(w, "compare: left out %d retransmitted requests and %d responses that repeat an earlier one\n", p.SkippedRequests, p.SkippedResponses)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
