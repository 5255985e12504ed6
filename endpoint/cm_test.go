package endpoint_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// cmPeer is a peer with a connection manager and an RC QP left in RESET.
type cmPeer struct {
	*peer
	cm *endpoint.CM
}

func newCMPeer(t testing.TB, w endpoint.Wire, cfg endpoint.CMConfig) *cmPeer {
	t.Helper()
	p := newPeer(t, w, peerOpts{typ: endpoint.RC})
	cm, err := endpoint.NewCM(p.dev, cfg)
	require.NoError(t, err)
	return &cmPeer{peer: p, cm: cm}
}

func (p *cmPeer) close(t testing.TB) {
	t.Helper()
	require.NoError(t, p.cm.Close())
	p.peer.close(t)
}

var rpingService = layers.IPCMServiceID(layers.PortSpaceTCP, 7174)

// cmSendCheck moves one SEND each way over the connected QPs.
func cmSendCheck(t *testing.T, a, b *cmPeer) {
	t.Helper()
	require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: 1, SGL: []endpoint.SGE{b.mr.SGE(1000, 100)}}))
	require.NoError(t, a.qp.PostRecv(endpoint.RecvWR{ID: 1, SGL: []endpoint.SGE{a.mr.SGE(1000, 100)}}))
	copy(a.mem, "from the active side")
	copy(b.mem, "from the passive side")
	require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 20)}}))
	require.NoError(t, b.qp.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRSend, SGL: []endpoint.SGE{b.mr.SGE(0, 21)}}))
	requireSuccess(t, waitWCs(t, a.scq, 1))
	requireSuccess(t, waitWCs(t, b.scq, 1))
	requireSuccess(t, waitWCs(t, a.rcq, 1))
	requireSuccess(t, waitWCs(t, b.rcq, 1))
	require.Equal(t, "from the active side", string(b.mem[1000:1020]))
	require.Equal(t, "from the passive side", string(a.mem[1000:1021]))
}

func TestCMConnectDisconnect(t *testing.T) {
	tests := []struct {
		name   string
		faults wiretest.Faults
		// activeCloses: the active side sends the DREQ, else the passive.
		activeCloses bool
	}{
		{name: "clean, active disconnects", activeCloses: true},
		{name: "clean, passive disconnects"},
		{name: "30% loss", faults: wiretest.Faults{Loss: 0.3}, activeCloses: true},
		{name: "duplicates and reordering", faults: wiretest.Faults{Duplicate: 0.5, Reorder: 0.5}, activeCloses: true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				wa, wb := wiretest.NewPair(wiretest.Config{AtoB: tc.faults, BtoA: tc.faults, Seed: uint64(i)})
				cfg := endpoint.CMConfig{ResponseTimeout: 14, MaxRetries: 30}
				a, b := newCMPeer(t, wa, cfg), newCMPeer(t, wb, cfg)
				defer a.close(t)
				defer b.close(t)
				l, err := b.cm.Listen(rpingService)
				require.NoError(t, err)
				ctx := context.Background()

				var wg sync.WaitGroup
				var passive *endpoint.CMConn
				var acceptErr error
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := l.Accept(ctx)
					if err != nil {
						acceptErr = err
						return
					}
					require.NoError(t, endpoint.InitQP(b.qp))
					p := endpoint.DefaultCMParam()
					p.PrivateData = []byte("rep data")
					acceptErr, passive = c.Accept(ctx, b.qp, p), c
				}()
				p := endpoint.DefaultCMParam()
				p.PrivateData = []byte("req data")
				active, err := a.cm.Connect(ctx, a.qp, b.dev.Addr().Addr(), rpingService, 40000, p)
				require.NoError(t, err)
				wg.Wait()
				require.NoError(t, acceptErr)

				req := passive.Request()
				assert.Equal(t, a.dev.Addr().Addr(), req.Remote)
				assert.Equal(t, a.qp.QPN(), req.RemoteQPN)
				assert.Equal(t, uint16(40000), req.SrcPort)
				assert.Equal(t, a.dev.Addr().Addr(), req.SrcIP)
				assert.Equal(t, b.dev.Addr().Addr(), req.DstIP)
				assert.Equal(t, []byte("req data"), req.PrivateData[:8])
				assert.Equal(t, []byte("rep data"), active.PeerPrivateData()[:8])

				// Each side sends from the PSN the other side's message named.
				qa, err := a.qp.Query()
				require.NoError(t, err)
				qb, err := b.qp.Query()
				require.NoError(t, err)
				assert.Equal(t, endpoint.StateRTS, qa.State)
				assert.Equal(t, endpoint.StateRTS, qb.State)
				assert.Equal(t, qa.SQPSN, qb.RQPSN)
				assert.Equal(t, qb.SQPSN, qa.RQPSN)
				assert.Equal(t, req.StartingPSN, qb.SQPSN)
				assert.Equal(t, b.qp.QPN(), qa.DestQPN)
				assert.Equal(t, a.qp.QPN(), qb.DestQPN)

				cmSendCheck(t, a, b)

				closer, other := active, passive
				if !tc.activeCloses {
					closer, other = passive, active
				}
				require.NoError(t, closer.Disconnect(ctx))
				<-other.Disconnected()
				require.NoError(t, other.Disconnect(ctx))
				assert.Equal(t, endpoint.StateErr, a.qp.State())
				assert.Equal(t, endpoint.StateErr, b.qp.State())
				require.NoError(t, l.Close())
				// Let the timewait run out.
				time.Sleep(10 * time.Second)
			})
		})
	}
}

