package endpoint_test

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// fuzzTarget selects the QP a fuzzed datagram goes to.
const (
	fuzzRC = iota
	fuzzUC
	fuzzUD
	fuzzTargets
)

// FuzzEndpoint feeds arbitrary datagram sequences into a device whose RC,
// UC and UD QPs sit in a chosen state (RESET … ERR), the RC one with
// WRITE, READ and atomic requests of its own outstanding so responses meet
// a live completer. Nothing may panic, no byte outside a registered region
// may change, and every goroutine ends (synctest checks).
//
// Input: byte 0 is the QP state; then records of [flags, len, bytes…]:
// flags bits 0-1 pick the QP whose QPN is written into the BTH, bit 2
// keeps the bytes' own QPN, bit 3 leaves the ICRC as given.
func FuzzEndpoint(f *testing.F) {
	p0 := layers.PSN(0xFFFF00)
	seed := func(state endpoint.QPState, pkts ...hostile) []byte {
		out := []byte{byte(state)}
		for _, h := range pkts {
			b := h.bytes(1)
			target := fuzzRC
			if h.op.Service() == layers.ServiceUC {
				target = fuzzUC
			} else if h.op.Service() == layers.ServiceUD {
				target = fuzzUD
			}
			out = append(out, byte(target), byte(len(b)))
			out = append(out, b...)
		}
		return out
	}
	mtu := make([]byte, 256)
	reth := layers.RETH{VA: 0, RKey: 0, DMALength: 8}
	f.Add(seed(endpoint.StateRTS, hostile{op: 0x0A, psn: p0, ackReq: true, reth: reth, payload: []byte("12345678")}))
	f.Add(seed(endpoint.StateRTS, hostile{op: 0x00, psn: p0, payload: mtu}, hostile{op: 0x02, psn: p0.Add(1), ackReq: true, payload: []byte("x")}))
	f.Add(seed(endpoint.StateRTS, hostile{op: 0x0C, psn: p0, ackReq: true, reth: reth}, hostile{op: 0x0C, psn: p0, ackReq: true, reth: reth}))
	f.Add(seed(endpoint.StateRTS, hostile{op: 0x14, psn: p0, ackReq: true, atomic: layers.AtomicETH{SwapAddData: 1}}))
	f.Add(seed(endpoint.StateRTS, hostile{op: 0x11, psn: 0x1000}, hostile{op: 0x10, psn: 0x1001, payload: mtu[:64]}, hostile{op: 0x12, psn: 0x1002}))
	f.Add(seed(endpoint.StateRTS, hostile{op: 0x24, psn: 3, payload: []byte("uc")}, hostile{op: 0x2A, psn: 4, reth: reth, payload: []byte("12345678")}))
	f.Add(seed(endpoint.StateRTS, hostile{op: 0x64, psn: 1, deth: layers.DETH{QKey: endpoint.PingpongQKey, SrcQP: 5}, payload: []byte("ud")}))
	f.Add(seed(endpoint.StateRTR, hostile{op: 0x04, psn: p0.Add(5), ackReq: true, payload: []byte("ahead")}))
	f.Add(seed(endpoint.StateErr, hostile{op: 0x04, psn: p0, payload: []byte("err")}))
	f.Add(seed(endpoint.StateInit, hostile{op: 0x04, psn: p0, payload: []byte("init")}))
	f.Add([]byte{byte(endpoint.StateRTS), 0, 3, 1, 2, 3})

	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		state := endpoint.QPState(in[0] % 7)
		if state == endpoint.StateSQE {
			state = endpoint.StateSQD
		}
		in = in[1:]
		synctest.Test(t, func(t *testing.T) {
			wa, wb := wiretest.NewPair(wiretest.Config{})
			attacker := wa.LocalAddr()
			v := newPeer(t, wb, peerOpts{typ: endpoint.RC, memSize: 4096})
			defer v.close(t)
			uc, err := v.pd.CreateQP(endpoint.QPConfig{Type: endpoint.UC, SendCQ: v.scq, RecvCQ: v.rcq})
			require.NoError(t, err)
			ud, err := v.pd.CreateQP(endpoint.QPConfig{Type: endpoint.UD, SendCQ: v.scq, RecvCQ: v.rcq})
			require.NoError(t, err)
			qps := [fuzzTargets]*endpoint.QP{v.qp, uc, ud}
			for _, qp := range qps {
				bring(t, qp, state, attacker, p0)
			}
			if state >= endpoint.StateInit && state != endpoint.StateErr {
				for i, qp := range qps {
					require.NoError(t, qp.PostRecv(endpoint.RecvWR{ID: uint64(i), SGL: []endpoint.SGE{v.mr.SGE(1024*i, 1024)}}))
				}
			}
			if state == endpoint.StateRTS {
				for _, wr := range []endpoint.SendWR{
					{Op: endpoint.WRWrite, SGL: []endpoint.SGE{v.mr.SGE(3072, 300)}, RemoteAddr: 0x1000, RKey: 7},
					{Op: endpoint.WRRead, SGL: []endpoint.SGE{v.mr.SGE(3072, 600)}, RemoteAddr: 0x1000, RKey: 7},
					{Op: endpoint.WRFetchAdd, SGL: []endpoint.SGE{v.mr.SGE(4088, 8)}, RemoteAddr: 0x1000, RKey: 7},
				} {
					require.NoError(t, v.qp.PostSend(&wr))
				}
			}
			for len(in) >= 2 {
				flags, n := in[0], int(in[1])
				in = in[2:]
				n = min(n, len(in))
				pkt := append([]byte(nil), in[:n]...)
				in = in[n:]
				if flags&4 == 0 && len(pkt) >= 8 {
					// Aim at a real QP so the fuzzer reaches past
					// the demux.
					qpn := qps[int(flags&3)%fuzzTargets].QPN()
					binary.BigEndian.PutUint32(pkt[4:8], uint32(pkt[4])<<24|qpn)
				}
				if flags&8 != 0 {
					v.wire.InjectRaw(attacker, pkt)
				} else {
					v.wire.Inject(attacker, pkt)
				}
				time.Sleep(time.Microsecond)
			}
			time.Sleep(time.Second)
			synctest.Wait()
			v.guardsIntact(t)
		})
	})
}

