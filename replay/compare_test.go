package replay

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fakePeer is an in-process responder that answers by replaying the
// captured responder half of a plan: after request i it sends the
// responses the capture shows between request i and request i+1. It
// announces its own QPN, R_Key and VA, and answers a request that was not
// remapped to them with a NAK (remote access error), so a remapping fault
// shows as a difference. mutate, when set, may change or drop (nil) the
// n-th response (1-based) it sends.
type fakePeer struct {
	plan   *Plan
	dest   Dest
	mu     sync.Mutex // local is set by the player's goroutine, read by the server's
	local  Dest
	after  map[layers.PSN][]*Frame // captured request PSN → responses that follow it
	out    chan []byte
	sent   int
	mutate func(n int, dg []byte) []byte
	// coalesce leaves out a plain ACK that another plain ACK sent in the
	// same burst (after the same request) covers, as a responder that
	// acknowledges what one receive burst brought with one ACK does.
	coalesce bool
}

func newFakePeer(plan *Plan, mutate func(int, []byte) []byte) *fakePeer {
	fp := &fakePeer{plan: plan, dest: Dest{QPN: 0xABCDE, PSN: 777, RKey: 0xFEED01, VA: 0x10_0000_0000},
		after: map[layers.PSN][]*Frame{}, out: make(chan []byte, 1<<14), mutate: mutate}
	var last layers.PSN
	var b layers.BTH
	for _, s := range plan.Steps {
		require.NoError(nil, b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback))
		if s.Request {
			last = b.PSN
			fp.after[last] = nil
			continue
		}
		fp.after[last] = append(fp.after[last], s.Frame)
	}
	return fp
}

func (fp *fakePeer) Exchange(_ context.Context, local Dest) (Dest, error) {
	fp.mu.Lock()
	fp.local = local
	fp.mu.Unlock()
	return fp.dest, nil
}

func (fp *fakePeer) Send(req []byte) error {
	var b layers.BTH
	if err := b.DecodeFromBytes(req, gopacket.NilDecodeFeedback); err != nil {
		return err
	}
	fp.mu.Lock()
	local := fp.local
	fp.mu.Unlock()
	shift := local.PSN.Diff(fp.plan.Requester.PSN)
	ok := b.DestQP == fp.dest.QPN
	info := b.Opcode.Info()
	inRegion := func(va uint64, rkey uint32) bool {
		return rkey == fp.dest.RKey && va >= fp.dest.VA && va-fp.dest.VA < fp.plan.RegionLen
	}
	if info.Has(layers.HdrRETH) {
		ok = ok && inRegion(b.RETH.VA, b.RETH.RKey)
	}
	if info.Has(layers.HdrAtomicETH) {
		ok = ok && inRegion(b.AtomicETH.VA, b.AtomicETH.RKey)
	}
	if !ok {
		nak := layers.BTH{Opcode: mustOpcode("RC_ACKNOWLEDGE"), DestQP: local.QPN, PSN: b.PSN,
			AETH: layers.AETH{Syndrome: layers.MakeNakSyndrome(layers.NAKRemoteAccessError)}}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, nak.SerializableLayers(nil)...); err != nil {
			return err
		}
		fp.out <- buf.Bytes()
		return nil
	}
	if _, played := fp.after[b.PSN.Add(-shift)]; !played && info.Operation == layers.OpRDMAReadRequest {
		// The read-back after the play: memory as the capture leaves it.
		mp := &memoryPeer{mem: fp.plan.Image(), va: fp.dest.VA, mtu: fp.plan.MTU}
		if err := mp.Send(req); err != nil {
			return err
		}
		for _, dg := range mp.out {
			if err := patchBTH(dg, func(b *layers.BTH) { b.DestQP = local.QPN }); err != nil {
				return err
			}
			fp.out <- dg
		}
		return nil
	}
	burst := fp.after[b.PSN.Add(-shift)]
	for k, f := range burst {
		if fp.coalesce && k+1 < len(burst) && plainACK(f) && plainACK(burst[k+1]) {
			continue
		}
		dg := append([]byte(nil), f.Datagram()...)
		if err := patchBTH(dg, func(b *layers.BTH) { b.DestQP, b.PSN = local.QPN, b.PSN.Add(shift) }); err != nil {
			return err
		}
		fp.sent++
		if fp.mutate != nil {
			if dg = fp.mutate(fp.sent, dg); dg == nil {
				continue
			}
		}
		fp.out <- dg
	}
	return nil
}

