package endpoint_test

import (
	"encoding/binary"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// TestUC: UC moves SENDs and WRITEs without ACKs; a message that loses a
// packet is dropped whole at the receiver while the sender completes it,
// and the next message arrives again.
func TestUC(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		wa, wb := wiretest.NewPair(wiretest.Config{Observe: rec.observe})
		a, b := newPeer(t, wa, peerOpts{typ: endpoint.UC}), newPeer(t, wb, peerOpts{typ: endpoint.UC})
		defer a.close(t)
		defer b.close(t)
		connect(t, a, b, layers.MTU1024, nil)
		fillRandom(a.mem, 4)
		for i := range 3 {
			require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: uint64(i), SGL: []endpoint.SGE{b.mr.SGE(i*10000, 10000)}}))
		}
		send := func(id uint64, off int) {
			require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: id, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(off, 2500)}}))
			requireSuccess(t, waitWCs(t, a.scq, 1))
		}
		send(1, 0)
		rwc := waitWCs(t, b.rcq, 1)
		require.Equal(t, uint32(2500), rwc[0].ByteLen)
		require.Equal(t, a.mem[:2500], b.mem[:2500])

		// Every packet of the next message is lost: the sender
		// completes it anyway.
		a.wire.SetFaults(wiretest.Faults{Loss: 1})
		send(2, 3000)
		a.wire.SetFaults(wiretest.Faults{})
		synctest.Wait()
		require.Zero(t, b.rcq.Len())

		send(3, 6000)
		rwc = waitWCs(t, b.rcq, 1)
		require.Equal(t, uint64(1), rwc[0].ID, "the receive WR is reused for the next whole message")
		require.Equal(t, a.mem[6000:8500], b.mem[10000:12500])

		// WRITE with immediate consumes a receive WR.
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 4, Op: endpoint.WRWriteWithImm, Imm: 77,
			SGL: []endpoint.SGE{a.mr.SGE(0, 5000)}, RemoteAddr: b.mr.Addr() + 40000, RKey: b.mr.RKey()}))
		requireSuccess(t, waitWCs(t, a.scq, 1))
		rwc = waitWCs(t, b.rcq, 1)
		require.Equal(t, endpoint.WC{ID: 2, Op: endpoint.WCRecvWithImm, QPN: b.qp.QPN(), ByteLen: 5000, WithImm: true, Imm: 77}, rwc[0])
		require.Equal(t, a.mem[:5000], b.mem[40000:45000])
		for _, s := range rec.log {
			require.False(t, s.bth.AckReq, "UC never asks for ACKs")
			require.Equal(t, layers.ServiceUC, s.bth.Info().Service)
		}
		a.guardsIntact(t)
		b.guardsIntact(t)
	})
}

// TestUCGap: a UC message missing a middle packet is dropped whole; the
// next FIRST/ONLY is accepted whatever its PSN.
func TestUCGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := newVictim(t, endpoint.UC, all)
		defer v.close(t)
		require.NoError(t, v.qp.PostRecv(endpoint.RecvWR{ID: 1, SGL: []endpoint.SGE{v.mr.SGE(0, 4096)}}))
		full := make([]byte, 1024)
		v.send(hostile{op: 0x20, psn: v.p0, payload: full})
		v.send(hostile{op: 0x22, psn: v.p0.Add(2), payload: []byte("tail")})
		require.Empty(t, v.responses())
		require.Zero(t, v.rcq.Len())
		v.send(hostile{op: 0x24, psn: v.p0.Add(7), payload: []byte("whole")})
		rwc := waitWCs(t, v.rcq, 1)
		require.Equal(t, endpoint.WC{ID: 1, Op: endpoint.WCRecv, QPN: v.qp.QPN(), ByteLen: 5}, rwc[0])
		require.Equal(t, []byte("whole"), v.mem[:5])
		require.Empty(t, v.responses(), "UC never answers")
		v.guardsIntact(t)
	})
}