func TestCMReject(t *testing.T) {
	tests := []struct {
		name   string
		listen bool
		reason layers.CMRejectReason
	}{
		{name: "no listener", reason: layers.RejInvalidServiceID},
		{name: "consumer reject", listen: true, reason: layers.RejConsumerDefined},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				wa, wb := wiretest.NewPair(wiretest.Config{})
				a, b := newCMPeer(t, wa, endpoint.CMConfig{}), newCMPeer(t, wb, endpoint.CMConfig{})
				defer a.close(t)
				defer b.close(t)
				ctx := context.Background()
				if tc.listen {
					l, err := b.cm.Listen(rpingService)
					require.NoError(t, err)
					defer l.Close()
					go func() {
						c, err := l.Accept(ctx)
						if err == nil {
							_ = c.Reject([]byte("no"))
						}
					}()
				}
				_, err := a.cm.Connect(ctx, a.qp, b.dev.Addr().Addr(), rpingService, 0, endpoint.DefaultCMParam())
				var rej *endpoint.CMRejectError
				require.ErrorAs(t, err, &rej)
				assert.Equal(t, tc.reason, rej.Reason)
				synctest.Wait()
			})
		})
	}
}

func TestCMTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wa, wb := wiretest.NewPair(wiretest.Config{})
		a := newCMPeer(t, wa, endpoint.CMConfig{ResponseTimeout: 16, MaxRetries: 3})
		defer a.close(t)
		b := newPeer(t, wb, peerOpts{typ: endpoint.RC}) // no CM: QP1 does not exist
		defer b.close(t)
		start := time.Now()
		_, err := a.cm.Connect(context.Background(), a.qp, b.dev.Addr().Addr(), rpingService, 0, endpoint.DefaultCMParam())
		require.ErrorIs(t, err, endpoint.ErrCMTimeout)
		// Four REQs, 268 ms apart.
		assert.InDelta(t, 4*268*time.Millisecond, time.Since(start), float64(20*time.Millisecond))
	})
}

