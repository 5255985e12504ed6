package parquetout

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/zstd"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// The packets table is written column by column from typed Go slices: a
// row group's values of each column are gathered in a []int32, []int64,
// []bool, []float64 or dictionary indexes, then encoded, compressed and
// written as one dictionary page and one data page. parquet-go's row
// writers take one parquet.Value (24 bytes, with its levels) per cell and
// its optional columns take no typed batches; at 65 columns that was most
// of the export's time (BENCHMARKS.md). parquet-go still provides the
// encodings (RLE, delta), the zstd codec and the thrift footer.

// encoding is how a column's values are stored in its data pages.
type encoding uint8

const (
	encPlain encoding = iota
	encDelta          // DELTA_BINARY_PACKED: ascending numbers (time, frame, offset)
	encDict           // RLE_DICTIONARY: repeating texts
)

// column is one column of a colFile: its type and the open row group's
// values.
type column struct {
	name     string
	node     pq.Node
	kind     kind
	optional bool
	enc      encoding
	unsigned bool // statistics compare as unsigned

	row *int // the row being added: its colFile's count
	// The footer's parts of the column, reused from group to group: its
	// path, its encodings and its statistics' bounds.
	path   []string
	encs   []format.Encoding
	lo, hi []byte
	// ownDefs is false for a required column, and for an optional one
	// whose rows have a value exactly when defsOf's do (the BTH's fields):
	// its levels are then defsOf's, and its values are added without any.
	ownDefs bool
	defsOf  *column
	always  bool // every row has a value
	// enumText makes a column of texts an enumeration's: its rows add
	// the numbers (to i32, or enumOf's i32 are taken, through enumMap when
	// set), and finishEnum turns them into dictionary indexes, once per
	// row group, keyed by the number in enum: 1 + the index of its text,
	// 0 for one not seen in the row group.
	enumText func(int) string
	enumOf   *column
	enumMap  func(int32) int
	// levelsEnc are the RLE-encoded levels of the row group numbered
	// levelsGroup (1 + its ordinal), for every column whose levels these
	// are (writeChunk).
	levelsEnc   []byte
	levelsGroup int

	group
}

// group is what a column holds of the open row group: its values and
// what refers to them. flush swaps it whole with a written group's.
type group struct {
	// defs holds one definition level per row (optional columns only):
	// it is as long as the largest row group and zero past the rows
	// written (reset clears what was used), so a value sets its row's
	// level with one store and a null costs nothing.
	defs  []byte
	i32   []int32
	i64   []int64
	bools []bool
	f64   []float64
	// Texts are dictionary-encoded: idx holds a word's index per value;
	// dict maps the caller's key of a value (its raw bytes) to the index,
	// and words are the texts in index order. The dictionary is the row
	// group's, so it is bounded by the row-group size.
	idx   []int32
	dict  map[string]int32
	words [][]byte
	enum  *[256]int32 // see enumText
	// recent are the last two keys putAddr added and their indexes;
	// next is the older's place.
	recent struct {
		key     [2]addrKey
		idx     [2]int32
		n, next int
	}
	// Plain byte arrays (kindBytes): their bytes end to end, and where each
	// value ends.
	raw  []byte
	ends []uint32
}

func newColumn(name string, k kind, required bool) *column {
	c := &column{name: name, node: k.node(required), kind: k, optional: !required, ownDefs: !required, row: new(int),
		path: []string{name}}
	switch k {
	case kindUint32, kindUint64:
		// DELTA_BINARY_PACKED for every integer: a constant or slowly
		// changing column packs to a few bits a value before zstd sees it
		// (parquet-go's encoder is AVX2), which made the zstd input and the
		// export's instructions smaller than PLAIN (BENCHMARKS.md).
		c.unsigned = true
		c.enc = encDelta
	case kindTimestamp, kindNanos:
		c.enc = encDelta
	case kindString:
		c.enc = encDict
		c.dict = map[string]int32{}
	}
	return c
}

