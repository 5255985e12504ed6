package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/internal/peer/rping"
)

// Loopback addresses of their own (127.78.0.0/16), away from other tests'
// UDP 4791 sockets.
func rpingAddrs(n int) (server, client string) {
	return fmt.Sprintf("127.78.%d.1", n), fmt.Sprintf("127.78.%d.2", n)
}

// liveGoroutines counts goroutines, leaving out os/signal's loop, which
// the first signal.Notify starts for good.
func liveGoroutines() (int, string) {
	buf := make([]byte, 1<<20)
	all := string(buf[:runtime.Stack(buf, true)])
	n := 0
	for _, g := range strings.Split(all, "\n\n") {
		if !strings.Contains(g, "os/signal.signal_recv") {
			n++
		}
	}
	return n, all
}

// noLeak fails when goroutines started during the test outlive it.
func noLeak(t *testing.T) {
	t.Helper()
	before, _ := liveGoroutines()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n, all := liveGoroutines()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines leaked:\n%s", n-before, all)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// rpingWant is what rping prints for ping i of size bytes.
func rpingWant(prefix string, i, size int) string {
	b := make([]byte, size)
	rping.Fill(b, i, byte(65+i%58))
	return prefix + string(b[:size-1]) + "\n"
}

// withStderr sets cfg's Stderr.
func withStderr(cfg rping.Config, w io.Writer) rping.Config {
	cfg.Stderr = w
	return cfg
}

// rpingPair runs an rping server and client in-process over UDP on two
// loopback addresses; the server must listen before the client starts.
func rpingPair(t *testing.T, n int, serverArgs, clientArgs []string) (scode int, sout, serr string, ccode int, cout, cerr string) {
	t.Helper()
	srv, cli := rpingAddrs(n)
	scfg, err := rpingParse(append([]string{"-s", "--bind", srv}, serverArgs...))
	require.NoError(t, err)
	ccfg, err := rpingParse(append([]string{"-c", "--bind", cli, "-a", srv}, clientArgs...))
	require.NoError(t, err)
	listening := make(chan struct{})
	scfg.Listening = func() { close(listening) }
	var so, se peertest.Buffer
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		scfg.Stderr = &se
		done <- rping.Run(ctx, scfg, &so)
	}()
	select {
	case <-listening:
	case err := <-done:
		require.NoError(t, err, "server: %s", se.String())
	}
	var co, ce bytes.Buffer
	ccode = exitOK
	if err := rping.Run(ctx, withStderr(ccfg, &ce), &co); err != nil {
		ccode = exitError
	}
	scode = exitOK
	if err := <-done; err != nil {
		scode = exitError
	}
	return scode, so.String(), se.String(), ccode, co.String(), ce.String()
}

func TestRpingLoopback(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		size  int
		count int
	}{
		{name: "rping -v -V -C 10", args: []string{"-v", "-V", "-C", "10"}, size: 64, count: 10},
		{name: "bundled -vV, 2 KiB pings (READ and WRITE of 2 packets)", args: []string{"-vV", "-S", "2048", "-C", "3"}, size: 2048, count: 3},
		{name: "100 pings past the 'z' wrap", args: []string{"-vV", "-C100", "-S", "30"}, size: 30, count: 100},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			noLeak(t)
			scode, sout, serr, ccode, cout, cerr := rpingPair(t, i, tc.args, tc.args)
			require.Equal(t, exitOK, ccode, "client stderr: %s", cerr)
			require.Equal(t, exitOK, scode, "server stderr: %s", serr)
			var wantC, wantS strings.Builder
			for p := range tc.count {
				wantC.WriteString(rpingWant("ping data: ", p, tc.size))
				wantS.WriteString(rpingWant("server ping data: ", p, tc.size))
			}
			assert.Equal(t, wantC.String(), cout)
			assert.Equal(t, wantS.String(), sout)
			// A last ACK may meet the QP the DREQ moved to ERR: a drop
			// report, not a failure.
			assert.Equal(t, "server DISCONNECT EVENT...\nwait for RDMA_READ_ADV state 10\n", withoutDrops(serr))
		})
	}
}

