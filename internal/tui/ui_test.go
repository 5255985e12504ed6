package tui

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
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
	pressed  map[string]bool // the bindings keys ran, by bindingID; event loop only
}

// openModel is :load's Open: it starts loading path, as ibtui does.
func openModel(t *testing.T) func(path string) (*Model, error) {
	return func(path string) (*Model, error) {
		r, err := capture.Open(path)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		m, err := NewModel(ctx, r, Options{Name: path, Publish: time.Millisecond})
		if err != nil {
			cancel()
			r.Close()
			return nil, err
		}
		t.Cleanup(func() { cancel(); m.Close(); r.Close() })
		return m, nil
	}
}

func bindingID(b *binding) string { return b.scope + ": " + b.help }

// pressedBindings returns the bindings the keys have run so far.
func (h *harness) pressedBindings() []string {
	h.t.Helper()
	var ids []string
	h.onLoop(false, "the bindings pressed", func() {
		for id := range h.pressed {
			ids = append(ids, id)
		}
	})
	return ids
}

func start(t *testing.T, path, filter string, w, h int) *harness {
	t.Helper()
	return startTheme(t, path, filter, w, h, true)
}

func startTheme(t *testing.T, path, filter string, w, h int, mono bool) *harness {
	t.Helper()
	return startModel(t, loadModel(t, path, filter), w, h, mono)
}

// startModel shows m, loaded or still loading.
func startModel(t *testing.T, m *Model, w, h int, mono bool) *harness {
	t.Helper()
	return startAt(t, m, w, h, mono, 0)
}

