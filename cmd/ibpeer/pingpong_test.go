package main

import (
	"flag"
	"io"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/internal/peer/pingpong"
)

type ppResult struct {
	code           int
	stdout, stderr string
}

// ppRunPair runs `ibpeer pingpong` as server and as client, as two
// processes would: the client is started again while the server is not
// listening yet ("Couldn't connect", before anything else happens).
func ppRunPair(t *testing.T, serverArgs, clientArgs []string) (server, client ppResult) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		server.code, server.stdout, server.stderr = ibpeer(append([]string{"pingpong"}, serverArgs...)...)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		client.code, client.stdout, client.stderr = ibpeer(append([]string{"pingpong"}, clientArgs...)...)
		if client.code == 0 || !strings.HasPrefix(client.stderr, "Couldn't connect to ") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	return server, client
}

var (
	ppLocalRE  = regexp.MustCompile(`^  local address:  LID 0x0000, QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6})([,:]) GID (\S+)$`)
	ppRemoteRE = regexp.MustCompile(`^  remote address: LID 0x0000, QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), GID (\S+)$`)
	ppBytesRE  = regexp.MustCompile(`^(\d+) bytes in (\d+\.\d\d) seconds = (\d+\.\d\d|inf) Mbit/sec$`)
	ppItersRE  = regexp.MustCompile(`^(\d+) iters in (\d+\.\d\d) seconds = (\d+\.\d\d) usec/iter$`)
)

// ppOutput is what the four lines of a successful run say.
type ppOutput struct {
	localQPN, localPSN, localGID    string
	localSep                        string
	remoteQPN, remotePSN, remoteGID string
	bytes, iters                    int
}

func ppParseOutput(t *testing.T, out string) ppOutput {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 4, "output:\n%s", out)
	var o ppOutput
	m := ppLocalRE.FindStringSubmatch(lines[0])
	require.NotNil(t, m, "local line %q", lines[0])
	o.localQPN, o.localPSN, o.localSep, o.localGID = m[1], m[2], m[3], m[4]
	m = ppRemoteRE.FindStringSubmatch(lines[1])
	require.NotNil(t, m, "remote line %q", lines[1])
	o.remoteQPN, o.remotePSN, o.remoteGID = m[1], m[2], m[3]
	m = ppBytesRE.FindStringSubmatch(lines[2])
	require.NotNil(t, m, "bytes line %q", lines[2])
	o.bytes, _ = strconv.Atoi(m[1])
	m = ppItersRE.FindStringSubmatch(lines[3])
	require.NotNil(t, m, "iters line %q", lines[3])
	o.iters, _ = strconv.Atoi(m[1])
	return o
}

// An ibpeer server and an ibpeer client run the tools' test against each
// other over UDP on loopback, with the tools' output on both sides.
func TestPingpongLoopback(t *testing.T) {
	tests := []struct {
		name  string
		flags []string
		size  int // bytes per message the report counts
		sep   string
	}{
		{"rc", []string{"--rc", "-n", "20"}, 4096, ","},
		{"rc 8k events", []string{"--rc", "-s", "8192", "-n", "20", "-e"}, 8192, ","},
		{"rc chk mtu 4096", []string{"--rc", "-s8192", "--mtu=4096", "-n", "10", "-c"}, 8192, ","},
		{"uc", []string{"--uc", "-n", "20"}, 4096, ","},
		{"uc 8k", []string{"--uc", "--size", "8192", "-n", "20"}, 8192, ","},
		{"ud", []string{"--ud", "-n", "20"}, 1024, ":"},
		{"ud 4096 small rx depth", []string{"--ud", "-s", "4096", "-n", "20", "-r", "2"}, 4096, ":"},
		{"defaults spelled as the tools do", []string{"-d", "rxe0", "-g", "1", "-i", "1", "-l", "0", "--iters", "5"}, 4096, ","},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srvIP, cliIP := ppAddrs(i + 1)
			port := strconv.Itoa(peertest.FreeTCPPort(t))
			// Flags after the host, as getopt allows.
			srv, cli := ppRunPair(t,
				append([]string{"--addr", srvIP, "-p", port}, tc.flags...),
				append([]string{"--bind", cliIP, "-p", port, srvIP}, tc.flags...))
			require.Equal(t, 0, srv.code, "server stderr: %s", srv.stderr)
			require.Equal(t, 0, cli.code, "client stderr: %s", cli.stderr)
			assert.Empty(t, srv.stderr)
			assert.Empty(t, cli.stderr)
			so, co := ppParseOutput(t, srv.stdout), ppParseOutput(t, cli.stdout)
			assert.Equal(t, "::ffff:"+srvIP, so.localGID)
			assert.Equal(t, "::ffff:"+cliIP, co.localGID)
			assert.Equal(t, tc.sep, so.localSep)
			// Each side's remote line is the other's local line.
			assert.Equal(t, [3]string{so.localQPN, so.localPSN, so.localGID}, [3]string{co.remoteQPN, co.remotePSN, co.remoteGID})
			assert.Equal(t, [3]string{co.localQPN, co.localPSN, co.localGID}, [3]string{so.remoteQPN, so.remotePSN, so.remoteGID})
			iters := so.iters
			assert.Equal(t, iters, co.iters)
			assert.Equal(t, tc.size*iters*2, so.bytes)
			assert.Equal(t, tc.size*iters*2, co.bytes)
		})
	}
}

func ppMustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	require.NoError(t, err)
	return a.Unmap()
}

func TestPingpongExitStatus(t *testing.T) {
	port := strconv.Itoa(peertest.FreeTCPPort(t))
	_, ip := ppAddrs(200)
	taken, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	require.NoError(t, err)
	defer taken.Close()
	takenPort := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"help", []string{"-h"}, exitOK, "usage: ibpeer pingpong", ""},
		{"long help", []string{"--help"}, exitOK, "--rx-depth", ""},
		{"via ibpeer help", nil, exitOK, "", ""},
		{"no addr", []string{"--rc"}, exitError, "", "give --addr IP"},
		{"bad addr", []string{"--addr", "nowhere"}, exitError, "", `--addr "nowhere": not an IP address`},
		{"two modes", []string{"--rc", "--ud", "--addr", ip}, exitError, "", "give one of --rc, --uc, --ud, --srq"},
		{"num-qp without srq", []string{"--addr", ip, "-q", "4"}, exitError, "", "-q: the number of QPs is ibv_srq_pingpong's (--srq)"},
		{"srq has no chk", []string{"--srq", "--addr", ip, "-c"}, exitError, "", "-c: ibv_srq_pingpong has no such flag"},
		{"srq too many QPs", []string{"--srq", "--addr", ip, "--num-qp=257", "-r", "1000"}, exitError, "", "-q 257: want 1-256 QPs"},
		{"srq rx depth below QPs", []string{"--srq", "--addr", ip, "-q", "16", "-r", "8"}, exitError, "",
			"rx_depth 8 is too small for 16 QPs -- must have at least one receive per QP"},
		{"unknown flag", []string{"--addr", ip, "-x"}, exitError, "", "flag provided but not defined: -x"},
		{"bad number", []string{"--addr", ip, "-n", "many"}, exitError, "", `invalid value "many" for flag -n`},
		{"bad mtu", []string{"--addr", ip, "-m", "1500"}, exitError, "", "-m 1500: want 256, 512, 1024, 2048 or 4096"},
		{"ud has no mtu", []string{"--ud", "--addr", ip, "-m", "1024"}, exitError, "", "ibv_ud_pingpong has no path MTU"},
		{"ud has no chk", []string{"--ud", "--addr", ip, "-c"}, exitError, "", "ibv_ud_pingpong has no buffer validation"},
		{"two hosts", []string{"--addr", ip, "a", "b"}, exitError, "", `one host, please: have ["a" "b"]`},
		{"port", []string{"--addr", ip, "-p", "70000"}, exitError, "", "-p 70000: want a TCP port"},
		{"ib port", []string{"--addr", ip, "-i", "2"}, exitError, "", "-i 2: the device has one port, 1"},
		{"zero iters", []string{"--addr", ip, "-n", "0"}, exitError, "", "-n 0: want at least 1"},
		{"rx depth", []string{"--addr", ip, "-r", "0"}, exitError, "", "-r 0: want 1-16384"},
		{"size", []string{"--addr", ip, "-s", "0"}, exitError, "", "-s 0: want 1 to"},
		{"sl", []string{"--addr", ip, "-l", "16"}, exitError, "", "-l 16: want a service level"},
		{"prefetch without odp", []string{"--addr", ip, "-P"}, exitError, "", "-P: prefetch needs -o"},
		{"device memory", []string{"--addr", ip, "-j"}, exitError, "", "does not support device memory"},
		{"timestamps", []string{"--addr", ip, "-t"}, exitError, "", "The device isn't completion timestamp capable\n"},
		{"ud larger than the port MTU", []string{"--ud", "--addr", ip, "-s", "5000", "127.0.0.1"}, exitError, "", "Requested size larger than port MTU (4096)\n"},
		{"nobody listening", []string{"--addr", ip, "-p", port, "127.0.0.1"}, exitError, "  local address:  LID 0x0000, QPN 0x000011", "Couldn't connect to 127.0.0.1:" + port + "\n"},
		{"address not ours", []string{"--addr", "192.0.2.77", "127.0.0.1"}, exitError, "", "RoCEv2 socket on 192.0.2.77"},
		{"port taken on addr", []string{"--addr", ip, "-p", takenPort}, exitError, "  local address:  LID 0x0000, QPN 0x000011",
			"Couldn't listen to port " + takenPort + "\nibpeer pingpong: listen tcp " + ip + ":" + takenPort + ": bind: address already in use\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"pingpong"}, tc.args...)
			if tc.args == nil {
				args = []string{"help", "pingpong"}
			}
			code, stdout, stderr := ibpeer(args...)
			assert.Equal(t, tc.code, code, "stderr: %s", stderr)
			assert.Contains(t, stdout, tc.stdout)
			if tc.stderr == "" {
				assert.Empty(t, stderr)
			} else {
				assert.Contains(t, stderr, tc.stderr)
			}
		})
	}
}

