package craft_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// decoded is what a test needs of one frame after layers.Parser.
type decoded struct {
	err     error
	bth     layers.BTH
	payload []byte
	icrc    layers.CRCStatus
	vcrc    layers.CRCStatus
	encap   layers.Encapsulation
	ipv4    gplayers.IPv4
	ipv6    gplayers.IPv6
	udp     gplayers.UDP
	lrh     layers.LRH
	mad     layers.MAD
	hasMAD  bool
}

// decodeAll decodes every frame of tr as frames of encapsulation e.
func decodeAll(t *testing.T, e craft.Encap, tr craft.Trace) []decoded {
	t.Helper()
	p := layers.NewParser(e.FirstLayer(), layers.ParserOptions{})
	out := make([]decoded, len(tr.Frames))
	for i, f := range tr.Frames {
		require.Equal(t, e.LinkType(), f.LinkType, "frame %d", i+1)
		d := &out[i]
		d.err = p.Decode(f.Data)
		d.bth = p.BTH
		d.payload = append([]byte(nil), p.BTH.PacketPayload()...)
		d.icrc, _ = p.CheckICRC()
		d.vcrc, _ = p.CheckVCRC()
		d.encap = p.Encapsulation()
		d.ipv4, d.ipv6, d.udp, d.lrh = p.IPv4, p.IPv6, p.UDP.UDP, p.LRH
		d.hasMAD = p.Has(layers.LayerTypeMAD)
		d.mad = p.MAD
	}
	return out
}

// requireClean checks that every frame decodes with good CRCs.
func requireClean(t *testing.T, e craft.Encap, ds []decoded) {
	t.Helper()
	for i, d := range ds {
		require.NoError(t, d.err, "frame %d", i+1)
		assert.Equal(t, layers.CRCGood, d.icrc, "frame %d ICRC", i+1)
		if e.Native() {
			assert.Equal(t, layers.CRCGood, d.vcrc, "frame %d VCRC", i+1)
		}
		assert.Equal(t, e.Layers(), d.encap, "frame %d", i+1)
	}
}

func run(t *testing.T, cfg craft.Config, ops []craft.Op, f craft.Faults) (*craft.Conn, craft.Trace) {
	t.Helper()
	c, err := craft.New(cfg)
	require.NoError(t, err)
	require.NoError(t, c.Run(ops, f))
	return c, c.Trace()
}

func opcodes(ds []decoded, from layers.ServiceType) []layers.Opcode {
	var ops []layers.Opcode
	for _, d := range ds {
		if from == layers.ServiceUnknown || d.bth.Opcode.Service() == from {
			ops = append(ops, d.bth.Opcode)
		}
	}
	return ops
}

func findings(tr craft.Trace, k craft.FindingKind) []craft.Finding {
	var out []craft.Finding
	for _, f := range tr.Findings {
		if f.Kind == k {
			out = append(out, f)
		}
	}
	return out
}

