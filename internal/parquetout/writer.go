package parquetout

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/ibwire/ibwire/decode"
)

// DefaultRowGroupRows is the packets table's row-group size: 64 Ki rows
// (about 3 MB of compressed columns), small enough that a filter on time,
// connection or opcode skips most groups of a large capture, large enough
// that each column chunk compresses well.
const DefaultRowGroupRows = 64 << 10

// maxRowGroupRows bounds Options.RowGroupRows.
const maxRowGroupRows = 1 << 20

// Options configure an Exporter.
type Options struct {
	// Dir is the folder the tables are written under; it is created.
	Dir string
	// Name is the base of the files' names, the capture's name without
	// its folder and extension; "ibdump" when empty.
	Name string
	// Labels go into every row as string columns, and name the folders
	// the files sit in (Hive-style key=value folders), in their order.
	Labels []Label
	// Shards, above 1, spreads the packets table over that many files by
	// connection id (conv_id mod Shards; packets of no connection go to
	// shard 0).
	Shards int
	// Extra are registry fields added as columns of the packets table (-e).
	Extra []string
	// RowGroupRows is the packets table's row-group size (DefaultRowGroupRows
	// when 0).
	RowGroupRows int
	// Cores is how many cores the export may count on (ibdump's -j; all
	// of the process's when 0): a file writes its row groups on a
	// goroutine of its own only when there is a core for it.
	Cores int
}

// Label is one --label key=value.
type Label struct{ Key, Value string }

// ParseLabel parses key=value. The key becomes a column and a folder
// name, so it is limited to what SQL and file systems take unquoted.
func ParseLabel(s string) (Label, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return Label{}, fmt.Errorf("--label %q: want key=value", s)
	}
	for i, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return Label{}, fmt.Errorf("--label %q: the key may hold letters, digits and _, and starts with a letter or _", s)
		}
	}
	if strings.ContainsAny(v, "/\\\x00") || v == "." || v == ".." {
		return Label{}, fmt.Errorf("--label %q: the value names a folder: no / or \\", s)
	}
	return Label{k, v}, nil
}

// ParseShard parses --shard conv[,N]; N is 8 when not given.
func ParseShard(s string) (int, error) {
	by, n, hasN := strings.Cut(s, ",")
	if by != "conv" {
		return 0, fmt.Errorf("--shard %q: want conv[,N] (by connection id, into N files)", s)
	}
	if !hasN {
		return 8, nil
	}
	shards, err := strconv.Atoi(n)
	if err != nil || shards < 1 || shards > 1024 {
		return 0, fmt.Errorf("--shard %q: N is a number of files from 1 to 1024", s)
	}
	return shards, nil
}

// Exporter writes one ibdump run as the three tables.
type Exporter struct {
	o       Options
	columns []*fieldColumn // after the fixed ones
	shards  []*packetFile
	value   decode.Value
	files   fileFrames
	spans   map[uint32]*convSpans
	// file is the last packet's file, fileGen counts the changes of it:
	// the packets of a file come in a run, and what keeps a file per
	// packet compares the number.
	file    string
	fileGen uint32
	// lastConv's spans are lastSpans: a connection's packets come in runs.
	lastConv  uint32
	lastSpans *convSpans
	// pending are the findings of the packet being analysed: its file is
	// known once Packet has it, and they are written then.
	pending  []decode.Finding
	findings *rowFile
	err      error // the first write error; later calls do nothing
}

// fixedPacketColumns lead every packets row; they are never null.
var fixedPacketColumns = []string{"time", "file", "frame", "byte_offset"}

