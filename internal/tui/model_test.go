package tui

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/dfilter"
	"github.com/ibwire/ibwire/internal/looptest"
	"github.com/ibwire/ibwire/internal/output"
	"github.com/ibwire/ibwire/layers"
)

const (
	writeLoss = "../../pcaps/rxe/write_bw_loss.pcap"
	rping     = "../../pcaps/rxe/rping.pcap"
	sendRNR   = "../../pcaps/rxe/send_bw_rnr.pcap"
	readBW    = "../../pcaps/rxe/read_bw.pcap"
	cnpECN    = "../../pcaps/rc_cnp_ecn.pcap"
)

// loadModel loads a capture completely and returns the model.
func loadModel(t testing.TB, path, filter string) *Model {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	m, err := NewModel(ctx, r, Options{Name: path, Filter: filter, Publish: time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { cancel(); m.Close() })
	waitFor(t, changes(m), func() bool { s := m.Status(); return s.Done && !s.Filtering })
	return m
}

// changes has m tell its changes on the channel it returns, coalesced, as
// the UI is told them. What m published before is for the caller to look
// at first: waitFor checks its condition before it waits.
func changes(m *Model) <-chan struct{} {
	ch := make(chan struct{}, 1)
	m.setNotify(func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	return ch
}

// waitFor waits for cond, checking it each time the model says it changed.
func waitFor(t testing.TB, changed <-chan struct{}, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("timed out waiting for the model")
		}
	}
}

// TestModelMatchesStreamingDecode checks that every frame read back from the
// spool, at any place, decodes to what a straight pass over the file gives.
func TestModelMatchesStreamingDecode(t *testing.T) {
	for _, path := range []string{writeLoss, rping, sendRNR} {
		t.Run(path, func(t *testing.T) {
			m := loadModel(t, path, "")
			r, err := capture.Open(path)
			require.NoError(t, err)
			defer r.Close()
			dec := decode.NewDecoder(decode.Options{})
			an := decode.NewAnalyzer(decode.AnalyzerOptions{})
			var want []string
			var wantConv []uint32
			var sum output.Summary
			sum.Time = output.TimeSinceFirst
			for {
				cp, err := r.Next()
				if err != nil {
					break
				}
				p := dec.Decode(cp)
				an.Analyze(p)
				want = append(want, string(output.AppendInfo(nil, p)))
				wantConv = append(wantConv, p.Analysis.Conv)
			}
			require.Equal(t, len(want), m.Status().Packets)
			rd := newReader(m)
			// Backwards, one at a time: every frame from its checkpoint.
			for n := len(want); n >= 1; n-- {
				p, err := rd.packet(n)
				require.NoError(t, err)
				assert.Equal(t, n, p.Number)
				assert.Equal(t, want[n-1], string(output.AppendInfo(nil, p)), "frame %d", n)
				assert.Equal(t, wantConv[n-1], p.Analysis.Conv, "frame %d", n)
			}
		})
	}
}

func TestModelFilter(t *testing.T) {
	tests := []struct{ filter string }{
		{""},
		{"infiniband.aeth.syndrome.opcode == 3"},
		{"ibwire.analysis.retransmission"},
	}
	for i := range tests {
		m := loadModel(t, writeLoss, tests[i].filter)
		s := m.Status()
		if tests[i].filter == "" {
			assert.Equal(t, s.Packets, s.Displayed)
			continue
		}
		// The frames shown are those a straight pass with the filter shows.
		f := dfilter.MustCompile(tests[i].filter)
		var want []int
		require.NoError(t, m.Scan(context.Background(), s.Packets, func(p *decode.Packet) bool {
			if f.Match(p) {
				want = append(want, p.Number)
			}
			return true
		}))
		require.NotEmpty(t, want, tests[i].filter)
		require.Len(t, want, s.Displayed, tests[i].filter)
		for r, n := range want {
			assert.Equal(t, n, m.Frame(r))
		}
		// Refiltering the loaded model gives the same rows as filtering while loading.
		m2 := loadModel(t, writeLoss, "")
		changed := changes(m2)
		require.NoError(t, m2.SetFilter(tests[i].filter))
		waitFor(t, changed, func() bool { return !m2.Status().Filtering })
		require.Equal(t, s.Displayed, m2.Displayed())
		for r := 0; r < s.Displayed; r++ {
			assert.Equal(t, m.Frame(r), m2.Frame(r))
		}
	}
}

