package replay

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/endpoint"
)

// framesAt makes frames of size bytes captured at the given offsets (µs).
func framesAt(size int, us ...int) []Frame {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var fs []Frame
	for i, u := range us {
		fs = append(fs, Frame{Packet: capture.Packet{Number: i + 1, Time: t0.Add(time.Duration(u) * time.Microsecond), Data: make([]byte, size)}, Selected: true})
	}
	return fs
}

func TestSchedule(t *testing.T) {
	us := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Microsecond)
		}
		return d
	}
	tests := []struct {
		name   string
		frames []Frame
		opts   PaceOptions
		loops  int
		want   []time.Duration
		asked  float64
		capped bool
	}{
		{"as captured", framesAt(100, 0, 10, 40), PaceOptions{}, 1, us(0, 10, 40), 3 / 60e-6, false},
		{"speed 2", framesAt(100, 0, 10, 40), PaceOptions{Speed: 2}, 1, us(0, 5, 20), 3 / 30e-6, false},
		{"loop adds one average gap", framesAt(100, 0, 10, 40), PaceOptions{}, 2, us(0, 10, 40, 60, 70, 100), 3 / 60e-6, false},
		{"pps", framesAt(100, 0, 1, 2, 3), PaceOptions{PPS: 10000}, 1, us(0, 100, 200, 300), 10000, false},
		// 1250 bytes = 10,000 bits = 100 µs at 100 Mb/s
		{"mbps", framesAt(1250, 0, 1, 2), PaceOptions{Mbps: 100}, 1, us(0, 100, 200), 10000, false},
		{"cap pps", framesAt(100, 0, 1, 2), PaceOptions{CapPPS: 1000}, 1, us(0, 1000, 2000), 3 / 3e-6, true},
		{"cap mbps", framesAt(1250, 0, 1, 2), PaceOptions{CapMbps: 10}, 1, us(0, 1000, 2000), 3 / 3e-6, true},
		{"pps under the cap", framesAt(100, 0, 1, 2), PaceOptions{PPS: 10000, CapPPS: DefaultCapPPS}, 1, us(0, 100, 200), 10000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(tt.frames, tt.opts)
			var got []time.Duration
			for range tt.loops {
				for i := range tt.frames {
					got = append(got, s.next(&tt.frames[i]).Round(time.Microsecond))
				}
			}
			assert.Equal(t, tt.want, got)
			assert.InDelta(t, tt.asked, s.askedPPS, tt.asked*1e-9)
			assert.Equal(t, tt.capped, s.capped)
		})
	}
}

// recorder is a Sender that keeps what it is given.
type recorder struct {
	calls  [][]int // frame numbers per Send
	accept func(*Frame) bool
	closed bool
}

func (r *recorder) Accepts(f *Frame) bool { return r.accept == nil || r.accept(f) }
func (r *recorder) Send(fs []Frame) (int, error) {
	var nums []int
	for _, f := range fs {
		nums = append(nums, f.Number)
	}
	r.calls = append(r.calls, nums)
	return len(fs), nil
}
func (r *recorder) Close() error { r.closed = true; return nil }

func TestPlayTopBatchesAndSkips(t *testing.T) {
	c := &Capture{Frames: framesAt(100, 0, 1, 2, 3, 4, 5, 6)}
	c.Frames[2].Selected = false
	rec := &recorder{accept: func(f *Frame) bool { return f.Number != 5 }}
	sum, err := Play(context.Background(), c, rec, PaceOptions{Top: true, Batch: 2, Loop: 2})
	require.NoError(t, err)
	assert.Equal(t, [][]int{{1, 2}, {4, 6}, {7}, {1, 2}, {4, 6}, {7}}, rec.calls)
	assert.Equal(t, int64(10), sum.Packets)
	assert.Equal(t, int64(1000), sum.Bytes)
	assert.Equal(t, int64(2), sum.Skipped, "frame 5, once per loop")
	assert.Zero(t, sum.AskedPPS)
	assert.False(t, sum.Paced)
}

func TestPlayPacedMeasuresError(t *testing.T) {
	c := &Capture{Frames: framesAt(100, 0, 1, 2, 3, 4)}
	rec := &recorder{}
	sum, err := Play(context.Background(), c, rec, PaceOptions{PPS: 2000})
	require.NoError(t, err)
	assert.Len(t, rec.calls, 5, "one frame per Send when paced")
	assert.True(t, sum.Paced)
	assert.Equal(t, int64(5), sum.Packets)
	assert.Equal(t, 2000.0, sum.AskedPPS)
	assert.NotZero(t, sum.AchievedPPS)
	assert.GreaterOrEqual(t, sum.ErrMax, sum.ErrP50)
	assert.GreaterOrEqual(t, sum.ErrP50, time.Duration(0))
}

