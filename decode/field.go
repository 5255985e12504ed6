package decode

import (
	"encoding/hex"
	"fmt"
	"math/bits"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// FieldType is the type of a field's value, named as Wireshark names them.
type FieldType uint8

// Field types.
const (
	FTProtocol FieldType = iota // presence of a protocol or header; no value
	FTBool
	FTUint8
	FTUint16
	FTUint24
	FTUint32
	FTUint64
	FTBytes
	FTIPv4
	FTIPv6
	FTEther
	FTString
	FTDouble
	FTRelTime // a duration
	FTAbsTime // a point in time
	FTNone    // a text item of Wireshark's tree: a label over a subtree, no value
)

var fieldTypeNames = [...]string{"FT_PROTOCOL", "FT_BOOLEAN", "FT_UINT8", "FT_UINT16", "FT_UINT24", "FT_UINT32",
	"FT_UINT64", "FT_BYTES", "FT_IPv4", "FT_IPv6", "FT_ETHER", "FT_STRING", "FT_DOUBLE", "FT_RELATIVE_TIME", "FT_ABSOLUTE_TIME", "FT_NONE"}

func (t FieldType) String() string {
	if int(t) < len(fieldTypeNames) {
		return fieldTypeNames[t]
	}
	return "FT_UNKNOWN"
}

// IsUnsigned reports the integer types.
func (t FieldType) IsUnsigned() bool { return t >= FTUint8 && t <= FTUint64 }

// hexWidth is the number of hex digits tshark pads an integer type to.
func (t FieldType) hexWidth() int {
	switch t {
	case FTUint8:
		return 2
	case FTUint16:
		return 4
	case FTUint24:
		return 6
	case FTUint32:
		return 8
	}
	return 16
}

// Base is how an integer field is shown.
type Base uint8

// Display bases.
const (
	BaseNone Base = iota
	BaseDec
	BaseHex
	BaseDecHex // decimal, with hex in the tree
	BaseHexDec // hex, with decimal in the tree
)

var baseNames = [...]string{"", "BASE_DEC", "BASE_HEX", "BASE_DEC_HEX", "BASE_HEX_DEC"}

func (b Base) String() string {
	if int(b) < len(baseNames) {
		return baseNames[b]
	}
	return "BASE_UNKNOWN"
}

// Value is a field's value. Which member is set follows the field's type:
// U for integers and booleans, B for bytes and addresses (sliced from the
// frame, never copied), S for strings, F for doubles, D for times (a
// duration; absolute times count from the Unix epoch).
type Value struct {
	U uint64
	B []byte
	S string
	F float64
	D time.Duration
}

// getter extracts a field from a packet; it reports false when the packet
// does not have the field. It must not allocate.
type getter func(p *Packet, v *Value) bool

// Field is one entry of the field registry: every name that -Y, -e, the JSON
// output and the TUI columns use comes from here.
type Field struct {
	Name  string // "infiniband.bth.psn"
	Title string // "Packet Sequence Number", as Wireshark titles it
	Type  FieldType
	Base  Base
	// treeFlags is shape's walk properties (TreeFlags), kept in the
	// Field's first bytes, which the walk reads anyway: asking a plain
	// field costs no other cache line.
	treeFlags TreeFlags
	// gate is what a packet must have for any field of the field's group to
	// be there (a MAD for the management fields): renderers that ask every
	// field of every packet skip the whole group at once (SkipAbsentGroup).
	gate fieldGate
	// protoWord and protoMask are a protocol's or header's own bit in
	// every field's trees, which has the bits of every protocol or header
	// the field sits under: InTreeOf tests a bit where InTree compares
	// names, because the -V tree asks for every field of every packet. They
	// sit with get in the Field's first cache line, and the first word of
	// trees (the transport's headers register first) just after.
	protoWord uint8
	protoMask uint64
	get       getter
	trees     protoSet
	// Names gives value names for the -V tree and for filters that compare
	// with a name (bth.opcode == RC_SEND_ONLY). Nil when the field has none.
	Names func(uint64) (string, bool)
	// ByName maps a name used in a filter back to its value.
	ByName func(string) (uint64, bool)
	// parent is the header the -V tree shows the field under when its name
	// does not say so (infiniband.reserved sits in the BTH).
	parent string
	// alsoParent is a second header the field may sit under, for a field
	// two headers carry (a Notice is an SMP's data or an SA MAD's), and
	// alsoParents more, for one that three carry (SMB Direct's
	// CreditsRequested is in each of its three messages).
	alsoParent  string
	alsoParents []string
	// outside marks a field that can be present without the header its name
	// puts it under (reth.va serves AtomicETH too), so renderers that skip
	// absent headers do not skip it.
	outside bool
	// second extracts a second occurrence where Wireshark shows one: ImmDt
	// and IETH use one header field for both their subtree and their value,
	// and unknown headers appear as a 4-byte item and then all the bytes.
	second getter
	// nth extracts occurrence i (1 the second, 2 the third ...) of a field
	// Wireshark shows any number of times (infiniband.reserved: one per
	// reserved field of every header); it serves GetSecond too.
	nth func(p *Packet, i int, v *Value) bool
	// up and alsoUp are the fields parent and alsoParent name, which
	// InTree follows: a field is in the trees its parent is in.
	up, alsoUp *Field
	// node marks a header whose value is its bytes (tshark's FT_BYTES
	// header items: infiniband.bth, infiniband.mad ...), which -e prints.
	node bool
	// none marks a header tshark registers as FT_NONE (an item with no
	// value: infiniband.classportinfo, infiniband.portcounters): -e prints
	// 1 for it, and -G fields says FT_NONE.
	none bool
	// fieldsWithout says, for a header, when its fields can be present
	// though it is not (SubtreeWithout).
	fieldsWithout func(p *Packet) bool
	// namedValue marks a protocol whose value -e prints as its own name,
	// as tshark prints a heuristic sub-protocol's (infiniband.eoib).
	namedValue bool
	// span is where in a header of the packet the field's value lies,
	// for a field that follows from those bytes alone (ValueSpan).
	span ValueSpan
	// byHeaders marks a field there exactly when the packet has a header
	// (a header's own item, the RETH's fields: PresentByHeaders).
	byHeaders bool

	// shape is how the -V tree draws the field beyond "Title: value", nil
	// for most fields: kept out of line, so the Field the tree's walk
	// reads for every field of every packet stays small.
	shape *treeShape
}

// UnknownNamed reports a field whose unnamed values the tree calls
// "Unknown".
func (f *Field) UnknownNamed() bool { return f.shape != nil && f.shape.unknownNamed }

// treeShape says how the -V tree draws a field beyond "Title: value".
type treeShape struct {
	// mask is the field's bits within the integer of its type's width, as
	// Wireshark's hf bitmask: the -V tree shows that integer's bit pattern
	// and the value in as many hex digits as the mask's width needs, while
	// -T fields keeps the type's width. 0 for a field that is not a bit field.
	mask uint64
	// maskTreeOnly marks a mask only the tree draws: Wireshark registers
	// the field without one (-G fields says 0x0).
	maskTreeOnly bool
	// boolBits is the width of the integer a masked boolean is a bit of
	// (Wireshark's FT_BOOLEAN display, 8 to 64), which the tree's bit
	// pattern spans; 0 when the field does not say.
	boolBits uint8
	// opens makes a field with a value open a subtree in the -V tree, as
	// Wireshark nests items under an item (the CapabilityMask bits under
	// CapabilityMask, IP CM ServiceID's parts under it): the fields whose
	// names are under this one's, or whose parent it is.
	opens bool
	// treeOnly marks an item only the -V tree shows at its place (the
	// reserved bytes Wireshark files under infiniband.reserved, item by
	// item in each header): the registry does not name it, so -e, -Y and
	// JSON do not see it.
	treeOnly bool
	// unknownNamed makes the tree say "Unknown (0x..)" of a value Names
	// has no name for, as Wireshark does for a field with a value table.
	unknownNamed bool
	// row groups the fields of a table's entry (nonzero, shared by
	// consecutive fields): the -V tree shows every occurrence of them,
	// entry by entry (VL(0), Weight(0), VL(1) ...), as Wireshark does.
	row uint8
	// label, when it reports true, gives the field's whole -V line instead
	// of "Title: value" (tshark's text items: "IP CM ServiceID",
	// "Attribute (NodeInfo)", "SMP (LID Routed) SubnGet(NodeInfo)").
	label func(buf []byte, p *Packet, v *Value) ([]byte, bool)
	// suffix appends what Wireshark appends to a value's line (PortInfo's
	// ", Function Ready", a table entry's "(3)"); occ is the occurrence.
	suffix func(buf []byte, v *Value, occ int) []byte
}

// shapeOf returns the field's tree shape, making it when the registry is
// built.
func (f *Field) shapeOf() *treeShape {
	if f.shape == nil {
		f.shape = &treeShape{}
	}
	return f.shape
}

// TreeFlags are a field's tree-walk properties, in one word so that the
// walk asks once per field: 0 for the plain fields (most of them).
type TreeFlags uint8

// Tree-walk properties (Field.TreeFlags).
const (
	TreeOnlyItem TreeFlags = 1 << iota // Field.TreeOnly
	OpensSubtree                       // Field.Opens
	TableRow                           // Field.Row is nonzero
	Shaped                             // Field.Shaped
	// Repeats marks a field that may occur more than once in a packet
	// (GetSecond, GetOccurrence): the walk asks a second occurrence only of
	// these, and most lines of a -V tree pay no call for it.
	Repeats
)

// TreeFlags returns the field's tree-walk properties.
func (f *Field) TreeFlags() TreeFlags { return f.treeFlags }

// Shaped reports a field the -V tree draws other than "Title: value"
// (a mask, label, suffix, subtree, table row ...): renderers take the plain
// path, without asking, for the others.
func (f *Field) Shaped() bool { return f.treeFlags&Shaped != 0 }

// Mask is the field's Wireshark bitmask as the -V tree draws it (see
// treeShape.mask), 0 for a field that is not a bit field.
func (f *Field) Mask() uint64 {
	if f.shape == nil {
		return 0
	}
	return f.shape.mask
}

// BoolBits is the width of the integer a masked boolean is a bit of (see
// treeShape.boolBits), 0 when not set.
func (f *Field) BoolBits() int {
	if f.shape == nil {
		return 0
	}
	return int(f.shape.boolBits)
}

// Row is the table-entry group of the field (see Field.row), 0 for none.
func (f *Field) Row() uint8 {
	if f.shape == nil {
		return 0
	}
	return f.shape.row
}

// GlossaryType is the type -G fields prints: Wireshark's header items are
// FT_BYTES or FT_NONE where the registry's structure says FT_PROTOCOL.
func (f *Field) GlossaryType() FieldType {
	switch {
	case f.node:
		return FTBytes
	case f.none:
		return FTNone
	}
	return f.Type
}

// GlossaryMask is the bitmask -G fields prints: Wireshark's registered one.
func (f *Field) GlossaryMask() uint64 {
	if f.shape == nil || f.shape.maskTreeOnly {
		return 0
	}
	return f.shape.mask
}

// Opens reports a field whose -V line heads a subtree of the fields whose
// names are under its name.
func (f *Field) Opens() bool { return f.shape != nil && f.shape.opens }

// TreeOnly reports an item only the -V tree shows (see FieldsInWireOrder).
func (f *Field) TreeOnly() bool { return f.shape != nil && f.shape.treeOnly }

// AppendLabel appends the field's -V line when Wireshark writes it as a
// text of its own rather than "Title: value"; false when it does not.
func (f *Field) AppendLabel(buf []byte, p *Packet, v *Value) ([]byte, bool) {
	if f.shape == nil || f.shape.label == nil {
		return buf, false
	}
	return f.shape.label(buf, p, v)
}

// AppendSuffix appends what Wireshark appends to the field's -V line after
// its value, if anything; occ is the occurrence the line shows.
func (f *Field) AppendSuffix(buf []byte, v *Value, occ int) []byte {
	if f.shape == nil || f.shape.suffix == nil {
		return buf
	}
	return f.shape.suffix(buf, v, occ)
}

// BitWidth is the width in bits of an integer type (0 for others).
func (t FieldType) BitWidth() int {
	switch t {
	case FTUint8:
		return 8
	case FTUint16:
		return 16
	case FTUint24:
		return 24
	case FTUint32:
		return 32
	case FTUint64:
		return 64
	}
	return 0
}

// MaskShift is the number of zero bits below the field's mask.
func (f *Field) MaskShift() int {
	if f.Mask() == 0 {
		return 0
	}
	return bits.TrailingZeros64(f.Mask())
}

// MaskHexWidth is how many hex digits the -V tree shows a bit field's value
// in: those of its mask shifted down (0xf8 gives 2, 0x06 gives 1), as
// Wireshark does.
func (f *Field) MaskHexWidth() int {
	return (bits.Len64(f.Mask()>>f.MaskShift()) + 3) / 4
}

// Get extracts the field from p into v.
func (f *Field) Get(p *Packet, v *Value) bool {
	if f.get == nil {
		return false
	}
	return f.get(p, v)
}

// InTree reports whether the field belongs under the protocol or header
// named tree in the detail tree: by its name, by its declared parent, or
// because its parent is.
func (f *Field) InTree(tree string) bool { return f.inTree(tree, maxTreeDepth) }

// maxTreeDepth bounds the parents InTree follows.
const maxTreeDepth = 8

func (f *Field) inTree(tree string, depth int) bool {
	if under(f.Name, tree) || f.parent == tree || under(f.parent, tree) ||
		f.alsoParent != "" && (f.alsoParent == tree || under(f.alsoParent, tree)) {
		return true
	}
	for _, a := range f.alsoParents {
		if a == tree || under(a, tree) {
			return true
		}
	}
	return depth > 0 && (f.up != nil && f.up.inTree(tree, depth-1) || f.alsoUp != nil && f.alsoUp.inTree(tree, depth-1))
}

// treeKey names one treeSet answer: a field, and how far up it looks.
type treeKey struct {
	f     *Field
	depth int
}

// treeSet is the set of protocols and headers (protoNamed, by name) f is
// InTree of, to depth parents up. Answers are kept in memo: the fields
// under one header all ask it for its own.
func (f *Field) treeSet(protoNamed map[string][]*Field, depth int, memo map[treeKey]protoSet) protoSet {
	if s, ok := memo[treeKey{f, depth}]; ok {
		return s
	}
	var s protoSet
	add := func(name string, self bool) {
		if self {
			for _, p := range protoNamed[name] {
				s[p.protoWord] |= p.protoMask
			}
		}
		for i := 1; i < len(name); i++ {
			if name[i] == '.' {
				for _, p := range protoNamed[name[:i]] {
					s[p.protoWord] |= p.protoMask
				}
			}
		}
	}
	add(f.Name, false)
	if f.parent != "" {
		add(f.parent, true)
	}
	if f.alsoParent != "" {
		add(f.alsoParent, true)
	}
	for _, a := range f.alsoParents {
		add(a, true)
	}
	if depth > 0 {
		for _, up := range [...]*Field{f.up, f.alsoUp} {
			if up != nil {
				u := up.treeSet(protoNamed, depth-1, memo)
				for i := range s {
					s[i] |= u[i]
				}
			}
		}
	}
	memo[treeKey{f, depth}] = s
	return s
}

// InTreeOf is InTree(proto.Name) for a protocol or header field proto,
// answered from bits computed once.
func (f *Field) InTreeOf(proto *Field) bool { return f.trees[proto.protoWord&3]&proto.protoMask != 0 }

// protoSet is a set of protocols and headers, a bit each.
type protoSet [4]uint64

// under reports whether name is tree + "." + something, without building
// the string (this runs for every field of every packet in -V).
func under(name, tree string) bool {
	return len(name) > len(tree) && name[len(tree)] == '.' && name[:len(tree)] == tree
}

// GetSecond extracts the second occurrence of the field, if it has one.
func (f *Field) GetSecond(p *Packet, v *Value) bool {
	if f.second == nil {
		return f.nth != nil && f.nth(p, 1, v)
	}
	return f.second(p, v)
}

// GetOccurrence extracts occurrence i of the field: 0 is what Get gives, 1
// what GetSecond gives, and so on; false past the last. Renderers that show
// every occurrence (-E occurrence=a) loop until it reports false.
func (f *Field) GetOccurrence(p *Packet, i int, v *Value) bool {
	switch {
	case i == 0:
		return f.Get(p, v)
	case i == 1:
		return f.GetSecond(p, v)
	case f.nth != nil:
		return f.nth(p, i, v)
	}
	return false
}

// SubtreeWithout reports whether fields of the header f can be present in
// p though f itself is not, so a renderer that skips the subtree of an
// absent header (SubtreeEnds) must walk this one: an SA record that wraps
// an SMP attribute (NodeRecord's NodeInfo ...) has the attribute's fields
// without the SMP data item they sit under in an SMP.
func (f *Field) SubtreeWithout(p *Packet) bool { return f.fieldsWithout != nil && f.fieldsWithout(p) }

// Protocol returns the protocol part of the name ("infiniband", "ip").
func (f *Field) Protocol() string {
	if i := strings.IndexByte(f.Name, '.'); i >= 0 {
		return f.Name[:i]
	}
	return f.Name
}

// AppendValue appends v formatted as tshark -T fields prints it.
func (f *Field) AppendValue(buf []byte, v *Value) []byte {
	switch f.Type {
	case FTProtocol:
		if f.node { // a header's bytes, as tshark prints its FT_BYTES header items
			return hex.AppendEncode(buf, v.B)
		}
		if f.none {
			return append(buf, '1')
		}
		if f.namedValue {
			return append(buf, f.Name...)
		}
		return buf
	case FTNone:
		if f.none {
			return append(buf, '1')
		}
		return buf
	case FTBool:
		if v.U != 0 {
			return append(buf, '1')
		}
		return append(buf, '0')
	case FTUint8, FTUint16, FTUint24, FTUint32, FTUint64:
		if f.Base == BaseHex || f.Base == BaseHexDec {
			return appendHex(buf, v.U, f.Type.hexWidth())
		}
		return strconv.AppendUint(buf, v.U, 10)
	case FTBytes:
		return hex.AppendEncode(buf, v.B)
	case FTIPv4:
		if len(v.B) == 4 {
			return netip.AddrFrom4([4]byte(v.B)).AppendTo(buf)
		}
		return buf
	case FTIPv6:
		if len(v.B) == 16 {
			// netip keeps IPv4-mapped GIDs as "::ffff:a.b.c.d", as tshark does.
			return netip.AddrFrom16([16]byte(v.B)).AppendTo(buf)
		}
		return buf
	case FTEther:
		for i, b := range v.B {
			if i > 0 {
				buf = append(buf, ':')
			}
			buf = appendHex2(buf, b)
		}
		return buf
	case FTString:
		return append(buf, v.S...)
	case FTDouble:
		return strconv.AppendFloat(buf, v.F, 'f', -1, 64)
	case FTRelTime, FTAbsTime:
		return appendSeconds(buf, v.D)
	}
	return buf
}

// String formats v as AppendValue does.
func (f *Field) String(v *Value) string { return string(f.AppendValue(nil, v)) }

const hexDigits = "0123456789abcdef"

func appendHex2(buf []byte, b byte) []byte { return append(buf, hexDigits[b>>4], hexDigits[b&0xF]) }

func appendHex(buf []byte, u uint64, width int) []byte {
	buf = append(buf, '0', 'x')
	for i := width - 1; i >= 0; i-- {
		buf = append(buf, hexDigits[(u>>(4*uint(i)))&0xF])
	}
	return buf
}

// appendSeconds prints a duration as tshark prints relative times: seconds
// with nine decimals.
func appendSeconds(buf []byte, d time.Duration) []byte {
	if d < 0 {
		buf = append(buf, '-')
		d = -d
	}
	buf = strconv.AppendInt(buf, int64(d/time.Second), 10)
	buf = append(buf, '.')
	ns := int64(d % time.Second)
	var digits [9]byte
	for i := 8; i >= 0; i-- {
		digits[i] = byte('0' + ns%10)
		ns /= 10
	}
	return append(buf, digits[:]...)
}

func itoa(u uint64) string { return strconv.FormatUint(u, 10) }

// fieldGate names what a packet needs for a group of fields to apply.
type fieldGate uint8

const (
	gateNone      fieldGate = iota
	gateMAD                 // the MAD classes' fields: CM, SMP, SA, PerfMgt, RMPP, Notice ...
	gateNVMe                // NVMe-oF's: the Analyzer found NVMe-oF in the packet, or its CM set-up
	gateRPCRDMA             // RPC over RDMA's: the Analyzer found RPC-over-RDMA in the packet
	gateCM                  // ibwire.analysis.cm.*: a CM contract binds the packet, or it has a finding
	gateFinding             // the finding flags: the packet has a finding
	gateDCQCN               // ibwire.analysis.dcqcn.*: the rate analysis ran over the packet
	gateISER                // iSER's: the Analyzer found iSER in the packet
	gateSMBDirect           // SMB Direct's: the Analyzer found SMB Direct in the packet
	// The analysis's own fields that most packets lack, in groups of what
	// they need: the -V tree and the JSON renderers ask every field of every
	// packet, and a plain in-order packet has none of these.
	gateEvent   // a finding's details (PSN gap, retransmission, NAK): the packet has a finding, or a retransmitted frame's number
	gatePairing // request, response and reference frames, latencies: the Analyzer paired the packet with another
	gatePFC     // ibwire.analysis.pfc.*: a capture with pause frames, or a finding
)

// NeedsAnalysis reports whether the field's value comes from the
// conversation analysis (the Analyzer's record of the packet): the
// ibwire.analysis.* fields and every field of the upper layers, the CM
// contract, the findings and DCQCN, which the analysis decodes. A run that
// reads such a field must analyse the packets.
func (f *Field) NeedsAnalysis() bool {
	switch f.gate {
	case gateNVMe, gateRPCRDMA, gateISER, gateSMBDirect, gateCM, gateFinding, gateDCQCN, gateEvent, gatePairing, gatePFC:
		return true
	}
	return under(f.Name, "ibwire.analysis")
}

// gatedFields gives fs the gate g: a run of a list whose other fields
// have none, or another.
func gatedFields(g fieldGate, fs ...*Field) []*Field {
	for _, f := range fs {
		f.gate = g
	}
	return fs
}

func (p *Packet) passes(g fieldGate) bool {
	switch g {
	case gateMAD:
		return p.has&hasMAD != 0
	case gateNVMe:
		return p.Analysis.NVMe != nil || p.Analysis.Info&InfoNVMeCM != 0
	case gateRPCRDMA:
		return p.Analysis.RPCRDMA != nil
	case gateCM:
		return p.Analysis.CM != nil || p.Analysis.Findings != 0
	case gateFinding:
		return p.Analysis.Findings != 0
	case gateDCQCN:
		return p.Analysis.DCQCN != nil
	case gateSMBDirect:
		return p.Analysis.SMBDirect != nil
	case gateISER:
		return p.Analysis.ISER != nil
	case gateEvent:
		return p.Analysis.Findings != 0 || p.Analysis.Info&InfoRetransmittedFrame != 0
	case gatePairing:
		return p.Analysis.Info&(InfoRequest|InfoResponse|InfoRef|InfoAckRTT|InfoLatency) != 0
	case gatePFC:
		return p.Analysis.PFC != 0 || p.Analysis.Findings != 0
	}
	return true
}

// registry holds every field, by name.
type registry struct {
	byName  map[string]*Field
	all     []*Field // sorted by name
	ordered []*Field // in registration order: protocol, then its fields in wire order
	ends    []int    // for a protocol or header at i, the index just past its subtree
	// gates and gateEnds are, for the field at i, its group's gate (a
	// dense copy: the walk tests it for every field) and, when it has one,
	// the index just past the group.
	gates    []fieldGate
	gateEnds []int
}

// theRegistry is the registry, built by the first call that needs it
// (fields): a run that reads no field (the statistics, --check, -w)
// never builds it.
var (
	theRegistry atomic.Pointer[registry]
	registryMu  sync.Mutex
)

// fields returns the registry, building it on the first call.
func fields() *registry {
	if r := theRegistry.Load(); r != nil {
		return r
	}
	return firstFields()
}

// firstFields is fields' first call, out of line so that fields inlines.
// A build that panics (a field registered twice, a span its header's table
// lacks) leaves no registry, so the next call panics with the same cause
// rather than finding nil.
func firstFields() *registry {
	registryMu.Lock()
	defer registryMu.Unlock()
	if r := theRegistry.Load(); r != nil {
		return r
	}
	r := buildRegistry()
	theRegistry.Store(r)
	return r
}

func buildRegistry() *registry {
	r := &registry{byName: map[string]*Field{}}
	type group struct {
		fields []*Field
		gate   fieldGate
	}
	for _, group := range []group{{frameFields(), gateNone}, {linkFields(), gateNone}, {maccFields(), gateNone},
		{infinibandFields(), gateNone}, {madFields(), gateMAD}, {ibwireFields(), gateNone}, {correlateFields(), gateNone}, {analysisFields(), gateNone},
		{cmContractFields(), gateCM}, {findingFlagFields(), gateFinding},
		{nvmeFields(), gateNVMe}, {rpcrdmaFields(), gateRPCRDMA}, {iserFields(), gateISER},
		{smbDirectFields(), gateSMBDirect}, {smb2Fields(), gateSMBDirect}, {pfcFields(), gatePFC}, {dcqcnFields(), gateDCQCN}} {
		for _, f := range group.fields {
			if group.gate != gateNone {
				f.gate = group.gate // else the gate its list gave it (gatedFields), if any
			}
			if f.TreeOnly() {
				// A tree-only item reads its header's bytes unasked
				// whether the packet has that header (the renderers reach it
				// only inside the header): its gate makes it safe to ask.
				if g, get := f.gate, f.get; g != gateNone && get != nil {
					f.get = func(p *Packet, v *Value) bool { return p.passes(g) && get(p, v) }
				}
				r.ordered = append(r.ordered, f)
				continue
			}
			if _, dup := r.byName[f.Name]; dup {
				panic("decode: field registered twice: " + f.Name)
			}
			r.byName[f.Name] = f
			r.all = append(r.all, f)
			r.ordered = append(r.ordered, f)
		}
	}
	sort.Slice(r.all, func(i, j int) bool { return r.all[i].Name < r.all[j].Name })
	r.gates, r.gateEnds = make([]fieldGate, len(r.ordered)), make([]int, len(r.ordered))
	for i := len(r.ordered) - 1; i >= 0; i-- {
		r.gates[i] = r.ordered[i].gate
		switch g := r.ordered[i].gate; {
		case g == gateNone:
		case i+1 < len(r.ordered) && r.ordered[i+1].gate == g:
			r.gateEnds[i] = r.gateEnds[i+1]
		default:
			r.gateEnds[i] = i + 1
		}
	}
	for _, f := range r.ordered {
		f.treeFlags = 0
		if f.second != nil || f.nth != nil {
			f.treeFlags = Repeats
		}
		if sh := f.shape; sh != nil {
			f.treeFlags |= Shaped
			if sh.treeOnly {
				f.treeFlags |= TreeOnlyItem
			}
			if sh.opens {
				f.treeFlags |= OpensSubtree
			}
			if sh.row != 0 {
				f.treeFlags |= TableRow
			}
		}
	}
	// A field is also in the trees its parent is in (a record's field under
	// the tree-only "Attribute (X)" is in the SA header's tree), so a
	// header the packet lacks is skipped with all it may hold.
	byAny := map[string]*Field{}
	for _, f := range r.ordered {
		if _, ok := byAny[f.Name]; !ok {
			byAny[f.Name] = f
		}
	}
	for _, f := range r.ordered {
		if up := byAny[f.parent]; up != f {
			f.up = up
		}
		if up := byAny[f.alsoParent]; up != f {
			f.alsoUp = up
		}
	}
	var protos []*Field
	for _, f := range r.ordered {
		if f.Type == FTProtocol || f.Opens() {
			if len(protos) == len(protoSet{})*64 {
				panic("decode: more protocols and headers than a protoSet holds: widen it")
			}
			i := len(protos)
			f.protoWord, f.protoMask = uint8(i>>6), 1<<(i&63)
			protos = append(protos, f)
		}
	}
	// Each field's trees from the names it sits under, rather than asking
	// InTree of every protocol: the same answer (TestInTreeOfAgreesWithInTree)
	// at a cost that grows with the fields, not with fields times protocols.
	protoNamed := map[string][]*Field{}
	for _, p := range protos {
		protoNamed[p.Name] = append(protoNamed[p.Name], p)
	}
	memo := make(map[treeKey]protoSet, 2*len(r.ordered))
	for _, f := range r.ordered {
		f.trees = f.treeSet(protoNamed, maxTreeDepth, memo)
	}

	r.ends = make([]int, len(r.ordered))
	for i, f := range r.ordered {
		j := i + 1
		for f.Type == FTProtocol && j < len(r.ordered) && r.ordered[j].InTree(f.Name) && !r.ordered[j].outside {
			j++
		}
		r.ends[i] = j
	}
	return r
}

// Lookup finds a field by name. The "infiniband." prefix may be left out:
// "bth.psn" is "infiniband.bth.psn".
func Lookup(name string) (*Field, bool) {
	r := fields()
	if f, ok := r.byName[name]; ok {
		return f, true
	}
	f, ok := r.byName["infiniband."+name]
	return f, ok
}

// Fields returns every registered field, sorted by name.
func Fields() []*Field { return fields().all }

// FieldsInWireOrder returns every field in the order the headers appear on
// the wire, each protocol or header before its fields: the order of the -V
// tree and of JSON objects. It holds the tree-only items (Field.TreeOnly)
// too, which renderers other than the tree skip.
func FieldsInWireOrder() []*Field { return fields().ordered }

// SkipAbsentGroup reports whether p lacks what every field of the group
// of FieldsInWireOrder()[i] needs (a packet without a MAD has none of the
// management fields), and then the index just past the group: a renderer
// that asks every field skips the group with one test.
func SkipAbsentGroup(p *Packet, i int) (int, bool) {
	r := fields()
	if g := r.gates[i]; g != gateNone && !p.passes(g) {
		return r.gateEnds[i], true
	}
	return i, false
}

// Gated reports whether the field belongs to a group SkipAbsentGroup can
// skip. It inlines where SkipAbsentGroup does not: a walk over every field
// asks it first, and calls SkipAbsentGroup only for the few gated ones. It
// reads the Field's first cache line, which the walk reads anyway.
func (f *Field) Gated() bool { return f.gate != gateNone }

// SubtreeEnds gives, for each index of FieldsInWireOrder, the index just
// past the field's subtree (its own index + 1 for a plain field), so a
// renderer can skip a whole header the packet does not have.
func SubtreeEnds() []int { return fields().ends }

// MustLookup is Lookup for names known to exist.
func MustLookup(name string) *Field {
	f, ok := Lookup(name)
	if !ok {
		panic(fmt.Sprintf("decode: no field %q", name))
	}
	return f
}
