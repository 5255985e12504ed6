package setup

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/layers"
)

// transcriptStep is one TCP payload of a captured set-up exchange.
type transcriptStep struct {
	frame    string
	byClient bool
	data     []byte
}

// loadTranscript reads testdata/<name>.txt, the TCP payloads tshark
// extracted from a real rxe capture (see the file's header).
func loadTranscript(t testing.TB, name string) []transcriptStep {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".txt"))
	require.NoError(t, err)
	defer f.Close()
	var steps []transcriptStep
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Fields(line)
		require.Len(t, parts, 3, "line %q", line)
		data, err := hex.DecodeString(parts[2])
		require.NoError(t, err)
		steps = append(steps, transcriptStep{frame: parts[0], byClient: parts[1] == "c", data: data})
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, steps)
	return steps
}

// playPeer plays the side of the transcript that is not under test over
// conn: it writes that side's payloads and checks that what arrives from
// the side under test is byte for byte what the real tool sent.
func playPeer(conn net.Conn, steps []transcriptStep, peerIsClient bool) error {
	defer conn.Close()
	for _, s := range steps {
		if s.byClient == peerIsClient {
			if _, err := conn.Write(s.data); err != nil {
				return err
			}
			continue
		}
		got := make([]byte, len(s.data))
		if _, err := io.ReadFull(conn, got); err != nil {
			return err
		}
		if string(got) != string(s.data) {
			return errors.New("frame " + s.frame + ": got " + hex.EncodeToString(got) + ", the tool sent " + hex.EncodeToString(s.data))
		}
	}
	return nil
}

func oobGID(s string) [16]byte { return netip.MustParseAddr(s).As16() }

// The two messages of pcaps/rxe/rc_pingpong.pcap (frames 6 and 8).
var (
	rcPingpongClient = PingpongDest{QPN: 0x11, PSN: 0x6bbcca, GID: oobGID("192.168.77.11")}
	rcPingpongServer = PingpongDest{QPN: 0x11, PSN: 0x9ad16a, GID: oobGID("192.168.77.12")}
)

func TestPingpongDestMarshal(t *testing.T) {
	tests := []struct {
		d    PingpongDest
		want string
	}{
		{rcPingpongClient, "0000:000011:6bbcca:00000000000000000000ffffc0a84d0b\x00"},
		{rcPingpongServer, "0000:000011:9ad16a:00000000000000000000ffffc0a84d0c\x00"},
		{PingpongDest{LID: 0xFFFF, QPN: 0xFFFFFF, PSN: 0xFFFFFF, GID: oobGID("fe80::1")}, "ffff:ffffff:ffffff:fe800000000000000000000000000001\x00"},
		{PingpongDest{QPN: 0x1000001, PSN: 0x1000002}, "0000:000001:000002:00000000000000000000000000000000\x00"},
	}
	for _, tt := range tests {
		got := tt.d.Marshal()
		assert.Equal(t, tt.want, string(got))
		assert.Len(t, got, PingpongDestSize)
		back, err := ParsePingpongDest(got)
		require.NoError(t, err)
		assert.Equal(t, PingpongDest{LID: tt.d.LID, QPN: tt.d.QPN & 0xFFFFFF, PSN: tt.d.PSN & 0xFFFFFF, GID: tt.d.GID}, back)
	}
	assert.Equal(t, "0000:000011:6bbcca:00000000000000000000ffffc0a84d0b", rcPingpongClient.String())
	assert.Equal(t, netip.MustParseAddr("192.168.77.11"), netip.AddrFrom16(rcPingpongClient.GID).Unmap())
}