// null leaves the row's value null: its definition level stays zero.
func (c *column) null() {}

// ones are the levels of an always defined column's rows (a row group at
// most), a megabyte made when a Parquet export first needs it.
var ones = sync.OnceValue(func() []byte { return bytes.Repeat([]byte{1}, maxRowGroupRows) })

// nulls counts the row group's null values: its rows less its values.
func (c *column) nulls() int {
	if !c.optional {
		return 0
	}
	return len(c.levels()) - (len(c.i32) + len(c.i64) + len(c.bools) + len(c.f64) + len(c.idx) + len(c.ends))
}

var one = []byte{1}

// levels are the row group's definition levels, the column's own or
// those it shares.
func (c *column) levels() []byte {
	n := *c.row
	switch {
	case c.always:
		return ones()[:n]
	case c.defsOf != nil:
		return c.defsOf.defs[:n]
	}
	return c.defs[:n]
}

// shareDefs makes c take leader's definition levels.
func (c *column) shareDefs(leader *column) {
	c.defsOf, c.ownDefs = leader, false
}

// alwaysDefined makes c an optional column that every row has a value of
// (frame_len: the registry's columns are all optional).
func (c *column) alwaysDefined() {
	c.always, c.ownDefs = true, false
}

// def sets the row's definition level, if the column has its own.
func (c *column) def() {
	if c.ownDefs {
		c.defs[*c.row] = 1
	}
}

func (c *column) putBool(v bool)      { c.def(); c.bools = append(c.bools, v) }
func (c *column) putInt32(v int32)    { c.def(); c.i32 = append(c.i32, v) }
func (c *column) putInt64(v int64)    { c.def(); c.i64 = append(c.i64, v) }
func (c *column) putDouble(v float64) { c.def(); c.f64 = append(c.f64, v) }

// The set* methods add row r's value to a column that has its own
// levels, the append* methods to one whose levels are another's or that
// is always defined: fixedRow.add knows which its columns are (fixedLayout),
// and spares the put* methods' test of each column's kind of levels.
func (c *column) setBool(r int, v bool)   { c.defs[r] = 1; c.bools = append(c.bools, v) }
func (c *column) setInt32(r int, v int32) { c.defs[r] = 1; c.i32 = append(c.i32, v) }
func (c *column) setInt64(r int, v int64) { c.defs[r] = 1; c.i64 = append(c.i64, v) }
func (c *column) setWord(r int, i int32)  { c.defs[r] = 1; c.idx = append(c.idx, i) }
func (c *column) appendBool(v bool)       { c.bools = append(c.bools, v) }
func (c *column) appendInt32(v int32)     { c.i32 = append(c.i32, v) }
func (c *column) appendInt64(v int64)     { c.i64 = append(c.i64, v) }
func (c *column) appendWord(i int32)      { c.idx = append(c.idx, i) }

func (c *column) putBytes(b []byte) {
	c.def()
	c.raw = append(c.raw, b...)
	c.ends = append(c.ends, uint32(len(c.raw)))
}

// putWord adds the dictionary's word i.
func (c *column) putWord(i int32) { c.def(); c.idx = append(c.idx, i) }

// word is the index of the text whose key is key; text makes the text when
// the dictionary does not have it yet. Converting key from bytes in the
// call (c.word(string(b), ...)) allocates nothing when the word is known.
func (c *column) word(key string, text func() []byte) int32 {
	if i, ok := c.dict[key]; ok {
		return i
	}
	i := int32(len(c.words))
	c.dict[key] = i
	c.words = append(c.words, text())
	return i
}

