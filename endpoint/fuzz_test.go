package endpoint_test

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"sync"
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

// Record flags of the fuzz input.
const (
	fuzzKeepQPN  = 1 << 2 // keep the bytes' own dest QPN
	fuzzRawICRC  = 1 << 3 // leave the ICRC as given
	fuzzPatchKey = 1 << 4 // R_Key := the victim MR's, VA += its address
	fuzzOversize = 1 << 5 // zeros appended past MaxDatagram: the wire cannot read it whole
)

// fuzzMaxRecord caps one record: above the largest MTU-256 packet (a
// 28-byte WRITE FIRST header, 256 bytes, ICRC) with room for oversized
// ones, below the wire's MaxDatagram.
const fuzzMaxRecord = 2048

// fuzzMRKey in a seed's RETH or AtomicETH R_Key asks for fuzzPatchKey: MR
// keys are random, so a seed cannot name the victim's.
const fuzzMRKey = 0xFEEDF00D

// fuzzP0 is the PSN the victim QPs expect (near the wrap on purpose);
// fuzzSQ is the RC QP's own first PSN.
const (
	fuzzP0 = layers.PSN(0xFFFF00)
	fuzzSQ = layers.PSN(0x1000)
)

// fuzzRecord encodes one packet of a fuzz input: the target QP from its
// opcode's service, fuzzPatchKey when a key is fuzzMRKey.
func fuzzRecord(h hostile) []byte {
	b := h.bytes(1)
	flags := byte(fuzzRC)
	switch h.op.Service() {
	case layers.ServiceUC:
		flags = fuzzUC
	case layers.ServiceUD:
		flags = fuzzUD
	}
	if h.reth.RKey == fuzzMRKey || h.atomic.RKey == fuzzMRKey {
		flags |= fuzzPatchKey
	}
	return append([]byte{flags, byte(len(b) >> 8), byte(len(b))}, b...)
}

// fuzzStranger encodes a record of raw bytes with flags, for what no
// hostile describes: truncated and oversize datagrams.
func fuzzStranger(flags byte, b []byte) []byte {
	return append([]byte{flags | fuzzRawICRC, byte(len(b) >> 8), byte(len(b))}, b...)
}

// fuzzSeed is a fuzz input: the QP state, then the packets.
func fuzzSeed(state endpoint.QPState, pkts ...hostile) []byte {
	out := []byte{byte(state)}
	for _, h := range pkts {
		out = append(out, fuzzRecord(h)...)
	}
	return out
}

// fuzzCase is a named seed.
type fuzzCase struct {
	name string
	in   []byte
}

