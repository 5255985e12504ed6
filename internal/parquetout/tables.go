package parquetout

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"unsafe"

	pq "github.com/parquet-go/parquet-go"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// fileFrames records where each file's frames start, so a frame number
// gives its file (the findings table's file column).
type fileFrames struct {
	names []string
	first []uint32
}

func (ff *fileFrames) add(name string, frame uint32) {
	if n := len(ff.names); n == 0 || !sameString(ff.names[n-1], name) {
		ff.names, ff.first = append(ff.names, name), append(ff.first, frame)
	}
}

// sameString is a == b, at the cost of two comparisons when they are the
// same string (a packet's file name is the reader's, the same each packet).
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// of returns the file frame came from.
func (ff *fileFrames) of(frame uint32) string {
	name := ""
	for i, first := range ff.first {
		if first <= frame {
			name = ff.names[i]
		}
	}
	return name
}

// Span is the frames of one connection in one file.
type Span struct {
	File       string `parquet:"file"`
	FirstFrame uint32 `parquet:"first_frame"`
	LastFrame  uint32 `parquet:"last_frame"`
	Packets    uint64 `parquet:"packets"`
}

// convSpans are a connection's spans, one per file, in reading order;
// gen is the Exporter's fileGen of the last one.
type convSpans struct {
	spans []Span
	gen   uint32
}

// add counts a frame of file, gen the Exporter's fileGen.
func (s *convSpans) add(file string, gen, frame uint32) {
	if n := len(s.spans); n > 0 && (s.gen == gen || s.spans[n-1].File == file) {
		s.gen = gen
		s.spans[n-1].LastFrame = frame
		s.spans[n-1].Packets++
		return
	}
	s.gen = gen
	s.spans = append(s.spans, Span{File: file, FirstFrame: frame, LastFrame: frame, Packets: 1})
}

// dynamicRow builds rows of a struct type made at run time: the labels'
// string columns, then named values whose Go types become Parquet types
// (structs whose json tags name their fields become groups named alike,
// maps become MAPs, nil-able pointers optional columns).
type dynamicRow struct {
	typ    reflect.Type
	labels []Label
}

// parquetTyped is t with parquet tags taken from json tags, recursively.
func parquetTyped(t reflect.Type) reflect.Type {
	switch t.Kind() {
	case reflect.Struct:
		var fs []reflect.StructField
		for i := range t.NumField() {
			f := t.Field(i)
			name := f.Tag.Get("parquet")
			if name == "" {
				name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
			}
			if name == "" {
				name = f.Name
			}
			fs = append(fs, reflect.StructField{Name: f.Name, Type: parquetTyped(f.Type), Tag: reflect.StructTag(`parquet:"` + name + `"`)})
		}
		return reflect.StructOf(fs)
	case reflect.Pointer:
		return reflect.PointerTo(parquetTyped(t.Elem()))
	case reflect.Slice:
		return reflect.SliceOf(parquetTyped(t.Elem()))
	case reflect.Map:
		return reflect.MapOf(t.Key(), parquetTyped(t.Elem()))
	}
	return t
}

// assign copies src into dst, whose type parquetTyped made from src's.
func assign(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Struct:
		for i := range src.NumField() {
			assign(dst.Field(i), src.Field(i))
		}
	case reflect.Pointer:
		if !src.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
			assign(dst.Elem(), src.Elem())
		}
	case reflect.Slice:
		dst.Set(reflect.MakeSlice(dst.Type(), src.Len(), src.Len()))
		for i := range src.Len() {
			assign(dst.Index(i), src.Index(i))
		}
	case reflect.Map:
		dst.Set(reflect.MakeMapWithSize(dst.Type(), src.Len()))
		it := src.MapRange()
		for it.Next() {
			v := reflect.New(dst.Type().Elem()).Elem()
			assign(v, it.Value())
			dst.SetMapIndex(it.Key(), v)
		}
	default:
		dst.Set(src)
	}
}

// newDynamicRow makes the row type of labels and the named samples' types.
func newDynamicRow(labels []Label, names []string, samples []any) *dynamicRow {
	var fs []reflect.StructField
	for i, l := range labels {
		fs = append(fs, reflect.StructField{Name: fmt.Sprintf("L%d", i), Type: reflect.TypeFor[string](), Tag: reflect.StructTag(`parquet:"` + l.Key + `,dict"`)})
	}
	for i, n := range names {
		t := reflect.TypeOf(samples[i])
		opts := ""
		if t.Kind() == reflect.String {
			opts = ",dict"
		}
		if t.Kind() == reflect.Pointer {
			opts = ",optional"
		}
		fs = append(fs, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: parquetTyped(t), Tag: reflect.StructTag(`parquet:"` + n + opts + `"`)})
	}
	return &dynamicRow{typ: reflect.StructOf(fs), labels: labels}
}

