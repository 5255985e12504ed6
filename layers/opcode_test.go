package layers_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

func TestOpcodeTableCoversWiresharkAndIBTA15(t *testing.T) {
	wireshark := 0
	for _, op := range layers.KnownOpcodes() {
		if op.Info().Wireshark != "" {
			wireshark++
		}
	}
	assert.Equal(t, 84, wireshark, "tshark 4.0 names 84 opcodes")
	for _, op := range []layers.Opcode{0x1C, 0x1D, 0x5C, 0x5D, 0x81} {
		e := op.Info()
		assert.True(t, e.Known, "%#x", op)
		assert.Empty(t, e.Wireshark, "%#x is beyond tshark 4.0", op)
	}
	assert.Len(t, layers.KnownOpcodes(), 89)
	assert.Equal(t, "Unknown(0xff)", layers.Opcode(0xFF).String())
}

// protocolOpcodes is PROTOCOL.md §1.4 (the opcode table written from rxe's
// rxe_opcode.c and tshark 4.0.17), checked in so a plain clone tests it too.
const protocolOpcodes = "testdata/protocol-opcodes.md"

// TestOpcodeTableAgreesWithProtocolDoc checks each opcode's header length
// against the "BTH+ETH bytes" column of PROTOCOL.md §1.4 (rxe's lengths) and
// each name against tshark's.
func TestOpcodeTableAgreesWithProtocolDoc(t *testing.T) {
	f, err := os.Open(protocolOpcodes)
	require.NoError(t, err)
	defer f.Close()
	checked := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		cols := strings.Split(s.Text(), "|")
		if len(cols) < 7 || !strings.HasPrefix(strings.TrimSpace(cols[1]), "0x") {
			continue
		}
		var op uint64
		_, err := fmtSscanf(strings.TrimSpace(cols[1]), &op)
		if err != nil || op > 0xFF {
			continue
		}
		n := strings.Fields(strings.TrimSpace(cols[4]))
		if len(n) == 0 || n[0] == "-" {
			continue
		}
		want := atoi(n[0])
		if len(n) > 1 && strings.HasPrefix(n[1], "(+") { // CNP: "12 (+16)", the reserved block
			want += atoi(strings.Trim(n[1], "(+)"))
		}
		if want == 0 {
			continue
		}
		e := layers.Opcode(op).Info()
		require.True(t, e.Known, "%#x", op)
		assert.Equal(t, want, e.HeaderLength(), "%#x %s", op, e.Name)
		if ws := strings.TrimSpace(cols[5]); !strings.HasPrefix(ws, "(") && ws != "CNP" {
			assert.Equal(t, ws, e.Wireshark, "%#x", op)
		}
		checked++
	}
	assert.GreaterOrEqual(t, checked, 80)
}

// TestProtocolOpcodesCopyIsCurrent keeps the checked-in copy equal to §1.4 of
// the shared PROTOCOL.md when the shared folder is beside the checkout (as in
// CI), so the copy cannot drift from the document it was taken from.
func TestProtocolOpcodesCopyIsCurrent(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "shared", "PROTOCOL.md"))
	if err != nil {
		t.Skip("shared/PROTOCOL.md not beside the checkout; the checked-in copy is tested alone")
	}
	copied, err := os.ReadFile(protocolOpcodes)
	require.NoError(t, err)
	text := string(doc)
	start := strings.Index(text, "### 1.4 ")
	end := strings.Index(text, "### 1.5 ")
	require.True(t, start >= 0 && end > start, "PROTOCOL.md has no §1.4 .. §1.5")
	assert.Equal(t, text[start:end], string(copied), "refresh %s from PROTOCOL.md §1.4", protocolOpcodes)
}