// fuzzSeeds are the corpus: single packets of each kind and the
// multi-packet messages that need MTU-sized FIRST and MIDDLE packets
// (WRITE and SEND at the victim, READ responses to the victim's own READ).
func fuzzSeeds() []fuzzCase {
	p0 := fuzzP0
	mtu := make([]byte, 256)
	for i := range mtu {
		mtu[i] = byte(i)
	}
	tail := mtu[:88]
	reth := layers.RETH{VA: 0, RKey: 0, DMALength: 8}
	key := func(va uint64, n uint32) layers.RETH { return layers.RETH{VA: va, RKey: fuzzMRKey, DMALength: n} }
	return []fuzzCase{
		{"WRITE bad key", fuzzSeed(endpoint.StateRTS, hostile{op: 0x0A, psn: p0, ackReq: true, reth: reth, payload: []byte("12345678")})},
		{"SEND FIRST LAST", fuzzSeed(endpoint.StateRTS, hostile{op: 0x00, psn: p0, payload: mtu}, hostile{op: 0x02, psn: p0.Add(1), ackReq: true, payload: []byte("x")})},
		{"READ bad key twice", fuzzSeed(endpoint.StateRTS, hostile{op: 0x0C, psn: p0, ackReq: true, reth: reth}, hostile{op: 0x0C, psn: p0, ackReq: true, reth: reth})},
		{"FETCH_ADD bad key", fuzzSeed(endpoint.StateRTS, hostile{op: 0x14, psn: p0, ackReq: true, atomic: layers.AtomicETH{SwapAddData: 1}})},
		{"UC SEND, WRITE bad key", fuzzSeed(endpoint.StateRTS, hostile{op: 0x24, psn: 3, payload: []byte("uc")}, hostile{op: 0x2A, psn: 4, reth: reth, payload: []byte("12345678")})},
		{"UD SEND", fuzzSeed(endpoint.StateRTS, hostile{op: 0x64, psn: 1, deth: layers.DETH{QKey: endpoint.PingpongQKey, SrcQP: 5}, payload: []byte("ud")})},
		{"RTR PSN ahead", fuzzSeed(endpoint.StateRTR, hostile{op: 0x04, psn: p0.Add(5), ackReq: true, payload: []byte("ahead")})},
		{"ERR", fuzzSeed(endpoint.StateErr, hostile{op: 0x04, psn: p0, payload: []byte("err")})},
		{"INIT", fuzzSeed(endpoint.StateInit, hostile{op: 0x04, psn: p0, payload: []byte("init")})},
		{"short", []byte{byte(endpoint.StateRTS), 0, 0, 3, 1, 2, 3}},
		// RC WRITE FIRST/MIDDLE/LAST into the region, then a
		// duplicate of its MIDDLE.
		{"RC WRITE multi", fuzzSeed(endpoint.StateRTS,
			hostile{op: 0x06, psn: p0, reth: key(0, 600), payload: mtu},
			hostile{op: 0x07, psn: p0.Add(1), payload: mtu},
			hostile{op: 0x08, psn: p0.Add(2), ackReq: true, payload: tail},
			hostile{op: 0x07, psn: p0.Add(1), payload: mtu})},
		// The same WRITE with a stranger's datagrams between its
		// packets: oversize ones (a WRITE MIDDLE and zeros grown past
		// MaxDatagram) and truncated ones. They share the victim's
		// receive batches and must not touch the WRITE's packets.
		{"RC WRITE multi with strangers", append(append(append(append(append(fuzzSeed(endpoint.StateRTS,
			hostile{op: 0x06, psn: p0, reth: key(0, 600), payload: mtu}),
			fuzzStranger(fuzzOversize, hostile{op: 0x07, psn: p0.Add(1), payload: mtu}.bytes(1))...),
			fuzzStranger(fuzzKeepQPN|fuzzRawICRC, []byte{0x07, 0, 0xFF})...),
			fuzzRecord(hostile{op: 0x07, psn: p0.Add(1), payload: mtu})...),
			fuzzStranger(fuzzOversize|fuzzKeepQPN, make([]byte, 16))...),
			fuzzRecord(hostile{op: 0x08, psn: p0.Add(2), ackReq: true, payload: tail})...)},
		// RC SEND FIRST/MIDDLE/LAST into the 1024-byte receive WR.
		{"RC SEND multi", fuzzSeed(endpoint.StateRTS,
			hostile{op: 0x00, psn: p0, payload: mtu},
			hostile{op: 0x01, psn: p0.Add(1), payload: mtu},
			hostile{op: 0x03, psn: p0.Add(2), ackReq: true, payload: tail})},
		// RC SEND longer than the receive WR: four MIDDLEs overflow it.
		{"RC SEND overflow", fuzzSeed(endpoint.StateRTS,
			hostile{op: 0x00, psn: p0, payload: mtu},
			hostile{op: 0x01, psn: p0.Add(1), payload: mtu},
			hostile{op: 0x01, psn: p0.Add(2), payload: mtu},
			hostile{op: 0x01, psn: p0.Add(3), payload: mtu},
			hostile{op: 0x01, psn: p0.Add(4), payload: mtu},
			hostile{op: 0x02, psn: p0.Add(5), ackReq: true, payload: tail})},
		// RC READ of 600 bytes (three responses), an atomic, and a
		// duplicate READ of the second half.
		{"RC READ", fuzzSeed(endpoint.StateRTS,
			hostile{op: 0x0C, psn: p0, ackReq: true, reth: key(0, 600)},
			hostile{op: 0x14, psn: p0.Add(3), ackReq: true, atomic: layers.AtomicETH{VA: 8, RKey: fuzzMRKey, SwapAddData: 1}},
			hostile{op: 0x0C, psn: p0.Add(1), ackReq: true, reth: key(256, 344)})},
		// Responses to the victim's own WRITE (PSNs 0x1000-0x1001), READ
		// (0x1002-0x1004, FIRST/MIDDLE/LAST) and FETCH_ADD (0x1005).
		{"own responses", fuzzSeed(endpoint.StateRTS,
			hostile{op: 0x11, psn: fuzzSQ.Add(1)},
			hostile{op: 0x0D, psn: fuzzSQ.Add(2), payload: mtu},
			hostile{op: 0x0E, psn: fuzzSQ.Add(3), payload: mtu},
			hostile{op: 0x0F, psn: fuzzSQ.Add(4), payload: tail},
			hostile{op: 0x12, psn: fuzzSQ.Add(5)})},
		// The same with the READ's MIDDLE lost: a retry follows.
		{"own READ MIDDLE lost", fuzzSeed(endpoint.StateRTS,
			hostile{op: 0x11, psn: fuzzSQ.Add(1)},
			hostile{op: 0x0D, psn: fuzzSQ.Add(2), payload: mtu},
			hostile{op: 0x0F, psn: fuzzSQ.Add(4), payload: tail})},
		// UC WRITE and SEND FIRST/MIDDLE/LAST.
		{"UC multi", fuzzSeed(endpoint.StateRTS,
			hostile{op: 0x26, psn: 10, reth: key(1024, 600), payload: mtu},
			hostile{op: 0x27, psn: 11, payload: mtu},
			hostile{op: 0x28, psn: 12, payload: tail},
			hostile{op: 0x20, psn: 13, payload: mtu},
			hostile{op: 0x21, psn: 14, payload: mtu},
			hostile{op: 0x22, psn: 15, payload: tail})},
	}
}

