package device

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/layers"
)

func dropFrom(src string, r endpoint.DropReason, qpn uint32) endpoint.Drop {
	return endpoint.Drop{Reason: r, Src: netip.MustParseAddrPort(src + ":49152"), Dst: netip.MustParseAddr("192.168.77.1"),
		QPN: qpn, Opcode: layers.Opcode(0x04)}
}

// takeLines returns what the reporter wrote since the last call.
func takeLines(b *bytes.Buffer) []string {
	s := strings.TrimSuffix(b.String(), "\n")
	b.Reset()
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// At most one line per cause (reason and source) per second, counting
// what it stands for; the rest waits for the next tick or the flush.
func TestDropReporterRateLimit(t *testing.T) {
	var out bytes.Buffer
	r := newDropReporter(&out, "ibpeer")
	t0 := time.Date(2026, 11, 23, 23, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	r.Tick(at(0))
	assert.Empty(t, takeLines(&out), "nothing dropped, nothing said")

	for range 3 {
		r.Observe(dropFrom("192.168.77.11", endpoint.DropUnknownQPN, 0x123))
	}
	r.Tick(at(100 * time.Millisecond))
	assert.Equal(t, []string{
		"ibpeer: dropped 3 packets from 192.168.77.11: unknown destination QPN 0x000123 (no such QP; was the set-up exchange answered?)",
	}, takeLines(&out))

	// Within the second: held back, counted.
	r.Observe(dropFrom("192.168.77.11", endpoint.DropUnknownQPN, 0x124))
	r.Observe(dropFrom("192.168.77.11", endpoint.DropUnknownQPN, 0x124))
	// Another source is another cause, another reason too.
	r.Observe(dropFrom("192.168.77.12", endpoint.DropUnknownQPN, 0x123))
	qk := dropFrom("192.168.77.11", endpoint.DropQKey, 0x11)
	qk.Opcode, qk.Got, qk.Want = 0x64, 0x22222222, endpoint.PingpongQKey
	r.Observe(qk)
	r.Tick(at(600 * time.Millisecond))
	assert.Equal(t, []string{
		"ibpeer: dropped 1 packet from 192.168.77.12: unknown destination QPN 0x000123 (no such QP; was the set-up exchange answered?)",
		"ibpeer: dropped 1 packet from 192.168.77.11: Q_Key 0x22222222 to QPN 0x000011, which expects 0x11111111",
	}, takeLines(&out))
	r.Tick(at(1099 * time.Millisecond))
	assert.Empty(t, takeLines(&out), "less than a second since the first cause's report")
	r.Tick(at(1100 * time.Millisecond))
	assert.Equal(t, []string{
		"ibpeer: dropped 2 packets from 192.168.77.11: unknown destination QPN 0x000124 (no such QP; was the set-up exchange answered?)",
	}, takeLines(&out), "the latest drop's details")

	// Flush says what is held back at once, and nothing twice.
	r.Observe(dropFrom("192.168.77.12", endpoint.DropUnknownQPN, 0x123))
	r.Flush(at(1200 * time.Millisecond))
	assert.Equal(t, []string{
		"ibpeer: dropped 1 packet from 192.168.77.12: unknown destination QPN 0x000123 (no such QP; was the set-up exchange answered?)",
	}, takeLines(&out))
	r.Flush(at(5 * time.Second))
	r.Tick(at(10 * time.Second))
	assert.Empty(t, takeLines(&out))
}

// Sources beyond dropMaxCauses share one entry per reason.
func TestDropReporterBounded(t *testing.T) {
	var out bytes.Buffer
	r := newDropReporter(&out, "ibpeer")
	for i := range dropMaxCauses + 50 {
		r.Observe(dropFrom(fmt.Sprintf("10.0.%d.%d", i/250, i%250+1), endpoint.DropBadICRC, 0x11))
	}
	assert.Len(t, r.causes, dropMaxCauses+1)
	r.Tick(time.Now())
	lines := takeLines(&out)
	require.Len(t, lines, dropMaxCauses+1)
	assert.Equal(t, "ibpeer: dropped 50 packets from several addresses: bad ICRC on RC_SEND_ONLY to QPN 0x000011 (corrupted on the way, or the sender computes the ICRC differently)", lines[dropMaxCauses])
}

// Every reason has its own explanation.
func TestDropWhy(t *testing.T) {
	base := dropFrom("192.168.77.11", 0, 0x11)
	tests := []struct {
		reason endpoint.DropReason
		set    func(*endpoint.Drop)
		want   string
	}{
		{endpoint.DropTooShort, nil, "short or undecodable packet (not RoCEv2, or truncated)"},
		{endpoint.DropDestAddr, func(d *endpoint.Drop) {
			d.Dst, d.Peer = netip.MustParseAddr("192.168.77.9"), netip.MustParseAddr("192.168.77.1")
		},
			"sent to 192.168.77.9, not to this device's address 192.168.77.1 (does the peer use the right GID for us? check --addr here and the peer's GID index)"},
		{endpoint.DropHeader, nil, "RC_SEND_ONLY with BTH version not 0 or destination QPN 0"},
		{endpoint.DropUnknownQPN, nil, "unknown destination QPN 0x000011 (no such QP; was the set-up exchange answered?)"},
		{endpoint.DropBadICRC, nil, "bad ICRC on RC_SEND_ONLY to QPN 0x000011 (corrupted on the way, or the sender computes the ICRC differently)"},
		{endpoint.DropInboxFull, nil, "QPN 0x000011's input queue is full (this side cannot keep up)"},
		{endpoint.DropQPType, func(d *endpoint.Drop) { d.Want = uint32(endpoint.UD) },
			"RC_SEND_ONLY to QPN 0x000011, a UD QP (do both sides run the same transport: --rc, --uc, --ud?)"},
		{endpoint.DropQPType, func(d *endpoint.Drop) { d.Opcode, d.Want = 0x22, uint32(endpoint.RC) },
			"UC_SEND_LAST to QPN 0x000011, an RC QP (do both sides run the same transport: --rc, --uc, --ud?)"},
		{endpoint.DropQPState, func(d *endpoint.Drop) { d.Want = uint32(endpoint.StateInit) },
			"RC_SEND_ONLY to QPN 0x000011 in state INIT (not connected yet, or in error after a failure)"},
		{endpoint.DropSourceAddr, func(d *endpoint.Drop) { d.Peer = netip.MustParseAddr("::ffff:192.168.77.12") },
			"QPN 0x000011 is connected to 192.168.77.12, not to this sender (does the peer send from the address of the GID it advertised? check its GID index)"},
		{endpoint.DropPKey, func(d *endpoint.Drop) { d.Got, d.Want = 0x1234, 0xFFFF },
			"P_Key 0x1234 to QPN 0x000011, which has 0xffff (not the same partition)"},
		{endpoint.DropResponder, func(d *endpoint.Drop) { d.Detail = "no receive WR posted" },
			"QPN 0x000011 discarded RC_SEND_ONLY: no receive WR posted"},
		{endpoint.DropCompleter, func(d *endpoint.Drop) { d.Opcode, d.Detail = 0x11, "response to a PSN already completed (duplicate)" },
			"QPN 0x000011 ignored RC_ACKNOWLEDGE: response to a PSN already completed (duplicate)"},
		{endpoint.DropTooLong, nil, "datagram longer than 4224 bytes, the most a RoCEv2 packet carries (not RoCEv2)"},
		{endpoint.DropReason(99), nil, "Unknown(99) to QPN 0x000011"},
	}
	for _, tc := range tests {
		t.Run(tc.reason.String(), func(t *testing.T) {
			d := base
			d.Reason = tc.reason
			if tc.set != nil {
				tc.set(&d)
			}
			assert.Equal(t, tc.want, dropWhy(d))
		})
	}
}

// A Device reports a drop on the stderr it was given, and Close
// flushes; packets that are fine are not reported.
func TestDiagDevice(t *testing.T) {
	wa, wb := wiretest.NewPair(wiretest.Config{})
	defer wa.Close()
	var out peertest.Buffer
	dev := Open(wb, &out)
	pkt := make([]byte, 12+8+4)
	pkt[0] = 0x04
	pkt[5], pkt[6], pkt[7] = 0x00, 0x01, 0x23
	wb.Inject(netip.MustParseAddrPort("127.0.0.1:49152"), pkt)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "\n") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	wb.Inject(netip.MustParseAddrPort("127.0.0.1:49152"), pkt)
	for dev.Counters().DropQP < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, dev.Close())
	assert.Equal(t, "ibpeer: dropped 1 packet from 127.0.0.1: unknown destination QPN 0x000123 (no such QP; was the set-up exchange answered?)\n"+
		"ibpeer: dropped 1 packet from 127.0.0.1: unknown destination QPN 0x000123 (no such QP; was the set-up exchange answered?)\n", out.String())
}