// rpingCM holds the CM MADs of pcaps/rxe/rping.pcap (client 192.168.77.11,
// server 192.168.77.12) by message.
func rpingCM(t *testing.T) map[layers.CMAttribute][]byte {
	t.Helper()
	r, err := capture.Open(filepath.Join("..", "pcaps", "rxe", "rping.pcap"))
	require.NoError(t, err)
	defer r.Close()
	out := map[layers.CMAttribute][]byte{}
	var p capture.Packet
	for {
		err := r.NextInto(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		// Ethernet 14, IPv4 20, UDP 8, BTH 12, DETH 8: the MAD at 62.
		if len(p.Data) < 62+layers.MADLength || p.Data[42] != 0x64 {
			continue
		}
		mad := append([]byte(nil), p.Data[62:62+layers.MADLength]...)
		out[layers.CMAttribute(binary.BigEndian.Uint16(mad[16:18]))] = mad
	}
	require.Len(t, out, 5)
	return out
}

func decodeMAD(t *testing.T, b []byte) *layers.MAD {
	t.Helper()
	var m layers.MAD
	require.NoError(t, m.DecodeFromBytes(b, gopacket.NilDecodeFeedback))
	return &m
}

// observed collects the MADs one side sends.
type observed struct {
	mu   sync.Mutex
	mads [][]byte
}

func (o *observed) observe(from, _ netip.AddrPort, payload []byte) {
	if len(payload) < 20+layers.MADLength || payload[0] != 0x64 {
		return
	}
	o.mu.Lock()
	o.mads = append(o.mads, append([]byte(nil), payload[20:20+layers.MADLength]...))
	o.mu.Unlock()
}

func (o *observed) last(t *testing.T, attr layers.CMAttribute) *layers.MAD {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.mads) - 1; i >= 0; i-- {
		if layers.CMAttribute(binary.BigEndian.Uint16(o.mads[i][16:18])) == attr {
			return decodeMAD(t, o.mads[i])
		}
	}
	require.Failf(t, "not sent", "no %v", attr)
	return nil
}