// FuzzEndpoint feeds arbitrary datagram sequences into a device whose RC,
// UC and UD QPs sit in a chosen state (RESET … ERR), the RC one with
// WRITE, READ and atomic requests of its own outstanding so responses meet
// a live completer. Nothing may panic, no byte outside a registered region
// may change, and every goroutine ends (synctest checks).
//
// Input: byte 0 is the QP state; then records of [flags, len (2 bytes, big
// endian, capped at fuzzMaxRecord), bytes…]: flags bits 0-1 pick the QP
// whose QPN is written into the BTH, bit 2 keeps the bytes' own QPN, bit 3
// leaves the ICRC as given, bit 4 puts the victim MR's R_Key into a RETH
// or AtomicETH and adds the MR's address to its VA, bit 5 grows the
// datagram past MaxDatagram with zeros (an oversize datagram).
func FuzzEndpoint(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s.in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		synctest.Test(t, func(t *testing.T) {
			r := newFuzzRig(t, endpoint.QPState(in[0]))
			defer r.v.close(t)
			r.feed(in[1:])
			time.Sleep(time.Second)
			synctest.Wait()
			r.v.guardsIntact(t)
		})
	})
}

// fuzzRig is FuzzEndpoint's victim: one device with an RC, a UC and a UD
// QP connected to the attacker.
type fuzzRig struct {
	v        *peer
	qps      [fuzzTargets]*endpoint.QP
	attacker netip.AddrPort
	state    endpoint.QPState
	mu       sync.Mutex
	sent     [256]int // packets the victim sent, by opcode
}

// newFuzzRig makes the victim with its QPs in state (taken mod 7; SQE
// becomes SQD).
func newFuzzRig(t *testing.T, state endpoint.QPState) *fuzzRig {
	state %= 7
	if state == endpoint.StateSQE {
		state = endpoint.StateSQD
	}
	r := &fuzzRig{state: state}
	wa, wb := wiretest.NewPair(wiretest.Config{Observe: func(from, _ netip.AddrPort, b []byte) {
		if from != r.attacker && len(b) > 0 {
			r.mu.Lock()
			r.sent[b[0]]++
			r.mu.Unlock()
		}
	}})
	r.attacker = wa.LocalAddr()
	// The attacker reads what the victim answers (Observe counted it),
	// so wiretest's queue does not hold up to QueueLen of them.
	go drainWire(wa, nil)
	r.v = newPeer(t, wb, peerOpts{typ: endpoint.RC, memSize: 4096})
	uc, err := r.v.pd.CreateQP(endpoint.QPConfig{Type: endpoint.UC, SendCQ: r.v.scq, RecvCQ: r.v.rcq})
	require.NoError(t, err)
	ud, err := r.v.pd.CreateQP(endpoint.QPConfig{Type: endpoint.UD, SendCQ: r.v.scq, RecvCQ: r.v.rcq})
	require.NoError(t, err)
	r.qps = [fuzzTargets]*endpoint.QP{r.v.qp, uc, ud}
	for _, qp := range r.qps {
		bring(t, qp, state, r.attacker, fuzzP0)
		r.arm(t, qp)
	}
	return r
}

