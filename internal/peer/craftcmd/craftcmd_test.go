package craftcmd_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/internal/peer/craftcmd"
	"github.com/ibwire/ibwire/layers"
)

// frameLine is a line of the verbose listing that names a frame.
var frameLine = regexp.MustCompile(`(?m)^ +\d+ \d\d:\d\d:\d\d\.\d{6} `)

func writeOp(size int) craft.Op {
	return craft.Op{Kind: craft.OpWrite, Data: craft.Pattern(size, 0), VA: 0x7f0000000000, RKey: 0x1234}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		cfg     craftcmd.Config
		frames  int    // in the file; 0: no file
		listed  string // in the verbose listing
		invalid string // an InvalidError saying this
		ioErr   bool
	}{
		{name: "write of 3 packets and its ACK", cfg: craftcmd.Config{Craft: craft.Config{MTU: 1024}, Ops: []craft.Op{writeOp(3000)}, Verbose: true},
			frames: 4, listed: "RC_RDMA_WRITE_FIRST"},
		{name: "cm around it", cfg: craftcmd.Config{Craft: craft.Config{MTU: 1024}, Ops: []craft.Op{writeOp(100)}, CM: true},
			frames: 2 + 3 + 2},
		{name: "broken frame after the CM frames counts in the file",
			cfg: craftcmd.Config{Craft: craft.Config{MTU: 1024}, Ops: []craft.Op{writeOp(100)}, CM: true,
				Faults: craft.Faults{Corrupt: []craft.Corrupt{{Kind: craft.BadICRC, Frame: 4}}}, Verbose: true},
			frames: 3 + 3 + 2, listed: "#4 icrc_bad"}, // the broken WRITE is sent again
		{name: "broken CM frame", cfg: craftcmd.Config{Craft: craft.Config{MTU: 1024}, Ops: []craft.Op{writeOp(100)}, CM: true,
			Faults: craft.Faults{Corrupt: []craft.Corrupt{{Kind: craft.BadICRC, Frame: 2}}}}, invalid: "is a CM frame"},
		{name: "nowhere to write", cfg: craftcmd.Config{Craft: craft.Config{MTU: 1024}, Ops: []craft.Op{writeOp(100)},
			Out: filepath.Join(dir, "missing", "x.pcap")}, ioErr: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Format = capture.FormatPcap
			if cfg.Out == "" {
				cfg.Out = filepath.Join(dir, strings.Repeat("x", i+1)+".pcap")
			}
			var out strings.Builder
			err := craftcmd.Run(context.Background(), cfg, &out)
			var inv *craftcmd.InvalidError
			switch {
			case tt.invalid != "":
				require.ErrorAs(t, err, &inv)
				assert.ErrorContains(t, err, tt.invalid)
				return
			case tt.ioErr:
				require.Error(t, err)
				assert.False(t, errors.As(err, &inv), "an I/O error is not the configuration's")
				return
			}
			require.NoError(t, err)
			r, err := capture.Open(cfg.Out)
			require.NoError(t, err)
			defer r.Close()
			n := 0
			for {
				p, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				assert.Equal(t, layers.LinkTypeEthernet, p.LinkType)
				n++
			}
			assert.Equal(t, tt.frames, n)
			if tt.listed != "" {
				assert.Contains(t, out.String(), tt.listed)
				assert.Len(t, frameLine.FindAllString(out.String(), -1), tt.frames, "one line per frame:\n%s", out.String())
			} else {
				assert.Empty(t, out.String(), "nothing listed unless Verbose")
			}
		})
	}
}