func TestSegmentation(t *testing.T) {
	const (
		sf, sm, sl, slImm, so, soImm = 0x00, 0x01, 0x02, 0x03, 0x04, 0x05
		wf, wm, wl, wlImm, wo, woImm = 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B
		slInv, soInv                 = 0x16, 0x17
		ucSf, ucSl, ucWf, ucWl       = 0x20, 0x22, 0x26, 0x28
		ud, udImm                    = 0x64, 0x65
	)
	tests := []struct {
		name    string
		service layers.ServiceType
		op      craft.Op
		mtu     int
		want    []layers.Opcode
	}{
		{"send only", layers.ServiceRC, craft.Op{Kind: craft.OpSend, Data: make([]byte, 100)}, 1024, []layers.Opcode{so}},
		{"send exact mtu", layers.ServiceRC, craft.Op{Kind: craft.OpSend, Data: make([]byte, 256)}, 256, []layers.Opcode{so}},
		{"send three", layers.ServiceRC, craft.Op{Kind: craft.OpSend, Data: make([]byte, 600)}, 256, []layers.Opcode{sf, sm, sl}},
		{"send empty", layers.ServiceRC, craft.Op{Kind: craft.OpSend}, 256, []layers.Opcode{so}},
		{"send imm", layers.ServiceRC, craft.Op{Kind: craft.OpSendImm, Data: make([]byte, 13), Imm: 7}, 256, []layers.Opcode{soImm}},
		{"send imm two", layers.ServiceRC, craft.Op{Kind: craft.OpSendImm, Data: make([]byte, 257), Imm: 7}, 256, []layers.Opcode{sf, slImm}},
		{"send inv", layers.ServiceRC, craft.Op{Kind: craft.OpSendInv, Data: make([]byte, 9), InvRKey: 3}, 256, []layers.Opcode{soInv}},
		{"send inv three", layers.ServiceRC, craft.Op{Kind: craft.OpSendInv, Data: make([]byte, 513), InvRKey: 3}, 256, []layers.Opcode{sf, sm, slInv}},
		{"write only", layers.ServiceRC, craft.Op{Kind: craft.OpWrite, Data: make([]byte, 5)}, 4096, []layers.Opcode{wo}},
		{"write four", layers.ServiceRC, craft.Op{Kind: craft.OpWrite, Data: make([]byte, 2048)}, 512, []layers.Opcode{wf, wm, wm, wl}},
		{"write imm", layers.ServiceRC, craft.Op{Kind: craft.OpWriteImm, Data: make([]byte, 1)}, 2048, []layers.Opcode{woImm}},
		{"write imm two", layers.ServiceRC, craft.Op{Kind: craft.OpWriteImm, Data: make([]byte, 2049)}, 2048, []layers.Opcode{wf, wlImm}},
		{"uc send", layers.ServiceUC, craft.Op{Kind: craft.OpSend, Data: make([]byte, 300)}, 256, []layers.Opcode{ucSf, ucSl}},
		{"uc write", layers.ServiceUC, craft.Op{Kind: craft.OpWrite, Data: make([]byte, 300)}, 256, []layers.Opcode{ucWf, ucWl}},
		{"ud send", layers.ServiceUD, craft.Op{Kind: craft.OpSend, Data: make([]byte, 300)}, 1024, []layers.Opcode{ud}},
		{"ud send imm", layers.ServiceUD, craft.Op{Kind: craft.OpSendImm, Data: make([]byte, 3)}, 1024, []layers.Opcode{udImm}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.op.Data = craft.Pattern(len(tt.op.Data), 1)
			tt.op.VA, tt.op.RKey = 0x1000, 0x77
			_, tr := run(t, craft.Config{Service: tt.service, MTU: tt.mtu}, []craft.Op{tt.op}, craft.Faults{})
			ds := decodeAll(t, craft.RoCEv2, tr)
			requireClean(t, craft.RoCEv2, ds)
			reqs := ds[:len(tt.want)]
			assert.Equal(t, tt.want, opcodes(reqs, layers.ServiceUnknown))
			var data []byte
			for i, d := range reqs {
				info := d.bth.Opcode.Info()
				assert.Equal(t, craft.DefaultRequester.PSN.Add(i), d.bth.PSN, "PSNs advance by one")
				assert.Equal(t, uint8((4-len(d.payload)%4)%4), d.bth.PadCount, "pad rounds to 4")
				last := i == len(reqs)-1
				if !last {
					assert.Len(t, d.payload, tt.mtu, "FIRST and MIDDLE carry the MTU")
				}
				if info.Has(layers.HdrRETH) {
					assert.Equal(t, uint32(len(tt.op.Data)), d.bth.RETH.DMALength)
					assert.Equal(t, uint64(0x1000), d.bth.RETH.VA)
				}
				if info.Immediate {
					assert.True(t, last)
					assert.Equal(t, tt.op.Imm, d.bth.ImmDt.Value)
				}
				if info.Has(layers.HdrDETH) {
					assert.Equal(t, uint32(craft.DefaultQKey), d.bth.DETH.QKey)
					assert.Equal(t, craft.DefaultRequester.QPN, d.bth.DETH.SrcQP)
				}
				assert.Equal(t, last && tt.service == layers.ServiceRC, d.bth.AckReq, "AckReq on the last RC packet only")
				data = append(data, d.payload...)
			}
			assert.Equal(t, len(tt.op.Data), len(data))
			assert.True(t, bytes.Equal(tt.op.Data, data))
			if tt.service == layers.ServiceRC {
				require.Len(t, ds, len(tt.want)+1)
				ack := ds[len(ds)-1]
				assert.Equal(t, layers.Opcode(0x11), ack.bth.Opcode)
				assert.Equal(t, reqs[len(reqs)-1].bth.PSN, ack.bth.PSN)
				assert.Equal(t, uint32(1), ack.bth.AETH.MSN)
				assert.True(t, ack.bth.AETH.Syndrome.IsAck())
			} else {
				assert.Len(t, ds, len(tt.want), "no ACKs for %v", tt.service)
			}
		})
	}
}

func TestReadAndAtomics(t *testing.T) {
	data := craft.Pattern(3000, 9)
	ops := []craft.Op{
		{Kind: craft.OpRead, Data: data, VA: 0x10000, RKey: 1},
		{Kind: craft.OpRead, Data: craft.Pattern(24, 1), VA: 0x20000, RKey: 1},
		{Kind: craft.OpRead, VA: 0x30000, RKey: 1},
		{Kind: craft.OpCompareSwap, VA: 0x40000, RKey: 2, Compare: 1, SwapAdd: 2, Orig: 1},
		{Kind: craft.OpFetchAdd, VA: 0x40008, RKey: 2, SwapAdd: 5, Orig: 10},
	}
	_, tr := run(t, craft.Config{}, ops, craft.Faults{})
	ds := decodeAll(t, craft.RoCEv2, tr)
	requireClean(t, craft.RoCEv2, ds)
	base := craft.DefaultRequester.PSN
	var reqPSN []layers.PSN
	var resp []decoded
	for _, d := range ds {
		if d.bth.Opcode.Info().IsRequest() {
			reqPSN = append(reqPSN, d.bth.PSN)
			assert.True(t, d.bth.AckReq)
		} else {
			resp = append(resp, d)
		}
	}
	// The 3000-byte READ takes three PSNs, the others one each.
	assert.Equal(t, []layers.PSN{base, base.Add(3), base.Add(4), base.Add(5), base.Add(6)}, reqPSN)
	want := []struct {
		op  layers.Opcode
		psn layers.PSN
		n   int
		msn uint32
	}{
		{0x0D, base, 1024, 1}, {0x0E, base.Add(1), 1024, 0}, {0x0F, base.Add(2), 952, 1},
		{0x10, base.Add(3), 24, 2}, {0x10, base.Add(4), 0, 3},
		{0x12, base.Add(5), 0, 4}, {0x12, base.Add(6), 0, 5},
	}
	require.Len(t, resp, len(want))
	var got []byte
	for i, w := range want {
		d := resp[i]
		assert.Equal(t, w.op, d.bth.Opcode, "response %d", i)
		assert.Equal(t, w.psn, d.bth.PSN, "response %d", i)
		assert.Len(t, d.payload, w.n, "response %d", i)
		if d.bth.Opcode.Info().Has(layers.HdrAETH) {
			assert.Equal(t, w.msn, d.bth.AETH.MSN, "response %d MSN", i)
		}
		if i < 3 {
			got = append(got, d.payload...)
		}
	}
	assert.Equal(t, data, got)
	assert.Equal(t, uint64(1), resp[5].bth.AtomicAckETH.OrigRemoteData)
	assert.Equal(t, uint64(10), resp[6].bth.AtomicAckETH.OrigRemoteData)
}