// TestModelStreamsStdin feeds a capture through a pipe in two halves: the
// packets of the first half are shown before the second is written, as
// with tcpdump -w - | ibtui -r -.
func TestModelStreamsStdin(t *testing.T) {
	data, err := os.ReadFile(rping)
	require.NoError(t, err)
	pr, pw := io.Pipe()
	half := len(data) / 2
	go func() {
		pw.Write(data[:half])
	}()
	r, err := capture.NewReader(pr, "stdin")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := NewModel(ctx, r, Options{Name: "stdin", Streaming: true, Publish: time.Millisecond})
	require.NoError(t, err)
	defer m.Close()
	changed := changes(m)
	waitFor(t, changed, func() bool { return m.Status().Packets > 10 })
	assert.False(t, m.Status().Done)
	go func() {
		pw.Write(data[half:])
		pw.Close()
	}()
	waitFor(t, changed, func() bool { return m.Status().Done })
	full := loadModel(t, rping, "")
	assert.Equal(t, full.Status().Packets, m.Status().Packets)
}

// TestModelLiveLoopback captures live on lo while RoCEv2 datagrams go to
// 127.0.0.1:4791, and sees them appear as they are sent (AF_PACKET needs
// root; the test skips without it).
func TestModelLiveLoopback(t *testing.T) {
	// The datagrams go to 127.0.0.1:4791, where another package's test
	// may have a peer listening that should not hear them.
	looptest.Hold(t)
	src, err := capture.OpenLive("lo", 262144, capture.RoCEFilter())
	if err != nil {
		t.Skipf("no live capture on lo here (needs root and AF_PACKET): %v", err)
	}
	defer src.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := NewModel(ctx, src, Options{Name: "live lo", Streaming: true, Publish: time.Millisecond})
	require.NoError(t, err)
	defer m.Close()
	changed := changes(m)

	// Unconnected, so that the port being closed (ICMP unreachable) does
	// not fail the next write.
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer conn.Close()
	to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4791}
	op, ok := layers.OpcodeByName("RC_SEND_ONLY")
	require.True(t, ok)
	// A BTH (opcode, flags, P_Key 0xFFFF, QP 0x4242, AckReq and the PSN),
	// eight payload bytes and an ICRC.
	send := func(psn byte) {
		bth := []byte{byte(op), 0, 0xff, 0xff, 0, 0, 0x42, 0x42, 0x80, 0, 0, psn}
		_, err := conn.WriteTo(append(bth, []byte("ibtui-lo\x00\x00\x00\x00")...), to)
		require.NoError(t, err)
	}
	// Other programs may send RoCEv2 on lo meanwhile (another test
	// package's endpoints): count only this test's packets, by their QP.
	ours := func() []string {
		r := newReader(m)
		var infos []string
		for i := 1; i <= m.Status().Packets; i++ {
			p, err := r.packet(i)
			require.NoError(t, err)
			if info := string(output.AppendInfo(nil, p)); strings.Contains(info, "QP=0x004242") {
				infos = append(infos, info)
			}
		}
		return infos
	}
	for i := range 3 {
		send(byte(i))
	}
	waitFor(t, changed, func() bool { return len(ours()) >= 3 })
	send(3)
	waitFor(t, changed, func() bool { return len(ours()) >= 4 })
	infos := ours()
	assert.Len(t, infos, 4)
	assert.Contains(t, infos[3], "RC Send Only QP=0x004242")
	assert.False(t, m.Status().Done, "a live capture goes on")
}
