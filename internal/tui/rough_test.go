package tui

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/layers"
)

// Issue 17 item 8: the rough edges, each at 120×40 and 80×24.
var sizes = []struct{ w, h int }{{120, 40}, {80, 24}}

func forSizes(t *testing.T, fn func(t *testing.T, w, h int)) {
	for _, sz := range sizes {
		t.Run(strconv.Itoa(sz.w)+"x"+strconv.Itoa(sz.h), func(t *testing.T) { fn(t, sz.w, sz.h) })
	}
}

// writeFrames writes frames from..to (1-based) of path to a new pcap.
func writeFrames(t *testing.T, path string, from, to int) string {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	out := filepath.Join(t.TempDir(), "cut.pcap")
	f, err := os.Create(out)
	require.NoError(t, err)
	defer f.Close()
	w, err := capture.NewWriter(f, capture.FormatPcap, layers.LinkTypeEthernet, false)
	require.NoError(t, err)
	var p capture.Packet
	for n := 1; n <= to; n++ {
		require.NoError(t, r.NextInto(&p))
		if n >= from {
			require.NoError(t, w.WritePacket(p))
		}
	}
	require.NoError(t, w.Close())
	return out
}

// TestPSNGraphAxisIsThePSN: a capture that starts after a lost request
// holds a NAK naming a PSN before its first request. The axis is the PSN
// on the wire (it was the distance from the first PSN seen: -1 there).
func TestPSNGraphAxisIsThePSN(t *testing.T) {
	// write_bw_loss from frame 148, a request for PSN 11705655: the ACKs
	// after it name 11705530 and on, the NAK of frame 159 11705568.
	path := writeFrames(t, writeLoss, 148, 170)
	forSizes(t, func(t *testing.T, w, hh int) {
		h := start(t, path, "", w, hh)
		h.keys("P")
		h.waitFor("PSN graph, connection")
		s := h.waitFor("PSN 11705530..11705655")
		assert.NotRegexp(t, regexp.MustCompile(`(?m)^\s+-\d+│`), s, "a PSN below the first")
	})
}

// TestIOGraphNumbers: the I/O graph's totals and maxima are integers as
// ibdump's -z io,stat prints them (2039808, not 2.039808e+06), and the
// sparklines have a time axis (from the capture's start).
func TestIOGraphNumbers(t *testing.T) {
	forSizes(t, func(t *testing.T, w, hh int) {
		h := start(t, writeLoss, "", w, hh)
		h.keys("I")
		h.waitFor("SUM(ibwire.payload.len)  (max")
		h.waitUntil(func(u *UI) bool { return !u.io.busy }, "the I/O graph computed")
		s := h.waitFor("SUM(ibwire.payload.len)  (max")
		assert.Contains(t, s, "total 2039808)")
		assert.NotContains(t, s, "e+0")
		assert.Regexp(t, regexp.MustCompile(`(?m)^┬[─┬]+\n0s +\d+m?s +\d+m?s`), s, "a time axis under the sparklines")
	})
}

// TestHelpScrollsByHalfPages: ctrl-d and ctrl-u move the help half a
// page, as they move the packet list.
func TestHelpScrollsByHalfPages(t *testing.T) {
	forSizes(t, func(t *testing.T, w, hh int) {
		h := start(t, writeLoss, "", w, hh)
		h.keys("?")
		h.waitFor("ibtui keys")
		h.keys("<ctrl-d>")
		s := h.waitScreen(func(s string) bool { return !strings.Contains(s, "ibtui keys") }, "ctrl-d scrolled the help")
		assert.Contains(t, s, "[ Help ]")
		h.waitUntil(func(u *UI) bool { r, _ := u.help.GetScrollOffset(); return r == (hh-4)/2 }, "half a page down")
		h.keys("<ctrl-u>")
		h.waitFor("ibtui keys")
	})
}

