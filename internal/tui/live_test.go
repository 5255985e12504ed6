package tui

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// liveSource is a capture read from a pipe that reports kernel drops, as
// a live interface does.
type liveSource struct {
	*capture.Reader
	dropped uint64
}

func (s liveSource) Stats() (capture.Stats, error) {
	return capture.Stats{Received: 1000, Dropped: s.dropped}, nil
}

// tableFrames is the Frames cell of connection id's row in the QP table,
// read on the event loop; "" when the table has no such row.
func tableFrames(u *UI, id uint32) string {
	for _, r := range u.convs.rows {
		if r.id == id {
			return r.cells[convFrames]
		}
	}
	return ""
}

// TestStreamingUI feeds a capture to the viewer through a pipe in two
// halves, as tcpdump -w - | ibtui -r - (or a live capture) does: the
// first half shows and the keys work while the source is still open, the
// status bar shows the rate (and the drops, live), the QP table shows the
// analysis of the whole first half while the stream pauses, and the QP
// table and the tailed packet list follow the second half when it comes.
func TestStreamingUI(t *testing.T) {
	data, err := os.ReadFile(rping)
	require.NoError(t, err)
	full := loadModel(t, rping, "")
	total := full.Status().Packets
	// The RC connection: the one with the most frames.
	var id uint32
	var frames uint64
	for _, c := range full.Conversations() {
		if n := c.Dir[0].Packets + c.Dir[1].Packets; n > frames {
			id, frames = c.ID, n
		}
	}
	require.NotZero(t, id)
	wantFrames := strconv.FormatUint(frames, 10)
	half := len(data) / 2
	// The first half holds firstHalf whole packets; the QP table must show
	// what an Analyzer gives over exactly those, though nothing comes after
	// them until the test sends the rest.
	firstHalf, halfFrames := prefixConvFrames(t, data[:half], id)
	require.Greater(t, firstHalf, 10)
	require.NotEqual(t, wantFrames, halfFrames)

	tests := []struct {
		name    string
		live    bool
		loading *regexp.Regexp // the status while the source is open
		done    *regexp.Regexp // the status once it ended
	}{
		{"stdin", false, regexp.MustCompile(`\| \d+ packets \| loading \d+ pkt/s`), regexp.MustCompile(`\| ` + strconv.Itoa(total) + ` packets\n`)},
		// Once the source ended it no longer says it is capturing.
		{"live", true, regexp.MustCompile(`\| \d+ packets \| capturing \d+ pkt/s \| 7 dropped`),
			regexp.MustCompile(`\| ` + strconv.Itoa(total) + ` packets \| capture ended \| 7 dropped\n`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.Close() })
			// The first half in two writes: the first packets, published
			// (which snapshots the analysis), then the rest of the half
			// soon after, which a snapshot taken only as packets are
			// published would leave out of the QP table.
			const head = 300
			more := make(chan struct{})
			go func() {
				pw.Write(data[:head])
				select {
				case <-more:
					pw.Write(data[head:half])
				case <-t.Context().Done():
				}
			}()
			r, err := capture.NewReader(pr, "stdin")
			require.NoError(t, err)
			var src Source = r
			if tc.live {
				src = liveSource{Reader: r, dropped: 7}
			}
			ctx, cancel := context.WithCancel(context.Background())
			m, err := NewModel(ctx, src, Options{Name: "stdin", Streaming: true, Publish: time.Millisecond})
			require.NoError(t, err)
			t.Cleanup(func() { cancel(); m.Close() })

			h := startModel(t, m, 120, 40, true)
			h.waitUntil(func(u *UI) bool { return u.m.Status().Packets >= 1 }, "the first packets")
			close(more)
			// The first half is shown while the pipe is still open.
			h.waitUntil(func(u *UI) bool { return u.m.Status().Packets == firstHalf }, "the first half")
			assert.False(t, m.Status().Done, "the pipe is open")
			// The keys work before the load finishes: the QP table, back,
			// and the last packet, which the list then tails.
			h.keys("C")
			// The stream pauses after the first half: the analysis of all
			// of it still reaches the table.
			h.waitUntil(func(u *UI) bool { return u.view == viewConvs && tableFrames(u, id) == halfFrames },
				"the QP table over the whole first half")
			var partial string
			h.waitUntil(func(u *UI) bool {
				partial = tableFrames(u, id)
				return u.view == viewConvs && partial != ""
			}, "the QP table, partial")
			assert.NotEqual(t, wantFrames, partial)
			h.keys("<esc>", "G")
			first := m.Status().Packets
			h.waitUntil(func(u *UI) bool { return u.view == viewPackets && u.selected >= first }, "the last packet")
			assert.Regexp(t, tc.loading, h.screen())
			assert.Less(t, first, total, "the second half is still to come")
			h.keys("C")

			go func() {
				pw.Write(data[half:])
				pw.Close()
			}()
			// The QP table fills in as the rest comes, without a key.
			h.waitUntil(func(u *UI) bool { return tableFrames(u, id) == wantFrames }, "the QP table, complete")
			h.waitFor("[ QPs ]", " "+wantFrames+" ")
			// The status once the source ended (the table may be complete
			// a moment before the end is published).
			h.waitUntil(func(u *UI) bool { return u.m.Status().Done }, "the end")
			s := h.waitMatch(tc.done)
			assert.Regexp(t, tc.done, s)
			assert.NotContains(t, s, "capturing")
			assert.Contains(t, s, "[ QPs ]")
			h.keys("<esc>")
			h.waitUntil(func(u *UI) bool { return u.selected == total }, "the list tailed the capture to its last packet")
			h.waitFor("Frame " + strconv.Itoa(total) + ":")
		})
	}
}

// prefixConvFrames decodes the whole packets of a pcap prefix with a
// decode.Analyzer, as the model's loader does, and returns how many there
// are and the Frames of connection id over them ("" when it has no such
// connection yet).
func prefixConvFrames(t *testing.T, data []byte, id uint32) (int, string) {
	t.Helper()
	r, err := capture.NewReader(bytes.NewReader(data), "prefix")
	require.NoError(t, err)
	dec := decode.NewDecoder(decode.Options{})
	an := decode.NewAnalyzer(decode.AnalyzerOptions{})
	n := 0
	for {
		cp, err := r.Next()
		if err != nil {
			break
		}
		n++
		an.Analyze(dec.Decode(cp))
	}
	for _, c := range an.Conversations() {
		if c.ID == id {
			return n, strconv.FormatUint(c.Dir[0].Packets+c.Dir[1].Packets, 10)
		}
	}
	return n, ""
}
