package craft

import (
	"fmt"
	"strings"

	"github.com/ibwire/ibwire/layers"
)

// OpKind is a work request a requester posts.
type OpKind uint8

// Work requests.
const (
	OpSend        OpKind = iota + 1 // SEND
	OpSendImm                       // SEND with immediate data
	OpSendInv                       // SEND with invalidate (RC only)
	OpWrite                         // RDMA WRITE
	OpWriteImm                      // RDMA WRITE with immediate data
	OpRead                          // RDMA READ (RC only)
	OpCompareSwap                   // atomic compare and swap (RC only)
	OpFetchAdd                      // atomic fetch and add (RC only)
)

var opKindNames = [...]string{"", "send", "send-imm", "send-inv", "write", "write-imm", "read", "cmp-swap", "fetch-add"}

func (k OpKind) String() string {
	if k > 0 && int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// ParseOpKind parses the names String returns.
func ParseOpKind(s string) (OpKind, error) {
	for i, n := range opKindNames {
		if i > 0 && n == strings.ToLower(s) {
			return OpKind(i), nil
		}
	}
	return 0, fmt.Errorf("craft: unknown operation %q (want one of %s)", s, strings.Join(opKindNames[1:], ", "))
}

func (k OpKind) operation() layers.Operation {
	switch k {
	case OpSend, OpSendImm, OpSendInv:
		return layers.OpSend
	case OpWrite, OpWriteImm:
		return layers.OpRDMAWrite
	case OpRead:
		return layers.OpRDMAReadRequest
	case OpCompareSwap:
		return layers.OpCompareSwap
	case OpFetchAdd:
		return layers.OpFetchAdd
	}
	return layers.OpUnknown
}

// readOrAtomic reports whether the op takes a responder resource.
func (k OpKind) readOrAtomic() bool { return k.operation().TakesResponderResource() }

// Op is one work request.
type Op struct {
	Kind OpKind
	// Data is what a SEND or WRITE carries, and for a READ the remote memory
	// the responses return (its length is the READ's length).
	Data []byte
	VA   uint64 // remote address (WRITE, READ, atomics)
	RKey uint32 // remote key (WRITE, READ, atomics)
	Imm  uint32 // immediate data (SEND/WRITE with immediate)
	// InvRKey is the R_Key a SEND with invalidate asks to invalidate.
	InvRKey uint32
	// Compare and SwapAdd are the atomic operands; Orig is the value at VA
	// before the atomic, which the ATOMIC ACKNOWLEDGE returns.
	Compare, SwapAdd, Orig uint64
	SE                     bool // solicited event on the last packet
	// Wait holds the op back until every earlier op has completed (as
	// ibv_rc_pingpong does); otherwise ops are pipelined.
	Wait bool
}

// reqPacket is one request packet of a run, before its transmission.
type reqPacket struct {
	op      int // index of its Op
	seg     int // segment within the op
	last    bool
	off     int // PSN offset from the run's first PSN
	npsn    int // PSNs it consumes: READ: one per response packet
	bth     layers.BTH
	payload []byte
}

// segment cuts op into request packets starting at PSN offset off.
func segment(cfg *Config, idx int, op Op, off int, base layers.PSN) ([]reqPacket, error) {
	svc := cfg.Service
	if op.Kind.operation() == layers.OpUnknown {
		return nil, fmt.Errorf("craft: op %d: unknown kind %d", idx+1, op.Kind)
	}
	if svc != layers.ServiceRC && (op.Kind.readOrAtomic() || op.Kind == OpSendInv) {
		return nil, fmt.Errorf("craft: op %d: %v needs RC, not %v", idx+1, op.Kind, svc)
	}
	if svc == layers.ServiceUD && op.Kind != OpSend && op.Kind != OpSendImm {
		return nil, fmt.Errorf("craft: op %d: UD sends only SENDs, not %v", idx+1, op.Kind)
	}
	if op.Kind.readOrAtomic() && op.Kind != OpRead && op.VA%8 != 0 {
		return nil, fmt.Errorf("craft: op %d: atomic address 0x%x is not 8-byte aligned", idx+1, op.VA)
	}
	mtu := cfg.MTU
	bth := layers.BTH{PKey: cfg.PKey, DestQP: cfg.Responder.QPN}
	mk := func(seg int, last bool, pos layers.Position, o layers.Operation, imm, inv bool, data []byte, npsn int) (reqPacket, error) {
		opc, err := lookupOpcode(svc, o, pos, imm, inv)
		if err != nil {
			return reqPacket{}, err
		}
		b := bth
		b.Opcode = opc
		b.PSN = base.Add(off)
		b.SE = op.SE && last && (o == layers.OpSend || imm)
		info := opc.Info()
		if info.Has(layers.HdrImmDt) {
			b.ImmDt.Value = op.Imm
		}
		if info.Has(layers.HdrIETH) {
			b.IETH.RKey = op.InvRKey
		}
		if info.Has(layers.HdrDETH) {
			b.DETH = layers.DETH{QKey: cfg.QKey, SrcQP: cfg.Requester.QPN}
		}
		if info.Has(layers.HdrRETH) {
			b.RETH = layers.RETH{VA: op.VA, RKey: op.RKey, DMALength: uint32(len(op.Data))}
		}
		if info.Has(layers.HdrAtomicETH) {
			b.AtomicETH = layers.AtomicETH{VA: op.VA, RKey: op.RKey, SwapAddData: op.SwapAdd, CompareData: op.Compare}
		}
		p := reqPacket{op: idx, seg: seg, last: last, off: off, npsn: npsn, bth: b, payload: data}
		off += npsn
		return p, nil
	}
	switch op.Kind {
	case OpRead:
		p, err := mk(0, true, layers.PosOnly, layers.OpRDMAReadRequest, false, false, nil, layers.Segments(len(op.Data), mtu))
		return []reqPacket{p}, err
	case OpCompareSwap, OpFetchAdd:
		p, err := mk(0, true, layers.PosOnly, op.Kind.operation(), false, false, nil, 1)
		return []reqPacket{p}, err
	}
	n := layers.Segments(len(op.Data), mtu)
	if svc == layers.ServiceUD && n > 1 {
		return nil, fmt.Errorf("craft: op %d: a UD message of %d bytes exceeds the MTU %d", idx+1, len(op.Data), mtu)
	}
	imm := op.Kind == OpSendImm || op.Kind == OpWriteImm
	inv := op.Kind == OpSendInv
	pkts := make([]reqPacket, 0, n)
	for i := 0; i < n; i++ {
		pos := layers.SegmentPosition(i, n)
		last := i == n-1
		data := op.Data[i*mtu : min(len(op.Data), (i+1)*mtu)]
		p, err := mk(i, last, pos, op.Kind.operation(), imm && last, inv && last, data, 1)
		if err != nil {
			return nil, err
		}
		pkts = append(pkts, p)
	}
	return pkts, nil
}

// readResponses builds the responses to a READ request for data (the part
// of the remote memory the request asks for), the first at PSN psn.
func readResponses(cfg *Config, psn layers.PSN, data []byte, syndrome layers.AETHSyndrome, msn uint32) []layers.BTH {
	n := layers.Segments(len(data), cfg.MTU)
	out := make([]layers.BTH, n)
	for i := range out {
		pos := layers.SegmentPosition(i, n)
		b := layers.BTH{Opcode: mustOpcode(layers.ServiceRC, layers.OpRDMAReadResponse, pos, false, false),
			PKey: cfg.PKey, DestQP: cfg.Requester.QPN, PSN: psn.Add(i)}
		if b.Opcode.Info().Has(layers.HdrAETH) {
			b.AETH = layers.AETH{Syndrome: syndrome, MSN: msn & 0xFFFFFF}
		}
		out[i] = b
	}
	return out
}
