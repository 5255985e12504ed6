package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/internal/peer/perftest"
	"github.com/ibwire/ibwire/setup"
)

// perftestServer is an ibpeer perftest server running in-process.
type perftestServer struct {
	addr netip.AddrPort // where it listens: TCP, or RDMA CM's port with -R
	out  *peertest.Buffer
	done chan error // its run's error, once it has ended
}

// runPerftestServer starts ibpeer perftest with args (which name --addr)
// and returns once it listens.
func runPerftestServer(t *testing.T, args ...string) *perftestServer {
	t.Helper()
	var errb bytes.Buffer
	j, code := parsePerftest(args, io.Discard, &errb)
	require.NotNil(t, j, "exit %d: %s", code, errb.String())
	ready := make(chan netip.AddrPort, 1)
	j.Ready = func(a netip.AddrPort) { ready <- a }
	s := &perftestServer{out: &peertest.Buffer{}, done: make(chan error, 1)}
	go func() { s.done <- perftest.Run(context.Background(), *j, s.out) }()
	select {
	case s.addr = <-ready:
	case err := <-s.done:
		t.Fatalf("server did not start: %v", err)
	}
	return s
}

// startPerftestServer runs ibpeer perftest as the server on 127.0.0.2
// with the TCP port chosen by the kernel; wait returns its output and
// error.
func startPerftestServer(t *testing.T, args ...string) (port int, wait func() (string, error)) {
	t.Helper()
	s := runPerftestServer(t, append(args, "--addr", "127.0.0.2", "-p", "0")...)
	return int(s.addr.Port()), func() (string, error) {
		select {
		case err := <-s.done:
			return s.out.String(), err
		case <-time.After(30 * time.Second):
			t.Fatal("the perftest server did not end")
			return "", nil
		}
	}
}