// arm gives a QP in r.state its receive WR (1 KiB of the region each) and
// the RC QP its own WRITE, READ and FETCH_ADD.
func (r *fuzzRig) arm(t *testing.T, qp *endpoint.QP) {
	i := 0
	for i < fuzzTargets && r.qps[i] != qp {
		i++
	}
	if r.state >= endpoint.StateInit && r.state != endpoint.StateErr {
		require.NoError(t, qp.PostRecv(endpoint.RecvWR{ID: uint64(i), SGL: []endpoint.SGE{r.v.mr.SGE(1024*i, 1024)}}))
	}
	if r.state == endpoint.StateRTS && i == fuzzRC {
		for _, wr := range []endpoint.SendWR{
			{Op: endpoint.WRWrite, SGL: []endpoint.SGE{r.v.mr.SGE(3072, 300)}, RemoteAddr: 0x1000, RKey: 7},
			{Op: endpoint.WRRead, SGL: []endpoint.SGE{r.v.mr.SGE(3072, 600)}, RemoteAddr: 0x1000, RKey: 7},
			{Op: endpoint.WRFetchAdd, SGL: []endpoint.SGE{r.v.mr.SGE(4088, 8)}, RemoteAddr: 0x1000, RKey: 7},
		} {
			require.NoError(t, qp.PostSend(&wr))
		}
	}
}

// feed injects every record of in and returns how many there were.
// nextRecord splits the first record off in: its flags, its packet (at
// most fuzzMaxRecord bytes, fewer where in ends) and what follows; ok is
// false when in holds no record.
func nextRecord(in []byte) (flags byte, pkt, rest []byte, ok bool) {
	if len(in) < 3 {
		return 0, nil, in, false
	}
	flags, n := in[0], int(binary.BigEndian.Uint16(in[1:3]))
	in = in[3:]
	n = min(n, fuzzMaxRecord, len(in))
	return flags, in[:n], in[n:], true
}

func (r *fuzzRig) feed(in []byte) int {
	k := 0
	for {
		flags, rec, rest, ok := nextRecord(in)
		if !ok {
			break
		}
		in = rest
		pkt := append([]byte(nil), rec...)
		if flags&fuzzKeepQPN == 0 && len(pkt) >= 8 {
			// Aim at a real QP so the fuzzer reaches past the
			// demux.
			qpn := r.qps[int(flags&3)%fuzzTargets].QPN()
			binary.BigEndian.PutUint32(pkt[4:8], uint32(pkt[4])<<24|qpn)
		}
		if flags&fuzzPatchKey != 0 && len(pkt) >= 24 {
			// On RC and UC the RETH and the AtomicETH start right
			// after the BTH with VA (8) and R_Key (4); RD puts its
			// RDETH and DETH first.
			info := layers.Opcode(pkt[0]).Info()
			if (info.Has(layers.HdrRETH) || info.Has(layers.HdrAtomicETH)) && !info.Has(layers.HdrRDETH) {
				va := binary.BigEndian.Uint64(pkt[12:20])
				binary.BigEndian.PutUint64(pkt[12:20], r.v.mr.Addr()+va)
				binary.BigEndian.PutUint32(pkt[20:24], r.v.mr.RKey())
			}
		}
		if flags&fuzzOversize != 0 {
			pkt = append(pkt, make([]byte, endpoint.MaxDatagram+1-len(pkt))...)
		}
		if flags&fuzzRawICRC != 0 || flags&fuzzOversize != 0 {
			r.v.wire.InjectRaw(r.attacker, pkt)
		} else {
			r.v.wire.Inject(r.attacker, pkt)
		}
		time.Sleep(time.Microsecond)
		k++
	}
	return k
}

// sentOps returns how many packets of opcode op the victim sent.
func (r *fuzzRig) sentOps(op layers.Opcode) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[op]
}

