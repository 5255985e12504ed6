package endpoint_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// TestRequesterErrorStatuses: the completer's answer to each error
// response (ENDPOINT.md §1.8): the WR it was for completes with the
// status, the QP moves to ERR and the WRs behind it, sent or not, and the
// posted receive WR are flushed. The responses are crafted by an attacker
// playing the responder.
func TestRequesterErrorStatuses(t *testing.T) {
	const sq = layers.PSN(0x1000) // newVictim's LocalPSN
	// The responses, at the first WR's PSN, named from the opcode table.
	rcOp := func(o layers.Operation, pos layers.Position) layers.Opcode {
		op, ok := layers.OpcodeFor(layers.ServiceRC, o, pos, false, false)
		require.True(t, ok, "%v %v", o, pos)
		return op
	}
	ack := func(syn layers.AETHSyndrome) hostile {
		return hostile{op: rcOp(layers.OpAcknowledge, layers.PosNone), psn: sq, aeth: layers.AETH{Syndrome: syn}}
	}
	nak := func(c layers.NAKCode) hostile { return ack(layers.MakeNakSyndrome(c)) }
	readResp := func(syn layers.AETHSyndrome) hostile {
		return hostile{op: rcOp(layers.OpRDMAReadResponse, layers.PosOnly), psn: sq, aeth: layers.AETH{Syndrome: syn}, payload: []byte("12345678")}
	}
	atomicAck := func(syn layers.AETHSyndrome) hostile {
		return hostile{op: rcOp(layers.OpAtomicAcknowledge, layers.PosNone), psn: sq, aeth: layers.AETH{Syndrome: syn}, ack: layers.AtomicAckETH{OrigRemoteData: 1}}
	}
	var ok layers.AETHSyndrome                                // ACK, credits 0, as an AETH of zeros reads
	reserved := layers.AETHSyndrome(layers.AETHReserved << 5) // type 010
	nakAccess := layers.MakeNakSyndrome(layers.NAKRemoteAccessError)
	for _, tc := range []struct {
		name  string
		first endpoint.WROpcode
		resp  hostile
		want  endpoint.Status
	}{
		{"NAK invalid request", endpoint.WRSend, nak(layers.NAKInvalidRequest), endpoint.StatusRemInvReqErr},
		{"NAK invalid RD request", endpoint.WRRead, nak(layers.NAKInvalidRDRequest), endpoint.StatusRemInvReqErr},
		{"NAK remote access error", endpoint.WRWrite, nak(layers.NAKRemoteAccessError), endpoint.StatusRemAccessErr},
		{"NAK remote operational error", endpoint.WRSend, nak(layers.NAKRemoteOperationalError), endpoint.StatusRemOpErr},
		{"AETH of the reserved type 010", endpoint.WRSend, ack(reserved), endpoint.StatusBadRespErr},
		{"READ response to a SEND", endpoint.WRSend, readResp(ok), endpoint.StatusBadRespErr},
		{"atomic ACK to a WRITE", endpoint.WRWrite, atomicAck(ok), endpoint.StatusBadRespErr},
		{"atomic ACK to a READ", endpoint.WRRead, atomicAck(ok), endpoint.StatusBadRespErr},
		{"READ response to a FETCH_ADD", endpoint.WRFetchAdd, readResp(ok), endpoint.StatusBadRespErr},
		// rxe's check_ack: READ FIRST/LAST/ONLY and atomic ACKs must carry an ACK.
		{"READ response with a NAK AETH", endpoint.WRRead, readResp(nakAccess), endpoint.StatusBadRespErr},
		{"atomic ACK with a NAK AETH", endpoint.WRFetchAdd, atomicAck(nakAccess), endpoint.StatusBadRespErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v := newVictim(t, endpoint.RC, all)
				defer v.close(t)
				require.NoError(t, v.qp.PostRecv(endpoint.RecvWR{ID: 9, SGL: []endpoint.SGE{v.mr.SGE(2048, 64)}}))
				first := endpoint.SendWR{ID: 1, Op: tc.first, SGL: []endpoint.SGE{v.mr.SGE(0, 8)}, RemoteAddr: 0x1000, RKey: 7}
				require.NoError(t, v.qp.PostSend(&first))
				for id := uint64(2); id <= 3; id++ {
					require.NoError(t, v.qp.PostSend(&endpoint.SendWR{ID: id, Op: endpoint.WRSend, SGL: []endpoint.SGE{v.mr.SGE(8, 8)}}))
				}
				sent := v.responses() // what the victim sent so far
				require.Len(t, sent, 3, "the three requests went out")
				v.send(tc.resp)
				wcs := waitWCs(t, v.scq, 3)
				got := make([][2]any, len(wcs))
				for i, wc := range wcs {
					got[i] = [2]any{wc.ID, wc.Status}
				}
				require.Equal(t, [][2]any{{uint64(1), tc.want}, {uint64(2), endpoint.StatusWRFlushErr}, {uint64(3), endpoint.StatusWRFlushErr}}, got)
				require.Equal(t, endpoint.StateErr, v.qp.State())
				rwc := waitWCs(t, v.rcq, 1)
				require.Equal(t, endpoint.WC{ID: 9, Status: endpoint.StatusWRFlushErr, Op: endpoint.WCRecv, QPN: v.qp.QPN()}, rwc[0])
				require.Equal(t, make([]byte, 8), v.mem[0:8], "nothing scattered into the first WR's buffer")
				v.guardsIntact(t)
			})
		})
	}
}