// patchBTH changes the BTH that dg starts with in place: decoded, changed
// by change, serialized back over its bytes.
func patchBTH(dg []byte, change func(*layers.BTH)) error {
	var b layers.BTH
	if err := b.DecodeFromBytes(dg, gopacket.NilDecodeFeedback); err != nil {
		return err
	}
	change(&b)
	buf := gopacket.NewSerializeBuffer()
	if err := b.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		return err
	}
	copy(dg, buf.Bytes())
	return nil
}

// plainACK reports a captured frame that is an ACKNOWLEDGE with an ACK.
func plainACK(f *Frame) bool {
	var b layers.BTH
	return b.DecodeFromBytes(f.Datagram(), gopacket.NilDecodeFeedback) == nil && isPlainACK(&b)
}

func (fp *fakePeer) Receive(buf []byte, timeout time.Duration) (int, error) {
	select {
	case dg := <-fp.out:
		return copy(buf, dg), nil
	case <-time.After(timeout):
		return 0, os.ErrDeadlineExceeded
	}
}

func loadPlan(t *testing.T, name string) *Plan {
	c, err := Load(filepath.Join("../pcaps/rxe", name), LoadOptions{Decode: decodeOpts()})
	require.NoError(t, err)
	p, err := NewPlan(c, 0, 0)
	require.NoError(t, err)
	return p
}

func TestNewPlan(t *testing.T) {
	tests := []struct {
		file                string
		requests, responses int
		rkey                uint32
		va, regionLen       uint64
	}{
		{"write_bw.pcap", 800, 200, 0x2c6, 0x56005f76d000, 4096},
		{"read_bw.pcap", 200, 800, 0x2bd, 0x556ad5cc9000, 4096},
		{"atomic_fadd.pcap", 200, 200, 0x278, 0, 0},
		{"rc_pingpong.pcap", 20, 20, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p := loadPlan(t, tt.file)
			assert.Equal(t, tt.requests, p.Requests())
			assert.Equal(t, tt.responses, p.Responses())
			assert.Equal(t, tt.rkey, p.Responder.RKey)
			if tt.va != 0 {
				assert.Equal(t, tt.va, p.Responder.VA)
				assert.Equal(t, tt.regionLen, p.RegionLen)
			}
			assert.Equal(t, uint8(1), p.Side)
			assert.NotZero(t, p.Requester.QPN)
			assert.NotZero(t, p.Responder.QPN)
		})
	}
}

// TestImageSeedsReadAndAtomic checks the region image against what the
// captured READ responses and atomic ACKs say the responder held.
func TestImageSeedsReadAndAtomic(t *testing.T) {
	rd := loadPlan(t, "read_bw.pcap")
	img := rd.Image()
	require.Len(t, img, 4096)
	var b layers.BTH
	for _, s := range rd.Steps {
		if !s.Request {
			require.NoError(t, b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback))
			if b.Opcode == mustOpcode("RC_RDMA_READ_RESPONSE_FIRST") {
				assert.Equal(t, b.PacketPayload(), img[:len(b.PacketPayload())])
				break
			}
		}
	}
	at := loadPlan(t, "atomic_fadd.pcap")
	require.NotZero(t, at.RegionLen)
	img = at.Image()
	for _, s := range at.Steps {
		if s.Request {
			continue
		}
		require.NoError(t, b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback))
		// The first atomic ACK found the value at the lowest VA.
		assert.Equal(t, b.AtomicAckETH.OrigRemoteData, binary.LittleEndian.Uint64(img[:8]))
		break
	}
}

// TestImageWithLostSegments: a capture taken behind loss lacks some WRITE
// packets until they are retransmitted. With the LAST of the first
// message and the FIRST of the second missing, the second message's
// MIDDLEs must not land where the first one stopped (ib_write_bw writes
// the same buffer to the same VA each time, so the whole capture's image
// is the truth).
func TestImageWithLostSegments(t *testing.T) {
	p := loadPlan(t, "write_bw.pcap")
	want := p.Image()
	var b layers.BTH
	lastOfFirst, firstOfSecond := -1, -1
	for i, s := range p.Steps {
		if !s.Request {
			continue
		}
		require.NoError(t, b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback))
		switch {
		case lastOfFirst < 0 && b.Opcode == mustOpcode("RC_RDMA_WRITE_LAST"):
			lastOfFirst = i
		case lastOfFirst >= 0 && b.Opcode == mustOpcode("RC_RDMA_WRITE_FIRST"):
			firstOfSecond = i
		}
		if firstOfSecond >= 0 {
			break
		}
	}
	require.Positive(t, firstOfSecond)
	lossy := *p
	lossy.Steps = append(append(append([]Step(nil), p.Steps[:lastOfFirst]...), p.Steps[lastOfFirst+1:firstOfSecond]...), p.Steps[firstOfSecond+1:]...)
	assert.Equal(t, want, lossy.Image())
}