// finishEnum turns an enumeration column's numbers into the indexes of
// their texts in the row group's dictionary (see enumText): once per
// number and row group a text is made and looked up, then an array
// index a value. The dictionary's words come in the order of the rows, as
// when each row looked its text up.
func (c *column) finishEnum() {
	if c.enumText == nil {
		return
	}
	src := c.i32
	if c.enumOf != nil {
		src = c.enumOf.i32
	}
	if c.enum == nil {
		c.enum = new([256]int32)
	}
	tab := c.enum
	// The enumerations are uint8 types: every number indexes tab.
	idx := slices.Grow(c.idx[:0], len(src))[:len(src)]
	for j, v := range src {
		i := tab[uint8(v)]
		if i == 0 || uint32(v) >= uint32(len(tab)) {
			i = c.enumWord(v) + 1
		}
		idx[j] = i - 1
	}
	c.idx = idx
	if c.enumOf == nil {
		c.i32 = c.i32[:0]
	}
}

// enumWord is the dictionary index of number v's text, which it adds to
// the dictionary and to enum the first time.
func (c *column) enumWord(v int32) int32 {
	n := int(v)
	if c.enumMap != nil {
		n = c.enumMap(v)
	}
	s := c.enumText(n)
	i := c.word(s, func() []byte { return []byte(s) })
	if uint32(v) < uint32(len(c.enum)) {
		c.enum[v] = i + 1
	}
	return i
}

// putText adds a text whose key is the text itself.
func (c *column) putText(b []byte) {
	c.putWord(c.word(string(b), func() []byte { return bytes.Clone(b) }))
}

// putConst adds the text of a column that has no other (a label).
func (c *column) putConst(b []byte) {
	if len(c.words) == 0 {
		c.putText(b)
		return
	}
	c.putWord(0)
}

// reserve makes the buffers for rows rows, and the definition levels for
// a row group's maxRows (see defs).
func (c *column) reserve(rows, maxRows int) {
	c.defs = make([]byte, maxRows)
	n := rows
	switch {
	case c.enc == encDict:
		c.idx = make([]int32, 0, n)
		if c.enumText != nil && c.enumOf == nil {
			c.i32 = make([]int32, 0, n) // the enumeration's numbers
		}
	case c.kind == kindBytes:
		c.ends = make([]uint32, 0, n)
	default:
		switch c.node.Type().Kind() {
		case pq.Boolean:
			c.bools = make([]bool, 0, n)
		case pq.Int32:
			c.i32 = make([]int32, 0, n)
		case pq.Int64:
			c.i64 = make([]int64, 0, n)
		case pq.Double:
			c.f64 = make([]float64, 0, n)
		}
	}
}

// reset empties the column for the next row group, keeping its buffers;
// the group's rows are still counted.
func (c *column) reset() {
	clear(c.defs[:*c.row])
	c.i32, c.i64, c.bools, c.f64 = c.i32[:0], c.i64[:0], c.bools[:0], c.f64[:0]
	c.idx, c.raw, c.ends = c.idx[:0], c.raw[:0], c.ends[:0]
	if c.dict != nil {
		clear(c.dict)
		c.words = c.words[:0]
		if c.enum != nil {
			clear(c.enum[:])
		}
		c.recent.n, c.recent.next = 0, 0
	}
}

// zstdWindow is the zstd window: 1 MiB, above a default row group's
// largest page (64 Ki values of 8 bytes, and their levels).
const zstdWindow = 1 << 20

// colFile writes one Parquet file of flat columns, a row group at a time.
type colFile struct {
	f     *os.File
	w     *bufio.Writer
	off   int64
	cols  []*column
	rows  int // in the open row group
	total int64
	// When async, a row group is written on a goroutine of its own while
	// the caller fills the next: set are the columns of the group being
	// written (made at the first flush), into which flush swaps the open
	// group's values and from which cols get emptied buffers; setRows is
	// their row count; busy says writeGroup has them, and done brings its
	// result. Otherwise flush writes cols in line.
	set                  []*column
	setRows              int
	reserveRows, maxRows int // newColFile's rows and maxRows, for set's buffers
	async                bool
	busy                 bool
	jobs                 chan struct{}
	done                 chan error
	// groups are the written row groups' footer entries, thrift-encoded
	// as they are written: about 5 KB a row group instead of 40 KB of Go
	// structs (a column chunk's format.ColumnChunk is 560 bytes), for the
	// footer, which the format puts at the end, lists every one.
	groups  []byte
	ngroups int
	chunks  []format.ColumnChunk // the open row group's, reused
	ones    column               // holds the encoded levels of the always defined columns
	schema  []format.SchemaElement
	orders  []format.ColumnOrder

	zstd    *zstd.Encoder
	hdr     bytes.Buffer
	enc     *thrift.Encoder
	body    []byte // a page before compression
	packed  []byte // a page's compressed bytes
	scratch []byte // an encoding's output
}

