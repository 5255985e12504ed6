//go:build unix

package capture

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A named pipe among several files (ibdump -r <(cmd) -r f) can be read
// only once: the files keep the given order rather than being opened to
// find their first timestamps, which would eat the pipe's packets.
func TestOpenMultiPipe(t *testing.T) {
	dir := t.TempDir()
	pcap, _ := threePackets(t, FormatPcap)
	file := filepath.Join(dir, "a.pcap")
	require.NoError(t, os.WriteFile(file, pcap, 0o644))
	fifo := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	wrote := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			wrote <- err
			return
		}
		_, err = w.Write(pcapBigEndianSLL2)
		wrote <- errors.Join(err, w.Close())
	}()

	// The pipe's capture starts 0.123 s after the file's, yet it is named
	// first and read first.
	r, err := OpenMulti(fifo, file)
	require.NoError(t, err)
	got, err := readAll(r)
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, <-wrote)
	require.Len(t, got, 2+3)
	assert.Equal(t, fifo, got[0].File)
	assert.Equal(t, file, got[2].File)
	require.NoError(t, r.Close())
}
