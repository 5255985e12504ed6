package capture

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotSeekable is returned by OpenRecords for a gzip file: a compressed
// stream has no byte offsets to seek to.
var ErrNotSeekable = errors.New("gzip-compressed: records cannot be read by offset (decompress it first: gunzip -k)")

// ErrNoRecord is returned by ReadAt when the bytes at the offset are not a
// packet record of the file.
var ErrNoRecord = errors.New("no packet record at this offset")

// RecordReader reads single records of a capture file at the byte offsets
// Packet.Offset gave, without reading what lies before them: the way back
// from a row of an export to its packet.
type RecordReader struct {
	f    *os.File
	size int64
	r    Reader // the file's header state: format, byte order, interfaces
}

// OpenRecords opens a pcap or pcapng file for ReadAt. A pcapng file's
// interfaces are those described before its first packet (where writers
// put them).
func OpenRecords(path string) (*RecordReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("capture: %w", err)
	}
	rr := &RecordReader{f: f, size: st.Size()}
	if err := rr.r.start(f, path); err != nil {
		f.Close()
		return nil, err
	}
	if rr.r.in != rr.r.raw {
		f.Close()
		return nil, &FileError{File: path, Err: ErrNotSeekable}
	}
	return rr, nil
}

// ReadAt reads the record at offset into p, numbering it frame (which
// only the caller knows: the reader has not counted the records before).
func (rr *RecordReader) ReadAt(offset int64, frame int, p *Packet) error {
	r := &rr.r
	if offset < 0 || offset >= rr.size {
		return &FileError{File: r.name, Packet: frame, Offset: offset, Err: fmt.Errorf("%w: the file has %d bytes", ErrNoRecord, rr.size)}
	}
	r.raw.Reset(io.NewSectionReader(rr.f, offset, rr.size-offset))
	r.in, r.off, r.n, r.err = r.raw, offset, frame-1, nil
	var err error
	if r.format == FormatPcap {
		err = r.nextPcap(p)
	} else {
		err = r.nextNg(p)
	}
	if err == nil && p.Offset != offset {
		err = r.fail(frame, offset, fmt.Errorf("%w: a pcapng block that is not a packet", ErrNoRecord))
	}
	if err == io.EOF {
		err = r.fail(frame, offset, fmt.Errorf("%w: the file ends there", ErrNoRecord))
	}
	if err != nil {
		return err
	}
	p.Number, p.File = frame, r.name
	return nil
}

// Close closes the file.
func (rr *RecordReader) Close() error { return rr.f.Close() }