// newColFile starts a file of the columns cols; a row group is expected
// to hold about rows rows, which the columns' buffers are made for: they
// then never grow by copying, and the pages of a sparse column's buffer
// that are never written are never touched, so they take no memory.
func newColFile(f *os.File, root string, cols []*column, rows, maxRows, cores int) (*colFile, error) {
	// A page is compressed on its own (EncodeAll), so a window larger than
	// the largest page gains nothing; the default (8 MiB) made the encoder
	// keep a 16 MiB history buffer per file.
	z, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(zstdWindow), zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false))
	if err != nil {
		return nil, err
	}
	cf := &colFile{f: f, w: bufio.NewWriterSize(f, 1<<20), cols: cols, zstd: z}
	cf.enc = thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&cf.hdr))
	cf.schema = append(cf.schema, format.SchemaElement{Name: root, NumChildren: thrift.New(int32(len(cols)))})
	cf.reserveRows, cf.maxRows = rows, maxRows
	if cores <= 0 {
		cores = runtime.GOMAXPROCS(0)
	}
	cf.async = cores >= asyncMinProcs
	for _, c := range cols {
		c.row = &cf.rows
		c.reserve(rows, maxRows)
		t := c.node.Type()
		el := format.SchemaElement{Name: c.name, RepetitionType: thrift.New(format.Required)}
		if c.optional {
			el.RepetitionType = thrift.New(format.Optional)
		}
		el.Type = thrift.New(*t.PhysicalType())
		if lt := t.LogicalType(); lt != nil {
			el.LogicalType = *lt
		}
		if ct := t.ConvertedType(); ct != nil {
			el.ConvertedType = thrift.New(*ct)
		}
		cf.schema = append(cf.schema, el)
		cf.orders = append(cf.orders, *t.ColumnOrder())
	}
	return cf, cf.write([]byte("PAR1"))
}

func (cf *colFile) write(b []byte) error {
	n, err := cf.w.Write(b)
	cf.off += int64(n)
	return err
}

// endRow counts a row whose every column has been put.
func (cf *colFile) endRow() { cf.rows++ }

// asyncMinProcs is the processors a file needs to write its row groups
// on a goroutine of its own. The goroutine gains only with a core to
// itself: on two, the reading, decoding, analysis and rows keep them
// busy (ibdump's pipeline runs on two), and it cost 0.5-1% more
// instructions for no measurable wall time (BENCHMARKS.md). Tests set it
// to 1 and to a large number to check both ways.
var asyncMinProcs = 3