// TestTreeOpensOnInfiniBand: the detail tree opens with the InfiniBand part
// (and the analysis) expanded and selected, and the layers below it
// collapsed, as Wireshark users expect; a protocol the user opens or
// closes stays so from packet to packet.
func TestTreeOpensOnInfiniBand(t *testing.T) {
	forSizes(t, func(t *testing.T, w, hh int) {
		h := start(t, writeLoss, "", w, hh)
		h.keys("100G")
		s := h.waitFor("Frame 100:", "InfiniBand (RoCEv2)", "Base Transport Header")
		assert.NotContains(t, s, "Frame Number:")
		open := func(u *UI) map[string]bool {
			m := map[string]bool{}
			for i, n := range u.detail.nodes {
				if n.Depth == 0 {
					m[n.Field.Name] = u.detail.tree[i].IsExpanded()
				}
			}
			return m
		}
		h.waitUntil(func(u *UI) bool {
			i := u.currentNode()
			return u.selected == 100 && i >= 0 && u.detail.nodes[i].Field.Name == "infiniband"
		}, "the InfiniBand line selected")
		var got map[string]bool
		h.onLoop(false, "the tree", func() { got = open(h.ui) })
		assert.Equal(t, map[string]bool{"frame": false, "eth": false, "ip": false, "udp": false, "infiniband": true, "ibwire": true}, got)
		// Open the IP header, close InfiniBand: the next packet keeps that.
		h.keys("<tab>", "h", "kk", "l", "<backtab>", "j")
		h.waitUntil(func(u *UI) bool { return u.selected == 101 }, "the next packet")
		h.onLoop(false, "the tree", func() { got = open(h.ui) })
		assert.Equal(t, map[string]bool{"frame": false, "eth": false, "ip": true, "udp": false, "infiniband": false, "ibwire": true}, got)
	})
}

// TestPacketListShowsPSN: the packet list has a PSN column: the BTH's PSN
// of each InfiniBand packet, blank for the others.
func TestPacketListShowsPSN(t *testing.T) {
	m := loadModel(t, writeLoss, "")
	p, err := newReader(m).packet(100)
	require.NoError(t, err)
	psn := strconv.Itoa(int(p.BTH().PSN))
	forSizes(t, func(t *testing.T, w, hh int) {
		h := start(t, writeLoss, "", w, hh)
		s := h.waitFor("Frame 1:")
		assert.Regexp(t, regexp.MustCompile(`(?m)^No\. +Time +Source +Destination +Protocol +Length +PSN +Info`), s)
		assert.Regexp(t, regexp.MustCompile(`(?m)^  1 0\.000000 .* ARP +42 *$`), s, "no PSN for ARP")
		h.keys("100G")
		s = h.waitFor("Frame 100:")
		assert.Regexp(t, regexp.MustCompile(`(?m)^100 .* 1082 +`+psn+` RC RDMA Write`), s)
	})
}

// TestStatusNoteGoesWithTheNextKey: a note in the status bar (a search's
// result) is about the key that made it: the next key, here the one that
// opens the PSN graph, takes it away.
func TestStatusNoteGoesWithTheNextKey(t *testing.T) {
	forSizes(t, func(t *testing.T, w, hh int) {
		h := start(t, writeLoss, "", w, hh)
		h.keys("<ctrl-f>", "infiniband.aeth.syndrome.opcode == 3", "<enter>")
		h.waitFor("Frame 159:", "search: frame 159")
		h.keys("P")
		h.waitUntil(func(u *UI) bool { return u.view == viewPSN && !u.psn.busy }, "the PSN graph")
		s := h.waitFor("PSN graph, connection 1")
		assert.NotContains(t, s, "search: frame 159")
	})
}

