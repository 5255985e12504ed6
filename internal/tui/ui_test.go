package tui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata/screens")

func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Exit(m.Run())
}

// harness runs the whole viewer on a simulation screen. The screen is
// read inside the event loop (app.QueueUpdate), never from the test
// goroutine, and every wait polls a condition: no sleeps.
type harness struct {
	t    *testing.T
	app  *tview.Application
	sim  tcell.SimulationScreen
	ui   *UI
	m    *Model
	done chan error
	// Keys injected, and keys the event loop has handled: keys waits
	// until they are equal, so that what a test reads next is the state
	// after its keys, not before them.
	injected int64
	handled  atomic.Int64
}

func start(t *testing.T, path, filter string, w, h int) *harness {
	t.Helper()
	return startTheme(t, path, filter, w, h, true)
}

func startTheme(t *testing.T, path, filter string, w, h int, mono bool) *harness {
	t.Helper()
	m := loadModel(t, path, filter)
	sim := tcell.NewSimulationScreen("UTF-8")
	app := tview.NewApplication()
	app.SetScreen(sim)
	sim.SetSize(w, h)
	u := New(app, Config{Model: m, Mono: mono})
	m.SetNotify(u.Changed)
	hs := &harness{t: t, app: app, sim: sim, ui: u, m: m, done: make(chan error, 1)}
	// Count the keys the event loop has handled. The application's input
	// capture sees every key event first, on the event loop; anything the
	// test queues after the count is reached runs after the key's handling.
	handle := app.GetInputCapture()
	app.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		defer hs.handled.Add(1)
		return handle(ev)
	})
	go func() { hs.done <- app.Run() }()
	t.Cleanup(func() {
		// Stopped from the event loop: Stop finalises the screen, which
		// must not race with a draw.
		go app.QueueUpdate(app.Stop)
		select {
		case <-hs.done:
		case <-time.After(10 * time.Second):
			t.Error("the application did not stop")
		}
		u.Close()
	})
	hs.waitFor("packets")
	return hs
}

// screen returns the screen's text, one line per row, trailing blanks
// trimmed; it is read on the UI goroutine after a draw.
func (h *harness) screen() string {
	ch := make(chan string, 1)
	h.app.QueueUpdateDraw(func() {})
	h.app.QueueUpdate(func() {
		cells, w, hh := h.sim.GetContents()
		var b strings.Builder
		for y := 0; y < hh; y++ {
			var line []rune
			for x := 0; x < w; x++ {
				c := cells[y*w+x]
				if len(c.Runes) == 0 {
					line = append(line, ' ')
					continue
				}
				line = append(line, c.Runes[0])
			}
			b.WriteString(strings.TrimRight(string(line), " "))
			b.WriteByte('\n')
		}
		ch <- b.String()
	})
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		h.t.Fatal("the event loop does not answer")
		return ""
	}
}

// waitFor polls the screen until it shows all of want.
func (h *harness) waitFor(want ...string) string {
	h.t.Helper()
	var last atomic.Value
	last.Store("")
	ok := assert.Eventually(h.t, func() bool {
		s := h.screen()
		last.Store(s)
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	}, 10*time.Second, 5*time.Millisecond, "screen never showed %q", want)
	if !ok {
		h.t.Fatalf("last screen:\n%s", last.Load())
	}
	return last.Load().(string)
}

// waitUntil polls a condition on the UI's state, read in the event loop.
func (h *harness) waitUntil(cond func(u *UI) bool, what string) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		ch := make(chan bool, 1)
		h.app.QueueUpdate(func() { ch <- cond(h.ui) })
		return <-ch
	}, 10*time.Second, 5*time.Millisecond, what)
}

// keys injects key presses: single characters as runes, and names in
// angle brackets (<enter>, <tab>, <esc>, <ctrl-d>, <down>...). It returns
// once the event loop has handled every key injected so far. Injected keys
// and QueueUpdate travel on different channels that tview's loop selects
// between in no fixed order: without this wait a screen read right after
// the keys may show the state before them.
func (h *harness) keys(ks ...string) {
	h.t.Helper()
	for _, k := range ks {
		if strings.HasPrefix(k, "<") && len(k) > 2 {
			key, ok := namedKeys[k]
			require.True(h.t, ok, k)
			h.sim.InjectKey(key, 0, tcell.ModNone)
			h.injected++
			continue
		}
		for _, r := range k {
			h.sim.InjectKey(tcell.KeyRune, r, tcell.ModNone)
			h.injected++
		}
	}
	require.Eventually(h.t, func() bool { return h.handled.Load() >= h.injected }, 10*time.Second, time.Millisecond,
		"the event loop did not handle the keys %q", ks)
}

var namedKeys = map[string]tcell.Key{"<enter>": tcell.KeyEnter, "<tab>": tcell.KeyTab, "<esc>": tcell.KeyEscape,
	"<ctrl-d>": tcell.KeyCtrlD, "<ctrl-u>": tcell.KeyCtrlU, "<down>": tcell.KeyDown, "<up>": tcell.KeyUp,
	"<ctrl-f>": tcell.KeyCtrlF, "<end>": tcell.KeyEnd, "<home>": tcell.KeyHome, "<backtab>": tcell.KeyBacktab,
	"<f1>": tcell.KeyF1, "<ctrl-l>": tcell.KeyCtrlL, "<pgup>": tcell.KeyPgUp, "<pgdn>": tcell.KeyPgDn,
	"<left>": tcell.KeyLeft, "<right>": tcell.KeyRight}