func TestCompareAgainstCapturedResponder(t *testing.T) {
	for _, name := range []string{"write_bw.pcap", "read_bw.pcap", "atomic_fadd.pcap", "rc_pingpong.pcap"} {
		for _, local := range []Dest{{}, {QPN: 0x321, PSN: 0xFFFFF0}} {
			t.Run(fmt.Sprintf("%s/%v", name, local.QPN), func(t *testing.T) {
				p := loadPlan(t, name)
				fp := newFakePeer(p, nil)
				res, err := Compare(context.Background(), p, fp, fp,
					CompareOptions{Local: local, Payload: true, Timeout: time.Second, Linger: 5 * time.Millisecond})
				require.NoError(t, err)
				var out bytes.Buffer
				res.WriteDiff(&out, "fake")
				assert.False(t, res.Differ(), "%s", out.String())
				assert.Equal(t, p.Requests(), res.Sent)
				assert.Equal(t, p.Responses(), len(res.Live))
			})
		}
	}
}

// TestCompareFindsDifferences plays against a fake that answers wrongly
// and compares the diff with its golden file.
func TestCompareFindsDifferences(t *testing.T) {
	setAETH := func(n int, syn layers.AETHSyndrome) func(int, []byte) []byte {
		return func(i int, dg []byte) []byte {
			if i == n {
				dg[12] = byte(syn)
			}
			return dg
		}
	}
	tests := []struct {
		name, file string
		payload    bool
		strict     bool
		mutate     func(int, []byte) []byte
		coalesce   bool
	}{
		{"write_nak_and_drop", "write_bw.pcap", false, true, func(i int, dg []byte) []byte {
			if i == 7 {
				return nil // a lost ACK
			}
			return setAETH(3, layers.MakeNakSyndrome(layers.NAKRemoteAccessError))(i, dg)
		}, false},
		{"write_nak_and_drop_coalescing", "write_bw.pcap", false, false, func(i int, dg []byte) []byte {
			if i == 7 {
				return nil // covered by the next ACK: not a difference unless strict
			}
			return setAETH(3, layers.MakeNakSyndrome(layers.NAKRemoteAccessError))(i, dg)
		}, false},
		// ACKs held back until the fourth message: the player waits in
		// vain for the first one the capture had before frame 122.
		{"write_coalesced_acks", "write_bw.pcap", false, false, func(i int, dg []byte) []byte {
			if i%4 != 0 && i < 200 {
				return nil // one ACK for every four messages, and the last
			}
			return dg
		}, false},
		// One ACK for each burst of messages: fewer ACKs, no difference.
		{"write_burst_coalesced_acks", "write_bw.pcap", false, false, nil, true},
		{"write_burst_coalesced_acks_strict", "write_bw.pcap", false, true, nil, true},
		{"write_last_ack_lost", "write_bw.pcap", false, false, func(i int, dg []byte) []byte {
			if i == 200 {
				return nil // nothing covers the last one
			}
			return dg
		}, false},
		{"write_extra_ack", "write_bw.pcap", false, false, func(i int, dg []byte) []byte {
			if i == 5 {
				binary.BigEndian.PutUint32(dg[12:], binary.BigEndian.Uint32(dg[12:])+1) // MSN one too far
			}
			return dg
		}, false},
		{"read_data", "read_bw.pcap", true, false, func(i int, dg []byte) []byte {
			if i == 2 {
				dg[20] ^= 0xFF // a byte of a READ Response Middle
			}
			return dg
		}, false},
		{"read_data_ignored_without_payload", "read_bw.pcap", false, false, func(i int, dg []byte) []byte {
			if i == 2 {
				dg[20] ^= 0xFF
			}
			return dg
		}, false},
		{"atomic_orig", "atomic_fadd.pcap", true, false, func(i int, dg []byte) []byte {
			if i == 5 {
				binary.BigEndian.PutUint64(dg[16:], binary.BigEndian.Uint64(dg[16:])+1)
			}
			return dg
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := loadPlan(t, tt.file)
			fp := newFakePeer(p, tt.mutate)
			fp.coalesce = tt.coalesce
			res, err := Compare(context.Background(), p, fp, fp,
				CompareOptions{Payload: tt.payload, StrictACKs: tt.strict, Timeout: 200 * time.Millisecond, Linger: 5 * time.Millisecond})
			require.NoError(t, err)
			if tt.coalesce {
				// A later ACK covers the ones left out: the peer had
				// answered as far, strict or not, and no wait runs out.
				assert.Empty(t, res.Stalls, "stalls before frames")
			}
			var out bytes.Buffer
			res.WriteDiff(&out, "fake")
			res.WriteSummary(&out)
			golden := filepath.Join("testdata", "compare_"+tt.name+".golden")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), out.String())
		})
	}
}