// TestBadFilterSaysWhy: a filter that does not compile shows the reason
// ibdump prints, whole, with a caret under the column it names.
func TestBadFilterSaysWhy(t *testing.T) {
	tests := []struct{ filter, want, caret string }{
		{"bth.psn ==", "column 11: unexpected end of filter expression", "        " + strings.Repeat(" ", 10) + "^"},
		{"bth.psnx == 3", `column 1: "bth.psnx" is neither a field nor a protocol name`, "        ^"},
		// Brackets are text, not colour tags.
		{"bth.psn == [red]", `column 12: "[" was unexpected in this context`, "        " + strings.Repeat(" ", 11) + "^"},
	}
	for _, tc := range tests {
		forSizes(t, func(t *testing.T, w, hh int) {
			h := start(t, writeLoss, "", w, hh)
			h.keys("/", tc.filter)
			s := h.waitFor("Filter✗ " + tc.filter)
			joined := strings.Join(strings.Fields(s), " ")
			assert.Contains(t, joined, tc.want)
			assert.Contains(t, s, "\n"+tc.caret)
			// Fixed, the reason goes.
			h.keys("<esc>")
			s = h.waitFor("\nFilter:\n")
			assert.NotContains(t, strings.Join(strings.Fields(s), " "), tc.want)
		})
	}
}

// TestStatusErrorsWrap: an error longer than the status line is shown
// whole, on as many lines as it needs.
func TestStatusErrorsWrap(t *testing.T) {
	path := "/nonexistent/" + strings.Repeat("a-long-directory-name/", 4) + "capture.pcap"
	forSizes(t, func(t *testing.T, w, hh int) {
		h := start(t, writeLoss, "", w, hh)
		h.keys(":", "load "+path, "<enter>")
		// Lines may break anywhere a word wraps: compare without spaces.
		squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
		want := squeeze("load " + path + ": capture: stat " + path + ": no such file or directory")
		s := h.waitScreen(func(s string) bool { return strings.Contains(squeeze(s), want) }, "the whole error")
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		require.Len(t, lines, hh)
	})
}

// TestQPTableFitsTheWidth: the QP table shows the columns that matter for
// a connection's health (NAKs, RNR, CNP, CE, Start, Duration) without
// scrolling at 120 columns, by leaving out the per-direction ones first;
// whatever it leaves out, it names.
func TestQPTableFitsTheWidth(t *testing.T) {
	forSizes(t, func(t *testing.T, w, hh int) {
		h := start(t, writeLoss, "", w, hh)
		h.keys("C")
		s := h.waitFor("[ QPs ]", "0x000011")
		lines := strings.Split(s, "\n")
		var header string
		for _, l := range lines {
			if strings.HasPrefix(l, "A ") {
				header = l
			}
		}
		require.NotEmpty(t, header, "the table's header line")
		assert.NotContains(t, header, "…", "a column cut at the width")
		var hidden []string
		for _, c := range convNames {
			if !regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(c) + `(\s|$)`).MatchString(header) {
				hidden = append(hidden, c)
			}
		}
		if w >= 120 {
			for _, c := range []string{"Retr", "Gaps", "NAKs", "RNR", "CNP", "CE", "Start", "Duration"} {
				assert.Contains(t, header, c)
			}
		}
		if len(hidden) > 0 {
			assert.Contains(t, strings.Join(strings.Fields(s), " "), "not shown at this width: "+strings.Join(hidden, ", "))
		}
		h.waitUntil(func(u *UI) bool { _, co := u.convs.GetOffset(); return co == 0 }, "not scrolled")
	})
}

// TestLatencyHistogramAxis: each latency histogram says what its ends are
// (the smallest and the largest latency) and what its middle is, on a line
// under it.
func TestLatencyHistogramAxis(t *testing.T) {
	m := loadModel(t, readBW, "")
	snaps := m.latencySnaps()
	require.NotEmpty(t, snaps)
	s0 := snaps[0].summary
	forSizes(t, func(t *testing.T, w, hh int) {
		h := start(t, readBW, "", w, hh)
		h.keys("T")
		s := h.waitFor("RDMA_READ")
		assert.Regexp(t, regexp.MustCompile(`(?m)^ `+regexp.QuoteMeta(fmtDur(s0.Min))+` .*\S.* `+regexp.QuoteMeta(fmtDur(s0.Max))+`$`), s)
	})
}