func TestAckPolicy(t *testing.T) {
	tests := []struct {
		name    string
		policy  craft.AckPolicy
		ackReqs []int // packet numbers (from 1) with AckReq
		acks    int
	}{
		{"rxe", craft.AckPolicy{}, []int{66, 70}, 2},
		{"every 10", craft.AckPolicy{MaxPacketsPerAck: 9}, []int{11, 22, 33, 44, 55, 66, 70}, 7},
		{"last only", craft.AckPolicy{MaxPacketsPerAck: -1}, []int{70}, 1},
		{"ack every packet", craft.AckPolicy{EveryPacket: true}, []int{66, 70}, 70},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, tr := run(t, craft.Config{MTU: 256, Ack: tt.policy},
				[]craft.Op{{Kind: craft.OpWrite, Data: make([]byte, 70*256)}}, craft.Faults{})
			ds := decodeAll(t, craft.RoCEv2, tr)
			requireClean(t, craft.RoCEv2, ds)
			var reqs []int
			acks, n := 0, 0
			for _, d := range ds {
				switch {
				case d.bth.Opcode == 0x11:
					acks++
					assert.Equal(t, layers.AETHSyndrome(0x1F), d.bth.AETH.Syndrome, "rxe sends credit code 0x1F")
				default:
					n++
					if d.bth.AckReq {
						reqs = append(reqs, n)
					}
				}
			}
			assert.Equal(t, tt.ackReqs, reqs)
			assert.Equal(t, tt.acks, acks)
		})
	}
}

func TestPSNWrap(t *testing.T) {
	req := craft.DefaultRequester
	req.PSN = 0xFFFFFE
	c, tr := run(t, craft.Config{MTU: 256, Requester: req}, []craft.Op{{Kind: craft.OpWrite, Data: make([]byte, 1000)}}, craft.Faults{})
	ds := decodeAll(t, craft.RoCEv2, tr)
	requireClean(t, craft.RoCEv2, ds)
	var psns []layers.PSN
	for _, d := range ds[:4] {
		psns = append(psns, d.bth.PSN)
	}
	assert.Equal(t, []layers.PSN{0xFFFFFE, 0xFFFFFF, 0, 1}, psns)
	assert.Equal(t, layers.PSN(2), c.NextPSN())
	assert.Empty(t, tr.Findings, "a wrap is no gap")
}

func TestEncapsulations(t *testing.T) {
	for _, e := range craft.Encaps() {
		t.Run(e.String(), func(t *testing.T) {
			c, err := craft.New(craft.Config{Encap: e})
			require.NoError(t, err)
			require.NoError(t, c.Connect(craft.CMOptions{}))
			require.NoError(t, c.Run([]craft.Op{
				{Kind: craft.OpWrite, Data: craft.Pattern(1500, 0), VA: 0x1000, RKey: 1},
				{Kind: craft.OpRead, Data: craft.Pattern(10, 0), VA: 0x2000, RKey: 1},
				{Kind: craft.OpSend, Data: craft.Pattern(7, 0)},
			}, craft.Faults{CNPEvery: 2}))
			require.NoError(t, c.Disconnect())
			tr := c.Trace()
			ds := decodeAll(t, e, tr)
			requireClean(t, e, ds)
			cnp := 0
			for i, d := range ds {
				if d.bth.Opcode.Service() == layers.ServiceCNP {
					cnp++
					assert.True(t, d.bth.BECN)
					assert.Equal(t, craft.DefaultRequester.QPN, d.bth.DestQP, "a CNP goes to the QP it throttles")
					if e.Ethernet() {
						assert.Equal(t, layers.Opcode(0x81), d.bth.Opcode)
					} else {
						assert.Equal(t, layers.Opcode(0x80), d.bth.Opcode)
					}
				}
				switch e {
				case craft.RoCEv2:
					ip := d.ipv4
					assert.Equal(t, gplayers.IPv4DontFragment, ip.Flags)
					assert.Equal(t, uint16(0), ip.Id)
					assert.Equal(t, uint8(64), ip.TTL)
					assert.Equal(t, uint16(0), d.udp.Checksum)
					assert.Equal(t, gplayers.UDPPort(4791), d.udp.DstPort)
					ecn := ip.TOS & 3
					if d.bth.Opcode.Service() == layers.ServiceCNP {
						assert.Equal(t, uint8(0), ecn, "CNPs are not ECN-capable")
					} else if len(findingsAt(tr, i+1, craft.FindingECNCE)) > 0 {
						assert.Equal(t, uint8(3), ecn, "CE")
					} else {
						assert.Equal(t, uint8(2), ecn, "ECT(0)")
					}
				case craft.RoCEv2IPv6:
					assert.Equal(t, uint8(64), d.ipv6.HopLimit)
					assert.Equal(t, uint16(0), d.udp.Checksum)
				case craft.IB, craft.ERF:
					assert.Equal(t, layers.LNHIBALocal, d.lrh.LNH)
				case craft.IBGRH, craft.ERFGRH:
					assert.Equal(t, layers.LNHIBAGlobal, d.lrh.LNH)
				}
				if !e.Ethernet() || e == craft.RoCEv1 {
					assert.Equal(t, len(findingsAt(tr, i+1, craft.FindingFECN)) > 0, d.bth.FECN, "frame %d FECN", i+1)
				}
			}
			assert.Equal(t, 2, cnp)
		})
	}
}

