package parquetout

import (
	"fmt"
	"strings"

	pq "github.com/parquet-go/parquet-go"

	"github.com/ibwire/ibwire/decode"
)

// packetColumn names a column of the packets table and the registry
// fields it is read from: the first the packet has gives the value (ip.src
// or ipv6.src for src), none gives null.
type packetColumn struct {
	name   string
	fields []string
}

// packetColumns are the packets table's columns after time, file, frame
// and offset (which every row has), in the order the table shows them.
// Their names are short, for SQL; their types come from the registry.
var packetColumns = []packetColumn{
	{"frame_len", []string{"frame.len"}},
	{"cap_len", []string{"frame.cap_len"}},
	{"encap", []string{"ibwire.encap"}},
	{"eth_src", []string{"eth.src"}},
	{"eth_dst", []string{"eth.dst"}},
	{"vlan", []string{"vlan.id"}},
	{"pcp", []string{"vlan.priority"}},
	{"src", []string{"ip.src", "ipv6.src"}},
	{"dst", []string{"ip.dst", "ipv6.dst"}},
	{"dscp", []string{"ip.dsfield.dscp", "ipv6.tclass.dscp"}},
	{"ecn", []string{"ip.dsfield.ecn", "ipv6.tclass.ecn"}},
	{"sport", []string{"udp.srcport"}},
	{"dport", []string{"udp.dstport"}},
	{"slid", []string{"infiniband.lrh.slid"}},
	{"dlid", []string{"infiniband.lrh.dlid"}},
	{"sl", []string{"infiniband.lrh.sl"}},
	{"sgid", []string{"infiniband.grh.sgid"}},
	{"dgid", []string{"infiniband.grh.dgid"}},
	{"service", []string{"ibwire.service"}},
	{"opcode", []string{"infiniband.bth.opcode"}},
	{"opcode_name", []string{"ibwire.opcode"}},
	{"se", []string{"infiniband.bth.se"}},
	{"migreq", []string{"infiniband.bth.m"}},
	{"pad_count", []string{"infiniband.bth.padcnt"}},
	{"tver", []string{"infiniband.bth.tver"}},
	{"p_key", []string{"infiniband.bth.p_key"}},
	{"fecn", []string{"ibwire.fecn"}},
	{"becn", []string{"ibwire.becn"}},
	{"dest_qp", []string{"infiniband.bth.destqp"}},
	{"ack_req", []string{"infiniband.bth.a"}},
	{"psn", []string{"infiniband.bth.psn"}},
	{"reth_va", []string{"infiniband.reth.va"}},
	{"reth_r_key", []string{"infiniband.reth.r_key"}},
	{"reth_dma_len", []string{"infiniband.reth.dmalen"}},
	{"aeth_syndrome", []string{"infiniband.aeth.syndrome"}},
	{"aeth_msn", []string{"infiniband.aeth.msn"}},
	{"deth_q_key", []string{"infiniband.deth.q_key"}},
	{"deth_src_qp", []string{"infiniband.deth.srcqp"}},
	{"immdt", []string{"infiniband.immdt"}},
	{"ieth", []string{"infiniband.ieth"}},
	{"payload_len", []string{"ibwire.payload.len"}},
	{"icrc", []string{"ibwire.icrc.status"}},
	{"vcrc", []string{"ibwire.vcrc.status"}},
	{"malformed", []string{"ibwire.malformed"}},
	{"conv_id", []string{"ibwire.analysis.conv_id"}},
	{"direction", []string{"ibwire.analysis.direction"}},
	{"severity", []string{"ibwire.analysis.severity"}},
	{"retransmission", []string{"ibwire.analysis.retransmission"}},
	{"retransmitted_frame", []string{"ibwire.analysis.retransmitted_frame"}},
	{"psn_gap", []string{"ibwire.analysis.psn_gap"}},
	{"duplicate", []string{"ibwire.analysis.duplicate"}},
	{"out_of_order", []string{"ibwire.analysis.out_of_order"}},
	{"nak", []string{"ibwire.analysis.nak"}},
	{"rnr_nak", []string{"ibwire.analysis.rnr_nak"}},
	{"rnr_timer", []string{"ibwire.analysis.rnr_timer"}},
	{"cnp", []string{"ibwire.analysis.cnp"}},
	{"ecn_ce", []string{"ibwire.analysis.ecn_ce"}},
	{"request_frame", []string{"ibwire.analysis.request_frame"}},
	{"latency", []string{"ibwire.analysis.latency"}},
	{"latency_op", []string{"ibwire.analysis.latency_op"}},
	{"ack_rtt", []string{"ibwire.analysis.ack_rtt"}},
}