// TestResponderErrorStatuses runs two endpoints over wiretest into the
// responder's errors that complete a receive WR: a SEND longer than the
// receive buffer (LOC_LEN_ERR there, NAK invalid request → REM_INV_REQ_ERR
// at the sender) and a receive WR whose region was deregistered after it
// was posted (NAK remote operational error → REM_OP_ERR). Both QPs end in
// ERR with everything behind flushed, and the receiver's memory past the
// receive buffer is untouched.
func TestResponderErrorStatuses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    func(t *testing.T, b *peer) endpoint.SGE // the first receive WR's SGE
		sendLen  int
		bufLen   int // the first receive buffer's length, at b.mem[0:]
		wantSend endpoint.Status
		wantRecv endpoint.Status
	}{
		{name: "SEND longer than the receive buffer", sendLen: 32, bufLen: 16,
			setup:    func(t *testing.T, b *peer) endpoint.SGE { return b.mr.SGE(0, 16) },
			wantSend: endpoint.StatusRemInvReqErr, wantRecv: endpoint.StatusLocLenErr},
		{name: "SEND longer than the receive buffer, multi-packet", sendLen: 3000, bufLen: 2000,
			setup:    func(t *testing.T, b *peer) endpoint.SGE { return b.mr.SGE(0, 2000) },
			wantSend: endpoint.StatusRemInvReqErr, wantRecv: endpoint.StatusLocLenErr},
		{name: "receive buffer deregistered after posting", sendLen: 32,
			setup: func(t *testing.T, b *peer) endpoint.SGE {
				spare := make([]byte, 64)
				mr, err := b.pd.RegMR(spare, endpoint.AccessLocalWrite)
				require.NoError(t, err)
				sge := mr.SGE(0, 64)
				t.Cleanup(func() { require.Equal(t, make([]byte, 64), spare, "nothing written after Dereg") })
				require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: 7, SGL: []endpoint.SGE{sge}}))
				require.NoError(t, mr.Dereg())
				return endpoint.SGE{}
			},
			wantSend: endpoint.StatusRemOpErr, wantRecv: endpoint.StatusLocProtErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := pair(t, wiretest.Config{}, peerOpts{typ: endpoint.RC, memSize: 8192}, layers.MTU1024)
				defer a.close(t)
				defer b.close(t)
				for i := range a.mem {
					a.mem[i] = byte(i) | 1
				}
				if sge := tc.setup(t, b); sge.Length > 0 {
					require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: 7, SGL: []endpoint.SGE{sge}}))
				}
				require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: 8, SGL: []endpoint.SGE{b.mr.SGE(4096, 4096)}}))
				require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, tc.sendLen)}}))
				require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 8)}}))

				swc := waitWCs(t, a.scq, 2)
				require.Equal(t, []uint64{1, 2}, []uint64{swc[0].ID, swc[1].ID})
				require.Equal(t, []endpoint.Status{tc.wantSend, endpoint.StatusWRFlushErr}, []endpoint.Status{swc[0].Status, swc[1].Status})
				rwc := waitWCs(t, b.rcq, 2)
				require.Equal(t, []uint64{7, 8}, []uint64{rwc[0].ID, rwc[1].ID})
				require.Equal(t, []endpoint.Status{tc.wantRecv, endpoint.StatusWRFlushErr}, []endpoint.Status{rwc[0].Status, rwc[1].Status})
				require.Equal(t, endpoint.StateErr, a.qp.State())
				require.Equal(t, endpoint.StateErr, b.qp.State())
				require.Equal(t, make([]byte, len(b.mem)-tc.bufLen), b.mem[tc.bufLen:], "nothing past the receive buffer")
				a.guardsIntact(t)
				b.guardsIntact(t)
			})
		})
	}
}
