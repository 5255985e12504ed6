package replay

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

// tcpChecksumOK recomputes a TCP/IPv4 checksum from scratch.
func tcpChecksumOK(p *decode.Packet) bool { return tcpSum(p) == 0xFFFF }

// fixTCPChecksum writes the right checksum into a TCP/IPv4 segment (the
// rxe captures were taken where checksum offload leaves them unfilled).
func fixTCPChecksum(p *decode.Packet) {
	c := p.Headers.TCP.Contents
	c[16], c[17] = 0, 0
	binary.BigEndian.PutUint16(c[16:], ^tcpSum(p))
}

// tcpSum is the ones'-complement sum of a TCP/IPv4 segment and its
// pseudo-header.
func tcpSum(p *decode.Packet) uint16 {
	ip := p.Headers.IPv4.Contents
	seg := append(append([]byte(nil), p.Headers.TCP.Contents...), p.Headers.TCP.Payload...)
	var sum uint32
	add := func(b []byte) {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint32(binary.BigEndian.Uint16(b[i:]))
		}
		if len(b)%2 == 1 {
			sum += uint32(b[len(b)-1]) << 8
		}
	}
	add(ip[12:20])
	sum += 6 + uint32(len(seg))
	add(seg)
	for sum>>16 != 0 {
		sum = sum&0xFFFF + sum>>16
	}
	return uint16(sum)
}

// TestRewriteSetupMessages checks that perftest's and pingpong's TCP
// set-up messages follow the rewrite, with valid TCP checksums.
func TestRewriteSetupMessages(t *testing.T) {
	tests := []struct {
		file string
		size int
		want []uint32 // QPNs announced, in order
	}{
		{"write_bw.pcap", setup.PerftestDestSize, []uint32{0x123, 0x123, 0x123, 0x123, 0x123, 0x123, 0x123, 0x123, 0x123, 0x123}},
		{"rc_pingpong.pcap", setup.PingpongDestSize, []uint32{0x123, 0x123}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := Load("../pcaps/rxe/"+tt.file, LoadOptions{Decode: decodeOpts()})
			require.NoError(t, err)
			dec := decode.NewDecoder(decodeOpts())
			for _, f := range c.Frames {
				if p := dec.Decode(decode.Input{Number: f.Number, LinkType: f.LinkType, Data: f.Data}); p.HasTCP() {
					fixTCPChecksum(p)
				}
			}
			var r Rules
			require.NoError(t, r.Add(KindQPN, "0x11,0x123"))
			require.NoError(t, r.Add(KindIP, "192.168.77.11,10.0.0.1"))
			require.NoError(t, r.Add(KindPSNBase, "0x11,+1000"))
			_, err = c.Rewrite(&r, c.Decode)
			require.NoError(t, err)
			var qpns []uint32
			for _, f := range c.Frames {
				p := dec.Decode(decode.Input{Number: f.Number, LinkType: f.LinkType, Data: f.Data})
				if !p.HasTCP() {
					continue
				}
				assert.True(t, tcpChecksumOK(p), "frame %d: TCP checksum", f.Number)
				if len(p.Headers.TCP.Payload) != tt.size {
					continue
				}
				q, ok := oobQPN(p.Headers.TCP.Payload)
				require.True(t, ok, "frame %d", f.Number)
				qpns = append(qpns, q)
				assert.True(t, f.HasPSNSpace, "frame %d: the announced PSN's stream is known", f.Number)
			}
			if len(qpns) > len(tt.want) {
				qpns = qpns[:len(tt.want)]
			}
			assert.Equal(t, tt.want, qpns)
		})
	}
}

// TestRewriteCMMessages checks that the CM REQ and REP of rping follow a
// rewrite: QPNs, starting PSNs, path GIDs and the RDMA CM IP addresses.
func TestRewriteCMMessages(t *testing.T) {
	orig, err := Load("../pcaps/rxe/rping.pcap", LoadOptions{Decode: decodeOpts()})
	require.NoError(t, err)
	c, err := Load("../pcaps/rxe/rping.pcap", LoadOptions{Decode: decodeOpts()})
	require.NoError(t, err)
	var r Rules
	for _, kv := range [][2]string{{KindQPN, "0x11,0x111"}, {KindIP, "192.168.77.11,10.1.1.1"}, {KindIP, "192.168.77.12,10.1.1.2"}, {KindPSNBase, "0x11,+5"}} {
		require.NoError(t, r.Add(kv[0], kv[1]))
	}
	_, err = c.Rewrite(&r, c.Decode)
	require.NoError(t, err)
	type cmFacts struct {
		attr     layers.CMAttribute
		qpn, psn uint32
		gids     []string
	}
	facts := func(c *Capture) []cmFacts {
		dec := decode.NewDecoder(decodeOpts())
		var out []cmFacts
		for _, f := range c.Frames {
			p := dec.Decode(decode.Input{Number: f.Number, LinkType: f.LinkType, Data: f.Data})
			if !p.HasMAD() || p.Headers.MAD.MgmtClass != layers.MgmtClassCM {
				continue
			}
			assert.Equal(t, layers.CRCGood, p.ICRC, "frame %d", f.Number)
			cm := &p.Headers.MAD.CM
			switch cm.AttributeID {
			case layers.CMAttrREQ:
				out = append(out, cmFacts{cm.AttributeID, cm.REQ.LocalQPN, uint32(cm.REQ.StartingPSN), []string{
					cm.REQ.Primary.LocalGID.String(), cm.REQ.Primary.RemoteGID.String(),
					cm.REQ.IPCM.SrcIP.String(), cm.REQ.IPCM.DstIP.String()}})
			case layers.CMAttrREP:
				out = append(out, cmFacts{attr: cm.AttributeID, qpn: cm.REP.LocalQPN, psn: uint32(cm.REP.StartingPSN)})
			}
		}
		return out
	}
	before, after := facts(orig), facts(c)
	require.Len(t, before, 2)
	require.Len(t, after, 2)
	assert.Equal(t, []string{"192.168.77.11", "192.168.77.12", "192.168.77.11", "192.168.77.12"}, before[0].gids)
	assert.Equal(t, []string{"10.1.1.1", "10.1.1.2", "10.1.1.1", "10.1.1.2"}, after[0].gids)
	for i := range before {
		assert.Equal(t, uint32(0x11), before[i].qpn)
		assert.Equal(t, uint32(0x111), after[i].qpn, "%v", after[i].attr)
		assert.Equal(t, (before[i].psn+5)&0xFFFFFF, after[i].psn, "%v: both directions' streams go to a QP 0x11", after[i].attr)
	}
}
