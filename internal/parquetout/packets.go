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
	// gate is a condition of the packet without which the fields have no
	// value (a layer, a malformed packet): the columns fixedRow.add reads
	// through the registry (VLAN, LRH, GRH, the error) are read only for a
	// packet that meets it. TestDirectEqualsRegistry checks each gate.
	gate gate
}

// gate is a set of conditions on a packet, evaluated once per packet.
type gate uint8

const (
	gateLRH gate = 1 << iota
	gateGRH
	gateVLAN
	gateErr // the packet is malformed
)

// gatesOf are the conditions p meets.
func gatesOf(p *decode.Packet) gate {
	var g gate
	if p.HasLRH() {
		g |= gateLRH
	}
	if p.HasGRH() {
		g |= gateGRH
	}
	if p.HasVLAN() {
		g |= gateVLAN
	}
	if p.Err != nil {
		g |= gateErr
	}
	return g
}

// packetColumns are the packets table's columns after time, file, frame
// and offset (which every row has), in the order the table shows them.
// Their names are short, for SQL; their types come from the registry.
var packetColumns = []packetColumn{
	{"frame_len", []string{"frame.len"}, 0},
	{"cap_len", []string{"frame.cap_len"}, 0},
	{"encap", []string{"ibwire.encap"}, 0},
	{"eth_src", []string{"eth.src"}, 0},
	{"eth_dst", []string{"eth.dst"}, 0},
	{"vlan", []string{"vlan.id"}, gateVLAN},
	{"pcp", []string{"vlan.priority"}, gateVLAN},
	{"src", []string{"ip.src", "ipv6.src"}, 0},
	{"dst", []string{"ip.dst", "ipv6.dst"}, 0},
	{"dscp", []string{"ip.dsfield.dscp", "ipv6.tclass.dscp"}, 0},
	{"ecn", []string{"ip.dsfield.ecn", "ipv6.tclass.ecn"}, 0},
	{"sport", []string{"udp.srcport"}, 0},
	{"dport", []string{"udp.dstport"}, 0},
	{"slid", []string{"infiniband.lrh.slid"}, gateLRH},
	{"dlid", []string{"infiniband.lrh.dlid"}, gateLRH},
	{"sl", []string{"infiniband.lrh.sl"}, gateLRH},
	{"sgid", []string{"infiniband.grh.sgid"}, gateGRH},
	{"dgid", []string{"infiniband.grh.dgid"}, gateGRH},
	{"service", []string{"ibwire.service"}, 0},
	{"opcode", []string{"infiniband.bth.opcode"}, 0},
	{"opcode_name", []string{"ibwire.opcode"}, 0},
	{"se", []string{"infiniband.bth.se"}, 0},
	{"migreq", []string{"infiniband.bth.m"}, 0},
	{"pad_count", []string{"infiniband.bth.padcnt"}, 0},
	{"tver", []string{"infiniband.bth.tver"}, 0},
	{"p_key", []string{"infiniband.bth.p_key"}, 0},
	{"fecn", []string{"ibwire.fecn"}, 0},
	{"becn", []string{"ibwire.becn"}, 0},
	{"dest_qp", []string{"infiniband.bth.destqp"}, 0},
	{"ack_req", []string{"infiniband.bth.a"}, 0},
	{"psn", []string{"infiniband.bth.psn"}, 0},
	{"reth_va", []string{"infiniband.reth.va"}, 0},
	{"reth_r_key", []string{"infiniband.reth.r_key"}, 0},
	{"reth_dma_len", []string{"infiniband.reth.dmalen"}, 0},
	{"aeth_syndrome", []string{"infiniband.aeth.syndrome"}, 0},
	{"aeth_msn", []string{"infiniband.aeth.msn"}, 0},
	{"deth_q_key", []string{"infiniband.deth.q_key"}, 0},
	{"deth_src_qp", []string{"infiniband.deth.srcqp"}, 0},
	{"immdt", []string{"infiniband.immdt"}, 0},
	{"ieth", []string{"infiniband.ieth"}, 0},
	{"payload_len", []string{"ibwire.payload.len"}, 0},
	{"icrc", []string{"ibwire.icrc.status"}, 0},
	{"vcrc", []string{"ibwire.vcrc.status"}, gateLRH},
	{"malformed", []string{"ibwire.malformed"}, gateErr},
	{"conv_id", []string{"ibwire.analysis.conv_id"}, 0},
	{"direction", []string{"ibwire.analysis.direction"}, 0},
	{"severity", []string{"ibwire.analysis.severity"}, 0},
	{"retransmission", []string{"ibwire.analysis.retransmission"}, 0},
	{"retransmitted_frame", []string{"ibwire.analysis.retransmitted_frame"}, 0},
	{"psn_gap", []string{"ibwire.analysis.psn_gap"}, 0},
	{"duplicate", []string{"ibwire.analysis.duplicate"}, 0},
	{"out_of_order", []string{"ibwire.analysis.out_of_order"}, 0},
	{"nak", []string{"ibwire.analysis.nak"}, 0},
	{"rnr_nak", []string{"ibwire.analysis.rnr_nak"}, 0},
	{"rnr_timer", []string{"ibwire.analysis.rnr_timer"}, 0},
	{"cnp", []string{"ibwire.analysis.cnp"}, 0},
	{"ecn_ce", []string{"ibwire.analysis.ecn_ce"}, 0},
	{"request_frame", []string{"ibwire.analysis.request_frame"}, 0},
	{"latency", []string{"ibwire.analysis.latency"}, 0},
	{"latency_op", []string{"ibwire.analysis.latency_op"}, 0},
	{"ack_rtt", []string{"ibwire.analysis.ack_rtt"}, 0},
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
	gate   gate // see packetColumn
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

// registry reads the column's value from p into col through the
// registry's getters, or leaves it null.
func (c *fieldColumn) registry(p *decode.Packet, v *decode.Value, col *column) {
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