// New creates the folders and the packets table's files.
func New(o Options) (*Exporter, error) {
	if o.Dir == "" {
		return nil, errors.New("-T parquet needs -w DIR, the folder to write the tables into")
	}
	if o.Name == "" {
		o.Name = "ibdump"
	}
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	o.RowGroupRows = min(o.RowGroupRows, maxRowGroupRows)
	if o.Shards < 1 {
		o.Shards = 1
	}
	e := &Exporter{o: o, spans: map[uint32]*convSpans{}}
	taken := map[string]bool{}
	for _, n := range fixedPacketColumns {
		taken[n] = true
	}
	add := func(name string, names []string) error {
		if taken[name] {
			return fmt.Errorf("column %s twice: a label or -e field has the name of a packets column", name)
		}
		taken[name] = true
		c, err := newFieldColumn(name, names)
		if err != nil {
			return fmt.Errorf("-e: %w", err)
		}
		e.columns = append(e.columns, c)
		return nil
	}
	for _, pc := range packetColumns {
		if err := add(pc.name, pc.fields); err != nil {
			return nil, err
		}
		e.columns[len(e.columns)-1].gate = pc.gate
	}
	for _, name := range o.Extra {
		f, ok := decode.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("-e: no field %q", name)
		}
		if err := add(extraColumnName(f.Name), []string{f.Name}); err != nil {
			return nil, err
		}
	}
	for _, l := range o.Labels {
		if taken[l.Key] {
			return nil, fmt.Errorf("--label %s: a column has that name", l.Key)
		}
		taken[l.Key] = true
	}
	for i := range o.Shards {
		name := o.Name + ".parquet"
		if o.Shards > 1 {
			name = fmt.Sprintf("%s-conv%03d.parquet", o.Name, i)
		}
		pf, err := e.newPacketFile(filepath.Join(e.tableDir("packets"), name))
		if err != nil {
			e.abort()
			return nil, err
		}
		e.shards = append(e.shards, pf)
	}
	findings, err := e.newRowFile("findings", findingRowType(o.Labels))
	if err != nil {
		e.abort()
		return nil, err
	}
	e.findings = findings
	return e, nil
}

// tableDir is where a table's files go: DIR/table/key=value/...
func (e *Exporter) tableDir(table string) string {
	parts := []string{e.o.Dir, table}
	for _, l := range e.o.Labels {
		parts = append(parts, l.Key+"="+l.Value)
	}
	return filepath.Join(parts...)
}

// writerOptions are every table's: zstd pages, statistics in page headers
// and column chunks (which engines use to skip), and a bounded page size.
func writerOptions(schema *pq.Schema) []pq.WriterOption {
	return []pq.WriterOption{schema, pq.Compression(&zstd.Codec{Level: zstd.SpeedFastest}),
		pq.DataPageStatistics(true), pq.PageBufferSize(256 << 10), pq.CreatedBy("ibdump", "", "")}
}

func createFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.Create(path)
}

// abort closes and removes what New created.
func (e *Exporter) abort() {
	for _, s := range e.shards {
		s.cf.f.Close()
		os.Remove(s.cf.f.Name())
	}
}

// Packet adds a decoded, analysed packet to the packets table.
func (e *Exporter) Packet(p *decode.Packet) error {
	if e.err != nil {
		return e.err
	}
	if e.fileGen == 0 || !sameString(p.File, e.file) {
		e.file, e.fileGen = p.File, e.fileGen+1
		e.files.add(p.File, uint32(p.Number))
	}
	if len(e.pending) > 0 {
		if err := e.flushFindings(); err != nil {
			e.err = fmt.Errorf("-T parquet: findings: %w", err)
			return e.err
		}
	}
	if c := p.Analysis.Conv; c != 0 {
		s := e.lastSpans
		if c != e.lastConv {
			if s = e.spans[c]; s == nil {
				s = &convSpans{}
				e.spans[c] = s
			}
			e.lastConv, e.lastSpans = c, s
		}
		s.add(p.File, e.fileGen, uint32(p.Number))
	}
	shard := e.shards[0]
	if len(e.shards) > 1 {
		shard = e.shards[p.Analysis.Conv%uint32(len(e.shards))]
	}
	if err := shard.add(e, p); err != nil {
		e.err = fmt.Errorf("-T parquet: %s: %w", shard.cf.f.Name(), err)
	}
	return e.err
}

// Finding adds an expert finding to the findings table. The analysis
// reports a packet's findings before the packet reaches Packet: they wait
// for it (or for Close), which knows the file of their frame.
func (e *Exporter) Finding(f decode.Finding) {
	e.pending = append(e.pending, f)
}