// perfRow returns the table row of a perftest report.
func perfRow(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^ [0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+\s+[0-9.]+$`).FindString(out)
	require.NotEmpty(t, m, "no result row in:\n%s", out)
	return m
}

func TestPerftestBothRoles(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	tests := []struct {
		name       string
		args       []string
		test, unit string
		sameRow    bool // the server prints the client's figures
		want       []string
	}{
		{"write", []string{"write", "-n", "200"}, "RDMA_Write BW Test", "MB/sec", true,
			[]string{" 65536      200   ", "Mtu             : 4096[B]"}},
		{"read", []string{"read", "-n", "100", "-s", "100000"}, "RDMA_Read BW Test", "MB/sec", true,
			[]string{" 100000     100   ", "Outstand reads  : 128", " OUT 0x80 RKey "}},
		{"send", []string{"send", "-n", "100"}, "Send BW Test", "MB/sec", false, []string{" 65536      100   "}},
		{"fetch-add", []string{"atomic", "-n", "300"}, "Atomic BW Test", "MB/sec", true, []string{" 8          300   "}},
		{"cmp-swap", []string{"atomic", "-A", "CMP_AND_SWAP", "-n", "300"}, "Atomic BW Test", "MB/sec", true, nil},
		{"gbits", []string{"write", "-n", "50", "--report_gbits"}, "RDMA_Write BW Test", "Gb/sec", true, nil},
		{"mtu 1024", []string{"write", "-n", "50", "-m", "1024"}, "RDMA_Write BW Test", "MB/sec", true,
			[]string{"Mtu             : 1024[B]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port, wait := startPerftestServer(t, tt.args...)
			args := append([]string{"perftest"}, tt.args...)
			args = append(args, "--bind", "127.0.0.1", "-p", strconv.Itoa(port), "127.0.0.2")
			code, cout, cerr := ibpeer(args...)
			sout, serr := wait()
			require.Equal(t, exitOK, code, "client: %s\n%s", cerr, cout)
			require.NoError(t, serr, "server:\n%s", sout)
			assert.Contains(t, sout, "* Waiting for client to connect... *")
			for _, out := range []string{cout, sout} {
				assert.Contains(t, out, "                    "+tt.test+"\n")
				assert.Contains(t, out, "BW peak["+tt.unit+"]")
				for _, w := range tt.want {
					assert.Contains(t, out, w)
				}
			}
			assert.Contains(t, cout, "TX depth        : 128")
			assert.NotContains(t, sout, "TX depth")
			if tt.sameRow {
				assert.Equal(t, perfRow(t, cout), perfRow(t, sout), "the server prints the client's report")
			} else {
				perfRow(t, sout)
				assert.Contains(t, sout, "RX depth        : 100")
			}
			assert.Contains(t, cout, "GID: 00:00:00:00:00:00:00:00:00:00:255:255:127:00:00:01\n remote address")
		})
	}
}

// TestPerftestLatencyBothRoles: ibpeer perftest's latency tests against
// themselves through the command line: perftest's default size (2, atomics
// 8), -I printed as the inline size where perftest prints it (not for READ
// and atomics, which show their outstanding reads there), the latency row
// on the client, and on the server too for WRITE and SEND.
func TestPerftestLatencyBothRoles(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	row := regexp.MustCompile(`(?m)^ [0-9]+ +[0-9]+([ \t]+[0-9.]+){7}[ \t]*$`)
	for _, tt := range []struct {
		args      []string
		size      string
		serverRow bool // for WRITE and SEND; they show -I too
	}{
		{[]string{"write_lat", "-n", "20", "-I", "64"}, "2", true},
		{[]string{"send_lat", "-n", "20", "-I", "64"}, "2", true},
		{[]string{"read_lat", "-n", "20", "-I", "64"}, "2", false},
		{[]string{"atomic_lat", "-n", "20", "-I", "64", "-A", "CMP_AND_SWAP"}, "8", false},
	} {
		t.Run(tt.args[0], func(t *testing.T) {
			port, wait := startPerftestServer(t, tt.args...)
			args := append([]string{"perftest"}, tt.args...)
			args = append(args, "--bind", "127.0.0.1", "-p", strconv.Itoa(port), "127.0.0.2")
			code, cout, cerr := ibpeer(args...)
			sout, serr := wait()
			require.Equal(t, exitOK, code, "client: %s\n%s", cerr, cout)
			require.NoError(t, serr, "server:\n%s", sout)
			assert.Regexp(t, `^ `+tt.size+` +20 `, row.FindString(cout), cout)
			if tt.serverRow {
				assert.Regexp(t, `^ `+tt.size+` +20 `, row.FindString(sout), sout)
			} else {
				assert.Empty(t, row.FindString(sout), sout)
			}
			for _, out := range []string{cout, sout} {
				assert.Contains(t, out, " Latency Test\n")
				if tt.serverRow {
					assert.Contains(t, out, " Max inline data : 64[B]\n")
				} else {
					assert.Contains(t, out, " Outstand reads  : 128\n")
				}
			}
		})
	}
}

// TestPerftestPeerFailures: a client with nothing to talk to, and a server
// whose client is too old or goes away, end with exit 1 and the reason.
func TestPerftestPeerFailures(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	t.Run("no server", func(t *testing.T) {
		code, _, stderr := ibpeer("perftest", "write", "--addr", "127.0.0.1", "-p", "1", "127.0.0.2")
		assert.Equal(t, exitError, code)
		assert.Contains(t, stderr, "ibpeer perftest write: set-up with 127.0.0.2:1:")
		assert.Contains(t, stderr, "connection refused")
	})
	t.Run("old client", func(t *testing.T) {
		port, wait := startPerftestServer(t, "write")
		c, err := net.Dial("tcp", "127.0.0.2:"+strconv.Itoa(port))
		require.NoError(t, err)
		var v [setup.PerftestVersionSize]byte
		copy(v[:], "5.60")
		_, err = c.Write(v[:])
		require.NoError(t, err)
		_, err = io.ReadFull(c, v[:])
		require.NoError(t, err)
		assert.Equal(t, "6.06", strings.TrimRight(string(v[:]), "\x00"))
		_, err = wait()
		c.Close()
		require.Error(t, err)
		assert.Contains(t, err.Error(), `peer version "5.60" is older than 5.70`)
	})
	t.Run("client goes away", func(t *testing.T) {
		port, wait := startPerftestServer(t, "read")
		c, err := net.Dial("tcp", "127.0.0.2:"+strconv.Itoa(port))
		require.NoError(t, err)
		c.Close()
		_, err = wait()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "perftest set-up: receiving version: peer closed after 0 of 16 bytes")
	})
}

func TestPerftestUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"help", []string{"perftest", "-h"}, exitOK, []string{"usage: ibpeer perftest write|read|send|atomic|write_lat|read_lat|send_lat|atomic_lat --addr IP", "version 6.06",
			"-report_gbits", "  -s size", "  -n iterations", "  -m MTU", "  -p port", "  -A string", "  -t int", "  -o int", "--bind is another name of --addr"}, ""},
		{"verb help", []string{"perftest", "read", "-h"}, exitOK, []string{"number of iterations (5000 for write, 1000 for the others)"}, ""},
		{"top-level help", []string{"help", "perftest"}, exitOK, []string{"ib_write_bw"}, ""},
		{"no verb", []string{"perftest"}, exitUsage, nil, "give the test"},
		{"bad verb", []string{"perftest", "pingpong"}, exitUsage, nil, `unknown test "pingpong"`},
		{"no addr", []string{"perftest", "write"}, exitUsage, nil, "give --addr IP"},
		{"bad addr", []string{"perftest", "write", "--bind", "x"}, exitUsage, nil, `--addr "x": not an IP address`},
		{"bad server", []string{"perftest", "write", "--addr", "127.0.0.1", "host"}, exitUsage, nil, `server "host": not an IP address`},
		{"two servers", []string{"perftest", "write", "--addr", "127.0.0.1", "127.0.0.2", "127.0.0.3"}, exitUsage, nil, `unexpected argument "127.0.0.3"`},
		{"flag after server", []string{"perftest", "write", "--addr", "127.0.0.1", "127.0.0.2", "-s", "0"}, exitUsage, nil, "-s 0: want 1 to"},
		{"two servers among flags", []string{"perftest", "write", "127.0.0.2", "--addr", "127.0.0.1", "127.0.0.3"}, exitUsage, nil, `unexpected argument "127.0.0.3"`},
		{"atomic size", []string{"perftest", "atomic", "--addr", "127.0.0.1", "-s", "64"}, exitUsage, nil, "-s 64: atomics move 8 bytes"},
		{"atomic op", []string{"perftest", "atomic", "--addr", "127.0.0.1", "-A", "ADD"}, exitUsage, nil, `-A "ADD"`},
		{"iters", []string{"perftest", "send", "--addr", "127.0.0.1", "-n", "4"}, exitUsage, nil, "-n 4: want at least 5"},
		{"mtu", []string{"perftest", "send", "--addr", "127.0.0.1", "-m", "9000"}, exitUsage, nil, "-m: MTU 9000"},
		{"outs", []string{"perftest", "read", "--addr", "127.0.0.1", "-o", "0"}, exitUsage, nil, "-o 0"},
		{"port", []string{"perftest", "read", "--addr", "127.0.0.1", "-p", "0", "127.0.0.2"}, exitUsage, nil, "-p 0: want a TCP port"},
		{"unknown flag", []string{"perftest", "write", "-X"}, exitUsage, nil, "flag provided but not defined: -X"},
		// perftest's options ibpeer does not run are refused by name, at once
		{"help says what is refused", []string{"perftest", "-h"}, exitOK, []string{"Refused at once", "-q N other than 1 for send, atomic", "-b\n(bidirectional)"}, ""},
		{"several QPs of send", []string{"perftest", "send", "--bind", "127.0.0.1", "-q", "4", "127.0.0.2"}, exitUsage, nil, "-q 4: several QPs run with write and read; send runs one QP"},
		{"several QPs of a latency test", []string{"perftest", "write_lat", "--bind", "127.0.0.1", "-q", "2"}, exitUsage, nil, "-q 2: several QPs run with write and read"},
		{"several QPs over RDMA CM", []string{"perftest", "write", "--bind", "127.0.0.1", "-q", "2", "-R"}, exitUsage, nil, "-q 2 with -R"},
		{"too many QPs", []string{"perftest", "write", "--bind", "127.0.0.1", "-q", "65"}, exitUsage, nil, "-q 65: want 1 to 64 QPs"},
		{"bidirectional read", []string{"perftest", "read", "--bind", "127.0.0.1", "-b"}, exitUsage, nil, "-b: the bidirectional test runs with write; read runs one direction"},
		{"bidirectional long", []string{"perftest", "send", "--bind", "127.0.0.1", "--bidirectional"}, exitUsage, nil, "-b: the bidirectional test runs with write"},
		{"bidirectional over RDMA CM", []string{"perftest", "write", "--bind", "127.0.0.1", "-b", "-R"}, exitUsage, nil, "-b with -R"},
		{"all sizes", []string{"perftest", "write", "--bind", "127.0.0.1", "-a"}, exitUsage, nil, "-a: give one size with -s"},
		{"duration", []string{"perftest", "send", "--bind", "127.0.0.1", "-D", "5"}, exitUsage, nil, "-D 5: give iterations with -n"},
		{"infinitely", []string{"perftest", "send", "--bind", "127.0.0.1", "--run_infinitely"}, exitUsage, nil, "--run_infinitely"},
		{"UC", []string{"perftest", "write", "--bind", "127.0.0.1", "-c", "UC"}, exitUsage, nil, "-c UC: ibpeer perftest runs RC only"},
		{"one QP is fine", []string{"perftest", "write", "--bind", "127.0.0.1", "-q", "1", "-s", "0"}, exitUsage, nil, "-s 0: want 1 to"},
		// the latency tests
		{"latency over RDMA CM", []string{"perftest", "send_lat", "--bind", "127.0.0.1", "-R"}, exitUsage, nil, "-R: a latency test over RDMA CM is not supported"},
		{"atomic_lat size", []string{"perftest", "atomic_lat", "--addr", "127.0.0.1", "-s", "2"}, exitUsage, nil, "-s 2: atomics move 8 bytes"},
		{"inline", []string{"perftest", "read_lat", "--addr", "127.0.0.1", "-I", "-1"}, exitUsage, nil, "-I -1: want 0-1024 bytes"},
		{"latency help", []string{"perftest", "send_lat", "-h"}, exitOK, []string{"latency tests 2", "ib_write_lat, ib_read_lat", "t_typical (the median)"}, ""},
		{"write_lat size", []string{"perftest", "write_lat", "--addr", "127.0.0.1", "-s", "0"}, exitUsage, nil, "-s 0: want 1 to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ibpeer(tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			for _, s := range tt.stdout {
				assert.Contains(t, stdout, s)
			}
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}

// TestPerftestHugeCycleBuffer: a peer's cycle buffer sizes the region, so
// an absurd one is refused instead of allocated.
func TestPerftestHugeCycleBuffer(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	port, wait := startPerftestServer(t, "write")
	c, err := net.Dial("tcp", "127.0.0.2:"+strconv.Itoa(port))
	require.NoError(t, err)
	defer c.Close()
	p := setup.NewPerftestConn(c, false)
	_, err = p.ExchangeVersions(setup.PerftestVersion)
	require.NoError(t, err)
	_, _, err = p.ExchangeBufferSizes(1<<30, 64)
	require.NoError(t, err)
	_, err = wait()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the peer's cycle buffer of 1073741824 bytes is more than the 16777216 this side allocates")
}

// TestPerftestRDMACM runs both roles of perftest -R in-process: the set-up
// exchange over an RDMA CM connection, the data QP connected by RDMA CM.
func TestPerftestRDMACM(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"write", []string{"write", "-R", "-n", "100"}, " 65536      100   "},
		{"read", []string{"read", "--rdma_cm", "-n", "50", "-s", "5000"}, " 5000       50    "},
		{"send", []string{"send", "-R", "-n", "100", "-s", "100"}, " 100        100   "},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, cli := fmt.Sprintf("127.80.%d.2", i), fmt.Sprintf("127.80.%d.1", i)
			s := runPerftestServer(t, append(tt.args, "--addr", srv)...)
			code, cout, cerr := ibpeer(append(append([]string{"perftest"}, tt.args...), "--bind", cli, srv)...)
			require.Equal(t, exitOK, code, "client: %s\n%s", cerr, cout)
			require.NoError(t, <-s.done, "server:\n%s", s.out.String())
			for _, out := range []string{cout, s.out.String()} {
				assert.Contains(t, out, " rdma_cm QPs\t : ON\n")
				assert.Contains(t, out, " Data ex. method : rdma_cm\n")
				assert.Contains(t, out, tt.want)
			}
		})
	}
}

// TestPerftestDumpRegion: --dump-region writes each side's buffer when the
// test has ended, so the bytes that moved can be compared: the WRITE or
// SEND server's buffer starts with the client's first message, and a READ
// client's with the server's. The buffers are random, so a match says the
// data crossed, not that both sides were zero.
func TestPerftestDumpRegion(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	const size = 10000 // three 4096-byte segments, the last one short
	for _, verb := range []string{"write", "read", "send"} {
		t.Run(verb, func(t *testing.T) {
			dir := t.TempDir()
			srvDump, cliDump := dir+"/server.bin", dir+"/client.bin"
			args := []string{verb, "-n", "20", "-s", strconv.Itoa(size)}
			port, wait := startPerftestServer(t, append(args, "--dump-region", srvDump)...)
			// a flag after the server's address, as perftest's getopt allows
			code, cout, cerr := ibpeer(append(append([]string{"perftest"}, args...),
				"--bind", "127.0.0.1", "-p", strconv.Itoa(port), "127.0.0.2", "--dump-region", cliDump)...)
			sout, serr := wait()
			require.Equal(t, exitOK, code, "client: %s\n%s", cerr, cout)
			require.NoError(t, serr, "server:\n%s", sout)
			srv, err := os.ReadFile(srvDump)
			require.NoError(t, err)
			cli, err := os.ReadFile(cliDump)
			require.NoError(t, err)
			require.Len(t, srv, 2*size, "the buffer is twice the message, as perftest's")
			require.Len(t, cli, 2*size)
			assert.Equal(t, cli[:size], srv[:size], "the message's bytes on both sides")
			assert.NotEqual(t, cli[size:], srv[size:], "past the message each side keeps its own random bytes")
		})
	}
}