// withoutDrops leaves out ibpeer's drop reports.
func withoutDrops(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "ibpeer: dropped ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

func TestRpingNoServer(t *testing.T) {
	noLeak(t)
	srv, cli := rpingAddrs(20)
	// A CM answers on srv, but nobody listens on the port: REJ 8.
	scfg, err := rpingParse([]string{"-s", "--bind", srv, "-p", "7175"})
	require.NoError(t, err)
	listening := make(chan struct{})
	scfg.Listening = func() { close(listening) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rping.Run(ctx, scfg, io.Discard) }()
	<-listening
	code, _, stderr := ibpeer("rping", "-c", "--bind", cli, "-a", srv, "-C", "1")
	assert.Equal(t, exitError, code)
	assert.Equal(t, "cma event RDMA_CM_EVENT_REJECTED, error 8\nconnect error -1\n", stderr)
	cancel()
	require.NoError(t, <-done)
}

func TestRpingParse(t *testing.T) {
	tests := []struct {
		args    []string
		want    rping.Config
		wantErr string
	}{
		{args: []string{"-s", "--bind", "192.168.77.1", "-v", "-V", "-C", "10"},
			want: rping.Config{Server: true, Local: netip.MustParseAddr("192.168.77.1"), Port: 7174, Count: 10, Size: 64, Verbose: true, Validate: true}},
		{args: []string{"-c", "--bind", "192.168.77.1", "-a", "192.168.77.11", "-vVd", "-C10", "-S", "100", "-p", "9999"},
			want: rping.Config{Local: netip.MustParseAddr("192.168.77.1"), Remote: netip.MustParseAddr("192.168.77.11"), Port: 9999, Count: 10, Size: 100, Verbose: true, Validate: true, Debug: true}},
		{args: []string{"-s", "-a", "10.0.0.1", "-P"},
			want: rping.Config{Server: true, Persistent: true, Local: netip.MustParseAddr("10.0.0.1"), Port: 7174, Size: 64}},
		{args: []string{"-c", "-I", "10.0.0.2", "-a", "10.0.0.1"},
			want: rping.Config{Local: netip.MustParseAddr("10.0.0.2"), Remote: netip.MustParseAddr("10.0.0.1"), Port: 7174, Size: 64}},
		{args: []string{"-v"}, wantErr: "give -s (server) or -c (client)"},
		{args: []string{"-c", "--bind", "10.0.0.2"}, wantErr: "the client needs -a"},
		{args: []string{"-s"}, wantErr: "give --bind IP"},
		{args: []string{"-s", "--bind", "10.0.0.2", "-S", "25"}, wantErr: "Invalid size 25 (valid range is 26 to 65536)"},
		{args: []string{"-s", "--bind", "10.0.0.2", "-C", "-1"}, wantErr: "Invalid count -1"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := rpingParse(tc.args)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRpingHelpComplete(t *testing.T) {
	fs := rpingFlags(io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		spelled := "-" + f.Name + " "
		if len(f.Name) > 1 {
			spelled = "--" + f.Name
		}
		assert.Contains(t, rpingUsage, spelled, "flag %s", f.Name)
	})
	code, out, _ := ibpeer("rping", "-h")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, rpingUsage, out)
	_, out, _ = ibpeer("-h")
	assert.Contains(t, out, "rping")
}

// rping -P serves one client after another until stopped.
func TestRpingPersistentServer(t *testing.T) {
	noLeak(t)
	srv, cli := rpingAddrs(30)
	scfg, err := rpingParse([]string{"-s", "-P", "--bind", srv, "-v"})
	require.NoError(t, err)
	listening := make(chan struct{})
	scfg.Listening = func() { close(listening) }
	ctx, cancel := context.WithCancel(context.Background())
	var so, se peertest.Buffer
	done := make(chan error, 1)
	go func() {
		scfg.Stderr = &se
		done <- rping.Run(ctx, scfg, &so)
	}()
	<-listening
	for range 2 {
		code, out, stderr := ibpeer("rping", "-c", "--bind", cli, "-a", srv, "-v", "-V", "-C", "2")
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, rpingWant("ping data: ", 0, 64)+rpingWant("ping data: ", 1, 64), out)
	}
	cancel()
	require.NoError(t, <-done)
	one := rpingWant("server ping data: ", 0, 64) + rpingWant("server ping data: ", 1, 64)
	assert.Equal(t, one+one, so.String())
}
