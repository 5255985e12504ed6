package pingpong

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

// ibv_srq_pingpong: NumQP RC QPs whose receives all come from one shared
// receive queue of RXDepth WRs, set up by an exchange of 256 messages each
// way (setup.SRQPingpongClient/Server). The client sends on every QP at
// once; each QP then sends again once its previous send completed and a
// message arrived for it, until Iters sends and Iters receives in all
// (the tool counts across QPs, whatever its usage says).

// srqSlotShift places a receive's slot in the buffer in its work request
// ID, in the bits above recvWRID|sendWRID. The tool posts every
// receive on one buffer, which its QPs then write at once; here each
// receive has its own slot, so that two QPs never write the same bytes.
const srqSlotShift = 2

func runSRQ(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	wire, err := cfg.UDPOffload.ListenUDP(netip.AddrPortFrom(cfg.Addr, layers.RoCEv2Port))
	if err != nil {
		return fmt.Errorf("RoCEv2 socket on %v: %w", cfg.Addr, err)
	}
	dev := device.Open(wire, stderr)
	defer dev.Close()

	pd := dev.AllocPD()
	// The send buffer first (the tool zeroes its buffer), then a slot per
	// receive.
	buf := make([]byte, cfg.Size*(1+cfg.RXDepth))
	mr, err := pd.RegMR(buf, endpoint.AccessLocalWrite)
	if err != nil {
		return fmt.Errorf("register the buffer: %w", err)
	}
	cq := dev.CreateCQ(cfg.RXDepth + cfg.NumQP)
	srq := pd.CreateSRQ(cfg.RXDepth)
	qps := make([]*endpoint.QP, cfg.NumQP)
	index := make(map[uint32]int, cfg.NumQP)
	for i := range qps {
		qp, err := pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq, SRQ: srq, MaxSendWR: 1})
		if err != nil {
			fmt.Fprintf(stderr, "Couldn't create QP[%d]\n", i)
			return ErrReported
		}
		defer qp.Destroy()
		if err := qp.Modify(endpoint.QPAttr{State: endpoint.StateInit}, endpoint.AttrState|endpoint.AttrAccess); err != nil {
			fmt.Fprintf(stderr, "Failed to modify QP[%d] to INIT\n", i)
			return ErrReported
		}
		qps[i], index[qp.QPN()] = qp, i
	}

	free := make([]int, 0, cfg.RXDepth)
	for slot := range cfg.RXDepth {
		free = append(free, slot)
	}
	postRecv := func(n int) int {
		for i := range n {
			if len(free) == 0 {
				return i
			}
			slot := free[len(free)-1]
			wr := endpoint.RecvWR{ID: uint64(slot)<<srqSlotShift | recvWRID, SGL: []endpoint.SGE{mr.SGE((1+slot)*cfg.Size, cfg.Size)}}
			if srq.PostRecv(wr) != nil {
				return i
			}
			free = free[:len(free)-1]
		}
		return n
	}
	routs := postRecv(cfg.RXDepth)
	if routs < cfg.RXDepth {
		fmt.Fprintf(stderr, "Couldn't post receive (%d)\n", routs)
		return ErrReported
	}

	locals := make([]setup.PingpongDest, cfg.NumQP)
	for i, qp := range qps {
		locals[i] = setup.PingpongDest{QPN: qp.QPN(), PSN: endpoint.RandomPSN(), GID: dev.GID()}
		fmt.Fprintf(stdout, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %v\n",
			locals[i].LID, locals[i].QPN, uint32(locals[i].PSN), netip.AddrFrom16(locals[i].GID))
	}
	connect := func(remotes []setup.PingpongDest, tcpPeer net.Addr) error {
		for i, qp := range qps {
			r := remotes[i]
			if r.QPN == 0 {
				// The peer has fewer QPs (its -q is smaller): the tool
				// connects this one to QPN 0, which no message ever
				// comes from; this one stays in INIT, where a send on it
				// fails at once instead of after the retries.
				if i == len(qps)-1 || remotes[i+1].QPN == 0 {
					fmt.Fprintf(stderr, "ibpeer pingpong: the peer has %d QPs, this side %d: QP[%d] to QP[%d] stay unconnected\n",
						i, len(qps), i, len(qps)-1)
					return nil
				}
				continue
			}
			addr := netip.AddrFrom16(r.GID).Unmap()
			if r.GID == [16]byte{} {
				if ap, err := netip.ParseAddrPort(tcpPeer.String()); err == nil {
					addr = ap.Addr().Unmap()
				}
				if i == 0 {
					fmt.Fprintf(stderr, "ibpeer pingpong: the peer sent GID :: (run the tool with -g <RoCEv2 GID index>); using %v\n", addr)
				}
			}
			a := endpoint.ConnectAttr{Remote: addr, RemoteQPN: r.QPN, RemotePSN: r.PSN, LocalPSN: locals[i].PSN, MTU: cfg.MTU,
				NoAccess: true, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MinRNRTimer: 12, MaxRdAtomic: 1, MaxDestRdAtomic: 1, HopLimit: 1}
			if err := qp.Connect(a); err != nil {
				fmt.Fprintf(stderr, "Failed to modify QP[%d] to RTR\n", i)
				return fmt.Errorf("connect QP[%d]: %w", i, err)
			}
		}
		return nil
	}

	var remotes []setup.PingpongDest
	if cfg.Host != "" {
		conn, done, err := dial(ctx, cfg, stderr)
		if err != nil {
			return err
		}
		remotes, err = setup.SRQPingpongClient(conn, locals)
		peer := conn.RemoteAddr()
		done()
		if err != nil {
			return fmt.Errorf("set-up exchange with %v: %w", peer, err)
		}
		if err := connect(remotes, peer); err != nil {
			return err
		}
	} else {
		conn, done, err := accept(ctx, cfg, stderr)
		if err != nil {
			return err
		}
		peer := conn.RemoteAddr()
		remotes, err = setup.SRQPingpongServer(conn, locals, func(r []setup.PingpongDest) error { return connect(r, peer) })
		done()
		if err != nil {
			return fmt.Errorf("set-up exchange with %v: %w", peer, err)
		}
	}
	for _, r := range remotes[:cfg.NumQP] {
		fmt.Fprintf(stdout, "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %v\n",
			r.LID, r.QPN, uint32(r.PSN), netip.AddrFrom16(r.GID))
	}

	send := func(i int) error {
		return qps[i].PostSend(&endpoint.SendWR{ID: sendWRID, Op: endpoint.WRSend, SGL: []endpoint.SGE{mr.SGE(0, cfg.Size)}})
	}
	pending := make([]int, cfg.NumQP)
	for i := range qps {
		pending[i] = recvWRID
		if cfg.Host != "" {
			if err := send(i); err != nil {
				fmt.Fprintln(stderr, "Couldn't post send")
				return ErrReported
			}
			pending[i] |= sendWRID
		}
	}
	start := time.Now()
	rcnt, scnt := 0, 0
	wcs := make([]endpoint.WC, cfg.NumQP+cfg.RXDepth)
	for rcnt < cfg.Iters || scnt < cfg.Iters {
		n, err := poll(ctx, cq, wcs, cfg.Events)
		if err != nil {
			return fmt.Errorf("after %d sends and %d receives: %w", scnt, rcnt, err)
		}
		for _, wc := range wcs[:n] {
			kind := int(wc.ID & (recvWRID | sendWRID))
			if wc.Status != endpoint.StatusSuccess {
				fmt.Fprintf(stderr, "Failed status %s (%d) for wr_id %d\n", statusStr(wc.Status), wc.Status, kind)
				return ErrReported
			}
			i, ok := index[wc.QPN]
			if !ok {
				fmt.Fprintf(stderr, "Couldn't find QPN %06x\n", wc.QPN)
				return ErrReported
			}
			switch kind {
			case sendWRID:
				scnt++
			case recvWRID:
				free = append(free, int(wc.ID>>srqSlotShift))
				routs--
				if routs <= cfg.NumQP {
					routs += postRecv(cfg.RXDepth - routs)
					if routs < cfg.RXDepth {
						fmt.Fprintf(stderr, "Couldn't post receive (%d)\n", routs)
						return ErrReported
					}
				}
				rcnt++
			default:
				fmt.Fprintf(stderr, "Completion for unknown wr_id %d\n", wc.ID)
				return ErrReported
			}
			pending[i] &^= kind
			if scnt < cfg.Iters && pending[i] == 0 {
				if err := send(i); err != nil {
					fmt.Fprintln(stderr, "Couldn't post send")
					return ErrReported
				}
				pending[i] = recvWRID | sendWRID
			}
		}
	}
	elapsed := time.Since(start)
	// A round trip through each QP's goroutine: the ACKs for the peer's
	// last messages have been handed to the wire before the device closes.
	for _, qp := range qps {
		_, _ = qp.Query()
	}
	usec := float32(elapsed.Microseconds())
	bytes := int64(cfg.Size) * int64(cfg.Iters) * 2
	fmt.Fprintf(stdout, "%d bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, float64(usec)/1e6, float64(bytes)*8/float64(usec))
	fmt.Fprintf(stdout, "%d iters in %.2f seconds = %.2f usec/iter\n", cfg.Iters, float64(usec)/1e6, float64(usec/float32(cfg.Iters)))
	return nil
}
