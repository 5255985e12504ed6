package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/internal/ibdumpcli"
)

const writeLoss = "../../pcaps/rxe/write_bw_loss.pcap"

func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Setenv("NO_COLOR", "1")
	os.Exit(m.Run())
}

// TestNotATerminalIsIbdump: with stdout not a terminal, ibtui prints what
// ibdump prints for the same arguments, and exits the same way.
func TestNotATerminalIsIbdump(t *testing.T) {
	tests := [][]string{
		{writeLoss},
		{"-Y", "infiniband.aeth.syndrome.opcode == 3", writeLoss},
		{"-q", "-z", "conv,qp", writeLoss},
		{"-V", "-c", "3", writeLoss},
		{"-T", "fields", "-e", "frame.number", "-e", "bth.psn", "-c", "20", writeLoss},
		{"-Y", "bth.psn ==", writeLoss},
		{"no-such-file.pcap"},
		{"--correlate", "../../pcaps/multipoint_a.pcap", "../../pcaps/multipoint_b.pcap"},
		{"--point", "a=../../pcaps/multipoint_a.pcap", "--point", "c=../../pcaps/multipoint_c.pcap", "-T", "json"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errOut, wantOut, wantErr bytes.Buffer
			code := run(context.Background(), args, nil, &out, &errOut, false)
			wantCode := ibdumpcli.Run(context.Background(), "ibtui", args, nil, &wantOut, &wantErr)
			assert.Equal(t, wantCode, code)
			assert.Equal(t, wantOut.String(), out.String())
			assert.Equal(t, wantErr.String(), errOut.String())
			// And it is ibdump's output, but for the program's name.
			var dumpOut bytes.Buffer
			ibdumpcli.Run(context.Background(), "ibdump", args, nil, &dumpOut, &bytes.Buffer{})
			assert.Equal(t, dumpOut.String(), out.String())
		})
	}
}

// TestMaxPacketsIsTheViewers: --max-packets bounds the viewer's memory;
// piped, ibtui is ibdump, which streams and needs no bound, so the flag is
// accepted and has no effect.
func TestMaxPacketsIsTheViewers(t *testing.T) {
	for _, args := range [][]string{{"--max-packets", "5", writeLoss}, {"-max-packets=5", writeLoss}} {
		var out, errOut, wantOut bytes.Buffer
		code := run(context.Background(), args, nil, &out, &errOut, false)
		require.Zero(t, code, "%s", errOut.String())
		ibdumpcli.Run(context.Background(), "ibtui", []string{writeLoss}, nil, &wantOut, &bytes.Buffer{})
		assert.Equal(t, wantOut.String(), out.String())
	}
}

// TestMaxPacketsMustBeABound: a negative bound is refused before any
// screen opens.
func TestMaxPacketsMustBeABound(t *testing.T) {
	var errOut bytes.Buffer
	code := run(context.Background(), []string{"--max-packets", "-1", writeLoss}, nil, &bytes.Buffer{}, &errOut, true)
	assert.Equal(t, ibdumpcli.ExitError, code)
	assert.Equal(t, "ibtui: --max-packets -1: want 0 (no bound) or more\n", errOut.String())
}

// TestCorrelateNeedsPoints: --correlate on a terminal wants two capture
// points or more, and says so before any screen opens, as ibdump does.
func TestCorrelateNeedsPoints(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--correlate", writeLoss}, "ibtui: --correlate: want at least two captures, got 1\n"},
		{[]string{"--point", "a", writeLoss}, "ibtui: --correlate: --point a: want NAME=FILE\n"},
	} {
		var errOut bytes.Buffer
		code := run(context.Background(), tt.args, nil, &bytes.Buffer{}, &errOut, true)
		assert.Equal(t, ibdumpcli.ExitError, code)
		assert.Equal(t, tt.want, errOut.String())
	}
}

