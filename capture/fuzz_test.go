package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// FuzzReader feeds arbitrary bytes to NewReader and reads every packet:
// it must never panic, every failure must be a FileError naming the packet
// being read, and no packet may exceed MaxCaplen (which bounds memory).
// The same bytes read one per call (no record ever whole in the buffer,
// so always the copying reads) give the same packets and error.
func FuzzReader(f *testing.F) {
	pcap, _ := threePackets(f, FormatPcap)
	ng, _ := threePackets(f, FormatPcapNG)
	for _, seed := range [][]byte{pcapBigEndianSLL2, pcapLittleNanos, handPcapNG(binary.LittleEndian), handPcapNG(binary.BigEndian), pcap, ng, gzipped(f, pcap)} {
		f.Add(seed)
	}
	for _, path := range []string{"testdata/mixed.pcapng", "../pcaps/rxe/rping.pcap"} {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data[:min(len(data), 4096)])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "fuzz")
		var fe *FileError
		if err != nil {
			require.ErrorAs(t, err, &fe)
			require.Zero(t, fe.Packet)
			return
		}
		slow, err := NewReader(iotest.OneByteReader(bytes.NewReader(data)), "fuzz")
		require.NoError(t, err)
		var p, q Packet
		for n := 1; ; n++ {
			err := r.NextInto(&p)
			errSlow := slow.NextInto(&q)
			if err == nil && errSlow == nil {
				require.Equal(t, q, p)
			} else {
				require.Equal(t, fmt.Sprint(errSlow), fmt.Sprint(err))
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				require.ErrorAs(t, err, &fe)
				require.Equal(t, n, fe.Packet)
				return
			}
			require.LessOrEqual(t, len(p.Data), MaxCaplen)
			require.Equal(t, n, p.Number)
		}
	})
}
