package tui

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// framesSource gives n copies of data as Ethernet frames 1 µs apart.
type framesSource struct {
	data []byte
	n, i int
}

func (s *framesSource) NextInto(p *capture.Packet) error {
	if s.i == s.n {
		return io.EOF
	}
	s.i++
	p.Data = s.data
	p.Time, p.Length = time.Unix(1700000000, 0).Add(time.Duration(s.i)*time.Microsecond), len(s.data)
	p.LinkType = layers.LinkTypeEthernet
	p.Number = s.i
	return nil
}

func loadSource(t testing.TB, src Source, opts Options) *Model {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	opts.Publish = time.Millisecond
	m, err := NewModel(ctx, src, opts)
	require.NoError(t, err)
	t.Cleanup(func() { cancel(); m.Close() })
	waitFor(t, changes(m), func() bool { return m.Status().Done })
	return m
}

// TestMalformedFramesCostWhatGoodOnesCost: a frame that is empty, too short
// for its link layer, not RDMA at all, or RoCE cut inside its BTH costs the
// index its mark, as a good frame does (it kept a whole analysis each: 88
// bytes and more), and the detail view still gets the analysis the loader
// made. Only the RoCE frame is malformed InfiniBand, with a finding; the
// others are no InfiniBand at all.
func TestMalformedFramesCostWhatGoodOnesCost(t *testing.T) {
	r, err := capture.Open("../../pcaps/rxe/rping.pcap")
	require.NoError(t, err)
	var roce capture.Packet
	for roce.Number != 6 { // RC SEND ONLY: Ethernet, IPv4, UDP 4791, BTH, 16 bytes, ICRC
		require.NoError(t, r.NextInto(&roce))
	}
	r.Close()
	tests := []struct {
		name    string
		data    []byte
		finding bool
	}{
		{"empty", nil, false},
		{"short ethernet", []byte{1, 2, 3, 4, 5}, false},
		{"truncated ipv4", append(make([]byte, 12), 0x08, 0x00, 0x45, 0x00), false},
		{"roce cut inside the BTH", roce.Data[:14+20+8+6], true},
	}
	const n = 5000
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := loadSource(t, &framesSource{data: tc.data, n: n}, Options{Name: tc.name})
			require.Equal(t, n, m.Status().Packets)
			// What a straight pass gives, frame by frame.
			dec := decode.NewDecoder(decode.Options{})
			an := decode.NewAnalyzer(decode.AnalyzerOptions{})
			src := &framesSource{data: tc.data, n: n}
			var cp capture.Packet
			for src.NextInto(&cp) == nil {
				p := dec.Decode(cp)
				an.Analyze(p)
				got, _ := m.analysisOf(cp.Number)
				require.Equal(t, p.Analysis, got, "frame %d", cp.Number)
				assert.Equal(t, tc.finding, got.Findings != 0, "frame %d: findings %v", cp.Number, got.Findings)
			}
			m.mu.RLock()
			defer m.mu.RUnlock()
			assert.Zero(t, m.anomalies.len(), "malformed frames keep a whole analysis each")
		})
	}
}

// TestMaxPackets: loading stops at MaxPackets, and the status says so when
// the source had more (not when it had exactly that many); the status bar
// tells the user, with the flag that moves the bound.
func TestMaxPackets(t *testing.T) {
	tests := []struct {
		name       string
		n, max     int
		want       int
		wantCapped bool
	}{
		{"more than the bound", 1000, 100, 100, true},
		{"exactly the bound", 100, 100, 100, false},
		{"fewer", 50, 100, 50, false},
		{"no bound", 1000, 0, 1000, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := loadSource(t, &framesSource{data: nil, n: tc.n}, Options{Name: tc.name, MaxPackets: tc.max})
			st := m.Status()
			assert.Equal(t, tc.want, st.Packets)
			assert.Equal(t, tc.wantCapped, st.Capped)
		})
	}
	m := loadSource(t, &framesSource{data: nil, n: 1000}, Options{Name: "x", MaxPackets: 100})
	h := startModel(t, m, 120, 40, true)
	h.waitFor("100 packets", "stopped at 100 packets (--max-packets)")
}

// bustICRC is a capture read with the last byte of every frame inverted:
// each RoCE packet's ICRC then fails.
type bustICRC struct{ *capture.Reader }

func (s bustICRC) NextInto(p *capture.Packet) error {
	if err := s.Reader.NextInto(p); err != nil {
		return err
	}
	if n := len(p.Data); n > 0 {
		p.Data = append([]byte(nil), p.Data...)
		p.Data[n-1] ^= 0xFF
	}
	return nil
}

// TestBadICRCCostsNothingMore: RoCE packets whose ICRC fails (what a
// corrupting link or a forger sends) keep no more in the index than the
// same packets intact: the finding rides in the mark beside the
// conversation.
func TestBadICRCCostsNothingMore(t *testing.T) {
	for _, path := range []string{rping, readBW} {
		t.Run(path, func(t *testing.T) {
			clean := loadModel(t, path, "")
			r, err := capture.Open(path)
			require.NoError(t, err)
			defer r.Close()
			bad := loadSource(t, bustICRC{r}, Options{Name: path})
			require.Equal(t, clean.Status().Packets, bad.Status().Packets)
			busted := 0
			for f := 1; f <= bad.Status().Packets; f++ {
				a, _ := bad.analysisOf(f)
				if a.Has(decode.FindICRCBad) {
					busted++
					c, _ := clean.analysisOf(f)
					assert.Equal(t, c.Conv, a.Conv, "frame %d", f)
				}
			}
			require.Positive(t, busted)
			assert.Equal(t, clean.anomalies.len(), bad.anomalies.len(), "a bad ICRC keeps a record of its own")
		})
	}
}