// flush hands the open row group, if it has rows, to writeGroup: on its
// goroutine when async, after the previous group is written. The
// columns then hold that group's emptied buffers.
func (cf *colFile) flush() error {
	if cf.rows == 0 {
		return nil
	}
	for _, c := range cf.cols {
		if c.optional && !c.ownDefs && c.enumOf == nil {
			// A column that takes another's levels (or is always defined)
			// must have had a value in each row the levels say defined:
			// else its page would hold fewer values than its levels claim.
			// (An enumeration made from another column's numbers has one
			// value for each of them: finishEnum.)
			values := len(c.i32) + len(c.i64) + len(c.bools) + len(c.f64) + len(c.idx) + len(c.ends)
			if defined := bytes.Count(c.levels(), one); values != defined {
				return fmt.Errorf("parquet: column %s has %d values for %d defined rows", c.name, values, defined)
			}
		}
	}
	if err := cf.wait(); err != nil {
		return err
	}
	if !cf.async {
		err := cf.writeGroup(cf.cols, cf.rows)
		cf.rows = 0
		return err
	}
	if cf.jobs == nil {
		cf.makeSet()
		cf.jobs, cf.done = make(chan struct{}), make(chan error, 1)
		go func() {
			for range cf.jobs {
				cf.done <- cf.writeGroup(cf.set, cf.setRows)
			}
		}()
	}
	for i, c := range cf.cols {
		c.swapGroup(cf.set[i])
	}
	cf.setRows, cf.rows = cf.rows, 0
	cf.busy = true
	cf.jobs <- struct{}{}
	return nil
}

// wait waits for writeGroup to write the previous row group, and
// returns its error.
func (cf *colFile) wait() error {
	if !cf.busy {
		return nil
	}
	cf.busy = false
	return <-cf.done
}

// swapGroup exchanges the row group's values (and the dictionaries and
// caches that refer to them) with o's.
func (c *column) swapGroup(o *column) { c.group, o.group = o.group, c.group }

// makeSet makes set: columns like cols, with buffers of their own.
func (cf *colFile) makeSet() {
	at := map[*column]int{}
	for i, c := range cf.cols {
		at[c] = i
		s := new(column)
		*s = *c
		s.group = group{}
		s.row = &cf.setRows
		s.reserve(cf.reserveRows, cf.maxRows)
		if c.dict != nil {
			s.dict = map[string]int32{}
		}
		cf.set = append(cf.set, s)
	}
	for i, c := range cf.cols {
		if c.defsOf != nil {
			cf.set[i].defsOf = cf.set[at[c.defsOf]]
		}
		if c.enumOf != nil {
			cf.set[i].enumOf = cf.set[at[c.enumOf]]
		}
	}
}

// writeGroup writes the row group of rows rows in cols (cf.cols, or set
// on writeGroup's goroutine): the enumerations' texts, statistics,
// encodings, zstd, the file; it then empties the columns for the next.
func (cf *colFile) writeGroup(cols []*column, rows int) error {
	g := format.RowGroup{NumRows: int64(rows), FileOffset: cf.off, Ordinal: int16(cf.ngroups), Columns: cf.chunks[:0]}
	for _, c := range cols {
		c.finishEnum()
	}
	for _, c := range cols {
		cc, err := cf.writeChunk(c, rows)
		if err != nil {
			return err
		}
		g.Columns = append(g.Columns, cc)
		g.TotalByteSize += cc.MetaData.TotalUncompressedSize
		g.TotalCompressedSize += cc.MetaData.TotalCompressedSize
	}
	for _, c := range cols {
		c.reset()
	}
	cf.hdr.Reset()
	if err := cf.enc.Encode(&g); err != nil {
		return err
	}
	cf.groups, cf.ngroups = append(cf.groups, cf.hdr.Bytes()...), cf.ngroups+1
	cf.chunks = g.Columns
	cf.total += int64(rows)
	return nil
}

// page compresses body and writes it after its header; it returns the
// sizes the column chunk adds up.
func (cf *colFile) page(h *format.PageHeader, body []byte) (uncompressed, compressed int64, err error) {
	cf.packed = cf.zstd.EncodeAll(body, cf.packed[:0])
	h.UncompressedPageSize, h.CompressedPageSize = int32(len(body)), int32(len(cf.packed))
	cf.hdr.Reset()
	if err := cf.enc.Encode(h); err != nil {
		return 0, 0, err
	}
	hl := int64(cf.hdr.Len())
	if err := cf.write(cf.hdr.Bytes()); err != nil {
		return 0, 0, err
	}
	return hl + int64(len(body)), hl + int64(len(cf.packed)), cf.write(cf.packed)
}