// flushFindings writes the pending findings.
func (e *Exporter) flushFindings() error {
	for i := range e.pending {
		if err := e.findings.write(findingValues(&e.pending[i], &e.files)); err != nil {
			return err
		}
	}
	e.pending = e.pending[:0]
	return nil
}

// Close writes the connections and findings tables, given the run's
// connections, and closes every file. It returns the first error.
func (e *Exporter) Close(convs []decode.Conversation) error {
	for _, s := range e.shards {
		if err := s.close(); err != nil && e.err == nil {
			e.err = fmt.Errorf("-T parquet: %s: %w", s.cf.f.Name(), err)
		}
	}
	err := e.flushFindings()
	if cerr := e.findings.close(); err == nil {
		err = cerr
	}
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("-T parquet: findings: %w", err)
	}
	if e.err != nil {
		return e.err
	}
	if err := e.writeConnections(convs); err != nil {
		return fmt.Errorf("-T parquet: connections: %w", err)
	}
	return nil
}

// packetFile is one file of the packets table: the fixed columns, the
// field columns (in e.columns' order), then the labels.
type packetFile struct {
	cf                        *colFile
	time, file, frame, offset *column
	fields                    []*column
	labels                    []*column
	labelText                 [][]byte
	fileGen                   uint32 // the Exporter's fileGen of fileIdx
	fileIdx                   int32  // 1 + the index of the file's name in file's dictionary, 0 for none
	fixed                     fixedRow
}

func (e *Exporter) newPacketFile(path string) (*packetFile, error) {
	f, err := createFile(path)
	if err != nil {
		return nil, err
	}
	pf := &packetFile{time: newColumn("time", kindTimestamp, true), file: newColumn("file", kindString, true),
		frame: newColumn("frame", kindUint32, true), offset: newColumn("byte_offset", kindNanos, true)}
	pf.frame.enc, pf.offset.enc = encDelta, encDelta
	cols := []*column{pf.time, pf.file, pf.frame, pf.offset}
	for _, c := range e.columns {
		fc := newColumn(c.name, c.kind, false)
		pf.fields = append(pf.fields, fc)
		cols = append(cols, fc)
	}
	fixedLayout(pf.fields)
	pf.fixed = fixedRow{fcs: e.columns[:numFixedColumns], cols: pf.fields[:numFixedColumns]}
	for _, l := range e.o.Labels {
		lc := newColumn(l.Key, kindString, true)
		pf.labels, pf.labelText = append(pf.labels, lc), append(pf.labelText, []byte(l.Value))
		cols = append(cols, lc)
	}
	// A shard's row group fills with its share of the packets.
	rows := max(1024, e.o.RowGroupRows/e.o.Shards)
	if pf.cf, err = newColFile(f, "packets", cols, rows, e.o.RowGroupRows, e.o.Cores); err != nil {
		f.Close()
		return nil, err
	}
	return pf, nil
}

func (pf *packetFile) add(e *Exporter, p *decode.Packet) error {
	// time, file, frame and byte_offset are required: no levels.
	pf.time.appendInt64(p.Time.UnixNano())
	pf.putFile(p.File, e.fileGen)
	pf.frame.appendInt32(int32(uint32(p.Number)))
	pf.offset.appendInt64(p.Offset)
	if len(pf.labels) > 0 {
		for i, l := range pf.labels {
			l.putConst(pf.labelText[i])
		}
	}
	pf.fixed.add(p)
	for i := numFixedColumns; i < len(e.columns); i++ { // -e
		e.columns[i].registry(p, &e.value, pf.fields[i])
	}
	pf.cf.endRow()
	if pf.cf.rows >= e.o.RowGroupRows {
		pf.fixed.reset()
		return pf.cf.flush()
	}
	return nil
}

// putFile adds the file column's value: the index of the row group's
// last file name is kept, so a file's rows cost no lookup.
func (pf *packetFile) putFile(name string, gen uint32) {
	if pf.fileIdx == 0 || pf.fileGen != gen || len(pf.file.words) == 0 {
		pf.fileGen = gen
		pf.fileIdx = 1 + pf.file.word(name, func() []byte { return []byte(name) })
	}
	pf.file.appendWord(pf.fileIdx - 1)
}

func (pf *packetFile) close() error { return pf.cf.close() }