// kind is how a column is stored.
type kind uint8

const (
	kindBool kind = iota
	kindUint32
	kindUint64
	kindString // dictionary-encoded text: strings, addresses
	kindBytes
	kindDouble
	kindNanos     // a duration in nanoseconds
	kindTimestamp // nanoseconds since the epoch, UTC
)

// kindOf is the storage of a registry type.
func kindOf(t decode.FieldType) kind {
	switch t {
	case decode.FTUint8, decode.FTUint16, decode.FTUint24, decode.FTUint32:
		return kindUint32
	case decode.FTUint64:
		return kindUint64
	case decode.FTIPv4, decode.FTIPv6, decode.FTEther, decode.FTString:
		return kindString
	case decode.FTBytes:
		return kindBytes
	case decode.FTDouble:
		return kindDouble
	case decode.FTRelTime:
		return kindNanos
	case decode.FTAbsTime:
		return kindTimestamp
	}
	return kindBool // FTBool, and a protocol's or text item's presence
}

// node is the Parquet type of a column of kind k; required columns have
// a value in every row.
func (k kind) node(required bool) pq.Node {
	var n pq.Node
	switch k {
	case kindBool:
		n = pq.Leaf(pq.BooleanType)
	case kindUint32:
		n = pq.Uint(32)
	case kindUint64:
		n = pq.Uint(64)
	case kindString:
		n = pq.Encoded(pq.String(), &pq.RLEDictionary)
	case kindBytes:
		n = pq.Leaf(pq.ByteArrayType)
	case kindDouble:
		n = pq.Leaf(pq.DoubleType)
	case kindNanos:
		n = pq.Int(64)
	case kindTimestamp:
		n = pq.Encoded(pq.Timestamp(pq.Nanosecond), &pq.DeltaBinaryPacked)
	}
	if required {
		return n
	}
	return pq.Optional(n)
}

// fieldColumn is a packets column read from registry fields.
type fieldColumn struct {
	name   string
	kind   kind
	fields []*decode.Field
	direct direct // nil: the registry getters
}

func newFieldColumn(name string, names []string) (*fieldColumn, error) {
	c := &fieldColumn{name: name}
	for _, n := range names {
		f, ok := decode.Lookup(n)
		if !ok {
			return nil, fmt.Errorf("no field %q", n)
		}
		c.fields = append(c.fields, f)
	}
	c.kind = kindOf(c.fields[0].GlossaryType())
	return c, nil
}

// extraColumnName is the column -e FIELD adds: the field's name with
// underscores for dots, which SQL engines (Spark above all) read as
// nesting.
func extraColumnName(field string) string { return strings.ReplaceAll(field, ".", "_") }

// put reads the column's value from p into col, or null.
func (c *fieldColumn) put(p *decode.Packet, v *decode.Value, col *column) {
	if c.direct != nil {
		c.direct(p, c, col)
		return
	}
	for _, f := range c.fields {
		if !f.Get(p, v) {
			continue
		}
		switch c.kind {
		case kindBool:
			col.putBool(f.Type != decode.FTBool || v.U != 0)
		case kindUint32:
			col.putInt32(int32(uint32(v.U)))
		case kindUint64:
			col.putInt64(int64(v.U))
		case kindDouble:
			col.putDouble(v.F)
		case kindNanos, kindTimestamp:
			col.putInt64(int64(v.D))
		case kindBytes:
			col.putBytes(v.B)
		case kindString:
			// The dictionary is keyed by the value as held (a string, or an
			// address's bytes), so a known value is neither formatted nor
			// copied.
			var i int32
			var ok bool
			if f.Type == decode.FTString {
				i, ok = col.dict[v.S]
			} else {
				i, ok = col.dict[string(v.B)] // converts without allocating
			}
			if !ok {
				key := string(v.B)
				if f.Type == decode.FTString {
					key = strings.Clone(v.S)
				}
				i = col.word(key, func() []byte { return f.AppendValue(nil, v) })
			}
			col.putWord(i)
		}
		return
	}
	col.null()
}