// startAt shows m, opened at frame (ibtui -g) when it is not 0.
func startAt(t *testing.T, m *Model, w, h int, mono bool, frame int) *harness {
	t.Helper()
	sim := tcell.NewSimulationScreen("UTF-8")
	app := tview.NewApplication()
	app.SetScreen(sim)
	sim.SetSize(w, h)
	u := newUI(app, Config{Model: m, Mono: mono, Open: openModel(t), Frame: frame})
	m.setNotify(u.changed)
	u.changed() // for what the model published before, as Run does
	hs := &harness{t: t, app: app, sim: sim, ui: u, m: m, done: make(chan error, 1), pressed: map[string]bool{}}
	// Record the bindings the keys ran (on the event loop; read through
	// pressedBindings): each action of the UI's key table, wrapped before
	// the loop runs.
	for i := range u.keys {
		b := &u.keys[i]
		id, action := bindingID(b), b.action
		b.action = func(u *UI) {
			hs.pressed[id] = true
			action(u)
		}
	}
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

// tryOnLoop runs fn on the event loop, after a draw when draw is set, and
// reports whether it ran within 10 seconds. QueueUpdate blocks until the
// loop has run fn, and forever once the loop has stopped: it is called
// from a goroutine of its own, so that the caller can give up.
func (h *harness) tryOnLoop(draw bool, fn func()) bool {
	done := make(chan struct{})
	go func() {
		if draw {
			h.app.QueueUpdateDraw(fn)
		} else {
			h.app.QueueUpdate(fn)
		}
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// onLoop is tryOnLoop that fails the test (what names the work) when the
// loop does not answer. Call it from the test's goroutine.
func (h *harness) onLoop(draw bool, what string, fn func()) {
	h.t.Helper()
	if !h.tryOnLoop(draw, fn) {
		h.t.Fatalf("the event loop does not answer (%s)", what)
	}
}

// tryContents returns a copy of the screen's cells and its size, read on
// the event loop after a draw, and whether the loop answered.
func (h *harness) tryContents() (cells []tcell.SimCell, w, hh int, ok bool) {
	// The simulation screen gives its own cells: copy them on the loop (a
	// cell's runes are replaced, never changed in place).
	type read struct {
		cells []tcell.SimCell
		w, h  int
	}
	got := make(chan read, 1) // nobody may read it when the loop answers late
	if !h.tryOnLoop(true, func() {}) ||
		!h.tryOnLoop(false, func() { c, cw, ch := h.sim.GetContents(); got <- read{slices.Clone(c), cw, ch} }) {
		return nil, 0, 0, false
	}
	r := <-got
	return r.cells, r.w, r.h, true
}

// contents is tryContents that fails the test when the loop does not answer.
func (h *harness) contents() (cells []tcell.SimCell, w, hh int) {
	h.t.Helper()
	cells, w, hh, ok := h.tryContents()
	if !ok {
		h.t.Fatal("the event loop does not answer")
	}
	return cells, w, hh
}

// screen returns the screen's text, one line per row, trailing blanks
// trimmed; it is read on the UI goroutine after a draw.
func (h *harness) screen() string {
	h.t.Helper()
	return screenText(h.contents())
}

func screenText(cells []tcell.SimCell, w, hh int) string {
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
	return b.String()
}

// waitFor polls the screen until it shows all of want.
func (h *harness) waitFor(want ...string) string {
	h.t.Helper()
	return h.waitScreen(func(s string) bool {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	}, fmt.Sprintf("screen never showed %q", want))
}

// waitMatch polls the screen until re matches it.
func (h *harness) waitMatch(re *regexp.Regexp) string {
	h.t.Helper()
	return h.waitScreen(re.MatchString, fmt.Sprintf("screen never matched %s", re))
}

// waitScreen polls the screen until ok says it is the one, and returns it.
func (h *harness) waitScreen(ok func(screen string) bool, what string) string {
	h.t.Helper()
	var last atomic.Value
	last.Store("")
	if !assert.Eventually(h.t, func() bool {
		// Not on the test's goroutine: no t.Fatal here.
		cells, w, hh, answered := h.tryContents()
		if !answered {
			return false
		}
		s := screenText(cells, w, hh)
		last.Store(s)
		return ok(s)
	}, 10*time.Second, 5*time.Millisecond, what) {
		h.t.Fatalf("last screen:\n%s", last.Load())
	}
	return last.Load().(string)
}

// waitUntil polls a condition on the UI's state, read in the event loop.
func (h *harness) waitUntil(cond func(u *UI) bool, what string) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		var ok bool
		return h.tryOnLoop(false, func() { ok = cond(h.ui) }) && ok
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

// viewCase is one row of TestViews: keys pressed on a capture, and the
// screen they must bring.
type viewCase struct {
	name string
	path string // writeLoss when empty
	w, h int    // 120x40 when zero
	keys []string
	// expect: text the screen must show once the keys were handled.
	expect []string
	// then: more keys once expect shows, and what they must show.
	then       []string
	thenExpect []string
	// until, when set, is the state all the keys must have brought: for
	// keys whose screen shows no text that was not there before them, and
	// for asynchronous work that text alone does not reveal.
	until func(u *UI) bool
	// golden names the golden screen when it is another case's (the same
	// screen reached by other keys); by default the case's name.
	golden string
}

// psnWindow says whether the PSN graph's window is [t0, t1] in units of
// the whole connection: 0 is its first packet's time, 1 its last's.
func psnWindow(g *psnGraph, t0, t1 float64) bool {
	if g.busy || len(g.points) == 0 {
		return false
	}
	first, last := g.points[0].T, g.points[len(g.points)-1].T
	at := func(f float64) time.Duration { return first + time.Duration(f*float64(last-first)) }
	near := func(a, b time.Duration) bool { return (a - b).Abs() <= 2*time.Microsecond }
	return near(g.t0, at(t0)) && near(g.t1, at(t1))
}

func focused(u *UI, p tview.Primitive) bool { return u.app.GetFocus() == p }

func treeExpanded(open bool) func(u *UI) bool {
	return func(u *UI) bool {
		n := u.tree.GetCurrentNode()
		return u.pane == paneTree && n != nil && len(n.GetChildren()) > 0 && n.IsExpanded() == open
	}
}

// viewCases press every binding of the key table at least once
// (TestViews checks it).
var viewCases = []viewCase{
	{name: "packets", expect: []string{"Frame 1:", "2243 packets"}},
	{name: "packets-80x24", w: 80, h: 24, expect: []string{"Frame 1:"}},
	{name: "convs-80x24", w: 80, h: 24, keys: []string{"C"}, expect: []string{"[ QPs ]", "0x000011"}},
	{name: "psngraph-80x24", w: 80, h: 24, keys: []string{"100G", "P"}, expect: []string{"PSN graph, connection 1"},
		until: func(u *UI) bool { return psnWindow(u.psn, 0, 1) }},
	{name: "help-80x24", w: 80, h: 24, keys: []string{"?"}, expect: []string{"ibtui keys"}},
	// The Points view without capture points (TestPointsView has them).
	{name: "points-none", keys: []string{"W"}, expect: []string{"No capture points"}},
	{name: "points-none-enter", keys: []string{"W", "<enter>"}, expect: []string{"no capture points (ibtui --correlate)"}},
	{name: "points-none-tab", keys: []string{"W", "<tab>"}, expect: []string{"No capture points"},
		until: func(u *UI) bool { return focused(u, u.points.report) }},
	// The help is longer than 24 lines: it scrolls (keys no binding takes
	// go to the text).
	{name: "help-80x24-end", w: 80, h: 24, keys: []string{"?", "G"}, expect: []string{"Mouse: click a row"}},
	// Global keys.
	{name: "ctrl-l", keys: []string{"<ctrl-l>"}, expect: []string{"Frame 1:", "2243 packets"}, golden: "packets"},
	{name: "help", h: 60, keys: []string{"?"}, expect: []string{"ibtui keys"}},
	// At the default size the help scrolls too: its end.
	{name: "help-end", keys: []string{"?", "<end>"}, expect: []string{"Mouse: click a row"}},
	// ctrl-d and ctrl-u move it half a page, as in the packet list.
	{name: "help-ctrl-d", w: 80, h: 24, keys: []string{"?", "<ctrl-d>", "<ctrl-d>"}, expect: []string{"[ Help ]", "PACKET LIST"},
		until: func(u *UI) bool { r, _ := u.help.GetScrollOffset(); return r == 20 }},
	{name: "help-ctrl-u", w: 80, h: 24, keys: []string{"?", "<ctrl-d>", "<ctrl-d>", "<ctrl-d>", "<ctrl-u>"}, expect: []string{"[ Help ]", "PACKET LIST"},
		golden: "help-ctrl-d", until: func(u *UI) bool { r, _ := u.help.GetScrollOffset(); return r == 20 }},
	{name: "help-f1", h: 60, keys: []string{"<f1>"}, expect: []string{"ibtui keys"}, golden: "help"},
	{name: "help-q-back", keys: []string{"C", "?", "q"}, expect: []string{"[ QPs ]", "1204"}, golden: "convs",
		until: func(u *UI) bool { return u.view == viewConvs }},
	{name: "esc", keys: []string{"C", "<esc>"}, expect: []string{"[ Packets ]", "Frame 1:"}, golden: "packets",
		until: func(u *UI) bool { return u.view == viewPackets && focused(u, u.list) }},
	{name: "backtab", keys: []string{"<backtab>"}, expect: []string{"Frame 1:"},
		until: func(u *UI) bool { return u.pane == paneHex && focused(u, u.hex) }},
	{name: "tab-backtab", keys: []string{"<tab>", "<tab>", "<backtab>"}, expect: []string{"Frame 1:"},
		until: func(u *UI) bool { return u.pane == paneTree && focused(u, u.tree) }},
	{name: "zoom", keys: []string{`\`}, expect: []string{"2243 packets"},
		until: func(u *UI) bool { return u.zoomed && u.packets.GetItemCount() == 1 }},
	{name: "layout", keys: []string{"|"}, expect: []string{"2243 packets"},
		until: func(u *UI) bool { return u.side && u.lower.GetItemCount() == 2 }},
	{name: "list-taller", keys: []string{"+++"}, expect: []string{"2243 packets"},
		until: func(u *UI) bool { return u.listSize == 6 }},
	{name: "list-shorter", keys: []string{"--"}, expect: []string{"2243 packets"},
		until: func(u *UI) bool { return u.listSize == 1 }},
	{name: "search", keys: []string{"<ctrl-f>", "infiniband.aeth.syndrome.opcode == 3", "<enter>"},
		expect: []string{"Frame 159:", "search: frame 159"}, then: []string{"n"}, thenExpect: []string{"Frame 237:", "search: frame 237"}},
	{name: "command-convs", keys: []string{":", "qps", "<enter>"}, expect: []string{"[ QPs ]"}},
	{name: "rnr", path: sendRNR, keys: []string{"/", "ibwire.analysis.rnr_nak", "<enter>"}, expect: []string{"49 displayed"}},
	// The packet list.
	{name: "nav-j", keys: []string{"jjj"}, expect: []string{"Frame 4:"}},
	{name: "nav-k", keys: []string{"jjjj", "k"}, expect: []string{"Frame 4:"}, golden: "nav-j",
		until: func(u *UI) bool { return u.selected == 4 }},
	{name: "nav-down-up", keys: []string{"<down>", "<down>", "<down>", "<down>", "<up>"}, expect: []string{"Frame 4:"}, golden: "nav-j",
		until: func(u *UI) bool { return u.selected == 4 }},
	{name: "nav-G", keys: []string{"G"}, expect: []string{"Frame 2243:"}},
	{name: "nav-end", keys: []string{"<end>"}, expect: []string{"Frame 2243:"}, golden: "nav-G"},
	{name: "nav-home", keys: []string{"G", "<home>"}, expect: []string{"Frame 1:"},
		until: func(u *UI) bool { return u.selected == 1 }},
	{name: "nav-count-gg", keys: []string{"G", "150gg"}, expect: []string{"Frame 150:"}},
	{name: "nav-gg", keys: []string{"G", "gg"}, expect: []string{"Frame 1:"}, golden: "nav-home",
		until: func(u *UI) bool { return u.selected == 1 }},
	{name: "nav-ctrl-d", keys: []string{"<ctrl-d>", "<ctrl-d>", "<ctrl-u>"}, expect: []string{"Frame 8:"}},
	{name: "nav-pgdn-pgup", keys: []string{"<pgdn>", "<pgdn>", "<pgup>"}, expect: []string{"Frame 8:"}, golden: "nav-ctrl-d",
		until: func(u *UI) bool { return u.selected == 8 }},
	{name: "marks", keys: []string{"jjjj", "ma", "G", "'a"}, expect: []string{"Frame 5:"}},
	{name: "marks-back", keys: []string{"jjjj", "ma", "200G", "'a", "''"}, expect: []string{"Frame 200:"}},
	{name: "list-enter", keys: []string{"jjj", "<enter>"}, expect: []string{"Frame 4:"},
		until: func(u *UI) bool { return u.pane == paneTree && focused(u, u.tree) }},
	{name: "list-apply", keys: []string{"100G", "a"}, expect: []string{"filter: ibwire.analysis.conv_id == 1", "2202 displayed", "Frame 100:"}},
	// The detail tree.
	{name: "tree-tab", keys: []string{"100G", "<tab>"}, expect: []string{"Frame 100:"}, until: treeExpanded(true)},
	{name: "tree-collapse", keys: []string{"100G", "<tab>", "h"}, expect: []string{"Frame 100:"}, until: treeExpanded(false)},
	{name: "tree-left", keys: []string{"100G", "<tab>", "<left>"}, expect: []string{"Frame 100:"}, until: treeExpanded(false), golden: "tree-collapse"},
	{name: "tree-expand", keys: []string{"100G", "<tab>", "h", "l"}, expect: []string{"Frame 100:"}, until: treeExpanded(true), golden: "tree-tab"},
	{name: "tree-right", keys: []string{"100G", "<tab>", "h", "<right>"}, expect: []string{"Frame 100:"}, until: treeExpanded(true), golden: "tree-tab"},
	{name: "tree-space", keys: []string{"100G", "<tab>", " "}, expect: []string{"Frame 100:"}, until: treeExpanded(false), golden: "tree-collapse"},
	{name: "tree-enter", keys: []string{"100G", "<tab>", " ", "<enter>"}, expect: []string{"Frame 100:"}, until: treeExpanded(true), golden: "tree-tab"},
	{name: "tree", keys: []string{"100G", "<tab>", strings.Repeat("j", 9)}, expect: []string{"Destination Queue Pair"}},
	{name: "tree-k", keys: []string{"100G", "<tab>", strings.Repeat("j", 10), "k"}, expect: []string{"Destination Queue Pair"},
		until: func(u *UI) bool {
			i := u.currentNode()
			return i >= 0 && u.detail.nodes[i].Field.Name == "infiniband.bth.destqp"
		}},
	{name: "tree-apply", keys: []string{"100G", "<tab>", strings.Repeat("j", 9), "a"},
		expect: []string{"filter: infiniband.bth.destqp == 0x000011", "2202 displayed"}},
	{name: "tree-and", keys: []string{"100G", "a"}, expect: []string{"2202 displayed"},
		then: []string{"<tab>", strings.Repeat("j", 9), "&"},
		// The status bar wraps the filter it cannot show on one line.
		thenExpect: []string{"filter: (ibwire.analysis.conv_id == 1) &&\ninfiniband.bth.destqp == 0x000011", "2202 displayed"},
		until: func(u *UI) bool {
			st := u.m.Status()
			return st.Filter == "(ibwire.analysis.conv_id == 1) && infiniband.bth.destqp == 0x000011" && !st.Filtering
		}},
	{name: "tree-not", keys: []string{"100G", "<tab>", strings.Repeat("j", 9), "!"},
		expect: []string{"filter: !(infiniband.bth.destqp == 0x000011)", "41 displayed"}},
	// The hex pane.
	{name: "hex", keys: []string{"100G", "<tab>", strings.Repeat("j", 9), "<tab>"}, expect: []string{"Destination Queue Pair"},
		until: func(u *UI) bool { return u.pane == paneHex && u.hex.cursor == 47 }},
	{name: "hex-moves", keys: []string{"100G", "<tab>", strings.Repeat("j", 9), "<tab>", "lll", "jj", "k", "h"}, expect: []string{"[ Packets ]"},
		until: func(u *UI) bool { return u.pane == paneHex && u.hex.cursor == 47+3+16+16-16-1 }},
	{name: "hex-arrows", keys: []string{"100G", "<tab>", strings.Repeat("j", 9), "<tab>", "<right>", "<right>", "<right>", "<down>", "<down>", "<up>", "<left>"},
		expect: []string{"[ Packets ]"}, golden: "hex-moves",
		until: func(u *UI) bool { return u.pane == paneHex && u.hex.cursor == 47+3+16+16-16-1 }},
	// The QP conversations.
	{name: "convs", keys: []string{"C"}, expect: []string{"[ QPs ]", "1204"}},
	{name: "convs-sort", path: rping, keys: []string{"C", "sssssS"}, expect: []string{"Frames▼"}},
	{name: "convs-jk", path: rping, keys: []string{"C", "jj", "k", "j"}, expect: []string{"[ QPs ]"},
		until: func(u *UI) bool { r, _ := u.convs.GetSelection(); return r == 2 && u.convs.selectedID() != 0 }},
	{name: "convs-down-up", path: rping, keys: []string{"C", "<down>", "<down>", "<up>", "<down>"}, expect: []string{"[ QPs ]"},
		golden: "convs-jk", until: func(u *UI) bool { r, _ := u.convs.GetSelection(); return r == 2 && u.convs.selectedID() != 0 }},
	{name: "convs-apply", keys: []string{"C", "a"}, expect: []string{"filter: ibwire.analysis.conv_id == 1", "2202 displayed"}},
	{name: "convs-enter", keys: []string{"C", "<enter>"}, expect: []string{"filter: ibwire.analysis.conv_id == 1", "2202 displayed"}, golden: "convs-apply"},
	{name: "convs-follow", keys: []string{"C", "f"}, expect: []string{"messages (x: hex"}, golden: "follow"},
	{name: "convs-psngraph", keys: []string{"C", "p"}, expect: []string{"retrans 1204"}, golden: "psngraph"},
	// Expert findings.
	{name: "expert", keys: []string{"E"}, expect: []string{"[ Expert ]", "Retransmission"}},
	{name: "expert-jump", keys: []string{"E", "jj", "k", "<enter>"}, expect: []string{"[ Packets ]"},
		until: func(u *UI) bool {
			rows := u.m.Expert()
			return u.view == viewPackets && len(rows) > 1 && u.selected == int(rows[1].Frames[0])
		}},
	{name: "expert-arrows", keys: []string{"E", "<down>", "<down>", "<up>", "<enter>"}, expect: []string{"[ Packets ]"}, golden: "expert-jump",
		until: func(u *UI) bool {
			rows := u.m.Expert()
			return u.view == viewPackets && len(rows) > 1 && u.selected == int(rows[1].Frames[0])
		}},
	// Follow QP.
	{name: "follow", keys: []string{"100G", "F"}, expect: []string{"messages (x: hex"}},
	{name: "follow-hex", keys: []string{"100G", "F"}, expect: []string{"messages (x: hex"}, then: []string{"x"}, thenExpect: []string{"0x0000:"}},
	{name: "follow-jump", keys: []string{"100G", "F"}, expect: []string{"messages (x: hex"}, then: []string{"jjj", "k", "<enter>"},
		thenExpect: []string{"[ Packets ]"},
		until: func(u *UI) bool {
			return u.view == viewPackets && len(u.follow.msgs) > 2 && u.selected == int(u.follow.msgs[2].First)
		}},
	{name: "command-follow", keys: []string{"100G", ":", "follow", "<enter>"}, expect: []string{"messages (x: hex"}, golden: "follow"},
	// The graphs.
	{name: "iograph", keys: []string{"I"}, expect: []string{"interval 20ms", "all frames  (max"}},
	{name: "iograph-zoom-out", keys: []string{"I"}, expect: []string{"interval 20ms", "all frames  (max"},
		then: []string{"-"}, thenExpect: []string{"interval 40ms", "all frames  (max"},
		until: func(u *UI) bool { return !u.io.busy }},
	{name: "iograph-zoom-in", keys: []string{"I"}, expect: []string{"interval 20ms", "all frames  (max"},
		then: []string{"=", "+"}, thenExpect: []string{"interval 5ms", "all frames  (max"},
		until: func(u *UI) bool { return !u.io.busy }},
	{name: "iograph-edit", keys: []string{"I"}, expect: []string{"interval 20ms", "all frames  (max"},
		then: []string{"e"}, thenExpect: []string{":iograph ,SUM(ibwire.payload.len),ibwire.analysis."},
		until: func(u *UI) bool { return focused(u, u.prompt) }},
	{name: "psngraph", keys: []string{"100G", "P"}, expect: []string{"retrans 1204"}},
	{name: "rategraph", path: "../../pcaps/dcqcn_paper.pcap", keys: []string{"R"},
		expect: []string{"192.168.1.1 > 192.168.1.2 QP 0x000012  CE 29 (12.3%)  CNPs 3  cuts 3", "QP 0x000014  CE 0 (0.0%)  CNPs 0  cuts 0  victim"}},
	{name: "rategraph-none", keys: []string{":", "rate", "<enter>"}, expect: []string{"no ECN CE mark, FECN or CNP yet"}},
	{name: "command-psngraph", keys: []string{"100G", ":", "psngraph", "<enter>"}, expect: []string{"retrans 1204"}, golden: "psngraph"},
	{name: "psngraph-zoom", keys: []string{"100G", "P"}, expect: []string{"retrans 1204"}, then: []string{"+", "h"}, thenExpect: []string{"1.111"},
		until: func(u *UI) bool { return psnWindow(u.psn, 0.125, 0.625) }},
	{name: "psngraph-zoom-eq-left", keys: []string{"100G", "P"}, expect: []string{"retrans 1204"}, then: []string{"=", "<left>"},
		thenExpect: []string{"1.111"}, golden: "psngraph-zoom", until: func(u *UI) bool { return psnWindow(u.psn, 0.125, 0.625) }},
	{name: "psngraph-pan-right", keys: []string{"100G", "P"}, expect: []string{"retrans 1204"}, then: []string{"+", "l"},
		thenExpect: []string{"PSN graph, connection 1"}, until: func(u *UI) bool { return psnWindow(u.psn, 0.375, 0.875) }},
	{name: "psngraph-arrow-right", keys: []string{"100G", "P"}, expect: []string{"retrans 1204"}, then: []string{"+", "<right>"},
		thenExpect: []string{"PSN graph, connection 1"}, golden: "psngraph-pan-right", until: func(u *UI) bool { return psnWindow(u.psn, 0.375, 0.875) }},
	{name: "psngraph-reset", keys: []string{"100G", "P"}, expect: []string{"retrans 1204"}, then: []string{"+", "l", "l", "0"},
		thenExpect: []string{"retrans 1204"}, golden: "psngraph", until: func(u *UI) bool { return psnWindow(u.psn, 0, 1) }},
	{name: "psngraph-zoom-out", keys: []string{"100G", "P"}, expect: []string{"retrans 1204"}, then: []string{"-"},
		thenExpect: []string{"retrans 1204"}, until: func(u *UI) bool { return psnWindow(u.psn, -0.5, 1.5) }},
	// PSN graph markers: RNR NAKs (Z) from rxe, CNPs (C) from a generated capture.
	{name: "psngraph-rnr", path: sendRNR, keys: []string{"C", "p"}, expect: []string{"PSN graph, connection", "RNR 49"}},
	{name: "psngraph-rnr-pan-right", path: sendRNR, keys: []string{"C", "p"}, expect: []string{"RNR 49"}, then: []string{"+", "l"},
		thenExpect: []string{"PSN graph, connection"}, until: func(u *UI) bool { return psnWindow(u.psn, 0.375, 0.875) }},
	{name: "psngraph-rnr-reset", path: sendRNR, keys: []string{"C", "p"}, expect: []string{"RNR 49"}, then: []string{"+", "l", "0"},
		thenExpect: []string{"RNR 49"}, golden: "psngraph-rnr", until: func(u *UI) bool { return psnWindow(u.psn, 0, 1) }},
	{name: "psngraph-rnr-zoom-out", path: sendRNR, keys: []string{"C", "p"}, expect: []string{"RNR 49"}, then: []string{"-"},
		thenExpect: []string{"RNR 49"}, until: func(u *UI) bool { return psnWindow(u.psn, -0.5, 1.5) }},
	{name: "psngraph-cnp", path: cnpECN, keys: []string{"C", "p"}, expect: []string{"PSN graph, connection", "CNP 2"}}, // as the QP table counts them
	{name: "latency", path: readBW, keys: []string{"T"}, expect: []string{"RDMA_READ", "p99"}},
	// The commands view (NVMe-oF commands, RPC-over-RDMA calls).
	{name: "commands", path: nvmeMidstream, keys: []string{"U"}, expect: []string{"Commands: 12 NVMe-oF", "16463"}},
	{name: "commands-connect-slowest", path: nvmeConnect, h: 24, keys: []string{"U"}, expect: []string{"Commands: 49 NVMe-oF"},
		then: []string{"S"}, thenExpect: []string{"Latency µs▼", "67809"}},
	{name: "commands-nfs", path: nfsMidstream, keys: []string{"U"}, expect: []string{"21 RPC-over-RDMA", "NFSv3 FSSTAT"}},
	{name: "command-commands", path: nvmeMidstream, keys: []string{":", "cmds", "<enter>"}, expect: []string{"Commands: 12 NVMe-oF", "16463"},
		golden: "commands"},
	{name: "commands-jump", path: nvmeMidstream, keys: []string{"U"}, expect: []string{"Commands: 12 NVMe-oF"},
		then: []string{"jj", "k", "<enter>"}, thenExpect: []string{"[ Packets ]", "Frame 12:"},
		until: func(u *UI) bool { return u.view == viewPackets && u.selected == 12 }},
	{name: "commands-arrows", path: nvmeMidstream, keys: []string{"U"}, expect: []string{"Commands: 12 NVMe-oF"},
		then: []string{"<down>", "<down>", "<up>", "<enter>"}, thenExpect: []string{"[ Packets ]", "Frame 12:"}, golden: "commands-jump",
		until: func(u *UI) bool { return u.view == viewPackets && u.selected == 12 }},
	{name: "commands-completion", path: nvmeMidstream, keys: []string{"U"}, expect: []string{"Commands: 12 NVMe-oF"},
		then: []string{"j", "c"}, thenExpect: []string{"[ Packets ]", "Frame 18:"},
		until: func(u *UI) bool { return u.view == viewPackets && u.selected == 18 }},
	{name: "commands-apply", path: nfsMidstream, keys: []string{"U"}, expect: []string{"21 RPC-over-RDMA"},
		then: []string{"a"}, thenExpect: []string{"filter: ibwire.analysis.conv_id in {1 2}", "111 displayed"}},
	{name: "commands-sort", path: nfsMidstream, keys: []string{"U"}, expect: []string{"21 RPC-over-RDMA"},
		then: []string{"ssss"}, thenExpect: []string{"Command▲"}},
	{name: "commands-slowest", path: nfsMidstream, keys: []string{"U"}, expect: []string{"21 RPC-over-RDMA"},
		then: []string{"S"}, thenExpect: []string{"Latency µs▼"}},
	// The latency histograms per opcode, from the commands view: of the
	// selected command's connection (the slowest Write's), of all of them,
	// of a connection with one opcode, of a capture with no command.
	{name: "oplatency-conn", path: nvmeConnect, h: 24, keys: []string{"U"}, expect: []string{"Commands: 49 NVMe-oF"},
		then: []string{"S", "j", "t"}, thenExpect: []string{"Latency per opcode, connection 4", "NVMe I/O Write"}},
	{name: "oplatency-all", path: nvmeConnect, keys: []string{"U"}, expect: []string{"Commands: 49 NVMe-oF"},
		then: []string{"T"}, thenExpect: []string{"Latency per opcode, all connections", "NVMe admin Identify"}},
	{name: "oplatency-one", path: nvmeMidstream, keys: []string{"U"}, expect: []string{"Commands: 12 NVMe-oF"},
		then: []string{"t"}, thenExpect: []string{"Latency per opcode, connection 1: 1 opcodes, 12 commands"}},
	// RPC's procedures (-z rpc,srt's rows), the LOOKUPs answered NFS3ERR_NOENT
	// not counted as errors.
	{name: "oplatency-nfs", path: nfsMidstream, keys: []string{"U"}, expect: []string{"21 RPC-over-RDMA"},
		then: []string{"T"}, thenExpect: []string{"Latency per opcode, all connections: 12 opcodes, 21 commands", "NFSv3 LOOKUP"}},
	{name: "oplatency-empty", keys: []string{":", "oplatency", "<enter>"}, expect: []string{"(no command answered"}},
	// enter on a bucket lists its commands; enter there goes to the frame.
	{name: "oplatency-bucket", path: nvmeMidstream, keys: []string{"U"}, expect: []string{"Commands: 12 NVMe-oF"},
		then: []string{"t", "jj", "<down>", "<enter>"}, thenExpect: []string{"Commands of NVMe I/O Read [1024, 2048) µs, connection 1: 2 (enter: frame"}},
	{name: "oplatency-bucket-jump", path: nvmeMidstream, keys: []string{"U"}, expect: []string{"Commands: 12 NVMe-oF"},
		then: []string{"t", "j", "<enter>", "j", "k", "<enter>"}, thenExpect: []string{"[ Packets ]", "Frame 21:"},
		until: func(u *UI) bool { return u.view == viewPackets && u.selected == 21 }},
	// T goes to every connection and back; k and up move.
	{name: "oplatency-toggle", path: nvmeConnect, h: 24, keys: []string{"U"}, expect: []string{"Commands: 49 NVMe-oF"},
		then: []string{"S", "j", "t", "T", "jj", "<up>", "k", "T"}, thenExpect: []string{"Latency per opcode, connection 4"}, golden: "oplatency-conn"},
	// :load replaces the capture.
	{name: "command-load", keys: []string{":", "load " + rping, "<enter>"}, expect: []string{"rping.pcap |", "Frame 1:"},
		until: func(u *UI) bool { st := u.m.Status(); return st.Name == rping && st.Done && u.selected == 1 }},
}

// TestViews drives each view from its keys and compares the screen with its
// golden copy; then it checks that the cases pressed every binding.
func TestViews(t *testing.T) {
	pressed := map[string]bool{}
	ran := 0
	for _, tc := range viewCases {
		t.Run(tc.name, func(t *testing.T) {
			ran++
			path, w, hh := tc.path, tc.w, tc.h
			if path == "" {
				path = writeLoss
			}
			if w == 0 {
				w = 120
			}
			if hh == 0 {
				hh = 40
			}
			h := start(t, path, "", w, hh)
			h.waitFor("Frame 1:")
			h.keys(tc.keys...)
			screen := h.waitFor(tc.expect...)
			if tc.then != nil {
				h.keys(tc.then...)
				screen = h.waitFor(tc.thenExpect...)
			}
			if tc.until != nil {
				h.waitUntil(tc.until, "the state after "+strings.Join(append(tc.keys, tc.then...), " "))
				want := tc.expect
				if tc.then != nil {
					want = tc.thenExpect
				}
				screen = h.waitFor(want...)
			}
			for _, id := range h.pressedBindings() {
				pressed[id] = true
			}
			name := tc.golden
			if name == "" {
				name = tc.name
			}
			golden(t, name, screen)
		})
	}
	if ran < len(viewCases) {
		t.Logf("%d of %d cases ran: not checking that every binding was pressed", ran, len(viewCases))
		return
	}
	for _, b := range keyTable() {
		assert.True(t, pressed[bindingID(&b)], "no case of TestViews presses %s (%s): add one", keyNames(&b), bindingID(&b))
	}
}

// TestOpensAtFrame: ibtui -g N selects frame N once it is read, whether
// the model is loaded before the viewer starts or while it runs, and says
// so when the capture has no such frame.
func TestOpensAtFrame(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame int
		want  int    // the frame selected
		note  string // on the status bar
	}{
		{"a frame in the middle", 1007, 1007, ""},
		{"the last frame", 2243, 2243, ""},
		{"past the end", 99999, 2243, "frame 99999 is not displayed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startAt(t, loadModel(t, writeLoss, ""), 120, 40, true, tc.frame)
			h.waitScreen(func(string) bool {
				selected := 0
				h.onLoop(false, "the selected frame", func() { selected = h.ui.selected })
				return selected == tc.want
			}, fmt.Sprintf("frame %d selected", tc.want))
			if tc.note != "" {
				h.waitFor(tc.note)
			}
		})
	}
}
