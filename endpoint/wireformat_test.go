package endpoint_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// TestWireFormat checks what the endpoint puts on the wire against rxe's
// (ENDPOINT.md §1.7 and the §1.11 checklist): P_Key 0xFFFF, TVer 0, the
// symmetric UDP source port, MTU-exact FIRST/MIDDLE packets with RETH only
// on the first, the A bit on the last packet and on every 66th, READ
// responses with AETH on FIRST/LAST only, ACK credits 0x1F.
func TestWireFormat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		wa, wb := wiretest.NewPair(wiretest.Config{Observe: rec.observe})
		a, b := newPeer(t, wa, peerOpts{typ: endpoint.RC}), newPeer(t, wb, peerOpts{typ: endpoint.RC})
		defer a.close(t)
		defer b.close(t)
		connect(t, a, b, layers.MTU256, nil)
		const pkts = 200
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRWrite, SGL: []endpoint.SGE{a.mr.SGE(0, pkts*256-3)},
			RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}))
		requireSuccess(t, waitWCs(t, a.scq, 1))
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRRead, SGL: []endpoint.SGE{a.mr.SGE(0, 900)},
			RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}))
		requireSuccess(t, waitWCs(t, a.scq, 1))

		port := layers.RXESourcePort(a.qp.QPN(), b.qp.QPN())
		require.Equal(t, layers.RXESourcePort(b.qp.QPN(), a.qp.QPN()), port, "both ends use the same port")
		tx := rec.from(a.dev.Addr().Addr())
		require.Len(t, tx, pkts+1)
		var acked []int
		for i, s := range tx[:pkts] {
			require.Equal(t, port, s.from.Port())
			require.Equal(t, uint16(0xFFFF), s.bth.PKey)
			require.Zero(t, s.bth.TVer)
			require.Equal(t, b.qp.QPN(), s.bth.DestQP)
			require.Equal(t, a.psn.Add(i), s.bth.PSN)
			info := s.bth.Info()
			switch i {
			case 0:
				require.Equal(t, layers.Opcode(0x06), s.bth.Opcode)
				require.Equal(t, uint32(pkts*256-3), s.bth.RETH.DMALength)
			case pkts - 1:
				require.Equal(t, layers.Opcode(0x08), s.bth.Opcode)
				require.Len(t, s.bth.PacketPayload(), 253)
				require.Equal(t, uint8(3), s.bth.PadCount)
			default:
				require.Equal(t, layers.Opcode(0x07), s.bth.Opcode)
				require.False(t, info.Has(layers.HdrRETH))
			}
			if i < pkts-1 {
				require.Len(t, s.bth.PacketPayload(), 256)
			}
			if s.bth.AckReq {
				acked = append(acked, i)
			}
		}
		require.Equal(t, []int{65, 131, 197, 199}, acked)
		read := tx[pkts]
		require.Equal(t, layers.Opcode(0x0C), read.bth.Opcode)
		require.Equal(t, a.psn.Add(pkts), read.bth.PSN)

		var resp []sent
		for _, s := range rec.from(b.dev.Addr().Addr()) {
			require.Equal(t, port, s.from.Port())
			if s.bth.Info().Operation == layers.OpRDMAReadResponse {
				resp = append(resp, s)
			} else {
				require.Equal(t, layers.Opcode(0x11), s.bth.Opcode)
				require.Equal(t, layers.MakeAckSyndrome(0x1F), s.bth.AETH.Syndrome)
			}
		}
		require.Len(t, resp, 4, "900 bytes at MTU 256: a READ takes four PSNs")
		for i, s := range resp {
			require.Equal(t, a.psn.Add(pkts+i), s.bth.PSN)
			require.Equal(t, []layers.Opcode{0x0D, 0x0E, 0x0E, 0x0F}[i], s.bth.Opcode)
			require.Equal(t, i != 1 && i != 2, s.bth.Info().Has(layers.HdrAETH))
		}
		require.Equal(t, uint32(2), resp[3].bth.AETH.MSN, "the WRITE and the READ")
	})
}

// TestWindow: with every ACK lost the requester stops 128 PSNs past the
// oldest unacknowledged one (129 packets), then retransmits on timeout.
func TestWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		wa, wb := wiretest.NewPair(wiretest.Config{BtoA: wiretest.Faults{Loss: 1}, Observe: rec.observe})
		a, b := newPeer(t, wa, peerOpts{typ: endpoint.RC, memSize: 1 << 20}), newPeer(t, wb, peerOpts{typ: endpoint.RC, memSize: 1 << 20})
		defer a.close(t)
		defer b.close(t)
		connect(t, a, b, layers.MTU1024, func(c *endpoint.ConnectAttr) { c.Timeout = 14 })
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRWrite, SGL: []endpoint.SGE{a.mr.SGE(0, 300*1024)},
			RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}))
		time.Sleep(time.Millisecond)
		synctest.Wait()
		require.Len(t, rec.from(a.dev.Addr().Addr()), 129)
		time.Sleep(70 * time.Millisecond)
		synctest.Wait()
		require.Greater(t, len(rec.from(a.dev.Addr().Addr())), 129, "a timeout resends")
	})
}

// TestGSI: QP1 keeps Q_Key 0x80010000 whatever Modify says and accepts
// only it.
func TestGSI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wa, wb := wiretest.NewPair(wiretest.Config{})
		a, b := newPeer(t, wa, peerOpts{typ: endpoint.UD}), newPeer(t, wb, peerOpts{typ: endpoint.UD})
		defer a.close(t)
		defer b.close(t)
		gsi, err := b.pd.CreateQP(endpoint.QPConfig{Type: endpoint.UD, SendCQ: b.scq, RecvCQ: b.rcq, GSI: true})
		require.NoError(t, err)
		require.Equal(t, uint32(1), gsi.QPN())
		_, err = b.pd.CreateQP(endpoint.QPConfig{Type: endpoint.UD, SendCQ: b.scq, RecvCQ: b.rcq, GSI: true})
		require.ErrorIs(t, err, endpoint.ErrInvalidAttr)
		require.NoError(t, gsi.Connect(endpoint.ConnectAttr{QKey: 0x11111111}))
		attr, err := gsi.Query()
		require.NoError(t, err)
		require.Equal(t, uint32(layers.GSIQKey), attr.QKey)
		connect(t, a, b, 0, nil)
		require.NoError(t, gsi.PostRecv(endpoint.RecvWR{ID: 1, SGL: []endpoint.SGE{b.mr.SGE(0, 40+256)}}))
		for _, qkey := range []uint32{0x11111111, layers.GSIQKey} {
			require.NoError(t, a.qp.PostSend(&endpoint.SendWR{Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 256)},
				Dest: endpoint.UDDest{Addr: b.dev.Addr().Addr(), QPN: 1, QKey: qkey}}))
		}
		rwc := waitWCs(t, b.rcq, 1)
		require.Equal(t, endpoint.WC{ID: 1, Op: endpoint.WCRecv, QPN: 1, ByteLen: 296, SrcQP: a.qp.QPN()}, rwc[0])
		require.Equal(t, uint64(1), b.dev.Counters().DropQKey)
	})
}