// TestCMAgainstRxeCapture answers the REQ of a real rxe rping client as
// the passive side and checks the REP, and the DREP to its DREQ, against
// the server kernel's; then plays the active side and compares its REQ
// and RTU with the client kernel's.
func TestCMAgainstRxeCapture(t *testing.T) {
	cap := rpingCM(t)
	client := netip.MustParseAddr("192.168.77.11")
	server := netip.MustParseAddr("192.168.77.12")
	wantREQ := decodeMAD(t, cap[layers.CMAttrREQ])
	wantREP := decodeMAD(t, cap[layers.CMAttrREP])
	wantRTU := decodeMAD(t, cap[layers.CMAttrRTU])
	wantDREQ := decodeMAD(t, cap[layers.CMAttrDREQ])
	wantDREP := decodeMAD(t, cap[layers.CMAttrDREP])

	t.Run("passive", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var sent observed
			wa, wb := wiretest.NewPair(wiretest.Config{A: netip.AddrPortFrom(client, 4791), B: netip.AddrPortFrom(server, 4791),
				Observe: func(from, to netip.AddrPort, p []byte) {
					if from.Addr() == server {
						sent.observe(from, to, p)
					}
				}})
			defer wa.Close()
			b := newCMPeer(t, wb, endpoint.CMConfig{})
			defer b.close(t)
			l, err := b.cm.Listen(wantREQ.CM.REQ.ServiceID)
			require.NoError(t, err)
			require.NoError(t, b.cm.HandleMAD(client, cap[layers.CMAttrREQ]))
			ctx, cancel := context.WithCancel(context.Background())
			c, err := l.Accept(ctx)
			require.NoError(t, err)
			req := c.Request()
			assert.Equal(t, uint16(48809), req.SrcPort)
			assert.Equal(t, client, req.SrcIP)
			assert.Equal(t, server, req.DstIP)
			done := make(chan error, 1)
			go func() { done <- c.Accept(ctx, b.qp, endpoint.DefaultCMParam()) }()
			synctest.Wait()

			rep := sent.last(t, layers.CMAttrREP)
			assert.Equal(t, wantREQ.TransactionID, rep.TransactionID, "REP echoes the REQ's TID")
			assert.Equal(t, wantREP.TransactionID, rep.TransactionID)
			got, want := rep.CM.REP, wantREP.CM.REP
			assert.Equal(t, wantREQ.CM.REQ.LocalCommID, got.RemoteCommID)
			assert.Equal(t, want.RemoteCommID, got.RemoteCommID)
			assert.Equal(t, b.qp.QPN(), got.LocalQPN)
			for _, f := range []struct {
				name      string
				got, want any
			}{
				{"LocalQKey", got.LocalQKey, want.LocalQKey},
				{"ResponderResources", got.ResponderResources, want.ResponderResources},
				{"InitiatorDepth", got.InitiatorDepth, want.InitiatorDepth},
				{"TargetACKDelay", got.TargetACKDelay, want.TargetACKDelay},
				{"FailoverAccepted", got.FailoverAccepted, want.FailoverAccepted},
				{"EndToEndFlowControl", got.EndToEndFlowControl, want.EndToEndFlowControl},
				{"RNRRetryCount", got.RNRRetryCount, want.RNRRetryCount},
				{"SRQ", got.SRQ, want.SRQ},
				{"Reserved", [4]uint8{got.Reserved15, got.Reserved19, got.Reserved23, got.Reserved27},
					[4]uint8{want.Reserved15, want.Reserved19, want.Reserved23, want.Reserved27}},
				{"Method", rep.Method, wantREP.Method},
				{"ClassVersion", rep.ClassVersion, wantREP.ClassVersion},
				{"AttributeModifier", rep.AttributeModifier, wantREP.AttributeModifier},
			} {
				assert.Equal(t, f.want, f.got, f.name)
			}
			qa, err := b.qp.Query()
			require.NoError(t, err)
			assert.Equal(t, endpoint.StateRTS, qa.State)
			assert.Equal(t, wantREQ.CM.REQ.StartingPSN, qa.SQPSN, "the server sends from the REQ's PSN, as rxe did")
			assert.Equal(t, got.StartingPSN, qa.RQPSN)
			assert.Equal(t, wantREQ.CM.REQ.LocalQPN, qa.DestQPN)
			assert.Equal(t, client, qa.Remote)
			assert.Equal(t, layers.MTU1024, qa.PathMTU)

			// The client's RTU, addressed to our comm ID.
			rtu := append([]byte(nil), cap[layers.CMAttrRTU]...)
			binary.BigEndian.PutUint32(rtu[24+4:], got.LocalCommID)
			require.NoError(t, b.cm.HandleMAD(client, rtu))
			require.NoError(t, <-done)

			// The client's DREQ; the DREP echoes its TID and swaps the IDs.
			dreq := append([]byte(nil), cap[layers.CMAttrDREQ]...)
			binary.BigEndian.PutUint32(dreq[24+4:], got.LocalCommID)
			require.NoError(t, b.cm.HandleMAD(client, dreq))
			<-c.Disconnected()
			synctest.Wait()
			drep := sent.last(t, layers.CMAttrDREP)
			assert.Equal(t, wantDREQ.TransactionID, drep.TransactionID)
			assert.Equal(t, wantDREP.TransactionID, drep.TransactionID)
			assert.Equal(t, got.LocalCommID, drep.CM.DREP.LocalCommID)
			assert.Equal(t, wantDREP.CM.DREP.RemoteCommID, drep.CM.DREP.RemoteCommID)
			assert.Equal(t, endpoint.StateErr, b.qp.State())
			cancel()
			require.NoError(t, l.Close())
			time.Sleep(5 * time.Second)
		})
	})

	t.Run("active", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var sent observed
			wa, wb := wiretest.NewPair(wiretest.Config{A: netip.AddrPortFrom(client, 4791), B: netip.AddrPortFrom(server, 4791),
				Observe: func(from, to netip.AddrPort, p []byte) {
					if from.Addr() == client {
						sent.observe(from, to, p)
					}
				}})
			defer wb.Close()
			a := newCMPeer(t, wa, endpoint.CMConfig{})
			defer a.close(t)
			ctx := context.Background()
			type result struct {
				c   *endpoint.CMConn
				err error
			}
			done := make(chan result, 1)
			go func() {
				c, err := a.cm.Connect(ctx, a.qp, server, layers.IPCMServiceID(layers.PortSpaceTCP, 7174), 48809, endpoint.DefaultCMParam())
				done <- result{c, err}
			}()
			synctest.Wait()
			req := sent.last(t, layers.CMAttrREQ)
			got, want := req.CM.REQ, wantREQ.CM.REQ
			assert.Equal(t, a.qp.QPN(), got.LocalQPN)
			for _, f := range []struct {
				name      string
				got, want any
			}{
				{"ServiceID", got.ServiceID, want.ServiceID},
				{"LocalQKey", got.LocalQKey, want.LocalQKey},
				{"ResponderResources", got.ResponderResources, want.ResponderResources},
				{"InitiatorDepth", got.InitiatorDepth, want.InitiatorDepth},
				{"RemoteCMResponseTimeout", got.RemoteCMResponseTimeout, want.RemoteCMResponseTimeout},
				{"TransportServiceType", got.TransportServiceType, want.TransportServiceType},
				{"LocalCMResponseTimeout", got.LocalCMResponseTimeout, want.LocalCMResponseTimeout},
				{"RetryCount", got.RetryCount, want.RetryCount},
				{"PKey", got.PKey, want.PKey},
				{"PathMTU", got.PathMTU, want.PathMTU},
				{"RNRRetryCount", got.RNRRetryCount, want.RNRRetryCount},
				{"MaxCMRetries", got.MaxCMRetries, want.MaxCMRetries},
				{"SRQ", got.SRQ, want.SRQ},
				{"Primary.LIDs", [2]uint16{got.Primary.LocalLID, got.Primary.RemoteLID}, [2]uint16{want.Primary.LocalLID, want.Primary.RemoteLID}},
				{"Primary.LocalGID", got.Primary.LocalGID, want.Primary.LocalGID},
				{"Primary.RemoteGID", got.Primary.RemoteGID, want.Primary.RemoteGID},
				{"Primary.HopLimit", got.Primary.HopLimit, want.Primary.HopLimit},
				{"Primary.LocalACKTimeout", got.Primary.LocalACKTimeout, want.Primary.LocalACKTimeout},
				{"Alternate", got.Alternate, want.Alternate},
				{"PrivateData (IP-CM header and the rest)", got.PrivateData, want.PrivateData},
				{"Method", req.Method, wantREQ.Method},
				{"ClassVersion", req.ClassVersion, wantREQ.ClassVersion},
			} {
				assert.Equal(t, f.want, f.got, f.name)
			}
			assert.Equal(t, uint64(got.LocalCommID), req.TransactionID&0xFFFFFFFF, "the TID's low half is the comm ID")

			// The server's REP, addressed to our comm ID.
			rep := append([]byte(nil), cap[layers.CMAttrREP]...)
			binary.BigEndian.PutUint64(rep[8:], req.TransactionID)
			binary.BigEndian.PutUint32(rep[24+4:], got.LocalCommID)
			require.NoError(t, a.cm.HandleMAD(server, rep))
			r := <-done
			require.NoError(t, r.err)
			synctest.Wait()
			rtu := sent.last(t, layers.CMAttrRTU)
			assert.Equal(t, req.TransactionID, rtu.TransactionID)
			assert.Equal(t, got.LocalCommID, rtu.CM.RTU.LocalCommID)
			assert.Equal(t, wantRTU.CM.RTU.RemoteCommID, rtu.CM.RTU.RemoteCommID)
			qa, err := a.qp.Query()
			require.NoError(t, err)
			assert.Equal(t, wantREP.CM.REP.StartingPSN, qa.SQPSN, "the client sends from the REP's PSN, as rxe did")
			assert.Equal(t, got.StartingPSN, qa.RQPSN)
			assert.Equal(t, wantREP.CM.REP.LocalQPN, qa.DestQPN)

			// Disconnect: the DREQ names the peer's QPN; answer with the
			// server's DREP.
			go func() { _ = r.c.Disconnect(ctx) }()
			synctest.Wait()
			dreq := sent.last(t, layers.CMAttrDREQ)
			assert.Equal(t, wantDREQ.CM.DREQ.RemoteQPN, dreq.CM.DREQ.RemoteQPN)
			assert.Equal(t, wantDREQ.CM.DREQ.RemoteCommID, dreq.CM.DREQ.RemoteCommID)
			drep := append([]byte(nil), cap[layers.CMAttrDREP]...)
			binary.BigEndian.PutUint32(drep[24+4:], got.LocalCommID)
			require.NoError(t, a.cm.HandleMAD(server, drep))
			<-r.c.Disconnected()
			time.Sleep(5 * time.Second)
		})
	})
}

