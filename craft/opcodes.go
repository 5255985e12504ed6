package craft

import (
	"fmt"

	"github.com/ibwire/ibwire/layers"
)

// lookupOpcode returns the opcode of service s for an operation at a
// position, with immediate data or invalidate as asked.
func lookupOpcode(s layers.ServiceType, o layers.Operation, p layers.Position, imm, inv bool) (layers.Opcode, error) {
	if op, ok := layers.OpcodeFor(s, o, p, imm, inv); ok {
		return op, nil
	}
	return 0, fmt.Errorf("craft: no %v %v %v opcode (immediate %v, invalidate %v)", s, o, p, imm, inv)
}

// mustOpcode is lookupOpcode for combinations the table is known to have.
func mustOpcode(s layers.ServiceType, o layers.Operation, p layers.Position, imm, inv bool) layers.Opcode {
	op, err := lookupOpcode(s, o, p, imm, inv)
	if err != nil {
		panic(err)
	}
	return op
}

// Opcodes of single packets that conversations send.
var (
	opAck       = mustOpcode(layers.ServiceRC, layers.OpAcknowledge, layers.PosNone, false, false)
	opAtomicAck = mustOpcode(layers.ServiceRC, layers.OpAtomicAcknowledge, layers.PosNone, false, false)
	opUDSend    = mustOpcode(layers.ServiceUD, layers.OpSend, layers.PosOnly, false, false)
	opCNPRoCE   = cnpOpcode(true)
	opCNPIB     = cnpOpcode(false)
)

// cnpOpcode finds the congestion notification opcodes: RoCEv2's carries the
// 16-byte CNP block, native IB's no header.
func cnpOpcode(roce bool) layers.Opcode {
	for _, op := range layers.KnownOpcodes() {
		if in := op.Info(); in.Service == layers.ServiceCNP && in.Has(layers.HdrCNP) == roce {
			return op
		}
	}
	panic("craft: the opcode table has no CNP")
}

// unknownOpcode returns the first opcode of service s's range that the table
// does not know (RC: 0x18).
func unknownOpcode(s layers.ServiceType) layers.Opcode {
	base := 0
	for _, op := range layers.KnownOpcodes() {
		if op.Info().Service == s {
			base = int(op) &^ 0x1F
			break
		}
	}
	for i := base; i < base+0x20; i++ {
		if !layers.Opcode(i).Info().Known {
			return layers.Opcode(i)
		}
	}
	return 0xFF
}

// Sample returns a packet of opcode op with every extended header filled
// with distinctive values and a payload of n bytes when op carries one: what
// the opcode-coverage captures hold. psn is the packet's PSN.
func Sample(op layers.Opcode, psn layers.PSN, n int) Packet {
	in := op.Info()
	p := Packet{BTH: layers.BTH{Opcode: op, PKey: DefaultPKey, DestQP: DefaultResponder.QPN, PSN: psn}}
	if in.Response || in.Service == layers.ServiceCNP {
		p.From = Responder
		p.BTH.DestQP = DefaultRequester.QPN
	}
	b := &p.BTH
	if in.Operation == layers.OpAtomicWrite {
		n = 8 // ATOMIC WRITE carries exactly 8 bytes
	}
	if in.IsRequest() && (in.Position == layers.PosLast || in.Position == layers.PosOnly) {
		b.AckReq = in.Service == layers.ServiceRC || in.Service == layers.ServiceXRC || in.Service == layers.ServiceRD
	}
	for _, h := range in.HeaderList() {
		switch h {
		case layers.HdrRDETH:
			b.RDETH.EEContext = 0x00EEC0
		case layers.HdrDETH:
			b.DETH.QKey, b.DETH.SrcQP = DefaultQKey, DefaultRequester.QPN
			if p.From == Responder {
				b.DETH.SrcQP = DefaultResponder.QPN
			}
		case layers.HdrXRCETH:
			b.XRCETH.XRCSRQ = 0x00C0DE
		case layers.HdrFETH:
			b.FETH.SelectivityLevel, b.FETH.PlacementType = 1, 1
		case layers.HdrRETH:
			b.RETH = layers.RETH{VA: 0x00007F0000001000, RKey: 0x00001234, DMALength: uint32(n)}
			if in.Operation == layers.OpFlush {
				b.RETH.DMALength = 4096
			}
		case layers.HdrAtomicETH:
			b.AtomicETH = layers.AtomicETH{VA: 0x00007F0000002000, RKey: 0x00005678, SwapAddData: 0x1111111111111111,
				CompareData: 0x2222222222222222}
		case layers.HdrAETH:
			b.AETH = layers.AETH{Syndrome: layers.MakeAckSyndrome(0x1F), MSN: 1}
		case layers.HdrAtomicAckETH:
			b.AtomicAckETH.OrigRemoteData = 0x2222222222222222
		case layers.HdrImmDt:
			b.ImmDt.Value = 0xDEADBEEF
		case layers.HdrIETH:
			b.IETH.RKey = 0x0000ABCD
		case layers.HdrCNP:
			b.BECN = true
		}
	}
	if in.Service == layers.ServiceCNP {
		b.BECN = true
	}
	if in.Payload && in.Service != layers.ServiceCNP {
		p.Payload = Pattern(n, byte(op))
	}
	return p
}

// Pattern returns n bytes counting up from seed: payloads that are easy to
// recognise in a hex dump.
func Pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

// AckReqDefault reports whether rxe sets AckReq on a packet of opcode op
// that ends a message: RC requests at the LAST or ONLY position (READ
// requests and atomics included). Inside long messages rxe also asks every
// 66th packet; conversations do that as AckPolicy says.
func AckReqDefault(op layers.Opcode) bool {
	in := op.Info()
	return in.Service == layers.ServiceRC && in.IsRequest() &&
		(in.Position == layers.PosLast || in.Position == layers.PosOnly)
}
