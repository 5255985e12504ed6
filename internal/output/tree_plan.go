package output

import (
	"encoding/binary"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// A tree plan is the walk of one shape of packet, written down the first
// time the tree meets it: which fields the walk asked for, what each
// answered, and the line each present field drew at which depth. Packets
// of one shape (the same headers, opcode and analysis findings: nearly
// every packet of a capture is one of a few shapes) are drawn by going
// down the plan instead of asking the registry's every field whether the
// packet has it and working out where it sits in the tree.
//
// A plan holds for a packet only if the packet answers every question as
// the packet it was made from did, so what it draws is what the walk
// would draw. It holds only packets with the same headers (decode's
// HeaderSet); of those it asks again, in the walk's order, every question
// whose answer the headers do not settle (a gate, a field's getter,
// SubtreeWithout). Two kinds it leaves unasked, by what decode promises of
// the field: a header's item that is PresentByHeaders (its absence is in
// the HeaderSet, and the plan does not hold it at all), and a line whose
// ValueSpan has the bytes of the packet it was last asked of. The first
// different answer stops the plan; the tree then draws the packet with
// the full walk, which writes a new plan for the shape. The shape's key
// (treePlanKey) only picks the plan to try: a key that two shapes share
// costs time, never a wrong line. TestTreePlanMatchesWalk holds the plans
// to the walk over the corpus, and TestTreePlanMatchesWalkChanged over
// streams of its packets changed and cut.
type treePlan struct {
	key  uint64
	ops  []planOp
	used bool
	// blocks are the runs of lines whose text follows from values that
	// seldom change (a line of a header's version, lengths, ports, keys
	// ...), each with the text it had last: a packet whose values in a
	// block are those of the last packet copies the block whole. vals
	// holds the byte values (planOp.boff) the lines were drawn from.
	blocks []planBlock
	vals   []byte
	// segs are the plan cut for drawing: runs of questions and of lines
	// in one block, and the lines drawn every time between them.
	segs []planSeg
	// regroup says a line was found to change from packet to packet: the
	// blocks are cut again without it once the packet is drawn.
	regroup bool
	// headers are the headers of the packet the plan was made from
	// (decode's HeaderSet): a packet with others is not of its shape, and
	// only with the same may a line with a ValueSpan be kept unasked, or a
	// header that is PresentByHeaders be taken as absent unasked.
	headers uint64
	// wait is how many packets of the key the tree draws with the full
	// walk, without a plan, after the plan failed: backoff doubles with
	// each failure in a row, so a key whose packets take turns between
	// shapes costs the full walk and little more.
	wait, backoff uint16
}

// planBlock is a run of lines of a plan (those of ops[from:to] whose blk
// is the block's) and their text, valid when drawn.
type planBlock struct {
	from, to int32
	text     []byte
	drawn    bool
}

// planSeg is a run of a plan's steps: ops[from:to], questions and the
// lines of block blk (-1 for none), or the line of ops[from] alone, drawn
// every time (draw).
type planSeg struct {
	from, to int32
	blk      int16
	draw     bool
}

// planOp is one step of a plan: a question and its answer, and for a
// present field the line it draws and what that line's text follows from.
type planOp struct {
	f *decode.Field
	// u and s are the value the line was drawn from last (cmpU: Value.U,
	// cmpD: Value.D, cmpS: Value.S, cmpB: the length of the bytes kept
	// at vals[boff:]).
	u    uint64
	s    string
	at   int32 // the field's index in wire order
	boff int32
	// span is where a line's field has its value (decode.ValueSpan), and
	// spanWord those bytes of the packet the line was asked of last
	// (spanKept), as spanMask picks them out of the word at the span: a
	// packet with the same bytes there has the same value, and the
	// question is not asked again.
	span     decode.ValueSpan
	spanKept bool
	spanMask uint64
	spanWord uint64
	// blk is the line's block, -1 for a line drawn every time.
	blk   int16
	depth int16
	kind  planKind
	cmp   lineCmp
	title titleKind // an opOpen's title
	// cut marks a cmpB line that shows at most treeBytesMax bytes (a
	// byte field's): the others show all, and a value longer than
	// cmpBMax cannot be kept.
	cut bool
	// want is the answer: opGate's SkipAbsentGroup, opAbsent's
	// SubtreeWithout; a line's: whether the walk asks GetSecond after it.
	want bool
	// changed says how often the line's value changes (lineVolatile).
	changed uint8
}

type planKind uint8

const (
	opGate   planKind = iota // SkipAbsentGroup at at
	opAbsent                 // f's getter says no, then SubtreeWithout says want
	opLine                   // f is present: its line at depth
	opOpen                   // f is present and opens a subtree at depth: its line
	opTable                  // f is present and starts a table's entries at depth
)

// lineCmp says what a line's text follows from, besides its field and
// depth.
type lineCmp uint8

const (
	cmpNone  lineCmp = iota // drawn every time: a label, a shaped field, a CRC's verdict, a title with values
	cmpConst                // a protocol's or header's title
	cmpU                    // Value.U: integers, booleans
	cmpD                    // Value.D: times
	cmpS                    // Value.S: strings
	cmpB                    // Value.B, its first treeBytesMax+1 bytes: addresses, bytes
	cmpTitle                // a protocol's title with values: titleKey's
)

// cmpBMax is how many of a value's bytes a cmpB line's text follows
// from: the tree shows treeBytesMax of them, and "…" after them when
// there are more.
const cmpBMax = treeBytesMax + 1

// A line leaves its block, to be drawn every time, when its value
// changes often (a PSN, a frame number, a checksum; the ports of a shape
// that both directions share): each change adds lineChange to
// planOp.changed, each packet with the same value takes one off, and the
// line leaves at lineVolatile: at the third change in a row, or when its
// value changes every other packet or more often.
const (
	lineChange   = 4
	lineVolatile = 3*lineChange - 2
)

func (pl *treePlan) add(op planOp) { pl.ops = append(pl.ops, op) }

// addLine records a plain or shaped field's line: what its text follows
// from, as its treeLine says.
func (pl *treePlan) addLine(f *decode.Field, l *treeLine, at, depth int, second bool) {
	op := planOp{kind: opLine, f: f, at: int32(at), depth: int16(depth), want: second}
	if !f.Shaped() && !l.crc {
		switch l.kind {
		case lineDec, lineHex, lineDecHex, lineNamedDec, lineNamedHex, lineBool:
			op.cmp = cmpU
		case lineTime:
			op.cmp = cmpD
		case lineString:
			op.cmp = cmpS
		case lineIPv4, lineEther:
			op.cmp = cmpB
		case lineGeneric:
			if f.Type == decode.FTBytes || f.Type == decode.FTIPv6 {
				op.cmp, op.cut = cmpB, f.Type == decode.FTBytes
			}
		}
	}
	if op.cmp == cmpB {
		op.boff = int32(len(pl.vals))
		pl.vals = append(pl.vals, make([]byte, cmpBMax)...)
	}
	if sp, ok := f.Span(); ok && op.cmp != cmpNone && !second && sp.Len <= 8 && int(sp.Off)+8 <= spanRoom {
		op.span, op.spanMask = sp, ^uint64(0)>>(64-8*sp.Len)
	}
	pl.add(op)
}

// addVisit records what walker.visit did with field f at index at: its
// depth follows from the stack visit left (depth is its length).
func (pl *treePlan) addVisit(f *decode.Field, l *treeLine, at int, flags decode.TreeFlags, depth int) {
	switch {
	case f.Type == decode.FTProtocol || flags&decode.OpensSubtree != 0:
		op := planOp{kind: opOpen, f: f, at: int32(at), depth: int16(depth - 1)}
		if f.Type == decode.FTProtocol && !f.Shaped() {
			op.title = titleOf(f)
			switch op.title {
			case titleConst:
				op.cmp = cmpConst
			case titleEth, titleIP, titleUDP, titleTCP, titleIB:
				op.cmp = cmpTitle
				op.boff = int32(len(pl.vals))
				pl.vals = append(pl.vals, make([]byte, cmpBMax)...)
			}
		}
		pl.add(op)
	case flags&decode.TableRow != 0:
		pl.add(planOp{kind: opTable, f: f, at: int32(at), depth: int16(depth)})
	default:
		pl.addLine(f, l, at, depth, flags&decode.Repeats != 0)
	}
}

// group cuts the plan's lines into blocks: the runs of lines whose text
// follows from values that have not been changing (the questions between
// them draw nothing), and the plan into segments.
func (pl *treePlan) group() {
	pl.blocks, pl.segs = pl.blocks[:0], pl.segs[:0]
	from, blk := 0, int16(-1)
	for k := range pl.ops {
		op := &pl.ops[k]
		if op.kind < opLine {
			continue
		}
		op.blk = -1
		if op.cmp == cmpNone || op.changed >= lineVolatile {
			pl.segs = append(pl.segs, planSeg{from: int32(from), to: int32(k), blk: blk},
				planSeg{from: int32(k), to: int32(k) + 1, blk: -1, draw: true})
			from, blk = k+1, -1
			continue
		}
		if blk < 0 {
			blk = int16(len(pl.blocks))
			if len(pl.blocks) < cap(pl.blocks) {
				// A block of the plan's last grouping: its text's room too.
				pl.blocks = pl.blocks[:len(pl.blocks)+1]
				pl.blocks[blk].from = int32(from)
			} else {
				pl.blocks = append(pl.blocks, planBlock{from: int32(from)})
			}
		}
		b := &pl.blocks[blk]
		b.to, b.drawn = int32(k)+1, false
		op.blk = blk
	}
	pl.segs = append(pl.segs, planSeg{from: int32(from), to: int32(len(pl.ops)), blk: blk})
	pl.regroup = false
}

// titleKind is how appendProtocolTitle writes a protocol's line: from
// what values of the packet.
type titleKind uint8

const (
	titleConst titleKind = iota // the same for every packet
	titleFrame                  // the frame's number and lengths: drawn every time
	titleEth                    // the MAC addresses
	titleIP                     // the IP addresses
	titleUDP                    // the UDP ports
	titleTCP                    // the TCP ports
	titleIB                     // RoCEv2, RoCEv1 or neither
	titleMAD                    // the CM message: drawn every time
)

// titleOf is what f's title line follows from, as appendProtocolTitle
// writes it.
func titleOf(f *decode.Field) titleKind {
	switch f.Name {
	case "frame":
		return titleFrame
	case "eth":
		return titleEth
	case "ip", "ipv6":
		return titleIP
	case "udp":
		return titleUDP
	case "tcp":
		return titleTCP
	case "infiniband":
		return titleIB
	case "infiniband.smplid.smpdata":
		return titleMAD
	}
	return titleConst
}

// titleKey is what the title line of protocol f follows from in p (the
// values appendProtocolTitle reads), in u and key; false when it cannot
// say.
func titleKey(f *decode.Field, p *decode.Packet, key []byte) (u uint64, b []byte, ok bool) {
	h := p.Headers
	switch titleOf(f) {
	case titleEth:
		e := &h.Ethernet
		if len(e.SrcMAC)+len(e.DstMAC) > len(key) {
			return 0, nil, false
		}
		b = append(append(key[:0], e.SrcMAC...), e.DstMAC...)
		return uint64(len(e.SrcMAC)) | uint64(len(b))<<8, b, true
	case titleIP:
		var src, dst []byte
		switch {
		case p.HasIPv4():
			src, dst, u = h.IPv4.SrcIP, h.IPv4.DstIP, 1<<16
		case p.HasIPv6():
			src, dst, u = h.IPv6.SrcIP, h.IPv6.DstIP, 2<<16
		default:
			return 0, nil, false
		}
		if len(src)+len(dst) > len(key) {
			return 0, nil, false
		}
		b = append(append(key[:0], src...), dst...)
		return u | uint64(len(src)) | uint64(len(b))<<8, b, true
	case titleUDP:
		return uint64(h.UDP.SrcPort)<<16 | uint64(h.UDP.DstPort), key[:0], true
	case titleTCP:
		return uint64(h.TCP.SrcPort)<<16 | uint64(h.TCP.DstPort), key[:0], true
	case titleIB:
		if p.HasUDP() {
			u |= 1
		}
		if p.Encapsulation == layers.EncapRoCEv1 {
			u |= 2
		}
		return u, key[:0], true
	}
	return 0, nil, false
}

// treePlanSlots is how many shapes a Tree keeps plans for; a key's plan
// sits in the slot its hash names, and a shape whose slot another holds
// takes it over.
const treePlanSlots = 64

// walkPlanned draws p's tree from the plan of its shape when one holds,
// else with the full walk, writing the shape's plan.
func (t *Tree) walkPlanned(p *decode.Packet) {
	if t.plans == nil {
		t.plans = make([]treePlan, treePlanSlots)
	}
	key := treePlanKey(p)
	pl := &t.plans[(key*0x9E3779B97F4A7C15)>>(64-6)]
	if pl.used && pl.key == key {
		if pl.wait > 0 {
			pl.wait--
			t.walkAll(p, nil)
			return
		}
		start := len(t.buf)
		if t.replay(p, pl) {
			pl.backoff = 0
			t.replayed++
			if pl.regroup {
				pl.group()
			}
			return
		}
		t.buf = t.buf[:start]
		pl.backoff = min(max(2*pl.backoff, 1), 256)
		pl.wait = pl.backoff
	} else {
		pl.wait, pl.backoff = 0, 0
	}
	pl.key, pl.used, pl.headers = key, true, p.HeaderSet()
	pl.ops, pl.vals = pl.ops[:0], pl.vals[:0]
	t.walkAll(p, pl)
	pl.group()
}

// replay draws p's tree from pl, asking the questions the walk asked that
// p's headers and spans do not settle; it reports false, having drawn part
// of the tree, at the first answer that differs from the plan's, or at
// once for a packet whose headers are not the plan's. A block whose values are those of the last
// packet is copied whole from the text it had then.
func (t *Tree) replay(p *decode.Packet, pl *treePlan) bool {
	if p.HeaderSet() != pl.headers {
		return false
	}
	var hdrs spanHeaders
	hdrs.fill(p)
	ops := pl.ops
	for _, s := range pl.segs {
		if s.draw {
			op := &ops[s.from]
			v := &t.w.v
			if !op.f.Get(p, v) {
				return false
			}
			op.spanKept = false // its value is not kept
			t.drawOp(p, op)
			if op.want {
				op.f.GetSecond(p, v)
			}
			continue
		}
		ok, dirty := pl.ask(p, &t.w.v, ops[s.from:s.to], &hdrs)
		if !ok {
			return false
		}
		if s.blk >= 0 {
			t.flushBlock(pl, s.blk, dirty)
		}
	}
	return true
}

// ask asks ops' questions of p and the values of their lines, all of
// one block, but a line whose span holds the bytes it was last asked with:
// it reports whether p answers as the plan says, and whether a line's
// value differs from the one it was last drawn from.
func (pl *treePlan) ask(p *decode.Packet, v *decode.Value, ops []planOp, hdrs *spanHeaders) (ok, dirty bool) {
	for k := 0; k < len(ops); k++ {
		op := &ops[k]
		if op.kind < opLine {
			n := askAbsent(p, v, ops[k:])
			if n < 0 {
				return false, false
			}
			k += n - 1
			continue
		}
		word, spanned := hdrs.word(op)
		if spanned && op.spanKept && word == op.spanWord {
			// The bytes of the packet the line was asked of last: the
			// same value, and p has the same headers.
			if op.changed != 0 {
				op.changed--
			}
			continue
		}
		if !op.f.Get(p, v) {
			return false, false
		}
		op.spanKept, op.spanWord = spanned, word
		if op.cmp == cmpU && op.u == v.U || op.keep(p, v, pl.vals) {
			if op.changed != 0 {
				op.changed--
			}
		} else {
			if op.cmp == cmpB && !op.cut && len(v.B) > cmpBMax {
				return false, false // a value the block cannot be drawn again from: the full walk draws it
			}
			dirty = true
			if op.changed += lineChange; op.changed >= lineVolatile {
				pl.regroup = true
			}
		}
		if op.want {
			op.f.GetSecond(p, v)
		}
	}
	return true, dirty
}

// spanRoom is how many of a header's bytes spanHeaders keeps: a span must
// end, and a word read at it fit, within them.
const spanRoom = 32

// spanHeaders are a packet's headers that fields' spans lie in, each's
// first spanRoom bytes and its length, for reading the word at a span
// without a call.
type spanHeaders struct {
	b   [decode.SpanHeaders][spanRoom]byte
	len [decode.SpanHeaders]int
}

func (hs *spanHeaders) fill(p *decode.Packet) {
	for h := 1; h < decode.SpanHeaders; h++ {
		b := p.SpanBytes(decode.SpanHeader(h))
		hs.len[h] = len(b)
		copy(hs.b[h][:], b)
	}
}

// word returns the bytes at op's span, as op.spanMask picks them from the
// word there, and false when op has no span or the packet's header ends
// before it.
func (hs *spanHeaders) word(op *planOp) (uint64, bool) {
	sp := op.span
	if sp.Header == decode.SpanNone || int(sp.Off)+int(sp.Len) > hs.len[sp.Header] {
		return 0, false
	}
	off := int(sp.Off) // addLine kept the word within spanRoom
	return binary.LittleEndian.Uint64(hs.b[sp.Header][off:off+8]) & op.spanMask, true
}

// askAbsent asks the questions at the head of ops (gates and absent
// fields) and reports how many there are, or -1 when p answers one other
// than the plan says: a loop of its own, with little to keep across the
// getters' calls.
func askAbsent(p *decode.Packet, v *decode.Value, ops []planOp) int {
	k := 0
	for ; k < len(ops); k++ {
		op := &ops[k]
		switch op.kind {
		case opGate:
			if _, skip := decode.SkipAbsentGroup(p, int(op.at)); skip != op.want {
				return -1
			}
		case opAbsent:
			if op.f.Get(p, v) || op.f.SubtreeWithout(p) != op.want {
				return -1
			}
		default:
			return k
		}
	}
	return k
}

// keep reports whether v is the value op's line was drawn from last, and
// keeps v when it is not.
func (op *planOp) keep(p *decode.Packet, v *decode.Value, vals []byte) bool {
	switch op.cmp {
	case cmpU:
		if op.u == v.U {
			return true
		}
		op.u = v.U
	case cmpD:
		if op.u == uint64(v.D) {
			return true
		}
		op.u = uint64(v.D)
	case cmpS:
		if op.s == v.S {
			return true
		}
		op.s = v.S
	case cmpB:
		b := v.B[:min(len(v.B), cmpBMax)]
		kept := vals[op.boff : op.boff+cmpBMax]
		if op.u == uint64(len(b)) && string(kept[:len(b)]) == string(b) {
			return true
		}
		copy(kept, b)
		op.u = uint64(len(b))
	case cmpTitle:
		var key [cmpBMax]byte
		u, b, ok := titleKey(op.f, p, key[:])
		kept := vals[op.boff : op.boff+cmpBMax]
		if ok && op.u == u && op.s == "" && string(kept[:len(b)]) == string(b) {
			return true
		}
		copy(kept, b)
		op.u = u
		if !ok {
			op.s = "?" // no key: the line is drawn again
		} else {
			op.s = ""
		}
	default: // cmpConst
		return true
	}
	return false
}

// value is the Value op's line was drawn from last.
func (op *planOp) value(vals []byte) decode.Value {
	switch op.cmp {
	case cmpU:
		return decode.Value{U: op.u}
	case cmpD:
		return decode.Value{D: time.Duration(op.u)}
	case cmpS:
		return decode.Value{S: op.s}
	case cmpB:
		return decode.Value{B: vals[op.boff : op.boff+int32(op.u)]}
	}
	return decode.Value{}
}

// flushBlock appends block bi's text, drawing it again from its lines'
// values first when dirty or never drawn.
func (t *Tree) flushBlock(pl *treePlan, bi int16, dirty bool) {
	b := &pl.blocks[bi]
	if dirty || !b.drawn {
		text := b.text[:0]
		for k := b.from; k < b.to; k++ {
			op := &pl.ops[k]
			if op.kind < opLine || op.blk != bi {
				continue
			}
			if op.kind == opOpen { // a title: p's values are those ask kept
				text = appendIndent(text, int(op.depth))
				text = appendProtocolTitle(text, op.f, t.p)
			} else {
				v := op.value(pl.vals)
				text = appendPlainLine(text, &t.lines[op.at], int(op.depth), op.f, &v)
			}
			text = append(text, '\n')
		}
		b.text, b.drawn = text, true
	}
	t.buf = append(t.buf, b.text...)
}

// drawOp draws the line of op, a present field drawn every time.
func (t *Tree) drawOp(p *decode.Packet, op *planOp) {
	w := &t.w
	switch {
	case op.kind == opTable:
		w.tableRows(p, t, w.order().all, int(op.at), int(op.depth))
	case op.kind == opOpen && op.title == titleFrame:
		t.buf = appendIndent(t.buf, int(op.depth))
		t.buf = t.appendFrameTitle(t.buf, p)
		t.buf = append(t.buf, '\n')
	case op.kind == opOpen:
		w.at = int(op.at)
		t.open(op.f, int(op.depth), &w.v)
	case op.cmp != cmpNone:
		t.buf = appendPlainLine(t.buf, &t.lines[op.at], int(op.depth), op.f, &w.v)
		t.buf = append(t.buf, '\n')
	default:
		w.at = int(op.at)
		t.field(op.f, int(op.depth), &w.v, false)
	}
}

// treePlanKey names p's shape: what decides which fields it has, as far
// as a few words of the packet say it (its headers, as decode's HeaderSet
// says them, its opcode, MAD attribute, errors and analysis). Two shapes
// with one key cost time (walkPlanned), never a wrong tree.
func treePlanKey(p *decode.Packet) uint64 {
	a := &p.Analysis
	var found uint64 // what the analysis and the capture add
	for i, has := range [...]bool{p.Err != nil, len(p.Data) < p.Length, len(p.Data) == 0, a.Findings != 0, a.Conv != 0,
		a.CM != nil, a.NVMe != nil, a.RPCRDMA != nil, a.SMBDirect != nil, a.ISER != nil, a.DCQCN != nil, p.Correlation != nil} {
		if has {
			found |= 1 << i
		}
	}
	more := uint64(p.Encapsulation) | uint64(p.ICRC)<<6 | uint64(p.VCRC)<<9 | uint64(a.Info)<<12 | found<<28
	if b := p.BTH(); b != nil {
		more |= uint64(b.Opcode) << 40
	}
	if p.HasMAD() {
		m := &p.Headers.MAD
		more ^= uint64(m.MgmtClass)<<48 ^ uint64(m.Method)<<56 ^ uint64(m.AttributeID)<<20
	}
	return p.HeaderSet() ^ more*0x9E3779B97F4A7C15
}

// appendFrameTitle writes the frame's title as appendProtocolTitle does,
// its lengths' part kept from the last frame of the same lengths.
func (t *Tree) appendFrameTitle(buf []byte, p *decode.Packet) []byte {
	buf = append(buf, "Frame "...)
	buf = appendInt(buf, int64(p.Number))
	if t.frameLens != [2]int{p.Length, len(p.Data)} || len(t.frameTail) == 0 {
		t.frameLens = [2]int{p.Length, len(p.Data)}
		t.frameTail = appendFrameLengths(t.frameTail[:0], p)
	}
	return append(buf, t.frameTail...)
}