// TestUD: UD SENDs arrive behind a 40-byte GRH carrying the IPv4 header;
// a wrong Q_Key is dropped; a message over the MTU completes unsent.
func TestUD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wa, wb := wiretest.NewPair(wiretest.Config{})
		a, b := newPeer(t, wa, peerOpts{typ: endpoint.UD}), newPeer(t, wb, peerOpts{typ: endpoint.UD})
		defer a.close(t)
		defer b.close(t)
		connect(t, a, b, 0, nil)
		fillRandom(a.mem[:1000], 8)
		require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: 5, SGL: []endpoint.SGE{b.mr.SGE(0, 40+1000)}}))
		dest := endpoint.UDDest{Addr: b.dev.Addr().Addr(), QPN: b.qp.QPN(), QKey: endpoint.PingpongQKey}
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRSendWithImm, Imm: 3, SGL: []endpoint.SGE{a.mr.SGE(0, 1000)}, Dest: dest}))
		requireSuccess(t, waitWCs(t, a.scq, 1))
		rwc := waitWCs(t, b.rcq, 1)
		require.Equal(t, endpoint.WC{ID: 5, Op: endpoint.WCRecv, QPN: b.qp.QPN(), ByteLen: 1040, SrcQP: a.qp.QPN(), WithImm: true, Imm: 3}, rwc[0])
		grh := b.mem[:40]
		require.Equal(t, make([]byte, 20), grh[:20], "IPv4: 20 zero bytes first")
		require.Equal(t, byte(0x45), grh[20])
		require.Equal(t, uint16(20+8+20+4+1000+4), binary.BigEndian.Uint16(grh[22:24]), "IP total length")
		require.Equal(t, byte(17), grh[29])
		require.Equal(t, []byte{127, 0, 0, 1}, grh[32:36])
		require.Equal(t, []byte{127, 0, 0, 2}, grh[36:40])
		require.Equal(t, a.mem[:1000], b.mem[40:1040])

		// Wrong Q_Key: dropped, counted, the receive WR stays.
		require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: 6, SGL: []endpoint.SGE{b.mr.SGE(2000, 1040)}}))
		bad := dest
		bad.QKey = 0x12345678
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 100)}, Dest: bad}))
		requireSuccess(t, waitWCs(t, a.scq, 1))
		synctest.Wait()
		require.Zero(t, b.rcq.Len())
		require.Equal(t, uint64(1), b.dev.Counters().DropQKey)

		// Larger than the MTU (4096 for UD): completed, never sent.
		sentBefore := a.dev.Counters().SentPkts
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 3, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 5000)}, Dest: dest}))
		requireSuccess(t, waitWCs(t, a.scq, 1))
		require.Equal(t, sentBefore, a.dev.Counters().SentPkts)

		// The receive WR is still there for a right Q_Key.
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 4, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 100)}, Dest: dest}))
		requireSuccess(t, waitWCs(t, a.scq, 1))
		rwc = waitWCs(t, b.rcq, 1)
		require.Equal(t, uint64(6), rwc[0].ID)
		b.guardsIntact(t)
	})
}

