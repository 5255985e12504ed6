package endpoint_test

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/gopacket"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// TestDuplicateSendAfterLostResponse replays, between two endpoints, what
// broke the interop scenario peer_rping_loss_gs (capture frames 98-110): the
// requester (rxe, the rping server) sends a SEND and then a READ (or an
// atomic); the responder's ACK of the SEND and its response to the READ are
// both lost; the requester times out and sends both again. The responder
// must answer the duplicate SEND with an ACK naming the SEND, never the
// READ's PSN: rxe's completer takes a plain ACK whose PSN is an outstanding
// READ's last PSN as that READ's completion (rxe_comp.c: check_ack's
// ACKNOWLEDGE case, then COMPST_WRITE_SEND completes the WR), so the READ
// finished without data and rping printed the previous ping's bytes again.
// Our requester drops such an ACK, so the data check passes either way; the
// ACK's PSN is what fails.
func TestDuplicateSendAfterLostResponse(t *testing.T) {
	fresh := []byte("rdma-ping-8: IJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz\x00")
	stale := []byte("rdma-ping-7: HIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxy\x00")
	for _, tc := range []struct {
		name     string
		second   endpoint.WROpcode
		response layers.Opcode // what the responder answers the second WR with
	}{
		{name: "READ", second: endpoint.WRRead, response: 0x10},
		{name: "FETCH_ADD", second: endpoint.WRFetchAdd, response: 0x12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					mu       sync.Mutex
					responds []sent // what the responder sent, decoded
					dropped  = map[layers.Opcode]bool{}
				)
				respAddr := netip.MustParseAddrPort("127.0.0.1:4791")
				// lose the first ACK and the first response to the
				// second WR, as the host's nftables rule did.
				drop := func(from, _ netip.AddrPort, payload []byte) bool {
					if from.Addr() != respAddr.Addr() {
						return false
					}
					var s sent
					if s.bth.DecodeFromBytes(append([]byte(nil), payload...), gopacket.NilDecodeFeedback) != nil {
						return false
					}
					mu.Lock()
					defer mu.Unlock()
					responds = append(responds, s)
					op := s.bth.Opcode
					if (op == 0x11 || op == tc.response) && !dropped[op] {
						dropped[op] = true
						return true
					}
					return false
				}
				wr, wq := wiretest.NewPair(wiretest.Config{A: respAddr, Drop: drop})
				resp, req := newPeer(t, wr, peerOpts{typ: endpoint.RC}), newPeer(t, wq, peerOpts{typ: endpoint.RC})
				defer resp.close(t)
				defer req.close(t)
				connect(t, resp, req, layers.MTU1024, func(c *endpoint.ConnectAttr) { c.Timeout, c.RetryCnt = 14, 7 })

				copy(resp.mem[0:], fresh)
				binary.LittleEndian.PutUint64(resp.mem[128:], 41)
				copy(req.mem[256:], stale)
				require.NoError(t, resp.qp.PostRecv(endpoint.RecvWR{ID: 10, SGL: []endpoint.SGE{resp.mr.SGE(1024, 16)}}))
				require.NoError(t, req.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRSend, SGL: []endpoint.SGE{req.mr.SGE(0, 16)}}))
				second := &endpoint.SendWR{ID: 2, Op: tc.second, RemoteAddr: resp.mr.Addr(), RKey: resp.mr.RKey(),
					SGL: []endpoint.SGE{req.mr.SGE(256, len(fresh))}}
				if tc.second == endpoint.WRFetchAdd {
					second.RemoteAddr, second.CompareAdd, second.SGL = resp.mr.Addr()+128, 1, []endpoint.SGE{req.mr.SGE(256, 8)}
				}
				require.NoError(t, req.qp.PostSend(second))
				wcs := waitWCs(t, req.scq, 2)
				requireSuccess(t, wcs)
				require.Equal(t, []uint64{1, 2}, []uint64{wcs[0].ID, wcs[1].ID})
				require.Len(t, waitWCs(t, resp.rcq, 1), 1, "the SEND was received once")

				sendPSN, secondPSN := req.psn, req.psn.Add(1)
				mu.Lock()
				defer mu.Unlock()
				var acks []layers.PSN
				for _, s := range responds {
					if s.bth.Opcode == 0x11 {
						acks = append(acks, s.bth.PSN)
					}
				}
				require.Equal(t, []layers.PSN{sendPSN, sendPSN}, acks,
					"the lost ACK of the SEND, then the re-ACK of its duplicate: both name the SEND, not the %s at %v", tc.name, secondPSN)
				require.Equal(t, []bool{true, true}, []bool{dropped[0x11], dropped[tc.response]}, "both losses happened")
				if tc.second == endpoint.WRRead {
					require.Equal(t, fresh, req.mem[256:256+len(fresh)], "the READ brought the responder's bytes")
				} else {
					require.Equal(t, uint64(41), binary.LittleEndian.Uint64(req.mem[256:]), "the replayed original value")
					require.Equal(t, uint64(42), binary.LittleEndian.Uint64(resp.mem[128:]), "added once")
				}
			})
		})
	}
}
