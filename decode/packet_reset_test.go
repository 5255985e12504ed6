package decode

import (
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
)

// TestDecodeLeavesNothingBehind: a Decoder reuses its Packet, resetting it
// field by field; each frame must decode exactly as on a fresh Decoder,
// whatever came before it (bad CRCs, MADs, analysis, cut frames, other link
// types), so that no field of a previous frame, the analysis included,
// leaks into the next.
func TestDecodeLeavesNothingBehind(t *testing.T) {
	var frames []capture.Packet
	for _, path := range []string{"../pcaps/broken_bad_icrc.pcap", "../pcaps/mgmt_smp_sa_perf.pcap", "../pcaps/broken_truncated.pcap",
		"../pcaps/conv_ib.pcap", "../pcaps/rxe/rping.pcap", "../pcaps/pfc_pause.pcap", "../pcaps/rxe/nvme_rdma_connect.pcap"} {
		r, err := capture.Open(path)
		require.NoError(t, err)
		for {
			var cp capture.Packet
			err := r.NextInto(&cp)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			cp.Data = append([]byte(nil), cp.Data...)
			frames = append(frames, cp)
		}
		r.Close()
	}
	// comparable drops what differs between two decoders by design: times
	// relative to each one's first frame, and pointers to each one's state.
	comparable := func(p Packet) Packet {
		p.RelTime, p.DeltaTime, p.Headers, p.perf = 0, 0, nil, nil
		return p
	}
	reused := NewDecoder(Options{})
	a := NewAnalyzer(AnalyzerOptions{})
	for i, f := range frames {
		got := comparable(*reused.Decode(f))
		want := comparable(*NewDecoder(Options{}).Decode(f))
		require.Equal(t, want, got, "frame %d of %d", i, len(frames))
		a.Analyze(&reused.own.pkt)                  // analysis for the next Decode to clear
		reused.own.pkt.Correlation = &Correlation{} // and what a correlation set
	}
	// Decode resets the fields it knows of: a field added to Packet must
	// be reset there too, and counted here.
	assert.Equal(t, 15, reflect.TypeOf(Packet{}).NumField(), "a Packet field Decode does not reset?")
}