func (cf *colFile) writeChunk(c *column, rows int) (format.ColumnChunk, error) {
	md := format.ColumnMetaData{Type: *c.node.Type().PhysicalType(), PathInSchema: c.path, Codec: format.Zstd, Encoding: c.encs[:0],
		NumValues: int64(rows)}
	md.Statistics = c.statistics()
	enc := format.Plain
	if c.enc == encDict && len(c.words) > 0 {
		body := cf.body[:0]
		for _, w := range c.words {
			body = binary.LittleEndian.AppendUint32(body, uint32(len(w)))
			body = append(body, w...)
		}
		cf.body = body
		md.DictionaryPageOffset = cf.off
		h := format.PageHeader{Type: format.DictionaryPage,
			DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: int32(len(c.words)), Encoding: format.Plain})}
		u, z, err := cf.page(&h, body)
		if err != nil {
			return format.ColumnChunk{}, err
		}
		md.TotalUncompressedSize += u
		md.TotalCompressedSize += z
		md.Encoding = append(md.Encoding, format.Plain)
		enc = format.RLEDictionary
	}
	if c.enc == encDelta {
		enc = format.DeltaBinaryPacked
	}

	body := cf.body[:0]
	var err error
	if c.optional {
		body = append(body, 0, 0, 0, 0)
		// Columns that share levels share their encoding too: the owner
		// of the levels keeps it for the row group.
		owner := c
		switch {
		case c.always:
			owner = &cf.ones
		case c.defsOf != nil:
			owner = c.defsOf
		}
		if owner.levelsGroup != cf.ngroups+1 {
			owner.levelsEnc, err = (&rle.Encoding{BitWidth: 1}).EncodeLevels(owner.levelsEnc, c.levels())
			if err != nil {
				return format.ColumnChunk{}, err
			}
			owner.levelsGroup = cf.ngroups + 1
		}
		binary.LittleEndian.PutUint32(body, uint32(len(owner.levelsEnc)))
		body = append(body, owner.levelsEnc...)
		md.Encoding = append(md.Encoding, format.RLE)
	}
	switch {
	case enc == format.RLEDictionary:
		width := max(1, bits.Len(uint(len(c.words)-1)))
		body = append(body, byte(width))
		cf.scratch, err = (&rle.Encoding{BitWidth: width}).EncodeInt32(cf.scratch, c.idx)
		body = append(body, cf.scratch...)
	case enc == format.DeltaBinaryPacked && c.node.Type().Kind() == pq.Int32:
		cf.scratch, err = (&delta.BinaryPackedEncoding{}).EncodeInt32(cf.scratch[:0], c.i32)
		body = append(body, cf.scratch...)
	case enc == format.DeltaBinaryPacked:
		cf.scratch, err = (&delta.BinaryPackedEncoding{}).EncodeInt64(cf.scratch[:0], c.i64)
		body = append(body, cf.scratch...)
	default:
		body = c.appendPlain(body)
	}
	if err != nil {
		return format.ColumnChunk{}, err
	}
	cf.body = body
	if !hasEncoding(md.Encoding, enc) {
		md.Encoding = append(md.Encoding, enc)
	}
	md.DataPageOffset = cf.off
	h := format.PageHeader{Type: format.DataPage, DataPageHeader: thrift.New(format.DataPageHeader{NumValues: int32(rows),
		Encoding: enc, DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE, Statistics: md.Statistics})}
	u, z, err := cf.page(&h, body)
	if err != nil {
		return format.ColumnChunk{}, err
	}
	md.TotalUncompressedSize += u
	md.TotalCompressedSize += z
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	c.encs = md.Encoding
	return format.ColumnChunk{FileOffset: start, MetaData: md}, nil
}

func hasEncoding(es []format.Encoding, e format.Encoding) bool {
	for _, x := range es {
		if x == e {
			return true
		}
	}
	return false
}