// TestSRQAndInvalidate: two QPs share one SRQ; SEND with invalidate revokes
// an rkey so a later WRITE with it is NAKed REM_ACCESS_ERR.
func TestSRQAndInvalidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pair(t, wiretest.Config{}, peerOpts{typ: endpoint.RC, srq: true}, layers.MTU1024)
		defer a.close(t)
		defer b.close(t)
		require.ErrorIs(t, b.qp.PostRecv(endpoint.RecvWR{ID: 1}), endpoint.ErrInvalidWR)
		spare, err := b.pd.RegMR(make([]byte, 64), endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite)
		require.NoError(t, err)
		srq := b.pd.CreateSRQ(8)
		qp2, err := b.pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: b.scq, RecvCQ: b.rcq, SRQ: srq})
		require.NoError(t, err)
		a2, err := a.pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: a.scq, RecvCQ: a.rcq})
		require.NoError(t, err)
		require.NoError(t, a2.Connect(endpoint.ConnectAttr{Remote: b.dev.Addr().Addr(), RemoteQPN: qp2.QPN(), RemotePSN: 10, LocalPSN: 20}))
		require.NoError(t, qp2.Connect(endpoint.ConnectAttr{Remote: a.dev.Addr().Addr(), RemoteQPN: a2.QPN(), RemotePSN: 20, LocalPSN: 10}))
		require.NoError(t, srq.PostRecv(endpoint.RecvWR{ID: 11, SGL: []endpoint.SGE{b.mr.SGE(0, 100)}}))
		require.Equal(t, 1, srq.Len())
		require.NoError(t, a2.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRSendWithInv, InvalidateRKey: spare.RKey(), SGL: []endpoint.SGE{a.mr.SGE(0, 10)}}))
		requireSuccess(t, waitWCs(t, a.scq, 1))
		rwc := waitWCs(t, b.rcq, 1)
		require.Equal(t, endpoint.WC{ID: 11, Op: endpoint.WCRecv, QPN: qp2.QPN(), ByteLen: 10, WithInv: true, InvalidatedRKey: spare.RKey()}, rwc[0])
		require.True(t, spare.Invalidated())
		require.NoError(t, a2.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRWrite, SGL: []endpoint.SGE{a.mr.SGE(0, 10)}, RemoteAddr: spare.Addr(), RKey: spare.RKey()}))
		wcs := waitWCs(t, a.scq, 1)
		require.Equal(t, endpoint.StatusRemAccessErr, wcs[0].Status)
		require.Equal(t, endpoint.StateErr, a2.State())
		require.Equal(t, endpoint.StateErr, qp2.State())
	})
}

// TestSRQLimit: two QPs take their receives from one SRQ; its armed limit
// fires once, when a receive taken leaves fewer WRs than the limit waiting,
// and stays quiet until armed again.
func TestSRQLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pair(t, wiretest.Config{}, peerOpts{typ: endpoint.RC}, layers.MTU1024)
		defer a.close(t)
		defer b.close(t)
		srq := b.pd.CreateSRQ(8)
		require.ErrorIs(t, srq.ArmLimit(9), endpoint.ErrInvalidAttr)
		var senders []*endpoint.QP
		for i := range 2 {
			qp, err := b.pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: b.scq, RecvCQ: b.rcq, SRQ: srq})
			require.NoError(t, err)
			s, err := a.pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: a.scq, RecvCQ: a.rcq})
			require.NoError(t, err)
			psn := layers.PSN(100 * (i + 1))
			require.NoError(t, s.Connect(endpoint.ConnectAttr{Remote: b.dev.Addr().Addr(), RemoteQPN: qp.QPN(), RemotePSN: psn, LocalPSN: psn + 50}))
			require.NoError(t, qp.Connect(endpoint.ConnectAttr{Remote: a.dev.Addr().Addr(), RemoteQPN: s.QPN(), RemotePSN: psn + 50, LocalPSN: psn}))
			senders = append(senders, s)
		}
		for i := range 4 {
			require.NoError(t, srq.PostRecv(endpoint.RecvWR{ID: uint64(i), SGL: []endpoint.SGE{b.mr.SGE(i*16, 16)}}))
		}
		require.NoError(t, srq.ArmLimit(3))
		send := func(i int) {
			require.NoError(t, senders[i%2].PostSend(&endpoint.SendWR{ID: uint64(i), Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 8)}}))
			requireSuccess(t, waitWCs(t, a.scq, 1))
			requireSuccess(t, waitWCs(t, b.rcq, 1))
		}
		fired := func() bool {
			select {
			case <-srq.LimitReached():
				return true
			default:
				return false
			}
		}
		send(0) // 3 left
		synctest.Wait()
		assert.False(t, fired(), "3 waiting, limit 3")
		send(1) // 2 left: below the limit
		synctest.Wait()
		assert.True(t, fired(), "2 waiting, limit 3")
		send(2) // 1 left: disarmed
		synctest.Wait()
		assert.False(t, fired(), "the limit fires once per arming")
		require.Equal(t, 1, srq.Len())
		require.NoError(t, srq.ArmLimit(1))
		send(3) // 0 left
		synctest.Wait()
		assert.True(t, fired(), "armed again")
	})
}