func TestDiff(t *testing.T) {
	r := func(keys ...string) []Response {
		var rs []Response
		for i, k := range keys {
			rs = append(rs, Response{Frame: 100 + i, Index: i + 1, Key: k})
		}
		return rs
	}
	tests := []struct {
		name string
		a, b []Response
		want []Hunk
	}{
		{"same", r("a", "b"), r("a", "b"), nil},
		{"changed", r("a", "b", "c"), r("a", "x", "c"), []Hunk{{Del: r("a", "b")[1:2], Add: r("a", "x")[1:2], CapturedAt: 1, LiveAt: 1}}},
		{"missing", r("a", "b", "c"), r("a", "c"), []Hunk{{Del: r("a", "b")[1:2], CapturedAt: 1, LiveAt: 1}}},
		{"extra at end", r("a"), r("a", "b"), []Hunk{{Add: r("a", "b")[1:], CapturedAt: 1, LiveAt: 1}}},
		{"nothing live", r("a", "b"), nil, []Hunk{{Del: r("a", "b"), CapturedAt: 0, LiveAt: 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, diff(tt.a, tt.b))
		})
	}
}

func mustOpcode(name string) layers.Opcode {
	op, ok := layers.OpcodeByName(name)
	if !ok {
		panic("no opcode " + name)
	}
	return op
}

// droppingPeer is a fakePeer whose wire dropped some datagrams.
type droppingPeer struct{ *fakePeer }

func (droppingPeer) Dropped() uint64 { return 3 }

// TestCompareReportsDrops: what the peer's wire dropped before the player
// read it is in the result and the summary.
func TestCompareReportsDrops(t *testing.T) {
	p := loadPlan(t, "rc_pingpong.pcap")
	fp := newFakePeer(p, nil)
	res, err := Compare(context.Background(), p, fp, droppingPeer{fp}, CompareOptions{Timeout: time.Second, Linger: 5 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, uint64(3), res.Dropped)
	var out bytes.Buffer
	res.WriteSummary(&out)
	assert.Contains(t, out.String(), "compare: the wire dropped 3 datagrams for the player before it read them (its queue was full)\n")
}

// TestDropCoveredACKs: a captured plain ACK left out and covered by a
// later matched ACK is taken out and counted; one replaced by something
// else, or followed by a response that is not a plain ACK, stays.
func TestDropCoveredACKs(t *testing.T) {
	ack := func(i int) Response {
		return Response{Frame: 100 + i, Index: i, Key: fmt.Sprintf("ack %d", i), PlainACK: true}
	}
	other := func(i int) Response { return Response{Frame: 100 + i, Index: i, Key: fmt.Sprintf("read %d", i)} }
	captured := []Response{ack(1), ack(2), ack(3), other(4), ack(5), ack(6)}
	live := []Response{{Index: 1, Key: "ack 3"}, {Index: 2, Key: "nak"}, {Index: 3, Key: "ack 6"}}
	hunks := diff(captured, live)
	out, n := dropCoveredACKs(captured, hunks)
	assert.Equal(t, 2, n, "ACKs 1 and 2, covered by 3")
	var left []int
	for _, h := range out {
		for _, d := range h.Del {
			left = append(left, d.Index)
		}
	}
	assert.Equal(t, []int{4, 5}, left, "the READ response, and ACK 5 with a NAK in its place")
}