// appendPlain appends the values in PLAIN encoding.
func (c *column) appendPlain(b []byte) []byte {
	switch c.node.Type().Kind() {
	case pq.Boolean:
		b = packBools(b, c.bools)
	case pq.Int32:
		b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.i32))), 4*len(c.i32))...)
	case pq.Int64:
		b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.i64))), 8*len(c.i64))...)
	case pq.Double:
		b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.f64))), 8*len(c.f64))...)
	case pq.ByteArray:
		start := uint32(0)
		for _, end := range c.ends {
			b = binary.LittleEndian.AppendUint32(b, end-start)
			b = append(b, c.raw[start:end]...)
			start = end
		}
	}
	return b
}

// packBools appends v bit-packed, the first value in the lowest bit (a
// boolean column's PLAIN encoding). Eight bools (bytes of 0 or 1) are
// gathered into one byte by a multiplication that moves byte i's bit to
// bit 56+i, where no two products overlap.
func packBools(b []byte, v []bool) []byte {
	bs := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
	i := 0
	for ; i+8 <= len(bs); i += 8 {
		b = append(b, byte(binary.LittleEndian.Uint64(bs[i:])*0x0102040810204080>>56))
	}
	if i < len(bs) {
		var acc byte
		for j, x := range bs[i:] {
			acc |= x << j
		}
		b = append(b, acc)
	}
	return b
}

// statistics are the column chunk's null count and bounds, which engines
// read to skip row groups.
func (c *column) statistics() format.Statistics {
	s := format.Statistics{NullCount: int64(c.nulls())}
	defer func() { c.lo, c.hi = s.MinValue, s.MaxValue }() // reused by the next row group
	switch c.node.Type().Kind() {
	case pq.Boolean:
		if len(c.bools) > 0 {
			// false is 0 and true 1: the bounds are whether each is there.
			bs := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.bools))), len(c.bools))
			lo, hi := bytes.IndexByte(bs, 0) < 0, bytes.IndexByte(bs, 1) >= 0
			s.MinValue, s.MaxValue = append(c.lo[:0], b2i(lo)), append(c.hi[:0], b2i(hi))
		}
	case pq.Int32:
		if len(c.i32) > 0 {
			var lo, hi int32
			if c.unsigned {
				l, h := minMax(unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(c.i32))), len(c.i32)))
				lo, hi = int32(l), int32(h)
			} else {
				lo, hi = minMax(c.i32)
			}
			s.MinValue, s.MaxValue = binary.LittleEndian.AppendUint32(c.lo[:0], uint32(lo)), binary.LittleEndian.AppendUint32(c.hi[:0], uint32(hi))
		}
	case pq.Int64:
		if len(c.i64) > 0 {
			var lo, hi int64
			if c.unsigned {
				l, h := minMax(unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(c.i64))), len(c.i64)))
				lo, hi = int64(l), int64(h)
			} else {
				lo, hi = minMax(c.i64)
			}
			s.MinValue, s.MaxValue = binary.LittleEndian.AppendUint64(c.lo[:0], uint64(lo)), binary.LittleEndian.AppendUint64(c.hi[:0], uint64(hi))
		}
	case pq.Double:
		lo, hi, any := math.Inf(1), math.Inf(-1), false
		for _, v := range c.f64 {
			if !math.IsNaN(v) {
				lo, hi, any = min(lo, v), max(hi, v), true
			}
		}
		if any {
			s.MinValue, s.MaxValue = binary.LittleEndian.AppendUint64(c.lo[:0], math.Float64bits(lo)), binary.LittleEndian.AppendUint64(c.hi[:0], math.Float64bits(hi))
		}
	case pq.ByteArray:
		var lo, hi []byte
		first := true
		each := func(v []byte) {
			if first || bytes.Compare(v, lo) < 0 {
				lo = v
			}
			if first || bytes.Compare(v, hi) > 0 {
				hi = v
			}
			first = false
		}
		if c.enc == encDict {
			for _, w := range c.words {
				each(w)
			}
		} else {
			start := uint32(0)
			for _, end := range c.ends {
				each(c.raw[start:end])
				start = end
			}
		}
		if !first {
			s.MinValue, s.MaxValue = append(c.lo[:0], lo...), append(c.hi[:0], hi...)
		}
	}
	return s
}