// FuzzCMPassive feeds arbitrary MADs (the input cut into 256-byte pieces)
// into a passive side listening on rping's service and accepting every
// REQ: nothing may panic and every goroutine ends.
func FuzzCMPassive(f *testing.F) {
	r, err := capture.Open(filepath.Join("..", "pcaps", "rxe", "rping.pcap"))
	require.NoError(f, err)
	var p capture.Packet
	var all []byte
	for r.NextInto(&p) == nil {
		if len(p.Data) >= 62+layers.MADLength && p.Data[42] == 0x64 {
			mad := p.Data[62 : 62+layers.MADLength]
			f.Add(append([]byte(nil), mad...))
			all = append(all, mad...)
		}
	}
	r.Close()
	f.Add(all)
	f.Add([]byte{1, 7, 2, 3})
	client := netip.MustParseAddr("192.168.77.11")
	f.Fuzz(func(t *testing.T, in []byte) {
		synctest.Test(t, func(t *testing.T) {
			wa, wb := wiretest.NewPair(wiretest.Config{A: netip.AddrPortFrom(client, 4791),
				B: netip.AddrPortFrom(netip.MustParseAddr("192.168.77.12"), 4791)})
			defer wa.Close()
			b := newCMPeer(t, wb, endpoint.CMConfig{ResponseTimeout: 10, MaxRetries: 2})
			l, err := b.cm.Listen(rpingService)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					c, err := l.Accept(ctx)
					if err != nil {
						return
					}
					_ = c.Accept(ctx, b.qp, endpoint.DefaultCMParam())
				}
			}()
			// Every goroutine of the bubble settles before each MAD and
			// after it, so one input takes one path and its coverage does
			// not depend on whether Accept or the REQ came first, or on
			// which of the CM's ready channels a select took: coverage
			// that scheduling alone sets makes the fuzzer minimize inputs
			// that are not new.
			synctest.Wait()
			for len(in) > 0 {
				n := min(len(in), layers.MADLength)
				require.NoError(t, b.cm.HandleMAD(client, in[:n]))
				in = in[n:]
				synctest.Wait()
			}
			cancel()
			<-done
			b.close(t)
		})
	})
}