// row makes one row of the values, in the order of the names.
func (d *dynamicRow) row(values []any) any {
	r := reflect.New(d.typ).Elem()
	for i, l := range d.labels {
		r.Field(i).SetString(l.Value)
	}
	for i, v := range values {
		assign(r.Field(len(d.labels)+i), reflect.ValueOf(v))
	}
	return r.Interface()
}

// rowFile is a table's one file, written a row at a time: the
// connections and the findings, few beside the packets.
type rowFile struct {
	d    *dynamicRow
	f    *os.File
	w    *pq.GenericWriter[any]
	rows int // in the open row group
}

// rowFileGroupRows closes a row group of a rowFile, so memory stays bounded
// however many findings a capture has.
const rowFileGroupRows = 16 << 10

func (e *Exporter) newRowFile(table string, d *dynamicRow) (*rowFile, error) {
	f, err := createFile(filepath.Join(e.tableDir(table), e.o.Name+".parquet"))
	if err != nil {
		return nil, err
	}
	schema := pq.SchemaOf(reflect.New(d.typ).Elem().Interface())
	return &rowFile{d: d, f: f, w: pq.NewGenericWriter[any](f, writerOptions(schema)...)}, nil
}

func (rf *rowFile) write(values []any) error {
	if _, err := rf.w.Write([]any{rf.d.row(values)}); err != nil {
		return err
	}
	if rf.rows++; rf.rows == rowFileGroupRows {
		rf.rows = 0
		return rf.w.Flush()
	}
	return nil
}

func (rf *rowFile) close() error {
	err := rf.w.Close()
	if cerr := rf.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// convKeys are the connections table's columns: the connection id (the
// packets table's conv_id), every -z conv,qp -T json key in its order,
// then the ids the analysis merged into the connection (which packets
// read before the merge carry as their conv_id) and its spans.
func convKeys() (names []string, cols []*output.Column[output.Conv]) {
	cols = output.ConvTable.JSONColumns()
	names = []string{"conv_id"}
	for _, c := range cols {
		names = append(names, c.Key)
	}
	return append(names, "aliases", "spans"), cols
}

func (e *Exporter) writeConnections(convs []decode.Conversation) error {
	names, cols := convKeys()
	var zero output.Conv
	samples := []any{uint32(0)}
	for _, c := range cols {
		samples = append(samples, c.Value(&zero))
	}
	samples = append(samples, []uint32(nil), []Span(nil))
	rf, err := e.newRowFile("connections", newDynamicRow(e.o.Labels, names, samples))
	if err != nil {
		return err
	}
	for i := range convs {
		c := &convs[i]
		values := []any{c.ID}
		for _, col := range cols {
			values = append(values, col.Value(c))
		}
		var spans []Span
		for _, id := range append([]uint32{c.ID}, c.Aliases...) {
			if s := e.spans[id]; s != nil {
				spans = append(spans, s.spans...)
			}
		}
		if err := rf.write(append(values, append([]uint32{}, c.Aliases...), spans)); err != nil {
			rf.close()
			return err
		}
	}
	return rf.close()
}

// findingRow is a row of the findings table.
type findingRow struct {
	File     string `parquet:"file"`
	Frame    uint32 `parquet:"frame"`
	RefFrame uint32 `parquet:"ref_frame"`
	ConvID   uint32 `parquet:"conv_id"`
	Severity string `parquet:"severity"`
	Group    string `parquet:"group"`
	Kind     string `parquet:"kind"`
	Summary  string `parquet:"summary"`
	PSN      uint32 `parquet:"psn"`
	Count    uint32 `parquet:"count"`
}

func findingOf(f *decode.Finding, files *fileFrames) findingRow {
	return findingRow{File: files.of(f.Frame), Frame: f.Frame, RefFrame: f.Ref, ConvID: f.Conv, Severity: f.Severity.String(),
		Group: f.Kind.Group(), Kind: f.Kind.String(), Summary: f.Summary(), PSN: uint32(f.PSN), Count: f.Count}
}

// findingRowType is the findings table's row: the labels, then
// findingRow's columns.
func findingRowType(labels []Label) *dynamicRow {
	t := reflect.TypeFor[findingRow]()
	var names []string
	var samples []any
	for i := range t.NumField() {
		names = append(names, t.Field(i).Tag.Get("parquet"))
		samples = append(samples, reflect.Zero(t.Field(i).Type).Interface())
	}
	return newDynamicRow(labels, names, samples)
}

// findingValues are a finding's columns, in findingRow's order.
func findingValues(f *decode.Finding, files *fileFrames) []any {
	v := reflect.ValueOf(findingOf(f, files))
	values := make([]any, v.NumField())
	for i := range values {
		values[i] = v.Field(i).Interface()
	}
	return values
}
