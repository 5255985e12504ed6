package replay

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
)

// craftPlan writes the conversation craft makes of ops at path MTU mtu to
// a capture and cuts it into a plan.
func craftPlan(t *testing.T, mtu int, ops []craft.Op) *Plan {
	t.Helper()
	c, err := craft.New(craft.Config{MTU: mtu})
	require.NoError(t, err)
	require.NoError(t, c.Run(ops, craft.Faults{}))
	frames := c.Frames()
	path := filepath.Join(t.TempDir(), "crafted.pcap")
	w, err := capture.Create(path, capture.FormatPcap, frames[0].LinkType, true)
	require.NoError(t, err)
	for _, f := range frames {
		require.NoError(t, w.WritePacket(capture.Packet{Data: f.Data, LinkType: f.LinkType, Time: f.Time, Length: len(f.Data)}))
	}
	require.NoError(t, w.Close())
	cp, err := Load(path, LoadOptions{Decode: decodeOpts()})
	require.NoError(t, err)
	p, err := NewPlan(cp, 0, 0)
	require.NoError(t, err)
	return p
}

// repeat makes n copies of op, each waiting for the one before, as a
// latency test posts them.
func repeat(n int, op craft.Op) []craft.Op {
	op.Wait = true
	ops := make([]craft.Op, n)
	for i := range ops {
		ops[i] = op
	}
	return ops
}

// TestPlanMTURange: a capture shows the path MTU only where a message
// took more than one packet (a FIRST or MIDDLE is exactly one MTU long);
// a single-packet message says only that the MTU is at least its length.
// The plan's range holds every IB MTU at which each message played (and
// each READ's responses) segments as captured.
func TestPlanMTURange(t *testing.T) {
	tests := []struct {
		name     string
		mtu      int
		ops      []craft.Op
		file     string // an rxe capture instead
		min, max int
	}{
		{name: "2-byte WRITEs (ib_write_lat)", mtu: 1024, ops: repeat(5, craft.Op{Kind: craft.OpWrite, Data: craft.Pattern(2, 1), VA: 0x1000, RKey: 7}), min: 256, max: 4096},
		{name: "2-byte SENDs (ib_send_lat)", mtu: 1024, ops: repeat(5, craft.Op{Kind: craft.OpSend, Data: craft.Pattern(2, 1)}), min: 256, max: 4096},
		{name: "2-byte READs (ib_read_lat)", mtu: 1024, ops: repeat(5, craft.Op{Kind: craft.OpRead, Data: craft.Pattern(2, 1), VA: 0x1000, RKey: 7}), min: 256, max: 4096},
		{name: "300-byte WRITEs", mtu: 1024, ops: repeat(3, craft.Op{Kind: craft.OpWrite, Data: craft.Pattern(300, 1), VA: 0x1000, RKey: 7}), min: 512, max: 4096},
		{name: "2 KiB READs at MTU 4096", mtu: 4096, ops: repeat(3, craft.Op{Kind: craft.OpRead, Data: craft.Pattern(2048, 1), VA: 0x1000, RKey: 7}), min: 2048, max: 4096},
		{name: "2 KiB READs at MTU 1024", mtu: 1024, ops: repeat(3, craft.Op{Kind: craft.OpRead, Data: craft.Pattern(2048, 1), VA: 0x1000, RKey: 7}), min: 1024, max: 1024},
		{name: "4 KiB WRITEs at MTU 1024", mtu: 1024, ops: repeat(3, craft.Op{Kind: craft.OpWrite, Data: craft.Pattern(4096, 1), VA: 0x1000, RKey: 7}), min: 1024, max: 1024},
		{name: "a 1 KiB SEND at MTU 512", mtu: 512, ops: repeat(2, craft.Op{Kind: craft.OpSend, Data: craft.Pattern(1024, 1)}), min: 512, max: 512},
		{name: "write_bw.pcap", file: "write_bw.pcap", min: 1024, max: 1024},
		{name: "write_bw_mtu4096.pcap", file: "write_bw_mtu4096.pcap", min: 4096, max: 4096},
		{name: "read_bw.pcap", file: "read_bw.pcap", min: 1024, max: 1024},
		{name: "send_bw_small.pcap (64 B)", file: "send_bw_small.pcap", min: 256, max: 4096},
		{name: "atomic_fadd.pcap", file: "atomic_fadd.pcap", min: 256, max: 4096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p *Plan
			if tt.file != "" {
				p = loadPlan(t, tt.file)
			} else {
				p = craftPlan(t, tt.mtu, tt.ops)
			}
			assert.Equal(t, tt.min, p.MTUMin, "smallest MTU")
			assert.Equal(t, tt.max, p.MTUMax, "largest MTU")
			assert.True(t, p.MTUMin <= p.MTU && p.MTU <= p.MTUMax, "the capture's MTU %d is in [%d, %d]", p.MTU, p.MTUMin, p.MTUMax)
		})
	}
}

// TestPlanKeepsOneAnswerPerPSN: rxe resends a SEND or WRITE whose ACK is
// late (its retry timer under emulation, no loss), and the analyzer takes
// both ACKs for answers to the resent copy. The player sends the request
// once, and the peer answers it once: the plan keeps the first answer at
// each PSN, whatever request the analyzer paired it with, and leaves out
// only the repeats.
func TestPlanKeepsOneAnswerPerPSN(t *testing.T) {
	tests := []struct {
		file                string
		side                uint8
		requests, responses int
		skippedResponses    int
	}{
		{"rxe_send_lat.pcap.gz", 2, 200, 200, 3},
		{"rxe_send_lat.pcap.gz", 1, 200, 200, 0},
		{"rxe_write_lat.pcap.gz", 1, 200, 200, 2},
		{"rxe_write_lat.pcap.gz", 2, 200, 200, 0},
		{"rxe_read_lat.pcap.gz", 1, 200, 200, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s side %d", tt.file, tt.side), func(t *testing.T) {
			c, err := Load(filepath.Join("../interop/testdata", tt.file), LoadOptions{Decode: decodeOpts()})
			require.NoError(t, err)
			p, err := NewPlan(c, 0, tt.side)
			require.NoError(t, err)
			assert.Equal(t, tt.requests, p.Requests())
			assert.Equal(t, tt.responses, p.Responses())
			assert.Equal(t, tt.skippedResponses, p.SkippedResponses)
		})
	}
}

// TestPlanMessages counts the messages and bytes the plan's requests
// carry, what a perftest client reports for a run.
func TestPlanMessages(t *testing.T) {
	tests := []struct {
		file     string
		messages int
		bytes    uint64
	}{
		{"write_bw.pcap", 200, 200 * 4096},
		{"read_bw.pcap", 200, 200 * 4096},
		{"atomic_fadd.pcap", 200, 200 * 8},
		{"send_bw_small.pcap", 300, 300 * 64},
		{"rc_pingpong.pcap", 20, 20 * 1024},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			n, bytes := loadPlan(t, tt.file).Messages()
			assert.Equal(t, tt.messages, n)
			assert.Equal(t, tt.bytes, bytes)
		})
	}
}