func TestHelpIsComplete(t *testing.T) {
	var errOut bytes.Buffer
	code := run(context.Background(), []string{"--help"}, nil, &bytes.Buffer{}, &errOut, true)
	require.Zero(t, code)
	var o options
	fs := newFlagSet(&o, &bytes.Buffer{})
	help := errOut.String()
	for _, name := range []string{"-r", "-Y", "-c", "-i", "-s", "-p", "-d", "-dc", "-color", "-version", "-max-packets", "-g", "-correlate", "-point"} {
		assert.Contains(t, help, "  "+name, "help lists %s", name)
		require.NotNil(t, fs.Lookup(strings.TrimPrefix(name, "-")), name)
	}
	for _, s := range []string{"ibtui keys", "DETAIL TREE", "not a terminal", "Exit status", "NO_COLOR", "CAPTURE POINTS", "W    "} {
		assert.Contains(t, help, s)
	}
	// It says where ibtui opens (the packet list, where tui.Run starts), not
	// somewhere else.
	assert.Contains(t, help, "opens on the packet list")
	assert.NotContains(t, help, "starting\nfrom the queue-pair conversations")
	// Help goes to stderr even when stdout is not a terminal: it is ibtui's.
	errOut.Reset()
	require.Zero(t, run(context.Background(), []string{"-h"}, nil, &bytes.Buffer{}, &errOut, false))
	assert.Contains(t, errOut.String(), "Usage: ibtui")
}

// tmux drives the real program in a terminal of fixed size on a private
// tmux server.
type tmux struct {
	t      *testing.T
	socket string
}

func (x *tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", x.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	require.NoError(x.t, err, "tmux %v: %s", args, out)
	return string(out)
}

func (x *tmux) screen() string { return x.run("capture-pane", "-p", "-t", "T") }

// modes is the pane's terminal modes, as tmux tracks them: the alternate
// screen, mouse reporting, the cursor's visibility and the keypad's
// application mode.
func (x *tmux) modes() string {
	return x.run("display-message", "-p", "-t", "T",
		"alternate=#{alternate_on} mouse=#{mouse_any_flag} cursor=#{cursor_flag} keypad=#{keypad_flag}")
}

// waitFor polls the pane until it shows every string of want.
func (x *tmux) waitFor(want ...string) string {
	x.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		s := x.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("the pane never showed %q; it shows:\n%s", want, s)
		}
		<-tick.C
	}
}

