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
	r.win, r.wpos = nil, 0
	var err error
	if r.format == FormatPcap {
		// A pcap record has no type to tell it by: an offset that is not a
		// record's start shows in a header no writer makes.
		if err := r.plausiblePcapRecord(offset); err != nil {
			return r.fail(frame, offset, err)
		}
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

// plausiblePcapRecord reports an error unless the bytes at offset could
// be a pcap record: past the file header, with a header that recordFault
// finds no fault in.
func (r *Reader) plausiblePcapRecord(offset int64) error {
	if offset < pcapFileHeaderLen {
		return fmt.Errorf("%w: the file header", ErrNoRecord)
	}
	h, err := r.in.Peek(16)
	if err != nil {
		return fmt.Errorf("%w: the file ends there", ErrNoRecord)
	}
	if fault := r.recordFault(h); fault != "" {
		return fmt.Errorf("%w: %s", ErrNoRecord, fault)
	}
	return nil
}

// recordFault says what in a pcap record header h no writer makes: a
// sub-second fraction of a second or more, or a captured length beyond
// the packet's or beyond any record this reader takes. A sequential read
// takes such a record as it comes; a read at an offset uses them to tell
// an offset that is not a record's start.
func (r *Reader) recordFault(h []byte) string {
	frac, caplen, length := r.order.Uint32(h[4:]), r.order.Uint32(h[8:]), r.order.Uint32(h[12:])
	second := uint32(1_000_000)
	if r.nanos {
		second = 1_000_000_000
	}
	switch {
	case frac >= second:
		return fmt.Sprintf("a sub-second fraction of %d", frac)
	case caplen > MaxCaplen:
		return fmt.Sprintf("a record of %d bytes (limit %d)", caplen, MaxCaplen)
	case caplen > length:
		return fmt.Sprintf("%d bytes captured of a %d-byte packet", caplen, length)
	}
	return ""
}

// Close closes the file.
func (rr *RecordReader) Close() error { return rr.f.Close() }