func TestCMSIDR(t *testing.T) {
	udp := layers.IPCMServiceID(layers.PortSpaceUDP, 7174)
	tests := []struct {
		name    string
		sid     layers.ServiceID
		faults  wiretest.Faults
		want    endpoint.SIDRService
		wantErr layers.CMSIDRStatus
	}{
		{name: "resolved", sid: udp, want: endpoint.SIDRService{QPN: 0x42, QKey: endpoint.RDMAUDPQKey}},
		{name: "resolved through 40% loss", sid: udp, faults: wiretest.Faults{Loss: 0.4}, want: endpoint.SIDRService{QPN: 0x42, QKey: endpoint.RDMAUDPQKey}},
		{name: "no such service", sid: layers.IPCMServiceID(layers.PortSpaceUDP, 9), wantErr: layers.SIDRServiceNotSupported},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				wa, wb := wiretest.NewPair(wiretest.Config{AtoB: tc.faults, BtoA: tc.faults, Seed: uint64(i)})
				cfg := endpoint.CMConfig{ResponseTimeout: 14, MaxRetries: 30}
				a, b := newCMPeer(t, wa, cfg), newCMPeer(t, wb, cfg)
				defer a.close(t)
				defer b.close(t)
				require.NoError(t, b.cm.ServeSIDR(udp, endpoint.SIDRService{QPN: 0x42, QKey: endpoint.RDMAUDPQKey}))
				got, err := a.cm.ResolveSIDR(context.Background(), b.dev.Addr().Addr(), tc.sid, []byte("hello"))
				if tc.wantErr != 0 {
					var se *endpoint.SIDRError
					require.ErrorAs(t, err, &se)
					assert.Equal(t, tc.wantErr, se.Status)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				synctest.Wait()
			})
		})
	}
}

