package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/layers"
)

func ibpeer(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no command", nil, exitUsage, "", "usage: ibpeer <command>"},
		{"help", []string{"-h"}, exitOK, "craft", ""},
		{"help craft", []string{"help", "craft"}, exitOK, "--op write --size 65536", ""},
		{"unknown command", []string{"serve2"}, exitUsage, "", `unknown command "serve2"`},
		{"craft help", []string{"craft", "-h"}, exitOK, "-broken", ""},
		{"no output", []string{"craft"}, exitUsage, "", "give -w FILE"},
		{"unknown flag", []string{"craft", "--bogus"}, exitUsage, "", "flag provided but not defined: -bogus"},
		{"bad mtu", []string{"craft", "--mtu", "1000", "-w", "x"}, exitUsage, "", "--mtu 1000"},
		{"bad op", []string{"craft", "--op", "jump", "-w", "x"}, exitUsage, "", `unknown operation "jump"`},
		{"bad encap", []string{"craft", "--encap", "ethernet", "-w", "x"}, exitUsage, "", "--encap"},
		{"bad format", []string{"craft", "-F", "erf", "-w", "x"}, exitUsage, "", "-F"},
		{"bad loss", []string{"craft", "--loss", "1", "-w", "x"}, exitUsage, "", "--loss"},
		{"bad nak", []string{"craft", "--nak", "9", "-w", "x"}, exitUsage, "", "want CODE@N"},
		{"bad nak code", []string{"craft", "--nak", "late@1", "-w", "x"}, exitUsage, "", "code \"late\""},
		{"bad broken", []string{"craft", "--broken", "bent", "-w", "x"}, exitUsage, "", "unknown corruption"},
		{"broken cannot apply", []string{"craft", "--op", "read", "--broken", "reth-mismatch", "-w", "x"}, exitUsage, "", "needs an RDMA WRITE"},
		{"broken cm frame", []string{"craft", "--cm", "--broken", "bad-icrc@2", "-w", "x"}, exitUsage, "", "is a CM frame"},
		{"vcrc on roce", []string{"craft", "--broken", "bad-vcrc", "-w", "x"}, exitUsage, "", "native IB"},
		{"ud too big", []string{"craft", "--op", "ud-send", "--size", "5000", "-w", "x"}, exitUsage, "", "exceeds the MTU"},
		{"read on uc", []string{"craft", "--op", "read", "--service", "uc", "-w", "x"}, exitUsage, "", "needs RC"},
		{"qpn", []string{"craft", "--qpn", "0x1000000", "-w", "x"}, exitUsage, "", "--qpn"},
		{"argument", []string{"craft", "-w", "x", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{"craft help cm", []string{"craft", "-h"}, exitOK, "-cm-rep-responder-resources", ""},
		{"cm flag without cm", []string{"craft", "--cm-sl", "3", "-w", "x"}, exitUsage, "", "the --cm-* flags need --cm"},
		{"cm retry count", []string{"craft", "--cm", "--cm-retry-count", "8", "-w", "x"}, exitUsage, "", "--cm-retry-count 8: want 0 to 7"},
		{"cm mtu", []string{"craft", "--cm", "--cm-mtu", "1000", "-w", "x"}, exitUsage, "", "--cm-mtu"},
		{"cm flow label", []string{"craft", "--cm", "--cm-flow-label", "0x100000", "-w", "x"}, exitUsage, "", "does not fit 20 bits"},
		{"cm mra", []string{"craft", "--cm", "--cm-mra", "32", "-w", "x"}, exitUsage, "", "want a service timeout 0-31"},
		{"cm mra resend", []string{"craft", "--cm", "--cm-mra", "14@soon", "-w", "x"}, exitUsage, "", "want a positive duration"},
		{"cm reject side", []string{"craft", "--cm", "--cm-reject", "28@both", "-w", "x"}, exitUsage, "", "want @requester or @responder"},
		{"max rd atomic", []string{"craft", "--max-rd-atomic", "256", "-w", "x"}, exitUsage, "", "--max-rd-atomic 256"},
		{"lose response", []string{"craft", "--lose-response", "0", "-w", "x"}, exitUsage, "", "--lose-response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, a := range tt.args {
				if a == "x" {
					tt.args[i] = filepath.Join(dir, "x.pcap")
				}
			}
			code, stdout, stderr := ibpeer(tt.args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			assert.Contains(t, stdout, tt.stdout)
			assert.Contains(t, stderr, tt.stderr)
			if code != exitOK {
				_, err := os.Stat(filepath.Join(dir, "x.pcap"))
				assert.True(t, os.IsNotExist(err), "nothing written on bad flags")
			}
		})
	}
}