// golden compares the screen with testdata/screens/name.txt.
func golden(t *testing.T, name, screen string) {
	t.Helper()
	path := filepath.Join("testdata", "screens", name+".txt")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(screen), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	assert.Equal(t, string(want), screen, "screen %s differs (go test -update rewrites it)", name)
}

// TestViews drives each view from its key and compares the screen with its
// golden copy.
func TestViews(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		w, h   int
		keys   []string
		expect []string
		// then: more keys once expect shows, and what they must show.
		then       []string
		thenExpect []string
		// until, when set, is the state the keys must have brought, for
		// keys whose screen shows no text that was not there before.
		until func(u *UI) bool
	}{
		{"packets", writeLoss, 120, 40, nil, []string{"Frame 1:", "2243 packets"}, nil, nil, nil},
		{"packets-80x24", writeLoss, 80, 24, nil, []string{"Frame 1:"}, nil, nil, nil},
		{"nav-j", writeLoss, 120, 40, []string{"jjj"}, []string{"Frame 4:"}, nil, nil, nil},
		{"nav-G", writeLoss, 120, 40, []string{"G"}, []string{"Frame 2243:"}, nil, nil, nil},
		{"nav-count-gg", writeLoss, 120, 40, []string{"G", "150gg"}, []string{"Frame 150:"}, nil, nil, nil},
		{"nav-ctrl-d", writeLoss, 120, 40, []string{"<ctrl-d>", "<ctrl-d>", "<ctrl-u>"}, []string{"Frame 8:"}, nil, nil, nil},
		{"marks", writeLoss, 120, 40, []string{"jjjj", "ma", "G", "'a"}, []string{"Frame 5:"}, nil, nil, nil},
		{"marks-back", writeLoss, 120, 40, []string{"jjjj", "ma", "200G", "'a", "''"}, []string{"Frame 200:"}, nil, nil, nil},
		{"convs", writeLoss, 120, 40, []string{"C"}, []string{"[ QPs ]", "1204"}, nil, nil, nil},
		{"convs-sort", rping, 120, 40, []string{"C", "sssssssssssS"}, []string{"Frames▼"}, nil, nil, nil},
		{"expert", writeLoss, 120, 40, []string{"E"}, []string{"[ Expert ]", "Retransmission"}, nil, nil, nil},
		{"follow", writeLoss, 120, 40, []string{"100G", "F"}, []string{"messages (x: hex"}, nil, nil, nil},
		{"follow-hex", writeLoss, 120, 40, []string{"100G", "F"}, []string{"messages (x: hex"}, []string{"x"}, []string{"0x0000:"}, nil},
		{"iograph", writeLoss, 120, 40, []string{"I"}, []string{"interval 20ms", "all frames  (max"}, nil, nil, nil},
		{"psngraph", writeLoss, 120, 40, []string{"100G", "P"}, []string{"retrans 1204"}, nil, nil, nil},
		{"psngraph-zoom", writeLoss, 120, 40, []string{"100G", "P"}, []string{"retrans 1204"}, []string{"+", "h"}, []string{"1.111"}, nil},
		{"latency", readBW, 120, 40, []string{"T"}, []string{"RDMA_READ", "p99"}, nil, nil, nil},
		{"help", writeLoss, 120, 60, []string{"?"}, []string{"ibtui keys"}, nil, nil, nil},
		{"zoom", writeLoss, 120, 40, []string{`\`}, []string{"2243 packets"}, nil, nil,
			func(u *UI) bool { return u.zoomed && u.packets.GetItemCount() == 1 }},
		{"layout", writeLoss, 120, 40, []string{"|"}, []string{"2243 packets"}, nil, nil,
			func(u *UI) bool { return u.side && u.lower.GetItemCount() == 2 }},
		{"list-taller", writeLoss, 120, 40, []string{"+++"}, []string{"2243 packets"}, nil, nil,
			func(u *UI) bool { return u.listSize == 6 }},
		{"tree", writeLoss, 120, 40, []string{"100G", "<tab>", strings.Repeat("j", 42)}, []string{"Destination Queue Pair"}, nil, nil, nil},
		{"command-convs", writeLoss, 120, 40, []string{":", "qps", "<enter>"}, []string{"[ QPs ]"}, nil, nil, nil},
		{"rnr", sendRNR, 120, 40, []string{"/", "ibwire.analysis.rnr_nak", "<enter>"}, []string{"49 displayed"}, nil, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, tc.path, "", tc.w, tc.h)
			h.waitFor("Frame 1:")
			h.keys(tc.keys...)
			if tc.until != nil {
				h.waitUntil(tc.until, "the state after "+strings.Join(tc.keys, " "))
			}
			screen := h.waitFor(tc.expect...)
			if tc.then != nil {
				h.keys(tc.then...)
				screen = h.waitFor(tc.thenExpect...)
			}
			golden(t, tc.name, screen)
		})
	}
}
