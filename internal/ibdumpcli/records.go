package ibdumpcli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibwire/ibwire/capture"
)

// recordRef is one record --frames or --offsets asks for.
type recordRef struct {
	file   string
	frame  int
	offset int64
}

// parseFrames parses --frames FILE:FRAME@OFFSET,... (FILE@OFFSET numbers
// the record by its place in the list). The offset is what the packets
// table of -T parquet holds: a frame number alone would need a scan.
func parseFrames(list string) ([]recordRef, error) {
	var refs []recordRef
	for i, item := range strings.Split(list, ",") {
		at := strings.LastIndexByte(item, '@')
		if at < 0 {
			return nil, fmt.Errorf("--frames %s: want FILE:FRAME@OFFSET (the packets table's file, frame and offset columns)", item)
		}
		offset, err := strconv.ParseInt(item[at+1:], 10, 64)
		if err != nil || offset < 0 {
			return nil, fmt.Errorf("--frames %s: the offset %q is not a byte offset", item, item[at+1:])
		}
		ref := recordRef{file: item[:at], frame: i + 1, offset: offset}
		if colon := strings.LastIndexByte(ref.file, ':'); colon >= 0 {
			if n, err := strconv.Atoi(ref.file[colon+1:]); err == nil && n > 0 {
				ref.file, ref.frame = ref.file[:colon], n
			}
		}
		if ref.file == "" {
			return nil, fmt.Errorf("--frames %s: no file", item)
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// parseOffsets parses -r FILE --offsets OFFSET,...; the records are
// numbered by their place in the list.
func parseOffsets(file, list string) ([]recordRef, error) {
	var refs []recordRef
	for i, item := range strings.Split(list, ",") {
		offset, err := strconv.ParseInt(strings.TrimSpace(item), 10, 64)
		if err != nil || offset < 0 {
			return nil, fmt.Errorf("--offsets: %q is not a byte offset", item)
		}
		refs = append(refs, recordRef{file: file, frame: i + 1, offset: offset})
	}
	return refs, nil
}

// recordSource reads the records of a list by their offsets, each file
// opened once.
type recordSource struct {
	refs    []recordRef
	readers map[string]*capture.RecordReader
}

func (s *recordSource) NextInto(p *capture.Packet) error {
	if len(s.refs) == 0 {
		return io.EOF
	}
	ref := s.refs[0]
	s.refs = s.refs[1:]
	rr := s.readers[ref.file]
	if rr == nil {
		var err error
		if rr, err = capture.OpenRecords(ref.file); err != nil {
			return err
		}
		s.readers[ref.file] = rr
	}
	return rr.ReadAt(ref.offset, ref.frame, p)
}

func (s *recordSource) close() {
	for _, rr := range s.readers {
		rr.Close()
	}
}
