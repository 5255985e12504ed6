package output

import (
	"strconv"
	"strings"

	"github.com/ibwire/ibwire/decode"
)

// JSON renders tshark's -T json: an array of packets, each
// {"_index","_type","_score","_source":{"layers":{protocol:{field:"value", header_tree:{...}}}}},
// every value a string. Call Begin before the first packet and End after the last.
type JSON struct {
	w     walker
	buf   []byte
	first bool
	count int
	tmp   []byte
}

// Begin appends the opening bracket.
func (j *JSON) Begin(buf []byte) []byte { j.count = 0; return append(buf, "[\n"...) }

// End appends the closing bracket.
func (j *JSON) End(buf []byte) []byte {
	if j.count > 0 {
		buf = append(buf, '\n')
	}
	return append(buf, "]\n"...)
}

// Append appends one packet object.
func (j *JSON) Append(buf []byte, p *decode.Packet) []byte {
	if j.count > 0 {
		buf = append(buf, ",\n"...)
	}
	j.count++
	buf = append(buf, "  {\n    \"_index\": \"packets-"...)
	buf = p.Time.UTC().AppendFormat(buf, "2006-01-02")
	buf = append(buf, "\",\n    \"_type\": \"doc\",\n    \"_score\": null,\n    \"_source\": {\n      \"layers\": {"...)
	j.buf, j.first = buf, true
	j.w.walk(p, j)
	buf = j.buf
	return append(buf, "\n      }\n    }\n  }"...)
}

func (j *JSON) indent(depth int) {
	j.buf = append(j.buf, '\n')
	for range depth + 4 {
		j.buf = append(j.buf, "  "...)
	}
}

func (j *JSON) sep() {
	if !j.first {
		j.buf = append(j.buf, ',')
	}
	j.first = false
}

func (j *JSON) open(f *decode.Field, depth int, _ *decode.Value) {
	j.sep()
	j.indent(depth)
	name := f.Name
	if depth > 0 {
		name += "_tree"
	}
	j.buf = appendJSONString(j.buf, name)
	j.buf = append(j.buf, ": {"...)
	j.first = true
}

func (j *JSON) close(f *decode.Field, depth int) {
	j.indent(depth)
	j.buf = append(j.buf, '}')
	j.first = false
}

func (j *JSON) field(f *decode.Field, depth int, v *decode.Value, second bool) {
	if second {
		return // tshark merges duplicates unless asked; one value keeps the JSON valid
	}
	j.sep()
	j.indent(depth)
	j.buf = appendJSONString(j.buf, f.Name)
	j.buf = append(j.buf, ": "...)
	j.tmp = f.AppendValue(j.tmp[:0], v)
	j.buf = appendJSONString(j.buf, j.tmp)
}

// EK renders tshark's -T ek: for each packet an index line and a document
// line whose field names have dots turned into underscores.
type EK struct {
	w     walker
	buf   []byte
	first bool
	tmp   []byte
}

// Append appends the two lines of one packet, each ending in a newline.
func (e *EK) Append(buf []byte, p *decode.Packet) []byte {
	buf = append(buf, `{"index":{"_index":"packets-`...)
	buf = p.Time.UTC().AppendFormat(buf, "2006-01-02")
	buf = append(buf, `","_type":"doc"}}`+"\n"+`{"timestamp":"`...)
	buf = strconv.AppendInt(buf, p.Time.UnixMilli(), 10)
	buf = append(buf, `","layers":{`...)
	e.buf, e.first = buf, true
	e.w.walk(p, e)
	return append(e.buf, "}}\n"...)
}

func (e *EK) open(f *decode.Field, depth int, _ *decode.Value) {
	if depth > 0 {
		return // ek is flat inside each protocol
	}
	if !e.first {
		e.buf = append(e.buf, ',')
	}
	e.buf = appendJSONString(e.buf, f.Name)
	e.buf = append(e.buf, ":{"...)
	e.first = true
}

func (e *EK) close(f *decode.Field, depth int) {
	if depth == 0 {
		e.buf = append(e.buf, '}')
		e.first = false
	}
}

func (e *EK) field(f *decode.Field, depth int, v *decode.Value, second bool) {
	if second {
		return
	}
	if !e.first {
		e.buf = append(e.buf, ',')
	}
	e.first = false
	e.buf = appendJSONString(e.buf, ekName(f))
	e.buf = append(e.buf, ':')
	e.tmp = f.AppendValue(e.tmp[:0], v)
	e.buf = appendJSONString(e.buf, e.tmp)
}

// ekName is tshark's ek key: the protocol, an underscore, the name with dots
// as underscores ("infiniband_infiniband_bth_psn").
func ekName(f *decode.Field) string {
	return f.Protocol() + "_" + strings.ReplaceAll(f.Name, ".", "_")
}

// JSONL renders one flat JSON object per line with typed values: numbers for
// integers and times, true/false for booleans, strings for the rest. Field
// names keep their dots ({"infiniband.bth.psn": 100}), for jq and DuckDB.
type JSONL struct {
	w     walker
	buf   []byte
	tmp   []byte
	first bool
}

// Append appends one packet's line, with its newline.
func (l *JSONL) Append(buf []byte, p *decode.Packet) []byte {
	l.buf, l.first = append(buf, '{'), true
	l.w.walk(p, l)
	return append(l.buf, "}\n"...)
}

func (l *JSONL) open(f *decode.Field, depth int, _ *decode.Value) {}
func (l *JSONL) close(f *decode.Field, depth int)                 {}

func (l *JSONL) field(f *decode.Field, depth int, v *decode.Value, second bool) {
	if second {
		return
	}
	if !l.first {
		l.buf = append(l.buf, ',')
	}
	l.first = false
	l.buf = appendJSONString(l.buf, f.Name)
	l.buf = append(l.buf, ':')
	switch {
	case f.Type == decode.FTBool:
		l.buf = strconv.AppendBool(l.buf, v.U != 0)
	case f.Type.IsUnsigned():
		l.buf = strconv.AppendUint(l.buf, v.U, 10)
	case f.Type == decode.FTRelTime || f.Type == decode.FTAbsTime:
		l.buf = f.AppendValue(l.buf, v) // seconds with nine exact decimals: a JSON number, no float rounding
	case f.Type == decode.FTDouble:
		l.buf = strconv.AppendFloat(l.buf, v.F, 'g', -1, 64)
	default:
		l.tmp = f.AppendValue(l.tmp[:0], v)
		l.buf = appendJSONString(l.buf, l.tmp)
	}
}

// appendJSONString appends s as a JSON string literal. It takes bytes or a
// string, so formatted values need no conversion (an allocation per field).
func appendJSONString[S string | []byte](buf []byte, s S) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c < 0x20:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		default:
			buf = append(buf, c)
		}
	}
	return append(buf, '"')
}