// minMax are the least and greatest of v, which is not empty. Two
// values a step, each into its own bounds, with the min and max builtins
// (conditional moves, no branches); ranging over v as pairs spares the
// bounds checks of v[i+1], and more bounds than two spill registers.
func minMax[T ~int32 | ~uint32 | ~int64 | ~uint64](v []T) (lo, hi T) {
	lo, hi = v[0], v[0]
	l1, h1 := lo, hi
	if len(v) >= 2 { // else a *[2]T would reach past v
		for _, p := range unsafe.Slice((*[2]T)(unsafe.Pointer(unsafe.SliceData(v))), len(v)/2) {
			lo, hi = min(lo, p[0]), max(hi, p[0])
			l1, h1 = min(l1, p[1]), max(h1, p[1])
		}
	}
	if len(v)%2 == 1 {
		x := v[len(v)-1]
		lo, hi = min(lo, x), max(hi, x)
	}
	return min(lo, l1), max(hi, h1)
}

func b2i(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// footerSentinel is the row count of the one row group the footer is first
// encoded with, whose bytes are then replaced by the encoded row groups.
const footerSentinel = 0x1EADF00D5EA1ED

// footer is the thrift-encoded FileMetaData with the row groups encoded
// so far. The compact protocol writes a list of structs as a header (the
// count and the element type) and the structs one after another, each as
// it is encoded alone: the footer is encoded with a sentinel row group,
// and its header and bytes are replaced.
func (cf *colFile) footer() ([]byte, error) {
	sentinel := format.RowGroup{NumRows: footerSentinel}
	cf.hdr.Reset()
	if err := cf.enc.Encode(&sentinel); err != nil {
		return nil, err
	}
	sent := bytes.Clone(cf.hdr.Bytes())
	md := format.FileMetaData{Version: 1, Schema: cf.schema, NumRows: cf.total, RowGroups: []format.RowGroup{sentinel},
		CreatedBy: "ibdump", ColumnOrders: cf.orders}
	cf.hdr.Reset()
	if err := cf.enc.Encode(&md); err != nil {
		return nil, err
	}
	enc := cf.hdr.Bytes()
	const oneStruct = 1<<4 | 12 // a list of one element of type struct (12)
	at := bytes.Index(enc, sent)
	if at < 1 || enc[at-1] != oneStruct || bytes.Contains(enc[at+1:], sent) {
		return nil, errors.New("parquet footer: the row groups' place was not found") // a change in the thrift encoder
	}
	out := append([]byte(nil), enc[:at-1]...)
	if cf.ngroups < 15 {
		out = append(out, byte(cf.ngroups<<4|12))
	} else {
		out = binary.AppendUvarint(append(out, 0xF0|12), uint64(cf.ngroups))
	}
	out = append(out, cf.groups...)
	return append(out, enc[at+len(sent):]...), nil
}

// close writes the last row group and the footer, and closes the file.
func (cf *colFile) close() error {
	err := cf.flush()
	if werr := cf.wait(); err == nil {
		err = werr
	}
	if cf.jobs != nil {
		close(cf.jobs)
	}
	if err == nil {
		var footer []byte
		footer, err = cf.footer()
		if err == nil {
			err = cf.write(binary.LittleEndian.AppendUint32(footer, uint32(len(footer))))
		}
		if err == nil {
			err = cf.write([]byte("PAR1"))
		}
		if err == nil {
			err = cf.w.Flush()
		}
	}
	if cerr := cf.f.Close(); err == nil {
		err = cerr
	}
	return err
}