// TestFuzzSeeds checks that the seeds reach what they were written for:
// multi-packet WRITE and SEND land in memory, an overlong SEND fails with
// LOC_LEN_ERR, a READ is answered with FIRST/MIDDLE/LAST, and the victim's
// own READ completes from FIRST/MIDDLE/LAST responses.
func TestFuzzSeeds(t *testing.T) {
	pattern := make([]byte, 600)
	for i := range pattern {
		pattern[i] = byte(i % 256)
	}
	checks := map[string]func(t *testing.T, r *fuzzRig){
		"RC WRITE multi": func(t *testing.T, r *fuzzRig) {
			require.Equal(t, pattern, r.v.mem[:600])
			require.Equal(t, 2, r.sentOps(0x11), "one ACK for the LAST, one for the duplicate")
		},
		"RC WRITE multi with strangers": func(t *testing.T, r *fuzzRig) {
			require.Equal(t, pattern, r.v.mem[:600])
			require.Equal(t, 1, r.sentOps(0x11), "one ACK, for the LAST")
			k := r.v.dev.Counters()
			require.Equal(t, uint64(2), k.DropLong, "the oversize datagrams")
			require.Equal(t, uint64(1), k.DropShort, "the truncated one")
		},
		"RC SEND multi": func(t *testing.T, r *fuzzRig) {
			wcs := waitWCs(t, r.v.rcq, 1)
			require.Equal(t, endpoint.StatusSuccess, wcs[0].Status)
			require.Equal(t, uint32(600), wcs[0].ByteLen)
			require.Equal(t, pattern, r.v.mem[:600])
		},
		"RC SEND overflow": func(t *testing.T, r *fuzzRig) {
			wcs := waitWCs(t, r.v.rcq, 1)
			require.Equal(t, endpoint.StatusLocLenErr, wcs[0].Status)
			require.Equal(t, endpoint.StateErr, r.v.qp.State())
		},
		"RC READ": func(t *testing.T, r *fuzzRig) {
			// FIRST/MIDDLE/LAST, then FIRST/LAST for the duplicate.
			require.Equal(t, []int{2, 1, 2, 1}, []int{r.sentOps(0x0D), r.sentOps(0x0E), r.sentOps(0x0F), r.sentOps(0x12)})
			require.Equal(t, byte(1), r.v.mem[8], "the FETCH_ADD ran")
		},
		"own responses": func(t *testing.T, r *fuzzRig) {
			wcs := waitWCs(t, r.v.scq, 3)
			requireSuccess(t, wcs)
			require.Equal(t, pattern, r.v.mem[3072:3672])
		},
		"own READ MIDDLE lost": func(t *testing.T, r *fuzzRig) {
			// The LAST ahead of the gap is ignored (rxe's check_psn);
			// the retransmit timer (Timeout 10: 4.2 ms) asks again.
			require.Equal(t, 1, r.sentOps(0x0C))
			time.Sleep(5 * time.Millisecond)
			synctest.Wait()
			require.GreaterOrEqual(t, r.sentOps(0x0C), 2, "the READ is asked again")
		},
		"UC multi": func(t *testing.T, r *fuzzRig) {
			wcs := waitWCs(t, r.v.rcq, 1)
			require.Equal(t, endpoint.StatusSuccess, wcs[0].Status)
			require.Equal(t, uint32(600), wcs[0].ByteLen)
			require.Equal(t, pattern, r.v.mem[1024:1624])
		},
	}
	seen := 0
	for _, c := range fuzzSeeds() {
		check := checks[c.name]
		if check == nil {
			continue
		}
		seen++
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newFuzzRig(t, endpoint.QPState(c.in[0]))
				defer r.v.close(t)
				r.feed(c.in[1:])
				time.Sleep(time.Millisecond)
				synctest.Wait()
				check(t, r)
				r.v.guardsIntact(t)
			})
		})
	}
	require.Equal(t, len(checks), seen, "every check names a seed")
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