// A REQ sent again (its REP or our answer lost) gets an MRA while the
// application has not accepted yet, and the REP again once it has.
func TestCMDuplicateREQ(t *testing.T) {
	cap := rpingCM(t)
	client := netip.MustParseAddr("192.168.77.11")
	server := netip.MustParseAddr("192.168.77.12")
	synctest.Test(t, func(t *testing.T) {
		var sent observed
		wa, wb := wiretest.NewPair(wiretest.Config{A: netip.AddrPortFrom(client, 4791), B: netip.AddrPortFrom(server, 4791),
			Observe: func(from, to netip.AddrPort, p []byte) {
				if from.Addr() == server {
					sent.observe(from, to, p)
				}
			}})
		defer wa.Close()
		b := newCMPeer(t, wb, endpoint.CMConfig{})
		defer b.close(t)
		l, err := b.cm.Listen(rpingService)
		require.NoError(t, err)
		defer l.Close()
		count := func(attr layers.CMAttribute) int {
			sent.mu.Lock()
			defer sent.mu.Unlock()
			n := 0
			for _, m := range sent.mads {
				if layers.CMAttribute(binary.BigEndian.Uint16(m[16:18])) == attr {
					n++
				}
			}
			return n
		}
		req := cap[layers.CMAttrREQ]
		require.NoError(t, b.cm.HandleMAD(client, req))
		require.NoError(t, b.cm.HandleMAD(client, req))
		synctest.Wait()
		assert.Equal(t, 1, count(layers.CMAttrMRA), "MRA for the repeated REQ")
		mra := sent.last(t, layers.CMAttrMRA)
		assert.Equal(t, binary.BigEndian.Uint32(req[24:]), mra.CM.MRA.RemoteCommID)
		assert.Equal(t, layers.CMMRAedMessage(0), mra.CM.MRA.MessageMRAed)

		c, err := l.Accept(context.Background())
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Accept(ctx, b.qp, endpoint.DefaultCMParam()) }()
		synctest.Wait()
		require.Equal(t, 1, count(layers.CMAttrREP))
		require.NoError(t, b.cm.HandleMAD(client, req))
		synctest.Wait()
		require.Equal(t, 2, count(layers.CMAttrREP), "the REP again for the repeated REQ")
		assert.Equal(t, 0, count(layers.CMAttrREJ))
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
	})
}

// An MRA for the REQ holds its retransmission back for the service
// timeout it names; the REP that follows completes the connection.
func TestCMMRAHoldsREQ(t *testing.T) {
	client := netip.MustParseAddr("192.168.77.11")
	server := netip.MustParseAddr("192.168.77.12")
	synctest.Test(t, func(t *testing.T) {
		var sent observed
		wa, wb := wiretest.NewPair(wiretest.Config{A: netip.AddrPortFrom(client, 4791), B: netip.AddrPortFrom(server, 4791),
			Observe: func(from, to netip.AddrPort, p []byte) {
				if from.Addr() == client {
					sent.observe(from, to, p)
				}
			}})
		defer wb.Close()
		a := newCMPeer(t, wa, endpoint.CMConfig{ResponseTimeout: 14}) // 67 ms
		defer a.close(t)
		reqs := func() int {
			sent.mu.Lock()
			defer sent.mu.Unlock()
			return len(sent.mads)
		}
		done := make(chan error, 1)
		go func() {
			_, err := a.cm.Connect(context.Background(), a.qp, server, rpingService, 0, endpoint.DefaultCMParam())
			done <- err
		}()
		synctest.Wait()
		req := sent.last(t, layers.CMAttrREQ)
		mra := layers.NewCMMAD(layers.CMAttrMRA, req.TransactionID)
		mra.CM.MRA = layers.CMMra{LocalCommID: 77, RemoteCommID: req.CM.REQ.LocalCommID, ServiceTimeout: 20} // 4.3 s
		b, err := mra.Bytes()
		require.NoError(t, err)
		require.NoError(t, a.cm.HandleMAD(server, b))
		// 4.295 s of service timeout and 67 ms of our own response time.
		time.Sleep(4300 * time.Millisecond)
		assert.Equal(t, 1, reqs(), "no REQ again while the peer asked for time")
		time.Sleep(100 * time.Millisecond)
		assert.Equal(t, 2, reqs(), "the REQ again after the service timeout")

		rep := layers.NewCMMAD(layers.CMAttrREP, req.TransactionID)
		rep.CM.REP = layers.CMRep{LocalCommID: 77, RemoteCommID: req.CM.REQ.LocalCommID, LocalQPN: 0x99, StartingPSN: 5,
			ResponderResources: 1, InitiatorDepth: 1, RNRRetryCount: 7}
		b, err = rep.Bytes()
		require.NoError(t, err)
		require.NoError(t, a.cm.HandleMAD(server, b))
		require.NoError(t, <-done)
		synctest.Wait()
		rtu := sent.last(t, layers.CMAttrRTU)
		assert.Equal(t, uint32(77), rtu.CM.RTU.RemoteCommID)
	})
}
