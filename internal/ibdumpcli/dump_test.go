package ibdumpcli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// endlessCapture is a pcap stream that repeats the records of a capture
// file without end. After cancelAt bytes it cancels the run; a run that
// goes on reading more than maxAfter bytes after that gets an error.
type endlessCapture struct {
	mu       sync.Mutex
	data     []byte // the file: the pcap header, then its records
	off      int
	n        int
	cancelAt int
	maxAfter int
	cancel   func()
}

func (e *endlessCapture) Read(b []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n > e.cancelAt+e.maxAfter {
		return 0, errors.New("the run went on reading after its cancel")
	}
	if e.off == len(e.data) {
		e.off = 24 // the records again
	}
	k := copy(b, e.data[e.off:])
	e.off += k
	e.n += k
	if e.n >= e.cancelAt && e.cancel != nil {
		e.cancel()
		e.cancel = nil
	}
	return k, nil
}

// TestLoopStopsOnCancel: the direct loop (-j 1) looks at the run's context
// once and is told of a cancel later, so a cancel before the run stops it
// at the first record, and one during the run (SIGINT on a stream that
// does not end) stops it soon after; the statistics print either way.
func TestLoopStopsOnCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	file, err := os.ReadFile("../../pcaps/rxe/write_bw.pcap")
	require.NoError(t, err)

	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errOut bytes.Buffer
		code := Run(ctx, "ibdump", []string{"-j", "1", "--count", "-z", "conv,qp", "../../pcaps/rxe/write_bw.pcap"}, nil, &out, &errOut)
		assert.Equal(t, exitOK, code)
		assert.Empty(t, errOut.String())
		assert.Contains(t, out.String(), "0 packets\n")
		assert.Contains(t, out.String(), "QP Conversations")
	})

	// The direct loop (-j 1) and the workers (-j 2) alike: the packets
	// read before the cancel are counted, and the run stops soon after.
	for _, jobs := range []string{"1", "2"} {
		t.Run("during -j "+jobs, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			in := &endlessCapture{data: file, cancelAt: 1 << 20, maxAfter: 64 << 20, cancel: cancel}
			var out, errOut bytes.Buffer
			code := Run(ctx, "ibdump", []string{"-j", jobs, "--count", "-r", "-"}, in, &out, &errOut)
			assert.Equal(t, exitOK, code, errOut.String())
			assert.Empty(t, errOut.String())
			n, err := strconv.Atoi(strings.TrimSuffix(out.String(), " packets\n"))
			require.NoError(t, err, out.String())
			assert.Positive(t, n, "the packets before the cancel were read")
		})
	}
}
