package tui

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// The spool keeps every captured frame on disk so that the viewer holds only
// a compact index in memory and decodes the rows it shows on demand. It is
// one format for every source (files of any format, gzip, stdin, live
// capture): a sequence of records, each a fixed header and the frame's bytes.
//
//	caplen u32 | wirelen u32 | unix nanoseconds i64 | link type u32 | interface u32 | data
const recordHeader = 24

// checkpointEvery is how many records lie between two remembered spool
// offsets: reading record n reads at most this many records from the nearest
// checkpoint, and the index costs 8/checkpointEvery bytes a packet.
const checkpointEvery = 64

// spoolWriter appends records; flush makes them visible to readers.
type spoolWriter struct {
	f   *os.File
	w   *bufio.Writer
	off int64
	hdr [recordHeader]byte
}

func newSpool(dir string) (*spoolWriter, error) {
	f, err := os.CreateTemp(dir, "ibtui-spool-*")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	// The file needs no name once open: it goes away with the process,
	// however the process ends.
	os.Remove(f.Name())
	return &spoolWriter{f: f, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

// add writes one frame and returns the offset it starts at.
func (s *spoolWriter) add(in *decode.Input) (int64, error) {
	at := s.off
	binary.LittleEndian.PutUint32(s.hdr[0:], uint32(len(in.Data)))
	binary.LittleEndian.PutUint32(s.hdr[4:], uint32(in.Length))
	binary.LittleEndian.PutUint64(s.hdr[8:], uint64(in.Time.UnixNano()))
	binary.LittleEndian.PutUint32(s.hdr[16:], uint32(in.LinkType))
	binary.LittleEndian.PutUint32(s.hdr[20:], uint32(in.Interface))
	if _, err := s.w.Write(s.hdr[:]); err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	if _, err := s.w.Write(in.Data); err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	s.off += int64(recordHeader + len(in.Data))
	return at, nil
}

func (s *spoolWriter) flush() error { return s.w.Flush() }

// errBadSpool means the spool does not hold what the index says: it cannot
// happen unless the file was changed under us.
var errBadSpool = errors.New("spool: record out of bounds")

// parseRecords calls fn for each record in buf, which starts at a record
// boundary, with number the frame number of the first.
func parseRecords(buf []byte, number int, fn func(in decode.Input) bool) error {
	for len(buf) > 0 {
		if len(buf) < recordHeader {
			return errBadSpool
		}
		n := int(binary.LittleEndian.Uint32(buf[0:]))
		if len(buf) < recordHeader+n {
			return errBadSpool
		}
		in := decode.Input{
			Number:    number,
			Length:    int(binary.LittleEndian.Uint32(buf[4:])),
			Time:      time.Unix(0, int64(binary.LittleEndian.Uint64(buf[8:]))),
			LinkType:  layers.LinkType(binary.LittleEndian.Uint32(buf[16:])),
			Interface: int(binary.LittleEndian.Uint32(buf[20:])),
			Data:      buf[recordHeader : recordHeader+n : recordHeader+n],
		}
		if !fn(in) {
			return nil
		}
		buf = buf[recordHeader+n:]
		number++
	}
	return nil
}

// readSpan reads the bytes [from, to) of the spool.
func readSpan(r io.ReaderAt, from, to int64, buf []byte) ([]byte, error) {
	if to < from {
		return nil, errBadSpool
	}
	if int64(cap(buf)) < to-from {
		buf = make([]byte, to-from)
	}
	buf = buf[:to-from]
	if _, err := r.ReadAt(buf, from); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	return buf, nil
}