// fuzzGen builds n records of FuzzEndpoint's input format from rng: each
// is a record of a seed, mutated as a fuzzer would (another opcode, a PSN
// near the expected ones, other flags, a flipped byte, cut or grown).
func fuzzGen(rng *rand.Rand, n int) []byte {
	var pool [][]byte
	for _, c := range fuzzSeeds() {
		in := c.in[1:]
		for len(in) >= 3 {
			k := min(int(binary.BigEndian.Uint16(in[1:3])), len(in)-3)
			pool = append(pool, in[:3+k])
			in = in[3+k:]
		}
	}
	var out []byte
	for range n {
		rec := pool[rng.IntN(len(pool))]
		flags, pkt := rec[0], append([]byte(nil), rec[3:]...)
		if rng.IntN(8) == 0 {
			flags ^= byte(rng.IntN(32))
		}
		if len(pkt) >= layers.BTHLength {
			if rng.IntN(4) == 0 {
				pkt[0] = byte(rng.IntN(0x20)) | []byte{0, 0x20, 0x60}[rng.IntN(3)]
			}
			if rng.IntN(2) == 0 {
				base := []layers.PSN{fuzzP0, fuzzSQ, 10}[rng.IntN(3)]
				psn := base.Add(rng.IntN(16) - 4)
				pkt[9], pkt[10], pkt[11] = byte(psn>>16), byte(psn>>8), byte(psn)
			}
		}
		switch rng.IntN(8) {
		case 0:
			pkt[rng.IntN(len(pkt))] ^= byte(1 + rng.IntN(255))
		case 1:
			pkt = pkt[:rng.IntN(len(pkt)+1)]
		case 2:
			pkt = append(pkt, make([]byte, rng.IntN(300))...)
		}
		out = append(out, flags, byte(len(pkt)>>8), byte(len(pkt)))
		out = append(out, pkt...)
	}
	return out
}

// TestFuzzMemoryBounded feeds a long adversarial sequence made by fuzzGen
// (100 000 packets; 20 000 under -race) and checks memory stays bounded:
// the live heap after GC grows by less than 1 MiB between the first tenth
// and the end, the responder resources keep their configured size, and no
// QP's inbox holds packets once everything settled. QPs that went to ERR
// are reset and reconnected every thousand packets so the sequence keeps
// reaching live responders and completers.
func TestFuzzMemoryBounded(t *testing.T) {
	n := 100_000
	if raceEnabled {
		n = 20_000
	}
	const chunk = 1000
	synctest.Test(t, func(t *testing.T) {
		r := newFuzzRig(t, endpoint.StateRTS)
		defer r.v.close(t)
		in := fuzzGen(rand.New(rand.NewPCG(7, 8)), n)
		heap := func() uint64 {
			synctest.Wait()
			runtime.GC()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		wcs := make([]endpoint.WC, 256)
		var warm uint64
		resets := 0
		for done := 0; done < n; done += chunk {
			// Split in at the chunk's last record.
			k, off := 0, 0
			for k < chunk {
				_, _, rest, ok := nextRecord(in[off:])
				if !ok {
					break
				}
				off = len(in) - len(rest)
				k++
			}
			require.Equal(t, k, r.feed(in[:off]))
			in = in[off:]
			time.Sleep(time.Millisecond)
			synctest.Wait()
			for r.v.scq.Poll(wcs) > 0 || r.v.rcq.Poll(wcs) > 0 {
			}
			for _, qp := range r.qps {
				if qp.State() == endpoint.StateErr {
					require.NoError(t, qp.Modify(endpoint.QPAttr{State: endpoint.StateReset}, endpoint.AttrState))
					bring(t, qp, endpoint.StateRTS, r.attacker, fuzzP0)
					r.arm(t, qp)
					resets++
				}
			}
			if done == n/10 {
				warm = heap()
			}
		}
		time.Sleep(time.Second)
		end := heap()
		for _, qp := range r.qps {
			inbox, res := qp.Footprint()
			require.Zero(t, inbox, "QP %#x inbox", qp.QPN())
			if qp.Type() == endpoint.RC {
				require.Equal(t, 4, res, "responder resources: max_dest_rd_atomic")
			}
		}
		require.Empty(t, in, "every record fed")
		require.NotZero(t, resets, "the sequence reached QPs in error")
		t.Logf("live heap: %d bytes after a tenth, %d at the end; %d resets", warm, end, resets)
		require.Less(t, int64(end)-int64(warm), int64(1<<20), "live heap grew from %d to %d bytes", warm, end)
		r.v.guardsIntact(t)
	})
}