// TestLocalErrors: a bad lkey completes LOC_PROT_ERR and moves the QP to
// ERR; everything after is flushed; posting follows the state.
func TestLocalErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pair(t, wiretest.Config{}, peerOpts{typ: endpoint.RC}, layers.MTU1024)
		defer a.close(t)
		defer b.close(t)
		require.NoError(t, a.qp.PostRecv(endpoint.RecvWR{ID: 50, SGL: []endpoint.SGE{a.mr.SGE(0, 8)}}))
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRWrite, SGL: []endpoint.SGE{a.mr.SGE(0, 8)}, RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}))
		bad := a.mr.SGE(0, 8)
		bad.LKey ^= 1
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRSend, SGL: []endpoint.SGE{bad}}))
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 3, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 8)}}))
		wcs := waitWCs(t, a.scq, 3)
		require.Equal(t, []endpoint.Status{endpoint.StatusSuccess, endpoint.StatusLocProtErr, endpoint.StatusWRFlushErr},
			[]endpoint.Status{wcs[0].Status, wcs[1].Status, wcs[2].Status})
		rwc := waitWCs(t, a.rcq, 1)
		require.Equal(t, endpoint.StatusWRFlushErr, rwc[0].Status)
		require.Equal(t, endpoint.StateErr, a.qp.State())
		// In ERR, new WRs are accepted and flushed.
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 4, Op: endpoint.WRSend}))
		require.Equal(t, endpoint.StatusWRFlushErr, waitWCs(t, a.scq, 1)[0].Status)
		require.NoError(t, a.qp.PostRecv(endpoint.RecvWR{ID: 51}))
		require.Equal(t, endpoint.StatusWRFlushErr, waitWCs(t, a.rcq, 1)[0].Status)

		// RESET, then posting is refused until RTS.
		require.NoError(t, a.qp.Modify(endpoint.QPAttr{State: endpoint.StateReset}, endpoint.AttrState))
		require.ErrorIs(t, a.qp.PostSend(&endpoint.SendWR{Op: endpoint.WRSend}), endpoint.ErrInvalidState)
		require.ErrorIs(t, a.qp.PostRecv(endpoint.RecvWR{}), endpoint.ErrInvalidState)
		// Errors a post itself catches.
		require.ErrorIs(t, b.qp.PostSend(&endpoint.SendWR{Op: endpoint.WROpcode(99)}), endpoint.ErrInvalidWR)
		require.ErrorIs(t, b.qp.PostRecv(endpoint.RecvWR{SGL: []endpoint.SGE{bad}}), endpoint.ErrInvalidKey)
		time.Sleep(time.Millisecond)
	})
}