func TestCraftWrites(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		encap craft.Encap
		check func(t *testing.T, ps []capture.Packet, p *layers.Parser)
	}{
		{"issue example", []string{"--op", "write", "--size", "65536", "--mtu", "1024", "--loss", "0.02", "--encap", "rocev2-ipv6"},
			craft.RoCEv2IPv6, func(t *testing.T, ps []capture.Packet, p *layers.Parser) {
				assert.Greater(t, len(ps), 64, "64 packets, ACKs and retransmissions")
			}},
		{"read with cm", []string{"--op", "read", "--size", "8192", "--cm"}, craft.RoCEv2,
			func(t *testing.T, ps []capture.Packet, p *layers.Parser) {
				require.Len(t, ps, 3+1+8+2)
				require.NoError(t, p.Decode(ps[0].Data))
				assert.Equal(t, layers.CMAttrREQ, p.MAD.CM.AttributeID)
				require.NoError(t, p.Decode(ps[len(ps)-1].Data))
				assert.Equal(t, layers.CMAttrDREP, p.MAD.CM.AttributeID)
			}},
		{"atomics ib", []string{"--op", "cmp-swap", "--iters", "3", "--encap", "ib-grh", "--qpn", "0x100", "--dest-qpn", "0x200"}, craft.IBGRH,
			func(t *testing.T, ps []capture.Packet, p *layers.Parser) {
				require.Len(t, ps, 6)
				require.NoError(t, p.Decode(ps[0].Data))
				assert.Equal(t, uint32(0x200), p.BTH.DestQP)
			}},
		{"ud erf pcapng", []string{"--op", "ud-send-imm", "--size", "512", "--encap", "erf", "-F", "pcapng", "--cm"}, craft.ERF,
			func(t *testing.T, ps []capture.Packet, p *layers.Parser) {
				require.Len(t, ps, 3)
				require.NoError(t, p.Decode(ps[2].Data))
				assert.Equal(t, layers.Opcode(0x65), p.BTH.Opcode)
			}},
		{"faults", []string{"--op", "send", "--size", "100", "--iters", "4", "--rnr", "1", "--nak", "remote-access@3", "--cnp-every", "2", "--psn", "0xfffffe"},
			craft.RoCEv2, func(t *testing.T, ps []capture.Packet, p *layers.Parser) {
				var syn []layers.AETHSyndrome
				cnp := 0
				for _, pk := range ps {
					require.NoError(t, p.Decode(pk.Data))
					switch p.BTH.Opcode {
					case 0x11:
						syn = append(syn, p.BTH.AETH.Syndrome)
					case 0x81:
						cnp++
					}
				}
				assert.Contains(t, syn, layers.MakeRNRNakSyndrome(1))
				assert.Contains(t, syn, layers.MakeNakSyndrome(layers.NAKRemoteAccessError))
				assert.NotZero(t, cnp)
			}},
		{"broken", []string{"--op", "write", "--size", "3000", "--broken", "bad-icrc", "--broken", "truncated@3", "--encap", "rocev1"}, craft.RoCEv1,
			func(t *testing.T, ps []capture.Packet, p *layers.Parser) {
				require.NoError(t, p.Decode(ps[0].Data))
				st, _ := p.CheckICRC()
				assert.Equal(t, layers.CRCBad, st)
				assert.ErrorIs(t, p.Decode(ps[2].Data), layers.ErrTruncated)
			}},
	}
	// The CM's values are on the wire; the traffic breaks them (ibdump's
	// side of it is decode's TestCMContract*).
	cmREQ := func(t *testing.T, ps []capture.Packet, p *layers.Parser) *layers.CM {
		require.NoError(t, p.Decode(ps[0].Data))
		require.Equal(t, layers.CMAttrREQ, p.MAD.CM.AttributeID)
		return &p.MAD.CM
	}
	tests = append(tests, []struct {
		name  string
		args  []string
		encap craft.Encap
		check func(t *testing.T, ps []capture.Packet, p *layers.Parser)
	}{
		{"cm contract", []string{"--op", "read", "--size", "64", "--iters", "4", "--max-rd-atomic", "4", "--cm", "--cm-rep-responder-resources", "2",
			"--cm-retry-count", "0", "--cm-rnr-retry", "3", "--cm-mtu", "512", "--cm-pkey", "0x8001", "--cm-tclass", "0x28", "--cm-flow-label", "0x54321", "--cm-sl", "5"},
			craft.RoCEv2, func(t *testing.T, ps []capture.Packet, p *layers.Parser) {
				q := cmREQ(t, ps, p).REQ
				assert.Equal(t, [6]uint64{4, 4, 0, 3, 0x8001, 512}, [6]uint64{uint64(q.ResponderResources), uint64(q.InitiatorDepth),
					uint64(q.RetryCount), uint64(q.RNRRetryCount), uint64(q.PKey), uint64(q.PathMTU.Bytes())})
				assert.Equal(t, [3]uint32{0x28, 0x54321, 5}, [3]uint32{uint32(q.Primary.TrafficClass), q.Primary.FlowLabel, uint32(q.Primary.SL)})
				require.NoError(t, p.Decode(ps[1].Data))
				assert.Equal(t, uint8(2), p.MAD.CM.REP.ResponderResources)
				assert.Equal(t, uint8(4), p.MAD.CM.REP.InitiatorDepth)
				reads := 0
				for _, pk := range ps[3:7] {
					require.NoError(t, p.Decode(pk.Data))
					if p.BTH.Opcode == 0x0C {
						reads++
					}
				}
				assert.Equal(t, 3, reads, "three READs before the first response: one more than the REP allows")
			}},
		{"cm mra, no drep", []string{"--op", "send", "--size", "64", "--cm", "--cm-mra", "14@1ms", "--cm-no-drep"}, craft.RoCEv2,
			func(t *testing.T, ps []capture.Packet, p *layers.Parser) {
				require.NoError(t, p.Decode(ps[1].Data))
				assert.Equal(t, layers.CMAttrMRA, p.MAD.CM.AttributeID)
				assert.Equal(t, uint8(14), p.MAD.CM.MRA.ServiceTimeout)
				assert.Equal(t, time.Millisecond, ps[2].Time.Sub(ps[1].Time), "the REQ again 1 ms after the MRA")
				require.NoError(t, p.Decode(ps[len(ps)-1].Data))
				assert.Equal(t, layers.CMAttrDREQ, p.MAD.CM.AttributeID, "no DREP after the DREQ")
			}},
		{"cm reject by the requester", []string{"--op", "send", "--cm", "--cm-reject", "28@requester"}, craft.RoCEv2,
			func(t *testing.T, ps []capture.Packet, p *layers.Parser) {
				require.Len(t, ps, 3, "REQ, REP, REJ")
				require.NoError(t, p.Decode(ps[2].Data))
				assert.Equal(t, layers.CMRejectReason(28), p.MAD.CM.REJ.Reason)
				assert.Equal(t, layers.CMRejectedREP, p.MAD.CM.REJ.MessageRejected)
			}},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out")
			code, _, stderr := ibpeer(append([]string{"craft", "-w", path}, tt.args...)...)
			require.Equal(t, exitOK, code, stderr)
			ps := peertest.ReadFrames(t, path)
			require.NotEmpty(t, ps)
			assert.Equal(t, tt.encap.LinkType(), ps[0].LinkType)
			assert.Equal(t, craft.DefaultStart, ps[0].Time.UTC())
			tt.check(t, ps, layers.NewParser(tt.encap.FirstLayer(), layers.ParserOptions{}))
			// The same flags give the same bytes.
			again := path + ".2"
			code, _, _ = ibpeer(append([]string{"craft", "-w", again}, tt.args...)...)
			require.Equal(t, exitOK, code)
			a, err := os.ReadFile(path)
			require.NoError(t, err)
			b, err := os.ReadFile(again)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(a, b))
		})
	}
}