// The help names every flag, in each of its spellings.
func TestPingpongHelpComplete(t *testing.T) {
	fs := pingpongFlags(io.Discard)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		spelled := "-" + f.Name + ","
		if len(f.Name) > 1 {
			spelled = "--" + f.Name
		}
		assert.Contains(t, pingpongUsage, spelled, "flag %s", f.Name)
	})
	assert.Equal(t, 39, n, "flags defined")
	_, out, _ := ibpeer("-h")
	assert.Contains(t, out, "pingpong")
}

// getopt's attached values and permuted operands parse as the tools'.
func TestPingpongParse(t *testing.T) {
	cfg, err := ppParse(pingpongFlags(io.Discard), []string{"host1", "-s8192", "--ud", "-e", "--bind=10.0.0.1", "-n7"})
	require.NoError(t, err)
	assert.Equal(t, pingpong.Config{Type: endpoint.UD, Addr: ppMustAddr(t, "10.0.0.1"), Host: "host1", Port: 18515,
		Size: 8192, MTU: 3, RXDepth: 500, Iters: 7, Events: true}, cfg)
	cfg, err = ppParse(pingpongFlags(io.Discard), []string{"--addr", "::ffff:10.0.0.2", "--uc"})
	require.NoError(t, err)
	assert.Equal(t, 4096, cfg.Size, "the rc/uc default")
	assert.Equal(t, "10.0.0.2", cfg.Addr.String())
	cfg, err = ppParse(pingpongFlags(io.Discard), []string{"--addr", "10.0.0.2", "--ud"})
	require.NoError(t, err)
	assert.Equal(t, 1024, cfg.Size, "ibv_ud_pingpong's default in rdma-core 44")
	// -e takes no value: "-eX" is not split.
	_, err = ppParse(pingpongFlags(io.Discard), []string{"--addr", "10.0.0.2", "-ex"})
	assert.ErrorContains(t, err, "flag provided but not defined: -ex")
}

// -c on the server finds data that the client did not mark: the report
// still comes, then each bad page and exit status 1.
func TestPingpongCheckFails(t *testing.T) {
	srvIP, cliIP := ppAddrs(102)
	port := strconv.Itoa(peertest.FreeTCPPort(t))
	size := 2 * os.Getpagesize()
	srv, cli := ppRunPair(t,
		[]string{"--addr", srvIP, "-p", port, "-c", "-n", "3", "-s", strconv.Itoa(size)},
		[]string{"--addr", cliIP, "-p", port, "-n", "3", "-s", strconv.Itoa(size), srvIP})
	assert.Equal(t, 0, cli.code, "client stderr: %s", cli.stderr)
	assert.Equal(t, exitError, srv.code)
	assert.Equal(t, "invalid data in page 0\ninvalid data in page 1\n", srv.stderr)
	assert.Equal(t, 3*size*2, ppParseOutput(t, srv.stdout).bytes)
}

// ppAddrs are pingpong's tests' loopback addresses (127.77.0.0/16).
func ppAddrs(n int) (server, client string) { return peertest.Addrs(77, n) }
