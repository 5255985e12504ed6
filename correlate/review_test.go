package correlate_test

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/correlate"
	"github.com/ibwire/ibwire/craft"
)

// markTunnel sets ECN CE on the outer IPv4 header of mirrored frames (the
// collector's tunnel), fixing its checksum: a mark on the tunnel is not a
// mark on the mirrored packet.
func markTunnel(t *testing.T, frames []craft.Frame) []craft.Frame {
	t.Helper()
	out := make([]craft.Frame, len(frames))
	for i, f := range frames {
		d := append([]byte(nil), f.Data...)
		require.Equal(t, []byte{0x08, 0x00}, d[12:14], "IPv4 over Ethernet")
		ip := d[14:]
		ip[1] |= 3
		ip[10], ip[11] = 0, 0
		var sum uint32
		for j := 0; j < int(ip[0]&0xf)*4; j += 2 {
			sum += uint32(ip[j])<<8 | uint32(ip[j+1])
		}
		for sum > 0xffff {
			sum = sum&0xffff + sum>>16
		}
		ip[10], ip[11] = byte(^sum>>8), byte(^sum)
		f.Data = d
		out[i] = f
	}
	return out
}

// TestCongestionMarksOfMirroredPackets: what counts as a mark added on a
// hop is the mirrored packet's own ECN field, inside the ERSPAN tunnel,
// never the tunnel's.
func TestCongestionMarksOfMirroredPackets(t *testing.T) {
	tests := []struct {
		name        string
		innerMarked bool
		outerMarked bool
	}{
		{"mirrored packets marked CE, tunnel not", true, false},
		{"tunnel marked CE, mirrored packets not", false, true},
		{"neither", false, false},
	}
	tr := conversation(t, craft.Config{Delay: 9 * time.Microsecond, Step: 10 * time.Microsecond}, craft.Faults{})
	mp := craft.MultiPoint{Points: []craft.CapturePoint{{}, {Offset: 40 * time.Millisecond}}, Hops: []time.Duration{2000, 3000, 4000}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mt, err := mp.Capture(tr)
			require.NoError(t, err)
			if tt.innerMarked {
				mt.Points[1] = rewrite(t, mt.Points[1])
			}
			mt.Points[1], err = craft.Mirror{Type: 2, Session: 7}.Wrap(mt.Points[1])
			require.NoError(t, err)
			if tt.outerMarked {
				mt.Points[1] = markTunnel(t, mt.Points[1])
			}
			rep, err := correlate.Run(context.Background(), correlate.Config{Points: writePoints(t, mt, []string{"host", "mirror"})})
			require.NoError(t, err)
			require.Len(t, rep.Flows, 2)
			for _, fl := range rep.Flows {
				require.Len(t, fl.Hops, 1)
				h := fl.Hops[0]
				want := 0
				if tt.innerMarked && h.To == "mirror" {
					want = int(h.Delay.Count)
				}
				assert.NotZero(t, h.Delay.Count)
				assert.Equal(t, want, h.Marked, "%s → %s", h.From, h.To)
			}
		})
	}
}

// TestMergeErrorNamesPoint: a frame the merged capture could not take is
// named by its point, its capture file and its packet number.
func TestMergeErrorNamesPoint(t *testing.T) {
	points := []correlate.Point{{Name: "a", Path: "../pcaps/multipoint_a.pcap"}, {Name: "b", Path: "../pcaps/multipoint_b.pcap"}}
	for fail := 0; fail < 2; fail++ {
		_, err := correlate.Run(context.Background(), correlate.Config{Points: points,
			Merge: func(point int, p capture.Packet) error {
				if point == fail {
					return errors.New("no space left on device")
				}
				return nil
			}})
		require.Error(t, err)
		assert.Regexp(t, `^point `+points[fail].Name+` \(`+regexp.QuoteMeta(points[fail].Path)+`\), packet 1: no space left on device$`, err.Error())
	}
}

// TestRunStopsWhenCancelled: cancelling the context stops the reading
// within a bounded number of packets, and Run says why it stopped.
func TestRunStopsWhenCancelled(t *testing.T) {
	const capture = "../pcaps/rxe/write_bw_loss.pcap"
	points := []correlate.Point{{Name: "a", Path: capture}, {Name: "b", Path: capture}}
	all := 0
	_, err := correlate.Run(context.Background(), correlate.Config{Points: points, Packet: func(*correlate.Sighting) { all++ }})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := 0
	_, err = correlate.Run(ctx, correlate.Config{Points: points, Packet: func(*correlate.Sighting) {
		if seen++; seen == 100 {
			cancel()
		}
	}})
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, seen, all/2, "stopped early: %d of %d packets", seen, all)
	t.Logf("%d of %d packets", seen, all)
}