func TestVerboseListsFindings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.pcap")
	code, stdout, stderr := ibpeer("craft", "--op", "send", "--size", "3000", "--broken", "truncated", "-v", "-w", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "RC_SEND_FIRST psn 256: op 1 send, packet 1 [truncated]")
	assert.Contains(t, stdout, "#1 truncated")
	assert.Contains(t, stdout, "retransmission")
}

func TestWriteToStdout(t *testing.T) {
	// -w - writes the capture to standard output; run through a pipe so the
	// process's real stdout carries it.
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stdout
	os.Stdout = w
	var errb bytes.Buffer
	code := run([]string{"craft", "--op", "send", "--size", "10", "-w", "-", "-v"}, io.Discard, &errb)
	os.Stdout = saved
	require.NoError(t, w.Close())
	data, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, exitOK, code, errb.String())
	assert.Contains(t, errb.String(), "RC_SEND_ONLY", "with -w -, -v goes to standard error")
	rd, err := capture.NewReader(bytes.NewReader(data), "stdout")
	require.NoError(t, err)
	p, err := rd.Next()
	require.NoError(t, err)
	dec := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	require.NoError(t, dec.Decode(p.Data))
	assert.Equal(t, layers.Opcode(0x04), dec.BTH.Opcode)
	assert.True(t, strings.HasPrefix(string(data[:4]), "\x4d\x3c\xb2\xa1"), "a nanosecond pcap")
}