func findingsAt(tr craft.Trace, frame int, k craft.FindingKind) []craft.Finding {
	var out []craft.Finding
	for _, f := range tr.FindingsOf(frame) {
		if f.Kind == k {
			out = append(out, f)
		}
	}
	return out
}

func TestLossAndGoBackN(t *testing.T) {
	_, tr := run(t, craft.Config{MTU: 256}, []craft.Op{{Kind: craft.OpWrite, Data: make([]byte, 8*256)}},
		craft.Faults{Loss: craft.Loss{Packets: []int{3}}})
	ds := decodeAll(t, craft.RoCEv2, tr)
	requireClean(t, craft.RoCEv2, ds)
	gaps := findings(tr, craft.FindingPSNGap)
	require.Len(t, gaps, 1)
	assert.Equal(t, craft.DefaultRequester.PSN.Add(3), ds[gaps[0].Frame-1].bth.PSN, "the gap shows at PSN+3")
	naks := findings(tr, craft.FindingNAK)
	require.Len(t, naks, 1)
	nak := ds[naks[0].Frame-1]
	assert.Equal(t, layers.MakeNakSyndrome(layers.NAKPSNSequenceError), nak.bth.AETH.Syndrome)
	assert.Equal(t, craft.DefaultRequester.PSN.Add(2), nak.bth.PSN, "the NAK carries the expected PSN")
	assert.Equal(t, gaps[0].Frame, naks[0].Ref, "the NAK answers the first packet past the gap")
	// Go-back-N: everything from the lost PSN is sent again, in order.
	re := findings(tr, craft.FindingRetransmission)
	require.Len(t, re, 6)
	for i, f := range re {
		assert.Equal(t, craft.DefaultRequester.PSN.Add(2+i), ds[f.Frame-1].bth.PSN)
	}
	assert.Zero(t, re[0].Ref, "the lost packet was never captured")
	assert.NotZero(t, re[1].Ref)
}

func TestNAKCodes(t *testing.T) {
	for code := layers.NAKPSNSequenceError; code <= layers.NAKInvalidRDRequest; code++ {
		t.Run(code.String(), func(t *testing.T) {
			ops := []craft.Op{{Kind: craft.OpSend, Data: make([]byte, 8)}, {Kind: craft.OpSend, Data: make([]byte, 8)},
				{Kind: craft.OpSend, Data: make([]byte, 8)}}
			c, tr := run(t, craft.Config{}, ops, craft.Faults{NAKs: []craft.NAK{{Packet: 2, Code: code}}})
			ds := decodeAll(t, craft.RoCEv2, tr)
			requireClean(t, craft.RoCEv2, ds)
			naks := findings(tr, craft.FindingNAK)
			require.Len(t, naks, 1)
			nak := ds[naks[0].Frame-1]
			assert.Equal(t, layers.MakeNakSyndrome(code), nak.bth.AETH.Syndrome)
			assert.Equal(t, craft.DefaultRequester.PSN.Add(1), nak.bth.PSN)
			if code == layers.NAKPSNSequenceError {
				assert.NoError(t, c.Err())
				assert.NotEmpty(t, findings(tr, craft.FindingRetransmission))
				return
			}
			assert.Error(t, c.Err(), "an error NAK puts the QP in the error state")
			assert.Empty(t, findings(tr, craft.FindingRetransmission))
			assert.Error(t, c.Run(ops, craft.Faults{}), "a QP in error runs nothing more")
		})
	}
}