func TestPlayStopsWithContext(t *testing.T) {
	c := &Capture{Frames: framesAt(100, 0, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Play(ctx, c, &recorder{}, PaceOptions{Top: true})
	assert.ErrorIs(t, err, context.Canceled)
}

// fakeWire records the datagrams written to it.
type fakeWire struct {
	sent   []endpoint.Datagram
	batch  int
	closed bool
}

func (w *fakeWire) ReadBatch([]endpoint.Datagram) (int, error) { return 0, endpoint.ErrWireClosed }
func (w *fakeWire) WriteBatch(dgs []endpoint.Datagram) (int, error) {
	n := min(len(dgs), w.batch)
	for _, d := range dgs[:n] {
		d.Payload = append([]byte(nil), d.Payload...)
		w.sent = append(w.sent, d)
	}
	return n, nil
}
func (w *fakeWire) LocalAddr() netip.AddrPort { return netip.MustParseAddrPort("127.0.0.1:4791") }
func (w *fakeWire) BatchSize() int            { return w.batch }
func (w *fakeWire) Close() error              { w.closed = true; return nil }

func TestWireSender(t *testing.T) {
	c, err := Load("../pcaps/rxe/rc_pingpong.pcap", LoadOptions{Decode: decodeOpts()})
	require.NoError(t, err)
	w := &fakeWire{batch: 3}
	s := NewWireSender(w, netip.MustParseAddrPort("127.0.0.2:0"))
	sum, err := Play(context.Background(), c, s, PaceOptions{Top: true, Batch: 8})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.True(t, w.closed)
	assert.Equal(t, int64(80), sum.Packets, "the 80 RoCE frames")
	assert.Equal(t, int64(13), sum.Skipped, "TCP and ARP frames")
	require.Len(t, w.sent, 80)
	i := 0
	for _, f := range c.Frames {
		if !f.RoCEv2 {
			continue
		}
		d := w.sent[i]
		i++
		assert.Equal(t, f.Datagram(), d.Payload, "frame %d", f.Number)
		assert.Equal(t, netip.MustParseAddrPort("127.0.0.2:4791"), d.Dst)
		assert.Equal(t, f.HopLimit, d.HopLimit)
	}
}

func TestCheckTarget(t *testing.T) {
	assert.NoError(t, CheckTarget(netip.MustParseAddr("127.0.0.2"), false))
	assert.NoError(t, CheckTarget(netip.MustParseAddr("::1"), false))
	assert.NoError(t, CheckTarget(netip.MustParseAddr("::ffff:127.0.0.1"), false))
	assert.ErrorContains(t, CheckTarget(netip.MustParseAddr("192.168.77.12"), false), "needs --allow-remote")
	assert.NoError(t, CheckTarget(netip.MustParseAddr("192.168.77.12"), true))
	assert.NoError(t, CheckInterface("lo", false))
	assert.ErrorContains(t, CheckInterface("nonexistent0", true), "interface nonexistent0")
	ifs, err := net.Interfaces()
	require.NoError(t, err)
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagLoopback == 0 {
			assert.ErrorContains(t, CheckInterface(ifi.Name, false), "interface "+ifi.Name+" is not a loopback device: sending out of it needs --allow-remote")
			assert.NoError(t, CheckInterface(ifi.Name, true))
			break
		}
	}
}

// TestPacketSenderLoopback sends frames out of lo and captures them back.
func TestPacketSenderLoopback(t *testing.T) {
	s, err := OpenPacketSender("lo")
	if err != nil {
		t.Skipf("no AF_PACKET here: %v", err)
	}
	defer s.Close()
	live, err := capture.OpenLive("lo", 0, capture.RoCEFilter())
	require.NoError(t, err)
	defer live.Close()
	c, err := Load("../pcaps/rxe/atomic_fadd.pcap", LoadOptions{Decode: decodeOpts(), MaxFrames: 60})
	require.NoError(t, err)
	var roce []Frame
	for _, f := range c.Frames {
		if f.RoCEv2 && len(roce) < 3 {
			roce = append(roce, f)
		}
	}
	n, err := s.Send(roce)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	// Other programs' RoCEv2 on lo (another test package's endpoints) may
	// come in between: skip what is not one of ours, and expect ours in
	// the order sent.
	require.NoError(t, live.SetReadDeadline(time.Now().Add(5*time.Second)))
	for i := 0; i < len(roce); {
		got, err := live.Next()
		require.NoError(t, err, "capturing frame %d of %d sent", i+1, len(roce))
		if !slices.ContainsFunc(roce, func(f Frame) bool { return bytes.Equal(f.Data, got.Data) }) {
			continue
		}
		assert.Equal(t, roce[i].Data, got.Data, "frame %d", i+1)
		i++
	}
}
