package bw_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/internal/looptest"
	"github.com/ibwire/ibwire/internal/peer/bw"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/internal/peer/serve"
	"github.com/ibwire/ibwire/internal/peer/serve/servetest"
	"github.com/ibwire/ibwire/layers"
)

// TestRunUDPOffloadCapture: a live capture on lo while ibpeer write runs
// against ibpeer serve over loopback sees one frame per RoCE packet with
// --udp-offload=off on both sides, and (auto, where the kernel segments
// UDP) some frames that carry a run of packets as one datagram.
func TestRunUDPOffloadCapture(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	const (
		size, iters, mtu = 16384, 4, 1024
		perMsg           = size / mtu
		// the largest single packet: BTH, RETH, a full MTU of payload, ICRC
		maxPacket = layers.BTHLength + 16 + mtu + 4
	)
	client, server := netip.MustParseAddr("127.0.25.1"), netip.MustParseAddr("127.0.25.2")
	for _, tc := range []struct {
		name    string
		offload device.UDPOffload
	}{
		{"off", device.OffloadOff},
		{"auto", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			looptest.Hold(t) // no other loopback test's datagrams in the capture
			src, err := capture.OpenLive("lo", 0, capture.RoCEFilter())
			if err != nil {
				t.Skipf("no live capture on lo (needs CAP_NET_RAW): %v", err)
			}
			defer src.Close()
			srv := servetest.Start(t, func(c *serve.Config) { c.Addr, c.MTU, c.UDPOffload = server, mtu, tc.offload })
			var out, errb peertest.Buffer
			cfg := bw.Config{Op: "write", Addr: client, To: srv.TCP, Size: size, Iters: iters, QPs: 1, Depth: iters,
				Seed: 1, Stall: 10 * time.Second, Stderr: &errb, UDPOffload: tc.offload}
			require.NoError(t, bw.Run(context.Background(), cfg, &out), "stderr: %s", errb.String())
			srv.Stop(t)

			// every frame went through lo before the last ACK came back: read
			// what the socket holds until it has nothing more.
			require.NoError(t, src.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
			var frames, largest int
			var p capture.Packet
			for {
				err := src.NextInto(&p)
				if errors.Is(err, os.ErrDeadlineExceeded) {
					break
				}
				require.NoError(t, err)
				const hdr = 14 + 20 + 8 // lo's zero Ethernet header, IPv4, UDP
				if len(p.Data) < hdr+layers.BTHLength || p.Data[14]>>4 != 4 ||
					netip.AddrFrom4([4]byte(p.Data[14+12:14+16])) != client || netip.AddrFrom4([4]byte(p.Data[14+16:14+20])) != server {
					continue
				}
				udpPayload := int(binary.BigEndian.Uint16(p.Data[14+20+4:])) - 8
				frames++
				largest = max(largest, udpPayload)
			}
			if tc.offload == device.OffloadOff {
				assert.LessOrEqual(t, largest, maxPacket, "no frame carries more than one packet")
				assert.Equal(t, iters*perMsg, frames, "one frame per WRITE packet")
			} else {
				if largest <= maxPacket {
					t.Skip("this kernel did not segment: nothing to contrast")
				}
				assert.Less(t, frames, iters*perMsg, "runs of packets captured as one frame")
			}
		})
	}
}