func TestRNRRetry(t *testing.T) {
	_, tr := run(t, craft.Config{}, []craft.Op{{Kind: craft.OpSend, Data: make([]byte, 8)}},
		craft.Faults{RNRs: []craft.RNR{{Packet: 1, Times: 2, Timer: 14}}})
	ds := decodeAll(t, craft.RoCEv2, tr)
	requireClean(t, craft.RoCEv2, ds)
	rnrs := findings(tr, craft.FindingRNRNak)
	require.Len(t, rnrs, 2)
	for _, r := range rnrs {
		d := ds[r.Frame-1]
		assert.True(t, d.bth.AETH.Syndrome.IsRNRNak())
		assert.Equal(t, layers.RNRTimerCode(14).Duration(), d.bth.AETH.Syndrome.RNRTimer())
		// The requester waits out the timer before it resends.
		next := tr.Frames[r.Frame].Time.Sub(tr.Frames[r.Frame-1].Time)
		assert.GreaterOrEqual(t, next, 1280*time.Microsecond)
	}
	assert.Len(t, findings(tr, craft.FindingRetransmission), 2)
	assert.Equal(t, layers.Opcode(0x11), ds[len(ds)-1].bth.Opcode)
	assert.True(t, ds[len(ds)-1].bth.AETH.Syndrome.IsAck())
}

func TestTimeouts(t *testing.T) {
	tests := []struct {
		name string
		ops  []craft.Op
		loss craft.Loss
		dup  bool
	}{
		{"last packet lost", []craft.Op{{Kind: craft.OpSend, Data: make([]byte, 2000)}}, craft.Loss{Packets: []int{2}}, false},
		{"ack lost", []craft.Op{{Kind: craft.OpWrite, Data: make([]byte, 20)}}, craft.Loss{Responses: []int{1}}, true},
		{"atomic ack lost", []craft.Op{{Kind: craft.OpFetchAdd, SwapAdd: 1, Orig: 4}}, craft.Loss{Responses: []int{1}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, tr := run(t, craft.Config{}, tt.ops, craft.Faults{Loss: tt.loss})
			requireClean(t, craft.RoCEv2, decodeAll(t, craft.RoCEv2, tr))
			to := findings(tr, craft.FindingAckTimeout)
			require.Len(t, to, 1)
			gap := tr.Frames[to[0].Frame-1].Time.Sub(tr.Frames[to[0].Frame-2].Time)
			assert.GreaterOrEqual(t, gap, craft.DefaultAckTimeout-10*time.Microsecond)
			assert.Equal(t, tt.dup, len(findings(tr, craft.FindingDuplicate)) == 1)
		})
	}
}

func TestReadResponseLoss(t *testing.T) {
	data := craft.Pattern(4000, 0)
	_, tr := run(t, craft.Config{}, []craft.Op{{Kind: craft.OpRead, Data: data, VA: 0x10000, RKey: 9}},
		craft.Faults{Loss: craft.Loss{Responses: []int{2}}})
	ds := decodeAll(t, craft.RoCEv2, tr)
	requireClean(t, craft.RoCEv2, ds)
	var reads []decoded
	for _, d := range ds {
		if d.bth.Opcode == 0x0C {
			reads = append(reads, d)
		}
	}
	require.Len(t, reads, 2)
	// The second READ asks for what is missing: from the lost response on.
	assert.Equal(t, craft.DefaultRequester.PSN.Add(1), reads[1].bth.PSN)
	assert.Equal(t, uint64(0x10000+1024), reads[1].bth.RETH.VA)
	assert.Equal(t, uint32(4000-1024), reads[1].bth.RETH.DMALength)
	last := ds[len(ds)-3:]
	var got []byte
	for _, d := range last {
		got = append(got, d.payload...)
	}
	assert.Equal(t, data[1024:], got)
}

func TestCorruptions(t *testing.T) {
	ops := []craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(40, 0)},
		{Kind: craft.OpWrite, Data: craft.Pattern(1500, 1), VA: 0x1000, RKey: 1}}
	tests := []struct {
		kind    craft.CorruptKind
		encap   craft.Encap
		frame   int
		decode  error // expected decode error class, nil for none
		field   string
		icrc    layers.CRCStatus
		vcrc    layers.CRCStatus
		nak     bool // the responder answers with NAK Invalid Request
		finding craft.FindingKind
	}{
		{craft.BadICRC, craft.RoCEv2, 0, nil, "", layers.CRCBad, layers.CRCAbsent, false, craft.FindingICRCBad},
		{craft.BadICRC, craft.IBGRH, 0, nil, "", layers.CRCBad, layers.CRCGood, false, craft.FindingICRCBad},
		{craft.BadVCRC, craft.ERF, 0, nil, "", layers.CRCGood, layers.CRCBad, false, craft.FindingVCRCBad},
		{craft.Truncated, craft.RoCEv2IPv6, 0, layers.ErrTruncated, "", 0, 0, false, craft.FindingTruncated},
		{craft.Truncated, craft.IB, 0, layers.ErrTruncated, "ICRC", 0, 0, false, craft.FindingTruncated},
		{craft.WrongPad, craft.RoCEv1, 0, layers.ErrMalformed, "PadCnt", 0, 0, false, craft.FindingMalformed},
		{craft.BadSequence, craft.RoCEv2, 0, nil, "", layers.CRCGood, layers.CRCAbsent, true, craft.FindingBadSequence},
		{craft.RETHMismatch, craft.RoCEv2, 2, nil, "", layers.CRCGood, layers.CRCAbsent, true, craft.FindingLengthMismatch},
		{craft.UnknownOpcode, craft.IB, 0, nil, "", layers.CRCGood, layers.CRCGood, true, craft.FindingUnknownOpcode},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String()+"/"+tt.encap.String(), func(t *testing.T) {
			c, tr := run(t, craft.Config{Encap: tt.encap}, ops,
				craft.Faults{Corrupt: []craft.Corrupt{{Frame: tt.frame, Kind: tt.kind}}})
			fs := findings(tr, tt.finding)
			require.Len(t, fs, 1)
			n := fs[0].Frame
			if tt.frame > 0 {
				assert.Equal(t, tt.frame, n)
			}
			assert.Equal(t, tt.kind, tr.Frames[n-1].Info.Corrupt)
			ds := decodeAll(t, tt.encap, tr)
			for i, d := range ds {
				if i == n-1 {
					continue
				}
				require.NoError(t, d.err, "frame %d", i+1)
				assert.Equal(t, layers.CRCGood, d.icrc, "frame %d", i+1)
			}
			d := ds[n-1]
			if tt.decode != nil {
				var de *layers.DecodeError
				require.True(t, errors.As(d.err, &de), "%v", d.err)
				assert.ErrorIs(t, de, tt.decode)
				if tt.field != "" {
					assert.Equal(t, tt.field, de.Field)
				}
			} else {
				require.NoError(t, d.err)
				assert.Equal(t, tt.icrc, d.icrc)
				assert.Equal(t, tt.vcrc, d.vcrc)
			}
			if tt.kind == craft.UnknownOpcode {
				assert.False(t, d.bth.Opcode.Info().Known)
			}
			naks := findings(tr, craft.FindingNAK)
			switch {
			case tt.nak:
				require.NotEmpty(t, naks)
				assert.Equal(t, layers.MakeNakSyndrome(layers.NAKInvalidRequest), ds[naks[len(naks)-1].Frame-1].bth.AETH.Syndrome)
				assert.Error(t, c.Err())
			case tr.Frames[n-1].Info.From == craft.Requester:
				// The responder dropped it; go-back-N recovered.
				assert.NoError(t, c.Err())
				assert.NotEmpty(t, findings(tr, craft.FindingRetransmission))
			default:
				// The requester dropped an ACK; the next one covers it.
				assert.NoError(t, c.Err())
			}
		})
	}
}