func TestOpcodeFacts(t *testing.T) {
	tests := []struct {
		op       layers.Opcode
		service  layers.ServiceType
		oper     layers.Operation
		pos      layers.Position
		headers  []layers.HeaderKind
		payload  bool
		response bool
	}{
		{0x04, layers.ServiceRC, layers.OpSend, layers.PosOnly, nil, true, false},
		{0x0B, layers.ServiceRC, layers.OpRDMAWrite, layers.PosOnly, []layers.HeaderKind{layers.HdrRETH, layers.HdrImmDt}, true, false},
		{0x0C, layers.ServiceRC, layers.OpRDMAReadRequest, layers.PosOnly, []layers.HeaderKind{layers.HdrRETH}, false, false},
		{0x0E, layers.ServiceRC, layers.OpRDMAReadResponse, layers.PosMiddle, nil, true, true},
		{0x12, layers.ServiceRC, layers.OpAtomicAcknowledge, layers.PosNone, []layers.HeaderKind{layers.HdrAETH, layers.HdrAtomicAckETH}, false, true},
		{0x1C, layers.ServiceRC, layers.OpFlush, layers.PosOnly, []layers.HeaderKind{layers.HdrFETH, layers.HdrRETH}, false, false},
		{0x4B, layers.ServiceRD, layers.OpRDMAWrite, layers.PosOnly, []layers.HeaderKind{layers.HdrRDETH, layers.HdrDETH, layers.HdrRETH, layers.HdrImmDt}, true, false},
		{0x65, layers.ServiceUD, layers.OpSend, layers.PosOnly, []layers.HeaderKind{layers.HdrDETH, layers.HdrImmDt}, true, false},
		{0x81, layers.ServiceCNP, layers.OpCNP, layers.PosNone, []layers.HeaderKind{layers.HdrCNP}, false, false},
		{0xB7, layers.ServiceXRC, layers.OpSend, layers.PosOnly, []layers.HeaderKind{layers.HdrXRCETH, layers.HdrIETH}, true, false},
	}
	for _, tt := range tests {
		e := tt.op.Info()
		assert.Equal(t, tt.service, e.Service, "%v", tt.op)
		assert.Equal(t, tt.oper, e.Operation, "%v", tt.op)
		assert.Equal(t, tt.pos, e.Position, "%v", tt.op)
		assert.Equal(t, tt.headers, nilIfEmpty(e.HeaderList()), "%v", tt.op)
		assert.Equal(t, tt.payload, e.Payload, "%v", tt.op)
		assert.Equal(t, tt.response, e.Response, "%v", tt.op)
	}
	op, ok := layers.OpcodeByName("RC_RDMA_WRITE_ONLY")
	assert.True(t, ok)
	assert.Equal(t, layers.Opcode(0x0A), op)
	op, ok = layers.OpcodeByName("Unreliable Datagram (UD) - SEND only")
	assert.True(t, ok)
	assert.Equal(t, layers.Opcode(0x64), op)
}

