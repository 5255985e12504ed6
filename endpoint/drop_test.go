package endpoint_test

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// rawRequest builds BTH [+ DETH] + 8 payload bytes + the ICRC's place.
func rawRequest(op layers.Opcode, pkey uint16, qpn uint32, qkey uint32) []byte {
	b := make([]byte, 12, 12+8+8+4)
	b[0] = byte(op)
	binary.BigEndian.PutUint16(b[2:], pkey)
	b[5], b[6], b[7] = byte(qpn>>16), byte(qpn>>8), byte(qpn)
	b[8] = 0x80 // A bit
	if op == opUDSendOnly {
		b = binary.BigEndian.AppendUint32(b, qkey)
		b = append(b, 0, 0, 0, 0x42)
	}
	b = append(b, "payload!"...)
	return append(b, 0, 0, 0, 0)
}

// Every acceptance check that drops tells the handler why, with what the
// packet had and what the QP wanted.
func TestDropHandler(t *testing.T) {
	wa, wb := wiretest.NewPair(wiretest.Config{})
	drops := make(chan endpoint.Drop, 16)
	dev := endpoint.NewDevice(wb, endpoint.WithDropHandler(func(d endpoint.Drop) { drops <- d }))
	defer dev.Close()
	defer wa.Close()
	pd := dev.AllocPD()
	cq := dev.CreateCQ(16)
	peer := wa.LocalAddr()
	stranger := netip.MustParseAddrPort("127.0.0.9:49152")

	rc, err := pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq})
	require.NoError(t, err)
	require.NoError(t, rc.Connect(endpoint.ConnectAttr{Remote: peer.Addr(), RemoteQPN: 0x99, RemotePSN: 0, LocalPSN: 0}))
	ud, err := pd.CreateQP(endpoint.QPConfig{Type: endpoint.UD, SendCQ: cq, RecvCQ: cq})
	require.NoError(t, err)
	require.NoError(t, ud.Connect(endpoint.ConnectAttr{QKey: endpoint.PingpongQKey}))
	idle, err := pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq})
	require.NoError(t, err)

	badICRC := rawRequest(opRCSendOnly, 0xFFFF, rc.QPN(), 0)
	copy(badICRC[len(badICRC)-4:], []byte{1, 2, 3, 4})

	cases := []struct {
		name   string
		src    netip.AddrPort
		pkt    []byte
		raw    bool
		want   endpoint.Drop
		counts func(endpoint.Counters) uint64
	}{
		{"short", peer, []byte{1, 2, 3}, true,
			endpoint.Drop{Reason: endpoint.DropTooShort}, func(c endpoint.Counters) uint64 { return c.DropShort }},
		{"unknown QPN", peer, rawRequest(opRCSendOnly, 0xFFFF, 0x123, 0), false,
			endpoint.Drop{Reason: endpoint.DropUnknownQPN, QPN: 0x123, Opcode: opRCSendOnly}, func(c endpoint.Counters) uint64 { return c.DropQP }},
		{"QPN 0", peer, rawRequest(opRCSendOnly, 0xFFFF, 0, 0), false,
			endpoint.Drop{Reason: endpoint.DropHeader, Opcode: opRCSendOnly}, func(c endpoint.Counters) uint64 { return c.DropQP }},
		{"bad ICRC", peer, badICRC, true,
			endpoint.Drop{Reason: endpoint.DropBadICRC, QPN: rc.QPN(), Opcode: opRCSendOnly}, func(c endpoint.Counters) uint64 { return c.DropICRC }},
		{"source not the peer", stranger, rawRequest(opRCSendOnly, 0xFFFF, rc.QPN(), 0), false,
			endpoint.Drop{Reason: endpoint.DropSourceAddr, QPN: rc.QPN(), Opcode: opRCSendOnly, Peer: peer.Addr()}, func(c endpoint.Counters) uint64 { return c.DropAddr }},
		{"P_Key", peer, rawRequest(opRCSendOnly, 0x1234, rc.QPN(), 0), false,
			endpoint.Drop{Reason: endpoint.DropPKey, QPN: rc.QPN(), Opcode: opRCSendOnly, Got: 0x1234, Want: 0xFFFF}, func(c endpoint.Counters) uint64 { return c.DropPKey }},
		{"Q_Key", stranger, rawRequest(opUDSendOnly, 0xFFFF, ud.QPN(), 0x22222222), false,
			endpoint.Drop{Reason: endpoint.DropQKey, QPN: ud.QPN(), Opcode: opUDSendOnly, Got: 0x22222222, Want: endpoint.PingpongQKey}, func(c endpoint.Counters) uint64 { return c.DropQKey }},
		{"QP type", peer, rawRequest(opRCSendOnly, 0xFFFF, ud.QPN(), 0), false,
			endpoint.Drop{Reason: endpoint.DropQPType, QPN: ud.QPN(), Opcode: opRCSendOnly, Want: uint32(endpoint.UD)}, func(c endpoint.Counters) uint64 { return c.DropQP }},
		{"QP state", peer, rawRequest(opRCSendOnly, 0xFFFF, idle.QPN(), 0), false,
			endpoint.Drop{Reason: endpoint.DropQPState, QPN: idle.QPN(), Opcode: opRCSendOnly, Want: uint32(endpoint.StateReset)}, func(c endpoint.Counters) uint64 { return c.DropQP }},
		{"ACK with nothing outstanding", peer, rawACK(rc.QPN()), false,
			endpoint.Drop{Reason: endpoint.DropCompleter, QPN: rc.QPN(), Opcode: opRCAck, Detail: "response with no request outstanding"}, func(c endpoint.Counters) uint64 { return c.CompleterDrops }},
		{"no receive WR", stranger, rawRequest(opUDSendOnly, 0xFFFF, ud.QPN(), endpoint.PingpongQKey), false,
			endpoint.Drop{Reason: endpoint.DropResponder, QPN: ud.QPN(), Opcode: opUDSendOnly, Detail: "no receive WR posted"}, func(c endpoint.Counters) uint64 { return c.ResponderDrops }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.counts(dev.Counters())
			if tc.raw {
				wb.InjectRaw(tc.src, tc.pkt)
			} else {
				wb.Inject(tc.src, tc.pkt)
			}
			select {
			case got := <-drops:
				want := tc.want
				want.Src = tc.src
				want.Dst = wb.LocalAddr().Addr()
				assert.Equal(t, want, got)
				assert.NotEmpty(t, got.Reason.String())
			case <-time.After(5 * time.Second):
				t.Fatal("no drop reported")
			}
			assert.Equal(t, before+1, tc.counts(dev.Counters()), "the drop is counted too")
		})
	}
	select {
	case d := <-drops:
		t.Fatalf("unexpected drop %+v", d)
	default:
	}
}

func TestDropReasonString(t *testing.T) {
	assert.Equal(t, "unknown destination QPN", endpoint.DropUnknownQPN.String())
	assert.Equal(t, "Q_Key mismatch", endpoint.DropQKey.String())
	assert.Equal(t, "Unknown(0)", endpoint.DropReason(0).String())
	assert.Equal(t, "Unknown(200)", endpoint.DropReason(200).String())
}

const (
	opRCSendOnly layers.Opcode = 0x04
	opRCAck      layers.Opcode = 0x11
	opUDSendOnly layers.Opcode = 0x64
)

// rawACK is an RC ACK (AETH syndrome 0, MSN 0) to qpn, its ICRC left for
// the wire to fill.
func rawACK(qpn uint32) []byte {
	b := make([]byte, 12+4+4)
	b[0] = byte(opRCAck)
	binary.BigEndian.PutUint16(b[2:], 0xFFFF)
	b[5], b[6], b[7] = byte(qpn>>16), byte(qpn>>8), byte(qpn)
	return b
}