func TestCorruptErrors(t *testing.T) {
	ops := []craft.Op{{Kind: craft.OpSend, Data: make([]byte, 8)}}
	tests := []struct {
		name string
		cfg  craft.Config
		c    craft.Corrupt
	}{
		{"vcrc on roce", craft.Config{}, craft.Corrupt{Kind: craft.BadVCRC}},
		{"reth without write", craft.Config{}, craft.Corrupt{Kind: craft.RETHMismatch}},
		{"frame past the end", craft.Config{}, craft.Corrupt{Frame: 9, Kind: craft.BadICRC}},
		{"sequence on an ack", craft.Config{}, craft.Corrupt{Frame: 2, Kind: craft.BadSequence}},
		{"no kind", craft.Config{}, craft.Corrupt{Frame: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := craft.New(tt.cfg)
			require.NoError(t, err)
			assert.Error(t, c.Run(ops, craft.Faults{Corrupt: []craft.Corrupt{tt.c}}))
		})
	}
}

func TestConfigAndOpErrors(t *testing.T) {
	cfgs := map[string]craft.Config{
		"mtu":      {MTU: 1000},
		"encap":    {Encap: 99},
		"service":  {Service: layers.ServiceXRC},
		"qpn":      {Requester: craft.Endpoint{QPN: 1 << 24}},
		"dscp":     {DSCP: 64},
		"ipv6":     {Encap: craft.RoCEv2IPv6, Requester: craft.Endpoint{IPv6: []byte{10, 0, 0, 1}}},
		"flow lbl": {FlowLabel: 1 << 20},
	}
	for name, cfg := range cfgs {
		_, err := craft.New(cfg)
		assert.Error(t, err, name)
	}
	ops := map[string]struct {
		svc layers.ServiceType
		op  craft.Op
	}{
		"read on uc":       {layers.ServiceUC, craft.Op{Kind: craft.OpRead}},
		"write on ud":      {layers.ServiceUD, craft.Op{Kind: craft.OpWrite}},
		"ud beyond mtu":    {layers.ServiceUD, craft.Op{Kind: craft.OpSend, Data: make([]byte, 1025)}},
		"unaligned atomic": {layers.ServiceRC, craft.Op{Kind: craft.OpFetchAdd, VA: 3}},
		"no kind":          {layers.ServiceRC, craft.Op{}},
	}
	for name, tt := range ops {
		c, err := craft.New(craft.Config{Service: tt.svc})
		require.NoError(t, err)
		assert.Error(t, c.Run([]craft.Op{tt.op}, craft.Faults{}), name)
	}
	c, err := craft.New(craft.Config{Service: layers.ServiceUD})
	require.NoError(t, err)
	assert.Error(t, c.Run([]craft.Op{{Kind: craft.OpSend}}, craft.Faults{NAKs: []craft.NAK{{Packet: 1}}}), "NAKs need RC")
	assert.Error(t, c.Connect(craft.CMOptions{}), "UD does not connect")
	assert.Error(t, c.Run(nil, craft.Faults{}))
}