// TestSQE: a local error on a UD QP moves it to SQE: sends are flushed,
// receives still arrive, and SQE → RTS resumes sending.
func TestSQE(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wa, wb := wiretest.NewPair(wiretest.Config{})
		a, b := newPeer(t, wa, peerOpts{typ: endpoint.UD}), newPeer(t, wb, peerOpts{typ: endpoint.UD})
		defer a.close(t)
		defer b.close(t)
		connect(t, a, b, 0, nil)
		bad := a.mr.SGE(0, 8)
		bad.LKey ^= 1
		dest := endpoint.UDDest{Addr: b.dev.Addr().Addr(), QPN: b.qp.QPN(), QKey: endpoint.PingpongQKey}
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRSend, SGL: []endpoint.SGE{bad}, Dest: dest}))
		require.Equal(t, endpoint.StatusLocProtErr, waitWCs(t, a.scq, 1)[0].Status)
		require.Equal(t, endpoint.StateSQE, a.qp.State())
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRSend, Dest: dest}))
		require.Equal(t, endpoint.StatusWRFlushErr, waitWCs(t, a.scq, 1)[0].Status)
		// Receives go on in SQE.
		require.NoError(t, a.qp.PostRecv(endpoint.RecvWR{ID: 3, SGL: []endpoint.SGE{a.mr.SGE(0, 100)}}))
		back := endpoint.UDDest{Addr: a.dev.Addr().Addr(), QPN: a.qp.QPN(), QKey: endpoint.PingpongQKey}
		require.NoError(t, b.qp.PostSend(&endpoint.SendWR{ID: 4, Op: endpoint.WRSend, SGL: []endpoint.SGE{b.mr.SGE(0, 10)}, Dest: back}))
		requireSuccess(t, waitWCs(t, a.rcq, 1))
		require.NoError(t, a.qp.Modify(endpoint.QPAttr{State: endpoint.StateRTS}, endpoint.AttrState))
		require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: 5, SGL: []endpoint.SGE{b.mr.SGE(0, 100)}}))
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 6, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 10)}, Dest: dest}))
		requireSuccess(t, waitWCs(t, a.scq, 1))
		requireSuccess(t, waitWCs(t, b.rcq, 1))
	})
}

// TestZeroLength: zero-byte SEND, WRITE and READ need no memory key and
// complete.
func TestZeroLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pair(t, wiretest.Config{}, peerOpts{typ: endpoint.RC}, layers.MTU1024)
		defer a.close(t)
		defer b.close(t)
		require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: 9}))
		for i, op := range []endpoint.WROpcode{endpoint.WRSend, endpoint.WRWrite, endpoint.WRRead} {
			require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: uint64(i), Op: op, RemoteAddr: 0xdead, RKey: 0xbeef}))
		}
		wcs := waitWCs(t, a.scq, 3)
		requireSuccess(t, wcs)
		rwc := waitWCs(t, b.rcq, 1)
		require.Equal(t, endpoint.WC{ID: 9, Op: endpoint.WCRecv, QPN: b.qp.QPN()}, rwc[0])
		b.guardsIntact(t)
	})
}