// bring moves a fresh QP to state, connected to the attacker.
func bring(t *testing.T, qp *endpoint.QP, state endpoint.QPState, peer netip.AddrPort, p0 layers.PSN) {
	t.Helper()
	if state == endpoint.StateReset {
		return
	}
	attrs := endpoint.QPAttr{Access: all, QKey: endpoint.PingpongQKey, PathMTU: layers.MTU256, DestQPN: attackerQPN,
		RQPSN: p0, SQPSN: 0x1000, Timeout: 10, RetryCnt: 3, RNRRetry: 3, MinRNRTimer: 1, MaxRdAtomic: 4, MaxDestRdAtomic: 4,
		Remote: peer.Addr()}
	typ := qp.Type()
	steps := []struct {
		s    endpoint.QPState
		mask endpoint.AttrMask
	}{
		{endpoint.StateInit, map[endpoint.QPType]endpoint.AttrMask{endpoint.RC: endpoint.AttrAccess, endpoint.UC: endpoint.AttrAccess, endpoint.UD: endpoint.AttrQKey}[typ]},
		{endpoint.StateRTR, map[endpoint.QPType]endpoint.AttrMask{
			endpoint.RC: endpoint.AttrAV | endpoint.AttrPathMTU | endpoint.AttrDestQPN | endpoint.AttrRQPSN | endpoint.AttrMaxDestRdAtomic | endpoint.AttrMinRNRTimer,
			endpoint.UC: endpoint.AttrAV | endpoint.AttrPathMTU | endpoint.AttrDestQPN | endpoint.AttrRQPSN}[typ]},
		{endpoint.StateRTS, map[endpoint.QPType]endpoint.AttrMask{
			endpoint.RC: endpoint.AttrSQPSN | endpoint.AttrTimeout | endpoint.AttrRetryCnt | endpoint.AttrRNRRetry | endpoint.AttrMaxRdAtomic,
			endpoint.UC: endpoint.AttrSQPSN, endpoint.UD: endpoint.AttrSQPSN}[typ]},
		{endpoint.StateSQD, 0},
	}
	for _, s := range steps {
		if state == endpoint.StateErr && s.s == endpoint.StateRTR {
			break
		}
		attrs.State = s.s
		require.NoError(t, qp.Modify(attrs, endpoint.AttrState|s.mask))
		if s.s == state {
			return
		}
	}
	attrs.State = endpoint.StateErr
	require.NoError(t, qp.Modify(attrs, endpoint.AttrState))
}