func TestDeterministic(t *testing.T) {
	mk := func() craft.Trace {
		_, tr := run(t, craft.Config{MTU: 256}, []craft.Op{
			{Kind: craft.OpWrite, Data: craft.Pattern(5000, 0)}, {Kind: craft.OpRead, Data: craft.Pattern(900, 1)},
		}, craft.Faults{Seed: 3, Loss: craft.Loss{Prob: 0.1}, CE: craft.CEMarks{Prob: 0.2}})
		return tr
	}
	a, b := mk(), mk()
	require.Equal(t, len(a.Frames), len(b.Frames))
	for i := range a.Frames {
		assert.True(t, bytes.Equal(a.Frames[i].Data, b.Frames[i].Data), "frame %d", i+1)
		assert.Equal(t, a.Frames[i].Time, b.Frames[i].Time)
	}
	assert.Equal(t, a.Findings, b.Findings)
	assert.False(t, a.Frames[0].Time.Before(craft.DefaultStart))
}

func TestUDAndUCLoss(t *testing.T) {
	ops := []craft.Op{{Kind: craft.OpSend, Data: make([]byte, 10)}, {Kind: craft.OpSend, Data: make([]byte, 10)},
		{Kind: craft.OpSend, Data: make([]byte, 10)}}
	for _, svc := range []layers.ServiceType{layers.ServiceUD, layers.ServiceUC} {
		_, tr := run(t, craft.Config{Service: svc}, ops, craft.Faults{Loss: craft.Loss{Packets: []int{2}}})
		assert.Len(t, tr.Frames, 2, "%v: no retransmission", svc)
		assert.Len(t, findings(tr, craft.FindingPSNGap), 1)
	}
}

func TestCM(t *testing.T) {
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Connect(craft.CMOptions{PrivateData: []byte("hi")}))
	require.NoError(t, c.Run([]craft.Op{{Kind: craft.OpSend, Data: make([]byte, 4)}}, craft.Faults{}))
	require.NoError(t, c.Disconnect())
	require.Error(t, c.Disconnect(), "not connected any more")
	require.NoError(t, c.Reject(craft.CMOptions{}, layers.RejConsumerDefined))
	sidr, err := craft.New(craft.Config{Service: layers.ServiceUD})
	require.NoError(t, err)
	require.NoError(t, sidr.ResolveService(craft.CMOptions{}))
	tr := c.Trace()
	tr.Append(sidr.Trace())
	ds := decodeAll(t, craft.RoCEv2, tr)
	requireClean(t, craft.RoCEv2, ds)
	want := []layers.CMAttribute{layers.CMAttrREQ, layers.CMAttrREP, layers.CMAttrRTU, 0, 0, layers.CMAttrDREQ,
		layers.CMAttrDREP, layers.CMAttrREQ, layers.CMAttrREJ, layers.CMAttrSIDRReq, layers.CMAttrSIDRRep}
	require.Len(t, ds, len(want))
	for i, d := range ds {
		if want[i] == 0 {
			assert.False(t, d.hasMAD)
			continue
		}
		require.True(t, d.hasMAD, "frame %d", i+1)
		assert.Equal(t, layers.Opcode(0x64), d.bth.Opcode)
		assert.Equal(t, uint32(1), d.bth.DestQP)
		assert.Equal(t, uint32(layers.GSIQKey), d.bth.DETH.QKey)
		assert.Equal(t, uint32(1), d.bth.DETH.SrcQP)
		assert.Equal(t, gplayers.UDPPort(0xD872), d.udp.SrcPort, "rxe's QP1 source port")
		assert.Equal(t, layers.MgmtClassCM, d.mad.MgmtClass)
		assert.Equal(t, want[i], d.mad.CM.AttributeID, "frame %d", i+1)
	}
	req, rep := ds[0].mad.CM.REQ, ds[1].mad.CM.REP
	assert.Equal(t, craft.DefaultRequester.QPN, req.LocalQPN)
	assert.Equal(t, craft.DefaultRequester.PSN, req.StartingPSN)
	assert.Equal(t, layers.IPCMServiceID(layers.PortSpaceTCP, 7471), req.ServiceID)
	assert.True(t, req.IPCM.Valid)
	assert.Equal(t, "192.168.1.1", req.IPCM.SrcIP.String())
	assert.Equal(t, []byte("hi"), req.IPCM.ConsumerPrivateData[:2])
	assert.Equal(t, layers.MTU1024, req.PathMTU)
	assert.Equal(t, craft.DefaultResponder.QPN, rep.LocalQPN)
	assert.Equal(t, req.LocalCommID, rep.RemoteCommID)
	assert.Equal(t, ds[0].mad.TransactionID, ds[1].mad.TransactionID, "REP echoes the REQ's TID")
	assert.Equal(t, craft.DefaultResponder.QPN, ds[5].mad.CM.DREQ.RemoteQPN)
	assert.Equal(t, layers.RejConsumerDefined, ds[8].mad.CM.REJ.Reason)
	assert.Equal(t, craft.DefaultResponder.QPN, ds[10].mad.CM.SIDRRep.QPN)
	assert.Equal(t, uint32(craft.DefaultQKey), ds[10].mad.CM.SIDRRep.QKey)
	// GSI PSNs count per side.
	assert.Equal(t, []layers.PSN{0, 0, 1}, []layers.PSN{ds[0].bth.PSN, ds[1].bth.PSN, ds[2].bth.PSN})
}