// TestStateMachine walks the verbs transition table for each QP type.
func TestStateMachine(t *testing.T) {
	init := map[endpoint.QPType]endpoint.AttrMask{endpoint.RC: endpoint.AttrAccess, endpoint.UC: endpoint.AttrAccess, endpoint.UD: endpoint.AttrQKey}
	rtr := map[endpoint.QPType]endpoint.AttrMask{
		endpoint.RC: endpoint.AttrAV | endpoint.AttrPathMTU | endpoint.AttrDestQPN | endpoint.AttrRQPSN | endpoint.AttrMaxDestRdAtomic | endpoint.AttrMinRNRTimer,
		endpoint.UC: endpoint.AttrAV | endpoint.AttrPathMTU | endpoint.AttrDestQPN | endpoint.AttrRQPSN,
		endpoint.UD: 0,
	}
	rts := map[endpoint.QPType]endpoint.AttrMask{
		endpoint.RC: endpoint.AttrSQPSN | endpoint.AttrTimeout | endpoint.AttrRetryCnt | endpoint.AttrRNRRetry | endpoint.AttrMaxRdAtomic,
		endpoint.UC: endpoint.AttrSQPSN, endpoint.UD: endpoint.AttrSQPSN,
	}
	good := endpoint.QPAttr{Access: endpoint.AccessRemoteWrite, PathMTU: layers.MTU2048, DestQPN: 0x20, RQPSN: 1, SQPSN: 2,
		Timeout: 14, RetryCnt: 7, RNRRetry: 7, MinRNRTimer: 12, MaxRdAtomic: 3, MaxDestRdAtomic: 5, QKey: 0x11111111,
		PKey: 0xFFFF, Remote: mustAddr("127.0.0.2")}
	type step struct {
		to   endpoint.QPState
		mask endpoint.AttrMask
		edit func(*endpoint.QPAttr)
		err  error
	}
	for _, typ := range []endpoint.QPType{endpoint.RC, endpoint.UC, endpoint.UD} {
		S := endpoint.AttrState
		for _, tc := range []struct {
			name  string
			steps []step
			final endpoint.QPState
		}{
			{"reset-init-rtr-rts-sqd-rts", []step{{endpoint.StateInit, S | init[typ], nil, nil}, {endpoint.StateRTR, S | rtr[typ], nil, nil},
				{endpoint.StateRTS, S | rts[typ], nil, nil}, {endpoint.StateSQD, S, nil, nil}, {endpoint.StateRTS, S, nil, nil}}, endpoint.StateRTS},
			{"reset to rtr skips init", []step{{endpoint.StateRTR, S | rtr[typ], nil, endpoint.ErrInvalidTransition}}, endpoint.StateReset},
			{"init to rts skips rtr", []step{{endpoint.StateInit, S | init[typ], nil, nil}, {endpoint.StateRTS, S | rts[typ], nil, endpoint.ErrInvalidTransition}}, endpoint.StateInit},
			{"init needs its attributes", []step{{endpoint.StateInit, S, nil, endpoint.ErrInvalidAttr}}, endpoint.StateReset},
			{"init refuses foreign attributes", []step{{endpoint.StateInit, S | init[typ] | endpoint.AttrSQPSN, nil, endpoint.ErrInvalidAttr}}, endpoint.StateReset},
			// UD takes no path MTU at all, so both fail for every type.
			{"rtr needs its attributes", []step{{endpoint.StateInit, S | init[typ], nil, nil},
				{endpoint.StateRTR, S | endpoint.AttrPathMTU | rtr[typ]&^endpoint.AttrDestQPN, nil, endpoint.ErrInvalidAttr}}, endpoint.StateInit},
			{"MTU code 6 is invalid", []step{{endpoint.StateInit, S | init[typ], nil, nil},
				{endpoint.StateRTR, S | rtr[typ] | endpoint.AttrPathMTU, func(a *endpoint.QPAttr) { a.PathMTU = 6 }, endpoint.ErrInvalidAttr}}, endpoint.StateInit},
			{"timeout over 31", []step{{endpoint.StateInit, S | init[typ], nil, nil}, {endpoint.StateRTR, S | rtr[typ], nil, nil},
				{endpoint.StateRTS, S | rts[typ] | endpoint.AttrTimeout, func(a *endpoint.QPAttr) { a.Timeout = 32 }, endpoint.ErrInvalidAttr}}, endpoint.StateRTR},
			{"any state to err and reset", []step{{endpoint.StateInit, S | init[typ], nil, nil}, {endpoint.StateErr, S, nil, nil},
				{endpoint.StateRTS, S | rts[typ], nil, endpoint.ErrInvalidTransition}, {endpoint.StateReset, S, nil, nil}}, endpoint.StateReset},
			{"err takes no attributes", []step{{endpoint.StateErr, S | endpoint.AttrQKey, nil, endpoint.ErrInvalidAttr}}, endpoint.StateReset},
			{"sqe is not reachable by modify", []step{{endpoint.StateSQE, S, nil, endpoint.ErrInvalidTransition}}, endpoint.StateReset},
		} {
			t.Run(typ.String()+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					wa, _ := wiretest.NewPair(wiretest.Config{})
					p := newPeer(t, wa, peerOpts{typ: typ})
					defer p.close(t)
					for i, s := range tc.steps {
						a := good
						a.State = s.to
						if s.edit != nil {
							s.edit(&a)
						}
						err := p.qp.Modify(a, s.mask)
						if s.err == nil {
							require.NoError(t, err, "step %d", i)
						} else {
							require.ErrorIs(t, err, s.err, "step %d", i)
						}
					}
					require.Equal(t, tc.final, p.qp.State())
					got, err := p.qp.Query()
					require.NoError(t, err)
					require.Equal(t, tc.final, got.State)
				})
			})
		}
	}
}
