package interop

import (
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/layers"
)

// The captures in testdata/ were recorded by this harness (`ibdump -i br0 -w`) from passing
// rxe<->rxe scenarios; testdata/MANIFEST.md says which run and command made each. They must read
// back whole, hold exactly the RoCEv2 packets the run counted, and every ICRC Linux rxe computed
// must verify with ours.
func TestCapturedBaselines(t *testing.T) {
	for _, tc := range []struct {
		file string
		roce int // RoCEv2 packets, as `ibdump -q --check` counted them when the run recorded the file
	}{
		{"rxe_rc_pingpong.pcap.gz", 1000},
		{"rxe_rping.pcap.gz", 125},
		{"rxe_rping_reject.pcap.gz", 2},
		{"rxe_write_bw_loss.pcap.gz", 3073},
		{"rxe_write_lat.pcap.gz", 804},
		{"rxe_read_lat.pcap.gz", 400},
		{"rxe_send_lat.pcap.gz", 806},
		{"rxe_read_bw_loss.pcap.gz", 2844},
		{"rxe_send_bw_loss.pcap.gz", 2206},
		{"rxe_perftest_reruns.pcap.gz", 750},
		{"rxe_perftest_reruns_nextqp.pcap.gz", 750},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r, err := capture.Open(filepath.Join("testdata", tc.file))
			require.NoError(t, err)
			defer r.Close()
			roce := 0
			for {
				p, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				ip, ok := roceV2IPv4(p.Data)
				require.True(t, ok, "frame %d is not RoCEv2 over IPv4 (ibdump -i captures only RoCE)", p.Number)
				got, want, err := layers.VerifyICRC(layers.EncapRoCEv2IPv4, ip)
				require.NoError(t, err, "frame %d", p.Number)
				assert.Equal(t, want, got, "frame %d: ICRC", p.Number)
				roce++
			}
			assert.Equal(t, tc.roce, roce)
		})
	}
}

// roceV2IPv4 returns the IPv4 packet of an Ethernet frame carrying UDP to port 4791, trimmed to
// the IPv4 total length.
func roceV2IPv4(frame []byte) ([]byte, bool) {
	const eth = 14
	if len(frame) < eth+20+8 || binary.BigEndian.Uint16(frame[12:14]) != 0x0800 {
		return nil, false
	}
	ip := frame[eth:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:4]))
	if ip[0]>>4 != 4 || ip[9] != 17 || total > len(ip) || ihl+8 > total {
		return nil, false
	}
	ip = ip[:total]
	return ip, binary.BigEndian.Uint16(ip[ihl+2:ihl+4]) == 4791
}
