package decode_test

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// TestSnaplenKeepsTheSequence analyses a capture whose frames were cut to a
// snapshot length, as tcpdump -s N records RDMA traffic to keep captures
// small: every header up to the BTH survives, a READ request may lose its
// RETH, payloads are cut. The packets are truncated (a Truncated finding
// each), but they were on the wire, so the PSNs they carry must keep their
// connection's sequence whole: a READ whose RETH was cut takes as many PSNs
// as the next request's PSN says, not one (which made every READ of
// read_bw.pcap a gap: 199 gaps where there are none).
func TestSnaplenKeepsTheSequence(t *testing.T) {
	for _, snaplen := range []int{54, 64, 80, 96} {
		a := analyzeCut(t, "../pcaps/rxe/read_bw.pcap", snaplen)
		convs := a.Conversations()
		require.Len(t, convs, 1, "snaplen %d", snaplen)
		c := convs[0]
		assert.Equal(t, uint64(200), c.Messages(), "snaplen %d: messages", snaplen)
		for side := range c.Dir {
			assert.Zero(t, c.Dir[side].PSNGaps, "snaplen %d: gaps in direction %d", snaplen, side)
			assert.Zero(t, c.Dir[side].Retransmissions, "snaplen %d: retransmissions in direction %d", snaplen, side)
		}
		assert.Zero(t, a.Expert().Count(decode.FindPSNGap), "snaplen %d: PSN gap findings", snaplen)
	}
}

// analyzeCut analyses the capture at path with every frame cut to snaplen
// bytes (0: whole), as tcpdump -s snaplen would have recorded it: the
// frame's length on the wire is kept.
func analyzeCut(t *testing.T, path string, snaplen int) *decode.Analyzer {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	dec := decode.NewDecoder(decode.Options{})
	a := decode.NewAnalyzer(decode.AnalyzerOptions{})
	var rec capture.Packet
	for {
		if err := r.NextInto(&rec); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		if snaplen > 0 && len(rec.Data) > snaplen {
			rec.Data = rec.Data[:snaplen]
		}
		a.Analyze(dec.Decode(rec))
	}
	a.Finish()
	return a
}

// TestSnaplenAgreesWithWhole: on real rxe captures, a copy cut to a
// snapshot length gives the same conversations, messages, retransmissions,
// gaps, NAKs and payload bytes as the whole capture, and no finding the
// whole capture does not have (a cut packet is no damage). 64 bytes keep
// every header but a READ request's RETH (74 bytes whole), 128 keep all.
// Without the RETH a lost READ request's length is unknowable, so the lossy
// READ capture is held to this only where its RETHs were captured.
func TestSnaplenAgreesWithWhole(t *testing.T) {
	files := map[string][]int{
		"../pcaps/rxe/write_bw_loss.pcap": {64, 128}, "../pcaps/rxe/send_bw_rnr.pcap": {64, 128},
		"../pcaps/rxe/atomic_fadd.pcap": {64, 128}, "../pcaps/rxe/rc_pingpong.pcap": {64, 128},
		"../pcaps/rxe/write_bw.pcap": {64, 128}, "../pcaps/rxe/rping.pcap": {64, 128}, "../pcaps/rxe/read_bw.pcap": {64, 128},
		"../interop/testdata/rxe_read_bw_loss.pcap.gz": {128}, "../interop/testdata/rxe_send_bw_loss.pcap.gz": {64, 128},
	}
	type row struct {
		msgs, retr, gaps, naks [2]uint64
		bytes                  [2]uint64
	}
	rows := func(a *decode.Analyzer) []row {
		var out []row
		for _, c := range a.Conversations() {
			var r row
			for s := range c.Dir {
				d := &c.Dir[s]
				r.retr[s], r.gaps[s], r.bytes[s] = d.Retransmissions, d.PSNGaps, d.Payload
				for _, n := range d.NAKs {
					r.naks[s] += n
				}
			}
			r.msgs[0] = c.Messages()
			out = append(out, r)
		}
		return out
	}
	for f, snaplens := range files {
		whole := analyzeCut(t, f, 0)
		for _, snaplen := range snaplens {
			cut := analyzeCut(t, f, snaplen)
			assert.Equal(t, rows(whole), rows(cut), "%s at snaplen %d", f, snaplen)
			for _, er := range cut.Expert().Rows() {
				assert.NotZero(t, whole.Expert().Count(er.Kind), "%s at snaplen %d: %s appears only when cut", f, snaplen, er.Summary)
			}
		}
	}
}