// TestTmuxEndToEnd opens a real capture in a real terminal: the QP table
// shows the connection with its retransmissions, a typed filter shows the
// NAKs, the PSN graph opens, and q leaves the terminal as it was.
func TestTmuxEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		// .ci/run installs tmux and sets IBWIRE_CI: there a missing tmux is
		// a broken CI set-up, not a reason to pass silently.
		if os.Getenv("IBWIRE_CI") != "" {
			t.Fatal("tmux is not installed but IBWIRE_CI is set: .ci/run should have installed it")
		}
		t.Skip("tmux is not installed (apt-get install -y tmux): the end-to-end test needs it")
	}
	bin := filepath.Join(t.TempDir(), "ibtui")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	capture, err := filepath.Abs(writeLoss)
	require.NoError(t, err)

	x := &tmux{t: t, socket: fmt.Sprintf("ibtui-e2e-%d", os.Getpid())}
	t.Cleanup(func() { exec.Command("tmux", "-L", x.socket, "kill-server").Run() })
	// The pane's shell reports the exit status once ibtui is gone, and
	// then waits, so the pane stays for inspection.
	x.run("new-session", "-d", "-s", "T", "-x", "120", "-y", "30",
		fmt.Sprintf("%s %s; echo IBTUI-EXITED $?; exec cat", bin, capture))
	x.waitFor("2243 packets", "Frame 1:")
	// While ibtui runs: the alternate screen, mouse reporting on, the
	// cursor hidden, the keypad in application mode.
	assert.Equal(t, "alternate=1 mouse=1 cursor=0 keypad=1\n", x.modes())

	// The packet list has a PSN column; the tree opens on InfiniBand.
	x.run("send-keys", "-t", "T", "1", "0", "0", "G")
	s := x.waitFor("Frame 100:", "InfiniBand (RoCEv2)", "Base Transport Header")
	assert.Regexp(t, `No\. +Time +Source +Destination +Protocol +Length +PSN +Info`, s)
	assert.NotContains(t, s, "Frame Number:", "Frame is closed")

	// The QP conversations: one RC connection, 1204 retransmissions, 13
	// NAKs, at 120 columns without scrolling: the per-direction columns
	// are left out, and the view says so.
	x.run("send-keys", "-t", "T", "C")
	s = x.waitFor("[ QPs ]", "0x000011")
	assert.Regexp(t, `192\.168\.77\.11 +192\.168\.77\.12 +0x000011 +0x000011 +2202 +2176412 +200 +1204 +12 +13 +0 +0 +0 +1\.091453 +0\.1620`, s)
	assert.Contains(t, s, "not shown at this width: Svc, Paired, <- Frms, <- Bytes, -> Frms, -> Bytes")

	// At 80×24 a filter that does not compile says why, whole.
	x.run("resize-window", "-t", "T", "-x", "80", "-y", "24")
	x.run("send-keys", "-t", "T", "/")
	x.run("send-keys", "-t", "T", "-l", "bth.psnx == 3")
	x.waitFor(`^ column 1: "bth.psnx" is neither a field nor a protocol name`)
	// Escape leaves the filter bar and goes back to the packet list. The
	// next key is sent only once the list shows: a terminal application
	// reads an ESC byte followed at once by another as Alt and that key
	// (ESC ESC or ESC / lost the Escape and failed this test now and then).
	x.run("send-keys", "-t", "T", "Escape")
	x.waitFor("[ Packets ]")
	x.run("resize-window", "-t", "T", "-x", "120", "-y", "30")

	// The NAKs, typed in the filter bar.
	x.run("send-keys", "-t", "T", "/")
	x.run("send-keys", "-t", "T", "-l", "infiniband.aeth.syndrome.opcode == 3")
	x.waitFor("Filter✓ infiniband.aeth.syndrome.opcode == 3")
	x.run("send-keys", "-t", "T", "Enter")
	// (once back at 120 columns, where the Info column holds it)
	x.waitFor("13 displayed", "Frame 159:", "RC Acknowledge QP=0x000011 [PSN Sequence")

	// The PSN graph of the selected NAK's connection, its axis the PSNs
	// on the wire.
	x.run("send-keys", "-t", "T", "P")
	x.waitFor("PSN graph, connection 1", "retrans 1204", "NAK 13", "PSN 11705527..11706326")

	x.run("send-keys", "-t", "T", "q")
	s = x.waitFor("IBTUI-EXITED 0")
	assert.NotContains(t, s, "PSN graph", "the alternate screen is gone")
	// And every mode is back as the shell had it.
	assert.Equal(t, "alternate=0 mouse=0 cursor=1 keypad=0\n", x.modes())
}

// TestMonochrome: --color decides, and auto honours NO_COLOR (set and not
// empty, as no-color.org says) and TERM=dumb.
func TestMonochrome(t *testing.T) {
	const unset = "<unset>"
	tests := []struct {
		color, noColor, term string
		mono                 bool
		err                  bool
	}{
		{"auto", unset, "xterm-256color", false, false},
		{"auto", "1", "xterm-256color", true, false},
		{"auto", "0", "xterm-256color", true, false}, // any value but empty
		{"auto", "", "xterm-256color", false, false},
		{"auto", unset, "dumb", true, false},
		{"auto", "", "dumb", true, false},
		{"auto", unset, unset, false, false},
		{"always", "1", "dumb", false, false},
		{"always", unset, "xterm", false, false},
		{"never", unset, "xterm-256color", true, false},
		{"never", "", "xterm", true, false},
		{"", unset, "xterm", false, true},
		{"yes", unset, "xterm", false, true},
		{"Never", unset, "xterm", false, true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("color=%s NO_COLOR=%s TERM=%s", tc.color, tc.noColor, tc.term), func(t *testing.T) {
			for name, v := range map[string]string{"NO_COLOR": tc.noColor, "TERM": tc.term} {
				t.Setenv(name, v) // restored after the test
				if v == unset {
					require.NoError(t, os.Unsetenv(name))
				}
			}
			mono, err := monochrome(tc.color)
			if tc.err {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "want auto, always or never")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.mono, mono)
		})
	}
}