func TestParsePingpongDest(t *testing.T) {
	const gid = "00000000000000000000ffffc0a84d0b"
	tests := []struct {
		name, msg string
		want      PingpongDest
		err       string // substring of the error; "" = must parse
	}{
		{"as sent", "0000:000011:6bbcca:" + gid, rcPingpongClient, ""},
		{"short numbers", "0:11:6bbcca:" + gid, rcPingpongClient, ""},
		{"upper case and 0x", "0x0:0X11:6BBCCA:" + strings.ToUpper(gid), rcPingpongClient, ""},
		{"white space", " 0: 11:\t6bbcca: " + gid, rcPingpongClient, ""},
		{"junk after the GID", "0000:000011:6bbcca:" + gid + "zz extra", rcPingpongClient, ""},
		{"stops at NUL", "0000:000011:6bbcca:" + gid + "\x00garbage", rcPingpongClient, ""},
		{"empty", "", PingpongDest{}, "LID at byte 0"},
		{"LID not hex", "zz:11:1:" + gid, PingpongDest{}, "LID at byte 0"},
		{"LID too big", "10000:11:1:" + gid, PingpongDest{}, "0x10000 is larger than 0xffff"},
		{"QPN too big", "0:1000000:1:" + gid, PingpongDest{}, "QPN at byte 2"},
		{"PSN too big", "0:11:1000000:" + gid, PingpongDest{}, "PSN"},
		{"no colon", "0000 000011:6bbcca:" + gid, PingpongDest{}, "want ':'"},
		{"GID short", "0:11:1:ffffc0a84d0b", PingpongDest{}, "want 32 hexadecimal digits, have 12"},
		{"GID not hex", "0:11:1:0000000000000000000gffffc0a84d0b", PingpongDest{}, "'g' is not a hexadecimal digit"},
		{"GID split by space", "0:11:1:0000000000000000 0000ffffc0a84d0b", PingpongDest{}, "have 16 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePingpongDest([]byte(tt.msg))
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				var se *SyntaxError
				require.ErrorAs(t, err, &se)
				assert.True(t, errors.Is(err, errSyntax))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestPingpongExchangeReplaysRxe plays each side of the captured
// ibv_rc_pingpong exchange against the other side's recorded bytes.
func TestPingpongExchangeReplaysRxe(t *testing.T) {
	defer goleak.VerifyNone(t)
	steps := loadTranscript(t, "rc_pingpong")
	t.Run("server", func(t *testing.T) {
		a, b := net.Pipe()
		peer := make(chan error, 1)
		go func() { peer <- playPeer(b, steps, true) }()
		var readied PingpongDest
		remote, err := PingpongServer(a, rcPingpongServer, func(r PingpongDest) error { readied = r; return nil })
		require.NoError(t, err)
		a.Close()
		require.NoError(t, <-peer)
		assert.Equal(t, rcPingpongClient, remote)
		assert.Equal(t, rcPingpongClient, readied, "ready runs with the client's address before the answer")
	})
	t.Run("client", func(t *testing.T) {
		a, b := net.Pipe()
		peer := make(chan error, 1)
		go func() { peer <- playPeer(b, steps, false) }()
		remote, err := PingpongClient(a, rcPingpongClient)
		require.NoError(t, err)
		a.Close()
		require.NoError(t, <-peer)
		assert.Equal(t, rcPingpongServer, remote)
	})
	t.Run("server ready fails", func(t *testing.T) {
		a, b := net.Pipe()
		go func() { b.Write(rcPingpongClient.Marshal()); b.Close() }()
		_, err := PingpongServer(a, rcPingpongServer, func(PingpongDest) error { return errors.New("no such QP") })
		require.ErrorContains(t, err, "no such QP")
		a.Close()
	})
	t.Run("peer hangs up", func(t *testing.T) {
		a, b := net.Pipe()
		go func() { b.Write([]byte("0000:0000")); b.Close() }()
		_, err := PingpongServer(a, rcPingpongServer, nil)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		require.ErrorContains(t, err, "after 9 of 52 bytes")
		a.Close()
	})
}

// The handshake messages of pcaps/rxe/write_bw.pcap and read_bw.pcap.
var (
	writeBWClient = PerftestDest{OutReads: 1, QPN: 0x11, PSN: 0x318da6, RKey: 0x2f1, VAddr: 0x556ef83fa000, GID: oobGID("192.168.77.11")}
	writeBWServer = PerftestDest{OutReads: 1, QPN: 0x11, PSN: 0xd64cfe, RKey: 0x2c6, VAddr: 0x56005f76d000, GID: oobGID("192.168.77.12")}
	readBWClient  = PerftestDest{OutReads: 0x80, QPN: 0x11, PSN: 0xac5020, RKey: 0x2dd, VAddr: 0x5613cff5f000, GID: oobGID("192.168.77.11")}
	readBWServer  = PerftestDest{OutReads: 0x80, QPN: 0x11, PSN: 0x9bfba2, RKey: 0x2bd, VAddr: 0x556ad5cc9000, GID: oobGID("192.168.77.12")}
)

func TestPerftestDestMarshal(t *testing.T) {
	tests := []struct {
		d    PerftestDest
		want string
	}{
		{writeBWClient, "0000:0001:000011:318da6:000002f1:0000556ef83fa000:00:00:00:00:00:00:00:00:00:00:ff:ff:c0:a8:4d:0b:00000000:\x00"},
		{readBWServer, "0000:0080:000011:9bfba2:000002bd:0000556ad5cc9000:00:00:00:00:00:00:00:00:00:00:ff:ff:c0:a8:4d:0c:00000000:\x00"},
		{PerftestDest{LID: 0xFFFF, OutReads: 0xFFFF, QPN: 0xFFFFFF, PSN: 0xFFFFFF, RKey: math.MaxUint32, VAddr: math.MaxUint64, GID: oobGID("fe80::1"), SRQN: math.MaxUint32},
			"ffff:ffff:ffffff:ffffff:ffffffff:ffffffffffffffff:fe:80:00:00:00:00:00:00:00:00:00:00:00:00:00:01:ffffffff:\x00"},
	}
	for _, tt := range tests {
		got := tt.d.Marshal()
		assert.Equal(t, tt.want, string(got))
		assert.Len(t, got, PerftestDestSize)
		back, err := ParsePerftestDest(got)
		require.NoError(t, err)
		assert.Equal(t, tt.d, back)
	}
}

func TestParsePerftestDest(t *testing.T) {
	const tail = "00:00:00:00:00:00:00:00:00:00:ff:ff:c0:a8:4d:0b:00000000:"
	tests := []struct {
		name, msg string
		want      PerftestDest
		err       string
	}{
		{"as sent", "0000:0001:000011:318da6:000002f1:0000556ef83fa000:" + tail, writeBWClient, ""},
		{"short fields", "0:1:11:318da6:2f1:556ef83fa000:0:0:0:0:0:0:0:0:0:0:ff:ff:c0:a8:4d:b:0:", writeBWClient, ""},
		{"upper case", "0000:0001:000011:318DA6:000002F1:0000556EF83FA000:" + strings.ToUpper(tail), writeBWClient, ""},
		{"empty", "", PerftestDest{}, "lid at byte 0"},
		{"field wider than its width", "00000:0001:000011:318da6:000002f1:0000556ef83fa000:" + tail, PerftestDest{}, "lid at byte 4: want ':'"},
		{"no srqn", "0000:0001:000011:318da6:000002f1:0000556ef83fa000:00:00:00:00:00:00:00:00:00:00:ff:ff:c0:a8:4d:0b:", PerftestDest{}, "srqn at byte 98"},
		{"gid byte not hex", "0000:0001:000011:318da6:000002f1:0000556ef83fa000:00:zz:", PerftestDest{}, "gid[1] at byte 53"},
		{"no trailing colon", "0000:0001:000011:318da6:000002f1:0000556ef83fa000:" + tail[:len(tail)-1], PerftestDest{}, "srqn at byte 106: want ':'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePerftestDest([]byte(tt.msg))
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				assert.True(t, errors.Is(err, errSyntax))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// reportDouble turns a captured 8-byte report field into the double it encodes.
func reportDouble(hexBE string) float64 {
	b, err := hex.DecodeString(hexBE)
	if err != nil {
		panic(err)
	}
	var u uint64
	for _, c := range b {
		u = u<<8 | uint64(c)
	}
	return math.Float64frombits(u)
}

// runPerftestSequence follows perftest 6.06's sequence for a non-duplex
// write/read test (PerftestConn's doc comment) and returns what it learnt.
func runPerftestSequence(p *PerftestConn, local PerftestDest, report PerftestBWReport) (PerftestDest, PerftestBWReport, error) {
	if _, err := p.ExchangeVersions(PerftestVersion); err != nil {
		return PerftestDest{}, PerftestBWReport{}, err
	}
	cycle, cache, err := p.ExchangeBufferSizes(4096, 64)
	if err != nil {
		return PerftestDest{}, PerftestBWReport{}, err
	}
	if cycle != 4096 || cache != 64 {
		return PerftestDest{}, PerftestBWReport{}, errors.New("buffer sizes")
	}
	if mtu, err := p.ExchangeMTU(3); err != nil || mtu != 3 {
		return PerftestDest{}, PerftestBWReport{}, errors.Join(errors.New("MTU"), err)
	}
	var remote PerftestDest
	for range 4 { // #1-#3, then the server's wait for the end of traffic
		if remote, err = p.Handshake(local); err != nil {
			return PerftestDest{}, PerftestBWReport{}, err
		}
	}
	got, err := p.ExchangeBWReports(report)
	if err != nil {
		return PerftestDest{}, PerftestBWReport{}, err
	}
	if _, err := p.Handshake(local); err != nil {
		return PerftestDest{}, PerftestBWReport{}, err
	}
	return remote, got, p.ExchangeDone()
}

// TestPerftestExchangeReplaysRxe plays each side of the captured ib_write_bw
// and ib_read_bw exchanges against the other side's recorded bytes: every
// byte this side sends must equal what perftest sent.
func TestPerftestExchangeReplaysRxe(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name                   string
		client, server         PerftestDest
		clientRep, serverGarbo PerftestBWReport
	}{
		{"write_bw", writeBWClient, writeBWServer,
			PerftestBWReport{Size: 4096, Iterations: 200, BWPeak: reportDouble("402258c85f12908f"), BWAverage: reportDouble("40202f45c1d71865"), MsgRate: reportDouble("3f60f8893d6b7f3e")},
			PerftestBWReport{Size: 0x7fff2a556074, Iterations: 0x7f6b1c4ed11a, BWPeak: reportDouble("0000000000000006"), BWAverage: reportDouble("00007fff2a566300"), MsgRate: reportDouble("00007fff2a556074")}},
		{"read_bw", readBWClient, readBWServer,
			PerftestBWReport{Size: 4096, Iterations: 200, BWPeak: reportDouble("4035ae16e3356a7e"), BWAverage: reportDouble("402c960980e89afd"), MsgRate: reportDouble("3f6df984a1d7f841")},
			PerftestBWReport{Size: 0x7ffd724174d4, Iterations: 0x7f3cd161f11a, BWPeak: reportDouble("0000000000000006"), BWAverage: reportDouble("00007ffd7252e300"), MsgRate: reportDouble("00007ffd724174d4")}},
	}
	for _, tt := range tests {
		steps := loadTranscript(t, tt.name)
		t.Run(tt.name+"/client", func(t *testing.T) {
			a, b := net.Pipe()
			peer := make(chan error, 1)
			go func() { peer <- playPeer(b, steps, false) }()
			p := NewPerftestConn(a, false)
			remote, rep, err := runPerftestSequence(p, tt.client, tt.clientRep)
			a.Close()
			require.NoError(t, err)
			require.NoError(t, <-peer)
			assert.Equal(t, "6.06", p.RemoteVersion())
			assert.Equal(t, tt.server, remote)
			assert.Equal(t, tt.serverGarbo, rep)
		})
		t.Run(tt.name+"/server", func(t *testing.T) {
			a, b := net.Pipe()
			peer := make(chan error, 1)
			go func() { peer <- playPeer(b, steps, true) }()
			remote, rep, err := runPerftestSequence(NewPerftestConn(a, true), tt.server, tt.serverGarbo)
			a.Close()
			require.NoError(t, err)
			require.NoError(t, <-peer)
			assert.Equal(t, tt.client, remote)
			assert.Equal(t, tt.clientRep, rep)
			assert.Greater(t, rep.BWPeak, rep.BWAverage, "the client's doubles decode as Gb/s figures, peak above average")
		})
	}
}

func TestPerftestVersionAndMTUErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name string
		peer []byte // what the scripted peer (the client) sends
		run  func(p *PerftestConn) error
		want string
	}{
		{"old peer", []byte("5.60\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), func(p *PerftestConn) error {
			_, err := p.ExchangeVersions(PerftestVersion)
			return err
		}, `peer version "5.60" is older than 5.70`},
		{"no version", make([]byte, 16), func(p *PerftestConn) error {
			_, err := p.ExchangeVersions(PerftestVersion)
			return err
		}, `peer version "" is older`},
		{"bad MTU", []byte("7\x00"), func(p *PerftestConn) error {
			_, err := p.ExchangeMTU(3)
			return err
		}, "want a digit 1-5 and a NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := net.Pipe()
			go func() {
				b.Write(tt.peer)
				io.Copy(io.Discard, b)
			}()
			err := tt.run(NewPerftestConn(a, true))
			require.ErrorContains(t, err, tt.want)
			a.Close()
			b.Close()
		})
	}
	_, err := NewPerftestConn(nil, false).ExchangeMTU(6)
	require.ErrorContains(t, err, "MTU enum 6")
	_, err = NewPerftestConn(nil, false).ExchangeVersions("a version string that is too long")
	require.ErrorContains(t, err, "longer than 15 bytes")
	assert.InDelta(t, 6.06, perftestAtof("6.06"), 1e-9)
	assert.InDelta(t, 5.7, perftestAtof("5.70rc1"), 1e-9)
	assert.Zero(t, perftestAtof("x6"))
}

func FuzzParsePingpongDest(f *testing.F) {
	f.Add(rcPingpongClient.Marshal())
	f.Add([]byte(" 0x0:11:6BBCCA:00000000000000000000ffffc0a84d0bXX"))
	f.Add([]byte("-1:-1:-1:"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		d, err := ParsePingpongDest(msg)
		if err != nil {
			return
		}
		back, err := ParsePingpongDest(d.Marshal())
		if err != nil || back != d {
			t.Fatalf("%q parsed as %+v, which marshals to %q and parses as %+v (%v)", msg, d, d.Marshal(), back, err)
		}
	})
}

func FuzzParsePerftestDest(f *testing.F) {
	f.Add(writeBWClient.Marshal())
	f.Add(readBWServer.Marshal())
	f.Add([]byte("0:1:11:318da6:2f1:556ef83fa000:0:0:0:0:0:0:0:0:0:0:ff:ff:c0:a8:4d:b:0:"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		d, err := ParsePerftestDest(msg)
		if err != nil {
			return
		}
		back, err := ParsePerftestDest(d.Marshal())
		if err != nil || back != d {
			t.Fatalf("%q parsed as %+v, which marshals to %q and parses as %+v (%v)", msg, d, d.Marshal(), back, err)
		}
	})
}

func TestRecognize(t *testing.T) {
	pp := []byte("0000:000011:6bbcca:00000000000000000000ffffc0a84d0b\x00")
	pt := []byte("0000:0001:000011:318da6:000002f1:0000556ef83fa000:00:00:00:00:00:00:00:00:00:00:ff:ff:c0:a8:4d:0b:00000000:\x00")
	tests := []struct {
		name    string
		payload []byte
		want    Kind
	}{
		{"pingpong", pp, Pingpong},
		{"perftest", pt, Perftest},
		{"pingpong upper case: sscanf reads it, no tool writes it", []byte(strings.ToUpper(string(pp[:51])) + "\x00"), NotSetup},
		{"pingpong with a 0x prefix", []byte("0000:0x0011:6bbcca:00000000000000000000ffffc0a84d0b\x00"), NotSetup},
		{"52 bytes of something else", bytes.Repeat([]byte{'a'}, 52), NotSetup},
		{"perftest without its NUL", append(append([]byte(nil), pt[:107]...), ' '), NotSetup},
		{"empty", nil, NotSetup},
	}
	for _, tt := range tests {
		kind, gotPP, gotPT := Recognize(tt.payload)
		assert.Equal(t, tt.want, kind, tt.name)
		switch kind {
		case Pingpong:
			assert.Equal(t, uint32(0x11), gotPP.QPN)
			assert.Equal(t, layers.PSN(0x6bbcca), gotPP.PSN)
		case Perftest:
			assert.Equal(t, uint32(0x2f1), gotPT.RKey)
			assert.Equal(t, layers.PSN(0x318da6), gotPT.PSN)
		}
	}
}

// TestPerftestSession runs Open and Finish between two sides over a pipe:
// what each learns of the other, and the step a side refuses at.
func TestPerftestSession(t *testing.T) {
	defer goleak.VerifyNone(t)
	client := PerftestParams{CycleBuffer: 4096, CacheLine: 64, MTU: layers.MTU4096}
	tests := []struct {
		name   string
		server PerftestParams
		want   PerftestOpening
		err    string // the server's error; the client then sees the pipe close
	}{
		{"settles", PerftestParams{CycleBuffer: 8192, CacheLine: 128, MaxCycle: 1 << 20, MTU: layers.MTU1024},
			PerftestOpening{Version: PerftestVersion, CycleBuffer: 8192, CacheLine: 128, MTU: layers.MTU1024}, ""},
		{"refuses a cycle buffer it cannot allocate", PerftestParams{CycleBuffer: 1024, CacheLine: 64, MaxCycle: 2048, MTU: layers.MTU1024},
			PerftestOpening{}, "perftest set-up: the peer's cycle buffer of 4096 bytes is more than the 2048 this side allocates"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := net.Pipe()
			defer a.Close()
			dest := PerftestDest{QPN: 0x11, PSN: 5}
			report := PerftestBWReport{Size: 65536, Iterations: 200, BWAverage: 1.5}
			done := make(chan error, 1)
			var seen PerftestBWReport
			go func() {
				defer b.Close()
				s := NewPerftestConn(b, true)
				o, err := s.Open(tt.server)
				if err != nil {
					done <- err
					return
				}
				assert.Equal(t, tt.want, o)
				if _, err := s.Handshake(dest); err != nil {
					done <- err
					return
				}
				done <- s.Finish(dest, PerftestBWReport{}, func(theirs PerftestBWReport) error { seen = theirs; return nil })
			}()
			c := NewPerftestConn(a, false)
			o, err := c.Open(client)
			if tt.err != "" {
				assert.EqualError(t, <-done, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, o)
			_, err = c.Handshake(dest)
			require.NoError(t, err)
			require.NoError(t, c.Finish(dest, report, nil))
			require.NoError(t, <-done)
			assert.Equal(t, report, seen, "the server's between sees the client's report")
		})
	}
}

// TestSRQPingpongExchange: ibv_srq_pingpong's exchange, each side against
// the other over a pipe: 256 messages each way whatever the QP count,
// zero ones after the QPs' (as the C tool's memset my_dest leaves them),
// ready before the server's answer, and "done" last.
func TestSRQPingpongExchange(t *testing.T) {
	defer goleak.VerifyNone(t)
	dest := func(qpn uint32, ip string) PingpongDest {
		return PingpongDest{QPN: qpn, PSN: layers.PSN(qpn * 7), GID: oobGID(ip)}
	}
	var clients, servers []PingpongDest
	for i := range 3 {
		clients = append(clients, dest(0x11+uint32(i), "192.168.77.11"))
		servers = append(servers, dest(0x21+uint32(i), "192.168.77.1"))
	}
	a, b := net.Pipe()
	type result struct {
		remotes []PingpongDest
		err     error
	}
	srv := make(chan result, 1)
	var readied []PingpongDest
	go func() {
		r, err := SRQPingpongServer(b, servers, func(r []PingpongDest) error { readied = r; return nil })
		b.Close()
		srv <- result{r, err}
	}()
	got, err := SRQPingpongClient(a, clients)
	require.NoError(t, err)
	a.Close()
	s := <-srv
	require.NoError(t, s.err)
	require.Len(t, got, SRQPingpongRecords)
	require.Len(t, s.remotes, SRQPingpongRecords)
	assert.Equal(t, servers, got[:3])
	assert.Equal(t, clients, s.remotes[:3])
	assert.Equal(t, s.remotes, readied)
	for i := 3; i < SRQPingpongRecords; i++ {
		assert.Equal(t, PingpongDest{}, got[i], "record %d", i)
	}
	// A zero record is what the C tool's sprintf makes of a zeroed dest.
	assert.Equal(t, "0000:000000:000000:00000000000000000000000000000000\x00", string(PingpongDest{}.Marshal()))

	t.Run("client hangs up after one record", func(t *testing.T) {
		a, b := net.Pipe()
		go func() { b.Write(clients[0].Marshal()); b.Close() }()
		_, err := SRQPingpongServer(a, servers, nil)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		a.Close()
	})
	t.Run("more QPs than records", func(t *testing.T) {
		_, err := SRQPingpongClient(nil, make([]PingpongDest, SRQPingpongRecords+1))
		require.ErrorContains(t, err, "at most 256")
	})
}