func TestAETHSyndromes(t *testing.T) {
	tests := []struct {
		s    layers.AETHSyndrome
		text string
	}{
		{0x1F, "ACK credits=unlimited"},
		{0x05, "ACK credits=6"},
		{0x60, "NAK PSN Sequence Error"},
		{0x62, "NAK Remote Access Error"},
		{0x2C, "RNR NAK timer=0.64 ms"},
		{0x20, "RNR NAK timer=655.36 ms"},
		{0x40, "Reserved(0x40)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.text, tt.s.String())
	}
	assert.Equal(t, layers.MakeRNRNakSyndrome(12), layers.AETHSyndrome(0x2C))
	assert.Equal(t, layers.MakeNakSyndrome(layers.NAKRemoteAccessError), layers.AETHSyndrome(0x62))
	assert.Equal(t, "remote_op_err", layers.NAKRemoteOperationalError.Key())
}

func nilIfEmpty(h []layers.HeaderKind) []layers.HeaderKind {
	if len(h) == 0 {
		return nil
	}
	return h
}

func fmtSscanf(s string, v *uint64) (int, error) { return fmt.Sscanf(s, "0x%x", v) }

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

func TestOpcodeFor(t *testing.T) {
	tests := []struct {
		name     string
		s        layers.ServiceType
		o        layers.Operation
		p        layers.Position
		imm, inv bool
		want     layers.Opcode
		ok       bool
	}{
		{"RC write only", layers.ServiceRC, layers.OpRDMAWrite, layers.PosOnly, false, false, 0x0a, true},
		{"RC write last with immediate", layers.ServiceRC, layers.OpRDMAWrite, layers.PosLast, true, false, 0x09, true},
		{"RC send only invalidate", layers.ServiceRC, layers.OpSend, layers.PosOnly, false, true, 0x17, true},
		{"RC read response middle", layers.ServiceRC, layers.OpRDMAReadResponse, layers.PosMiddle, false, false, 0x0e, true},
		{"RC atomic acknowledge", layers.ServiceRC, layers.OpAtomicAcknowledge, layers.PosNone, false, false, 0x12, true},
		{"UC send last with immediate", layers.ServiceUC, layers.OpSend, layers.PosLast, true, false, 0x23, true},
		{"UD send only with immediate", layers.ServiceUD, layers.OpSend, layers.PosOnly, true, false, 0x65, true},
		{"CNP keeps the lower opcode", layers.ServiceCNP, layers.OpCNP, layers.PosNone, false, false, 0x80, true},
		{"no READ request with immediate", layers.ServiceRC, layers.OpRDMAReadRequest, layers.PosNone, true, false, 0, false},
		{"no UC READ", layers.ServiceUC, layers.OpRDMAReadRequest, layers.PosNone, false, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, ok := layers.OpcodeFor(tt.s, tt.o, tt.p, tt.imm, tt.inv)
			require.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, op)
		})
	}
	// Every opcode of the table is found by its own meaning (0x81, the
	// second CNP, excepted: the lower one answers).
	for _, op := range layers.KnownOpcodes() {
		in := op.Info()
		got, ok := layers.OpcodeFor(in.Service, in.Operation, in.Position, in.Immediate, in.Invalidate)
		require.True(t, ok, "%v", op)
		if op != 0x81 {
			assert.Equal(t, op, got, "%v", op)
		}
	}
}

func TestSegmentPosition(t *testing.T) {
	for _, tt := range []struct {
		i, n int
		want layers.Position
	}{
		{0, 1, layers.PosOnly},
		{0, 2, layers.PosFirst},
		{1, 2, layers.PosLast},
		{0, 4, layers.PosFirst},
		{1, 4, layers.PosMiddle},
		{2, 4, layers.PosMiddle},
		{3, 4, layers.PosLast},
	} {
		assert.Equal(t, tt.want, layers.SegmentPosition(tt.i, tt.n), "packet %d of %d", tt.i, tt.n)
		assert.Equal(t, tt.want, layers.PositionOf(tt.i == 0, tt.i == tt.n-1), "packet %d of %d", tt.i, tt.n)
	}
}

func TestSegments(t *testing.T) {
	for _, tt := range []struct{ length, mtu, want int }{
		{0, 1024, 1},    // an empty message still takes a packet
		{1, 1024, 1},    //
		{1024, 1024, 1}, //
		{1025, 1024, 2}, //
		{65536, 4096, 16},
		{10000, 4096, 3}, // the last one short
		{5000, 0, 1},     // MTU not known
	} {
		assert.Equal(t, tt.want, layers.Segments(tt.length, tt.mtu), "%d bytes at MTU %d", tt.length, tt.mtu)
	}
}

func TestPeekDestQP(t *testing.T) {
	b := layers.BTH{Opcode: 0x04, PKey: 0xFFFF, DestQP: 0xABCDEF, PSN: 7}
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, b.SerializeTo(buf, gopacket.SerializeOptions{}))
	qpn, ok := layers.PeekDestQP(buf.Bytes())
	assert.True(t, ok)
	assert.Equal(t, uint32(0xABCDEF), qpn)
	_, ok = layers.PeekDestQP(buf.Bytes()[:layers.BTHLength-1])
	assert.False(t, ok, "shorter than a BTH")
}