func TestSourcePorts(t *testing.T) {
	// rxe's port by default (layers.RXESourcePort), or the one configured.
	var cfg craft.Config
	cfg.Requester.QPN, cfg.Responder.QPN = 0x11, 0x11
	for _, port := range []uint16{0, 1234} {
		cfg.UDPSrcPort = port
		b, err := craft.NewBuilder(cfg)
		require.NoError(t, err)
		f, err := b.Build(craft.Sample(0x04, 1, 4), craft.DefaultStart)
		require.NoError(t, err)
		want := port
		if port == 0 {
			want = layers.RXESourcePort(0x11, 0x11)
		}
		assert.Equal(t, want, binary.BigEndian.Uint16(f.Data[34:36]))
	}
}

func TestParsers(t *testing.T) {
	for _, e := range craft.Encaps() {
		got, err := craft.ParseEncap(e.String())
		require.NoError(t, err)
		assert.Equal(t, e, got)
	}
	for _, k := range craft.CorruptKinds() {
		got, err := craft.ParseCorruptKind(k.String())
		require.NoError(t, err)
		assert.Equal(t, k, got)
	}
	for k := craft.OpSend; k <= craft.OpFetchAdd; k++ {
		got, err := craft.ParseOpKind(k.String())
		require.NoError(t, err)
		assert.Equal(t, k, got)
	}
	_, err := craft.ParseEncap("ethernet")
	assert.Error(t, err)
	_, err = craft.ParseCorruptKind("bad")
	assert.Error(t, err)
	_, err = craft.ParseOpKind("jump")
	assert.Error(t, err)
}

func TestMerge(t *testing.T) {
	a, err := craft.New(craft.Config{})
	require.NoError(t, err)
	b, err := craft.New(craft.Config{Start: craft.DefaultStart.Add(500 * time.Nanosecond),
		Requester: craft.Endpoint{QPN: 0x21}, Responder: craft.Endpoint{QPN: 0x22}})
	require.NoError(t, err)
	loss := craft.Faults{Loss: craft.Loss{Packets: []int{1}}}
	ops := []craft.Op{{Kind: craft.OpSend, Data: make([]byte, 8)}, {Kind: craft.OpSend, Data: make([]byte, 8)}}
	require.NoError(t, a.Run(ops, loss))
	require.NoError(t, b.Run(ops, loss))
	m := craft.Merge(a.Trace(), b.Trace())
	require.Len(t, m.Frames, len(a.Frames())+len(b.Frames()))
	for i := 1; i < len(m.Frames); i++ {
		assert.False(t, m.Frames[i].Time.Before(m.Frames[i-1].Time))
	}
	require.Len(t, m.Findings, len(a.Trace().Findings)+len(b.Trace().Findings))
	pair := func(n int) bool { qp := m.Frames[n-1].Info.DestQP; return qp == 0x11 || qp == 0x12 }
	refs := 0
	for _, f := range m.Findings {
		if f.Ref > 0 {
			refs++
			assert.Equal(t, pair(f.Frame), pair(f.Ref), "a finding and the frame it names belong to one QP pair")
		}
	}
	assert.NotZero(t, refs)
}

func TestFlowControl(t *testing.T) {
	// Wait holds an op back until the ones before it completed.
	_, tr := run(t, craft.Config{}, []craft.Op{{Kind: craft.OpSend, Data: make([]byte, 8)},
		{Kind: craft.OpSend, Data: make([]byte, 8), Wait: true}}, craft.Faults{})
	ds := decodeAll(t, craft.RoCEv2, tr)
	assert.Equal(t, []layers.Opcode{0x04, 0x11, 0x04, 0x11}, opcodes(ds, layers.ServiceUnknown))
	assert.Equal(t, 2*craft.DefaultDelay, tr.Frames[2].Time.Sub(tr.Frames[0].Time), "sent when the ACK arrives")

	// MaxRdAtomic bounds outstanding READs; the window bounds unacknowledged PSNs.
	reads := []craft.Op{{Kind: craft.OpRead, Data: make([]byte, 8)}, {Kind: craft.OpRead, Data: make([]byte, 8)}}
	_, tr = run(t, craft.Config{MaxRdAtomic: 1}, reads, craft.Faults{})
	assert.Equal(t, []layers.Opcode{0x0C, 0x10, 0x0C, 0x10}, opcodes(decodeAll(t, craft.RoCEv2, tr), layers.ServiceUnknown))
	_, tr = run(t, craft.Config{MTU: 256, Window: 2, Ack: craft.AckPolicy{EveryPacket: true}},
		[]craft.Op{{Kind: craft.OpWrite, Data: make([]byte, 1024)}}, craft.Faults{})
	ds = decodeAll(t, craft.RoCEv2, tr)
	assert.Empty(t, tr.Findings)
	var reqs, acks []time.Time
	for i, d := range ds {
		if d.bth.Opcode == 0x11 {
			acks = append(acks, tr.Frames[i].Time)
		} else {
			reqs = append(reqs, tr.Frames[i].Time)
		}
	}
	require.Len(t, reqs, 4)
	require.Len(t, acks, 4)
	assert.Equal(t, acks[0].Add(craft.DefaultDelay), reqs[2], "the third packet waits for the first ACK")

	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	assert.Error(t, c.Run(reads, craft.Faults{NAKs: []craft.NAK{{Packet: 3}}}), "there is no packet 3")
}
