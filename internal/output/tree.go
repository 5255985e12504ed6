package output

import (
	"sync"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// Tree renders the -V detail tree, in the manner of tshark -V: a line per
// protocol, its headers and fields indented beneath.
type Tree struct {
	// Only limits the tree to these protocols (-O); empty shows all.
	Only []string
	w    walker
	buf  []byte
	p    *decode.Packet
	skip int // depth of a protocol being skipped, or -1
	// lines are treeLines(), fetched once.
	lines []treeLine
	// cache is the last line of each field whose line follows from its
	// value (Append's, not TreeNodes's).
	cache []cachedLine
	// plans are the walks of the shapes of packet met so far
	// (tree_plan.go), made on the first packet.
	plans []treePlan
	// replayed counts the packets drawn from a plan.
	replayed int
	// frameTail is the frame title's text after the number, for the
	// frame's length and captured length frameLens.
	frameTail []byte
	frameLens [2]int
}

// Config returns t's options without its scratch state (the walk, the
// lines kept from the last packet).
func (t *Tree) Config() Tree { return Tree{Only: t.Only} }

// Append appends the tree of p, each line ending in a newline.
func (t *Tree) Append(buf []byte, p *decode.Packet) []byte {
	return t.appendTree(buf, p, len(t.Only) == 0)
}

// appendTree is Append, drawing from the plans of packets' shapes when
// planned (tree_plan.go), with the full walk otherwise.
func (t *Tree) appendTree(buf []byte, p *decode.Packet, planned bool) []byte {
	t.buf, t.p, t.skip = buf, p, -1
	if t.cache == nil {
		t.lines = treeLines()
		t.cache = make([]cachedLine, len(t.lines))
	}
	t.w.tree = true
	if p.HasLRH() && (p.HasIPv4() || p.HasIPv6()) {
		t.w.walk(p, t) // a raw packet: the IP it carries after the IB headers
		return t.buf
	}
	if !planned {
		t.walkAll(p, nil)
		return t.buf
	}
	t.walkPlanned(p)
	return t.buf
}

// walkAll is walker.walkAll for the tree alone: the same visits, with the
// visitor's calls made directly and a line kept from the last packet
// copied in the loop. TestTreeNodesMatchTree holds it to the walk that
// TreeNodes and the JSON renderers take. With rec, it records the walk's
// every question and answer and every line it draws, as a plan for the
// packets of the same shape (tree_plan.go); rec is nil under -O, whose
// skipped protocols the plans do not know.
func (t *Tree) walkAll(p *decode.Packet, rec *treePlan) {
	w := &t.w
	w.stack = w.stack[:0]
	ord := w.order()
	all, ends, eoib := ord.all, ord.ends, ord.eoib
	lines, cache := t.lines[:len(all)], t.cache[:len(all)]
	for i := 0; i < len(all); {
		f := all[i]
		if f.Gated() {
			j, skip := decode.SkipAbsentGroup(p, i)
			if rec != nil {
				rec.add(planOp{kind: opGate, at: int32(i), want: skip})
			}
			if skip {
				i = j
				continue
			}
		}
		flags := f.TreeFlags()
		if !f.Get(p, &w.v) {
			without := f.SubtreeWithout(p)
			if rec != nil {
				if !f.PresentByHeaders() { // else the plan's HeaderSet says it is absent
					rec.add(planOp{kind: opAbsent, f: f, at: int32(i), want: without})
				}
			}
			if without {
				i++
			} else {
				i = ends[i] // a header the packet lacks: none of its fields can be there
			}
			continue
		}
		if flags&(decode.OpensSubtree|decode.TableRow) != 0 || f.Type == decode.FTProtocol || i == eoib {
			at := i
			i = w.visit(p, t, i, f, flags)
			if rec != nil {
				rec.addVisit(f, &lines[at], at, flags, len(w.stack))
			}
			continue
		}
		for len(w.stack) > 0 && !f.InTreeOf(w.stack[len(w.stack)-1]) {
			top := w.stack[len(w.stack)-1]
			w.stack = w.stack[:len(w.stack)-1]
			t.close(top, len(w.stack))
		}
		if rec != nil {
			rec.addLine(f, &lines[i], i, len(w.stack), false)
		}
		// A second occurrence draws no line of its own in the tree: the
		// walk does not ask for it.
		if lines[i].kept && t.skip < 0 {
			if c := &cache[i]; c.depth == int32(len(w.stack))+1 && c.u == w.v.U {
				t.buf = append(t.buf, c.line...)
				c.misses = 0
				i++
				continue
			}
		}
		w.at = i
		t.field(f, len(w.stack), &w.v, false)
		i++
	}
	for len(w.stack) > 0 {
		top := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		t.close(top, len(w.stack))
	}
}

// treeLine is what the -V tree needs to draw a plain field's line ("Title:
// value"), found once for every field of the registry: the text before the
// value, and how the value is written, decided from the field's type, base
// and value names here rather than for every line of every packet.
type treeLine struct {
	// head is the title and ": " after padDepth levels of indentation: a
	// line at depth d starts with head[4*(padDepth-d):], one copy.
	head  string
	kind  lineKind
	width uint8 // hex digits (lineHex, lineDecHex, lineNamedHex)
	crc   bool  // the ICRC's or VCRC's line, which ends in the check's verdict
	// kept marks a line the tree keeps from packet to packet: a plain
	// line that follows from the field, its depth and Value.U alone.
	kept bool
}

// padDepth is the deepest line a treeLine's head has the indentation of;
// deeper lines (few registries' trees have them) add the rest.
const padDepth = 8

// lineKind says how a plain field's value is written, as appendTreeValue
// writes it.
type lineKind uint8

const (
	lineGeneric lineKind = iota // appendTreeValue: bytes, doubles, shaped fields ...
	lineIPv4
	lineEther
	lineString
	lineTime     // seconds with nine decimals
	lineDec      // an integer in decimal
	lineHex      // an integer in hex, width digits
	lineDecHex   // decimal, then the hex in parentheses
	lineNamedDec // a value name and the decimal in parentheses, or the decimal
	lineNamedHex // a value name and the hex in parentheses, or the hex
	lineBool     // True or False
)

// lineNumbered is the first of the kinds whose line follows from the
// field, its depth and Value.U alone.
const lineNumbered = lineDec

// treeLines are the registry's fields' treeLines, in wire order (the
// index the walk visits them at).
var treeLines = sync.OnceValue(func() []treeLine {
	all := decode.FieldsInWireOrder()
	ls := make([]treeLine, len(all))
	for i, f := range all {
		l := &ls[i]
		l.head = indentation[:4*padDepth] + f.Title + ": "
		l.crc = f == crcFieldsOf().icrc || f == crcFieldsOf().vcrc
		if f.Shaped() {
			continue // appendFieldLine draws it
		}
		l.width = uint8(f.Type.BitWidth() / 4)
		hex := f.Base == decode.BaseHex || f.Base == decode.BaseHexDec
		switch {
		case f.Type.IsUnsigned() && f.Names != nil && hex:
			l.kind = lineNamedHex
		case f.Type.IsUnsigned() && f.Names != nil:
			l.kind = lineNamedDec
		case f.Type.IsUnsigned() && f.Base == decode.BaseDecHex:
			l.kind = lineDecHex
		case f.Type.IsUnsigned() && hex:
			l.kind = lineHex
		case f.Type.IsUnsigned():
			l.kind = lineDec
		case f.Type == decode.FTBool:
			l.kind = lineBool
		case f.Type == decode.FTIPv4:
			l.kind = lineIPv4
		case f.Type == decode.FTEther:
			l.kind = lineEther
		case f.Type == decode.FTString:
			l.kind = lineString
		case f.Type == decode.FTRelTime || f.Type == decode.FTAbsTime:
			l.kind = lineTime
		}
		l.kept = l.kind >= lineNumbered && !l.crc
	}
	return ls
})

// appendPlainLine writes a plain field's line at depth (no newline): its
// indentation and head, and its value.
func appendPlainLine(buf []byte, l *treeLine, depth int, f *decode.Field, v *decode.Value) []byte {
	if depth <= padDepth {
		buf = append(buf, l.head[4*(padDepth-depth):]...)
	} else {
		for range depth - padDepth {
			buf = append(buf, "    "...)
		}
		buf = append(buf, l.head...)
	}
	switch l.kind {
	case lineDec:
		return appendDec(buf, v.U)
	case lineHex:
		return appendHex(buf, v.U, int(l.width))
	case lineDecHex:
		buf = appendDec(buf, v.U)
		buf = append(buf, " ("...)
		buf = appendHex(buf, v.U, int(l.width))
		return append(buf, ')')
	case lineNamedDec, lineNamedHex:
		name, ok := f.Names(v.U)
		if ok {
			buf = append(buf, name...)
			buf = append(buf, " ("...)
		}
		if l.kind == lineNamedHex {
			buf = appendHex(buf, v.U, int(l.width))
		} else {
			buf = appendDec(buf, v.U)
		}
		if ok {
			buf = append(buf, ')')
		}
		return buf
	case lineBool:
		if v.U != 0 {
			return append(buf, "True"...)
		}
		return append(buf, "False"...)
	case lineIPv4:
		if len(v.B) == 4 {
			return appendIPv4(buf, [4]byte(v.B))
		}
		return buf
	case lineEther:
		return appendMAC(buf, v.B)
	case lineString:
		return append(buf, v.S...)
	case lineTime:
		return appendFixedSeconds(buf, v.D, 9)
	}
	return appendTreeValue(buf, f, v)
}

// indentation is the -V tree's indentation, four spaces a level, for the
// depths the registry's trees have; deeper lines add to it.
const indentation = "                                                                " // 16 levels

func (t *Tree) shown(f *decode.Field, depth int) bool {
	if t.skip >= 0 {
		return false
	}
	if depth > 0 || len(t.Only) == 0 {
		return true
	}
	for _, o := range t.Only {
		if o == f.Name {
			return true
		}
	}
	return false
}

func (t *Tree) indent(depth int) { t.buf = appendIndent(t.buf, depth) }

// appendIndent appends the indentation of a line at depth.
func appendIndent(buf []byte, depth int) []byte {
	if n := 4 * depth; n <= len(indentation) {
		return append(buf, indentation[:n]...)
	}
	for range depth {
		buf = append(buf, "    "...)
	}
	return buf
}

func (t *Tree) open(f *decode.Field, depth int, v *decode.Value) {
	if !t.shown(f, depth) {
		if t.skip < 0 {
			t.skip = depth
		}
		return
	}
	if f.Type != decode.FTProtocol { // a field heading a subtree
		t.field(f, depth, v, false)
		return
	}
	t.indent(depth)
	if b, ok := f.AppendLabel(t.buf, t.p, v); ok {
		t.buf = b
	} else {
		t.buf = appendProtocolTitle(t.buf, f, t.p)
	}
	t.buf = append(t.buf, '\n')
}

func (t *Tree) close(f *decode.Field, depth int) {
	if t.skip == depth {
		t.skip = -1
	}
}

func (t *Tree) field(f *decode.Field, depth int, v *decode.Value, second bool) {
	if t.skip >= 0 || second {
		return
	}
	if f.Shaped() {
		t.indent(depth)
		t.buf = appendFieldLine(t.buf, f, t.p, v, t.w.occ)
		t.buf = t.appendCRC(t.buf, f)
		t.buf = append(t.buf, '\n')
		return
	}
	if t.lines == nil {
		t.lines = treeLines()
	}
	l := &t.lines[t.w.at]
	if !l.kept || t.cache == nil {
		t.buf = appendPlainLine(t.buf, l, depth, f, v)
		if l.crc {
			t.buf = t.appendCRC(t.buf, f)
		}
		t.buf = append(t.buf, '\n')
		return
	}
	// A line whose text follows from its value alone, as most header
	// fields' do, is copied from the last packet's when the value is the
	// same: the version, lengths, ports, flags and keys of a capture
	// repeat from packet to packet.
	c := &t.cache[t.w.at]
	if c.depth == int32(depth)+1 && c.u == v.U {
		t.buf = append(t.buf, c.line...)
		c.misses = 0
		return
	}
	start := len(t.buf)
	t.buf = appendPlainLine(t.buf, l, depth, f, v)
	t.buf = append(t.buf, '\n')
	if c.misses < lineCacheGiveUp {
		// A value that changes every packet (a PSN, a frame number) soon
		// stops being copied.
		c.misses++
		c.line = append(c.line[:0], t.buf[start:]...)
		c.u, c.depth = v.U, int32(depth)+1
	}
}

// lineCacheGiveUp is how many lines in a row a field's value may change
// before the tree stops keeping its last line.
const lineCacheGiveUp = 8

// cachedLine is a plain line of the last packet whose text follows from
// the field's value: the value, its depth plus one (0 for none yet) and the
// line with its newline.
type cachedLine struct {
	u      uint64
	depth  int32
	misses uint8
	line   []byte
}

// appendCRC appends the check's verdict to the ICRC's and VCRC's lines.
func (t *Tree) appendCRC(buf []byte, f *decode.Field) []byte {
	crc := crcFieldsOf()
	switch f {
	case crc.icrc:
		return appendCRCStatus(buf, t.p.ICRC, uint64(wireOrder32(t.p.ICRCComputed)), 8)
	case crc.vcrc:
		c := t.p.VCRCComputed
		return appendCRCStatus(buf, t.p.VCRC, uint64(c>>8|c<<8), 4)
	}
	return buf
}

// crcFieldsOf gives the two fields whose line ends in the check's
// verdict, resolved once (when first drawn) so that every other line pays
// a pointer comparison.
var crcFieldsOf = sync.OnceValue(func() (c struct{ icrc, vcrc *decode.Field }) {
	var ok bool
	if c.icrc, ok = decode.Lookup("infiniband.invariant.crc"); !ok {
		panic("output: no field infiniband.invariant.crc")
	}
	if c.vcrc, ok = decode.Lookup("infiniband.variant.crc"); !ok {
		panic("output: no field infiniband.variant.crc")
	}
	return c
})

func wireOrder32(c uint32) uint32 { return c>>24 | c>>8&0xFF00 | c<<8&0xFF0000 | c<<24 }

func appendCRCStatus(buf []byte, st layers.CRCStatus, want uint64, width int) []byte {
	switch st {
	case layers.CRCGood:
		return append(buf, " [correct]"...)
	case layers.CRCBad:
		buf = append(buf, " [incorrect, should be "...)
		buf = appendHex(buf, want, width)
		return append(buf, ']')
	}
	return buf
}

// treeBytesMax is how many bytes of a byte field the tree shows before
// "…", as tshark -V does (its labels show 36 bytes); -x shows them all.
const treeBytesMax = 36

// appendFieldLine writes a field's -V line without indentation: its own
// label where Wireshark writes one, else a bit field's pattern, the title,
// the value and what Wireshark appends to it.
func appendFieldLine(buf []byte, f *decode.Field, p *decode.Packet, v *decode.Value, occ int) []byte {
	if b, ok := f.AppendLabel(buf, p, v); ok {
		return b
	}
	if f.Mask() != 0 && f.Type.IsUnsigned() {
		buf = appendBitPattern(buf, v.U<<uint(f.MaskShift()), f.Mask(), f.Type.BitWidth())
		buf = append(buf, " = "...)
	} else if bits := f.BoolBits(); bits > 0 {
		var u uint64
		if v.U != 0 {
			u = f.Mask()
		}
		buf = appendBitPattern(buf, u, f.Mask(), bits)
		buf = append(buf, " = "...)
	}
	buf = append(buf, f.Title...)
	buf = append(buf, ": "...)
	buf = appendTreeValue(buf, f, v)
	return f.AppendSuffix(buf, v, occ)
}

// appendBitPattern writes the bits of an integer of the given width as
// Wireshark shows a bit field's: the bits under mask as 0 and 1, the others
// as dots, in groups of four.
func appendBitPattern(buf []byte, u, mask uint64, width int) []byte {
	for i := width - 1; i >= 0; i-- {
		switch {
		case mask>>uint(i)&1 == 0:
			buf = append(buf, '.')
		case u>>uint(i)&1 != 0:
			buf = append(buf, '1')
		default:
			buf = append(buf, '0')
		}
		if i > 0 && i%4 == 0 {
			buf = append(buf, ' ')
		}
	}
	return buf
}

// appendTreeValue formats a value for the tree: names with the number in
// parentheses, booleans as True/False, hex and decimal per the field's base,
// long byte strings cut as tshark cuts them.
func appendTreeValue(buf []byte, f *decode.Field, v *decode.Value) []byte {
	switch {
	case f.Type.IsUnsigned():
		switch {
		case f.Names != nil:
			name, ok := f.Names(v.U)
			if !ok && f.Shaped() && f.UnknownNamed() {
				name, ok = "Unknown", true
			}
			if ok {
				buf = append(buf, name...)
				buf = append(buf, " ("...)
				buf = appendTreeNumber(buf, f, v)
				return append(buf, ')')
			}
			return appendTreeNumber(buf, f, v)
		case f.Shaped() && f.Mask() != 0:
			return appendTreeNumber(buf, f, v)
		case f.Base == decode.BaseDecHex:
			// As tshark: the hex as wide as the field's type (0x00 for a
			// byte, 0x00000000 for a word).
			buf = appendDec(buf, v.U)
			buf = append(buf, " ("...)
			buf = appendHex(buf, v.U, f.Type.BitWidth()/4)
			return append(buf, ')')
		}
	case f.Type == decode.FTBytes && len(v.B) > treeBytesMax:
		cut := *v
		cut.B = v.B[:treeBytesMax]
		return append(f.AppendValue(buf, &cut), "…"...)
	case f.Type == decode.FTBool:
		if v.U != 0 {
			return append(buf, "True"...)
		}
		return append(buf, "False"...)
	}
	return f.AppendValue(buf, v)
}

// appendTreeNumber writes an integer as -T fields does, except that a bit
// field's hex value is as wide as its mask, as the tree shows it.
func appendTreeNumber(buf []byte, f *decode.Field, v *decode.Value) []byte {
	if f.Shaped() && f.Mask() != 0 && (f.Base == decode.BaseHex || f.Base == decode.BaseHexDec) {
		return appendHex(buf, v.U, f.MaskHexWidth())
	}
	return f.AppendValue(buf, v)
}

// appendFrameLengths writes the frame title's part after its number, as
// tshark does: ": 122 bytes on wire (976 bits), 122 bytes captured (976 bits)".
func appendFrameLengths(buf []byte, p *decode.Packet) []byte {
	buf = append(buf, ": "...)
	buf = appendInt(buf, int64(p.Length))
	buf = append(buf, " bytes on wire ("...)
	buf = appendInt(buf, int64(p.Length)*8)
	buf = append(buf, " bits), "...)
	buf = appendInt(buf, int64(len(p.Data)))
	buf = append(buf, " bytes captured ("...)
	buf = appendInt(buf, int64(len(p.Data))*8)
	return append(buf, " bits)"...)
}

// appendProtocolTitle writes a protocol's line, with tshark's summaries for
// the frame and the common headers: titleOf says which line a protocol
// has, and the -V plans what it follows from.
func appendProtocolTitle(buf []byte, f *decode.Field, p *decode.Packet) []byte {
	h := p.Headers
	switch titleOf(f) {
	case titleFrame:
		buf = append(buf, "Frame "...)
		buf = appendInt(buf, int64(p.Number))
		return appendFrameLengths(buf, p)
	case titleEth:
		buf = append(buf, "Ethernet II, Src: "...)
		buf = appendMAC(buf, h.Ethernet.SrcMAC)
		buf = append(buf, ", Dst: "...)
		return appendMAC(buf, h.Ethernet.DstMAC)
	case titleIP:
		buf = append(buf, f.Title...)
		buf = append(buf, ", Src: "...)
		buf = AppendAddress(buf, p, true)
		buf = append(buf, ", Dst: "...)
		return AppendAddress(buf, p, false)
	case titleUDP:
		buf = append(buf, "User Datagram Protocol, Src Port: "...)
		buf = appendDec(buf, uint64(h.UDP.SrcPort))
		buf = append(buf, ", Dst Port: "...)
		return appendDec(buf, uint64(h.UDP.DstPort))
	case titleTCP:
		buf = append(buf, "Transmission Control Protocol, Src Port: "...)
		buf = appendDec(buf, uint64(h.TCP.SrcPort))
		buf = append(buf, ", Dst Port: "...)
		return appendDec(buf, uint64(h.TCP.DstPort))
	case titleIB:
		if p.HasUDP() {
			return append(buf, "InfiniBand (RoCEv2)"...)
		}
		if p.Encapsulation == layers.EncapRoCEv1 {
			return append(buf, "InfiniBand (RoCEv1)"...)
		}
	case titleMAD:
		// The CM message, named as tshark names it.
		if m := &h.MAD; m.MgmtClass == layers.MgmtClassCM {
			a := layers.CMAttribute(m.AttributeID)
			buf = append(buf, "CM "...)
			buf = append(buf, a.String()...)
			if !a.WiresharkDissects() {
				buf = append(buf, " (Dissector Not Implemented)"...)
			}
			return buf
		}
	case titleConst:
		switch f.Name {
		case "infiniband.mad":
			return append(buf, "MAD Header - Common Management Datagram"...)
		case "infiniband.rwh":
			return append(buf, "RWH - Raw Header"...)
		case "infiniband.payload":
			return append(buf, "IBA Payload - appears to be EtherType encapsulated"...)
		}
	}
	return append(buf, f.Title...)
}
