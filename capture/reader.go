package capture

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/ibwire/ibwire/layers"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"slices"
	"time"
)

// MaxCaplen is the largest record a Reader accepts and the snaplen the
// writers declare; it is libpcap's MAXIMUM_SNAPLEN. A larger record means
// a damaged file, and refusing it bounds the memory a hostile file costs.
const MaxCaplen = 262144

const (
	// maxBlock is libpcap's limit on a pcapng block; longer ones are damage.
	maxBlock = 16 << 20
	// maxMetaBlock bounds the blocks read whole into memory (section and
	// interface headers); packet blocks stream and other blocks are skipped.
	maxMetaBlock = 64 << 10
	// maxIfaces bounds the interfaces of a section, so a stream of interface
	// blocks cannot grow memory without limit.
	maxIfaces = 1 << 16

	blockSHB = 0x0a0d0d0a
	blockIDB = 1
	blockOPB = 2 // obsolete packet block, still written by old tools
	blockSPB = 3
	blockEPB = 6
)

// Format is a capture file format.
type Format int

// Capture file formats.
const (
	FormatPcap   Format = iota // classic libpcap format, one link type per file
	FormatPcapNG               // pcapng, with interfaces of any link type
)

// String returns "pcap" or "pcapng".
func (f Format) String() string {
	switch f {
	case FormatPcap:
		return "pcap"
	case FormatPcapNG:
		return "pcapng"
	}
	return fmt.Sprintf("Unknown(%d)", int(f))
}

// Packet is one captured frame: the record every source yields and the
// decoder takes (decode.Input is this type).
type Packet struct {
	// Number is the 1-based frame number, continuing across the files of
	// OpenMulti.
	Number int
	// Time is when the frame was captured.
	Time time.Time
	// Length is the frame's length on the wire; len(Data) is what was
	// captured of it, less when the snapshot length cut it.
	Length int
	// LinkType says how Data starts; in pcapng it varies per interface.
	LinkType layers.LinkType
	// Interface is the pcapng interface index within its section, 0 for
	// pcap; for a live capture, the kernel's interface index.
	Interface int
	// Data is the captured bytes, starting with the link-layer header.
	Data []byte
	// File is the name of the file the record came from (what Reader.Name
	// said while reading it), and Offset the byte offset of the record's
	// header in it: the pcap record header or the pcapng block. In a gzip
	// file the offset counts the decompressed stream, which cannot be
	// sought. A live capture leaves both zero.
	File   string
	Offset int64
}

// ngIface is what a pcapng interface description block says.
type ngIface struct {
	linkType layers.LinkType
	snaplen  uint32
	tsresol  byte   // if_tsresol: 10^-n, or 2^-n when the top bit is set
	tsoffset int64  // if_tsoffset: seconds added to every timestamp
	speed    uint64 // if_speed: bits per second, 0 when not given
}

// Reader reads packets from pcap and pcapng streams, gzip-compressed or
// not, and from several files in a row. It never seeks.
type Reader struct {
	paths []string      // files still to read after the current one
	name  string        // current file name, for errors
	file  io.Closer     // the file Open opened; nil for NewReader and stdin
	raw   *bufio.Reader // over the file
	in    *bufio.Reader // raw, or over the decompressed stream
	off   int64         // bytes consumed from in

	// win is the part of in's buffer that NextInto has peeked, and
	// win[:wpos] the records (or blocks) it has read from it, which in has not yet
	// discarded. Every other read of in comes after sync, which discards
	// them and empties the window.
	win  []byte
	wpos int

	format   Format
	order    binary.ByteOrder
	big      bool // order is big-endian: the byte order decided once per file or section
	nanos    bool
	linkType layers.LinkType
	ifaces   []ngIface
	meta     []byte // reused body of section and interface blocks

	n       int   // packets returned
	err     error // sticky: once the stream failed or ended, it stays so
	scratch [32]byte
}

// Open opens a capture file; "-" means standard input.
func Open(path string) (*Reader, error) { return OpenMulti(path) }

// OpenMulti reads several capture files in a row as one stream of packets
// numbered from 1. Each file may have its own format and link types. All
// paths are checked for existence up front, so a typo fails at once; the
// files are then opened one at a time.
//
// The files are read in the order of their first packets' timestamps, so
// the pieces of a rotated capture (tcpdump -C names them f, f1, ... f10,
// which a shell sorts f, f1, f10, f2; -G names them by a strftime pattern)
// make one stream in any order they are given: a connection that crosses a
// rotation stays one connection. Files that start at the same time, and
// files with no packet, keep their order; with standard input, a pipe or
// any other file that is not a regular one among them (-r <(cmd)), which
// cannot be read twice, the given order stands.
func OpenMulti(paths ...string) (*Reader, error) {
	if len(paths) == 0 {
		return nil, errors.New("capture: no files to read")
	}
	streams := false
	for _, p := range paths {
		if p == "-" {
			streams = true
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("capture: %w", err)
		}
		if !fi.Mode().IsRegular() {
			streams = true
		}
	}
	if !streams {
		paths = inTimeOrder(paths)
	}
	r := &Reader{paths: append([]string(nil), paths[1:]...)}
	if err := r.openFile(paths[0]); err != nil {
		return nil, err
	}
	return r, nil
}

// NewReader reads a capture from r, sniffing its format from the first
// bytes. name appears in errors.
func NewReader(r io.Reader, name string) (*Reader, error) {
	rd := &Reader{}
	if err := rd.start(r, name); err != nil {
		return nil, err
	}
	return rd, nil
}

// inTimeOrder sorts paths by the timestamp of each file's first packet;
// a file that cannot be read sorts as if it had none, and its error shows
// when it is read.
func inTimeOrder(paths []string) []string {
	if len(paths) < 2 {
		return paths
	}
	first := make(map[string]int64, len(paths))
	for _, p := range paths {
		first[p] = firstTime(p)
	}
	sorted := slices.Clone(paths)
	slices.SortStableFunc(sorted, func(a, b string) int { return cmp.Compare(first[a], first[b]) })
	return sorted
}

// firstTime is the first packet's timestamp in ns, or the lowest int64.
func firstTime(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return math.MinInt64
	}
	defer f.Close()
	r, err := NewReader(f, path)
	if err != nil {
		return math.MinInt64
	}
	var p Packet
	if r.NextInto(&p) != nil {
		return math.MinInt64
	}
	return p.Time.UnixNano()
}

func (r *Reader) openFile(path string) error {
	if path == "-" {
		return r.start(os.Stdin, "stdin")
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	r.file = f
	if err := r.start(f, path); err != nil {
		r.closeFile()
		return err
	}
	return nil
}

func (r *Reader) closeFile() error {
	f := r.file
	if r.file = nil; f == nil {
		return nil
	}
	return f.Close()
}

// Close closes the file being read. Later reads fail with fs.ErrClosed.
func (r *Reader) Close() error {
	r.err = fs.ErrClosed
	r.paths = nil
	return r.closeFile()
}

// Name returns the name of the file being read.
func (r *Reader) Name() string { return r.name }

// Format returns the format of the file being read.
func (r *Reader) Format() Format { return r.format }

// LinkType returns the link type in the pcap file header, or that of the
// first interface of the pcapng section read so far. Packet.LinkType is
// authoritative: pcapng interfaces may differ.
func (r *Reader) LinkType() layers.LinkType {
	if r.format == FormatPcapNG {
		if len(r.ifaces) == 0 {
			return layers.LinkTypeEthernet
		}
		return r.ifaces[0].linkType
	}
	return r.linkType
}

// InterfaceSpeed returns the link speed in bits per second that a pcapng
// interface description gives (if_speed) for interface id, 0 when the
// file does not say (and for pcap files, which cannot).
func (r *Reader) InterfaceSpeed(id int) uint64 {
	if id < 0 || id >= len(r.ifaces) {
		return 0
	}
	return r.ifaces[id].speed
}

// Nanos reports whether timestamps are finer than a microsecond (the pcap
// magic, or pcapng interface 0's if_tsresol), so a copy can keep them.
func (r *Reader) Nanos() bool {
	if r.format == FormatPcapNG {
		if len(r.ifaces) == 0 {
			return false
		}
		res := r.ifaces[0].tsresol
		return res&0x80 == 0 && res > 6 || res&0x80 != 0 && res&0x7f >= 20
	}
	return r.nanos
}

// Next returns the next packet in freshly allocated memory, or io.EOF
// after the last one.
func (r *Reader) Next() (Packet, error) {
	var p Packet
	err := r.NextInto(&p)
	return p, err
}

// NextInto reads the next packet into p, reusing p.Data's memory: once
// the buffer has grown to the largest packet, reading allocates nothing.
// The previous contents of p.Data are overwritten. It returns io.EOF after
// the last packet of the last file, or a *FileError.
func (r *Reader) NextInto(p *Packet) error {
	// A pcap record that lies whole in the window: its header is parsed in
	// place and its bytes copied once, into p.Data (which the caller owns).
	// The window is peeked from in's buffer once per buffer's worth of
	// records, never past what is buffered, so a pipe is read exactly as
	// the copying reads of nextPcap would read it. A record not buffered
	// whole, or longer than MaxCaplen, goes to nextPcap, which reads it or
	// says what is wrong.
	if r.format == FormatPcap && r.err == nil {
		w := r.win[r.wpos:]
		a, b, ok := r.pcapHeader(w)
		if !ok {
			w = r.refill()
			a, b, ok = r.pcapHeader(w)
		}
		if ok {
			n := int(uint32(b))
			resize(&p.Data, n)
			copy(p.Data, w[16:16+n])
			r.wpos += 16 + n
			p.Offset = r.off
			r.off += int64(16 + n)
			r.setRecord(p, a, b)
			r.n++
			p.Number, p.File = r.n, r.name
			return nil
		}
		r.sync()
	} else if r.err == nil && r.nextEPBBuffered(p) {
		r.n++
		p.Number, p.File = r.n, r.name
		return nil
	}
	for r.err == nil {
		var err error
		if r.format == FormatPcap {
			err = r.nextPcap(p)
		} else {
			err = r.nextNg(p)
		}
		if err == nil {
			r.n++
			p.Number, p.File = r.n, r.name
			return nil
		}
		if err == io.EOF && len(r.paths) > 0 {
			if err = r.closeFile(); err == nil {
				path := r.paths[0]
				r.paths = r.paths[1:]
				if err = r.openFile(path); err == nil {
					continue
				}
			}
		}
		r.err = err
	}
	return r.err
}

// gzipNoCapture says what is wrong with a gzip file that holds no capture.
const gzipNoCapture = "gzip-compressed, but its content is not pcap or pcapng"

// start begins a file: gzip is detected from its two-byte magic, then the
// pcap or pcapng header is read from the (decompressed) stream.
func (r *Reader) start(src io.Reader, name string) error {
	r.name, r.off, r.ifaces = name, 0, r.ifaces[:0]
	r.win, r.wpos = nil, 0
	if r.raw == nil {
		r.raw = bufio.NewReaderSize(src, 64<<10)
	} else {
		r.raw.Reset(src)
	}
	r.in = r.raw
	gzipped := false
	if magic, _ := r.raw.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gzipped = true
		gz, err := gzip.NewReader(r.raw)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = fmt.Errorf("%w gzip header", ErrTruncated)
			}
			return r.fail(0, 0, err)
		}
		r.in = bufio.NewReaderSize(gz, 64<<10)
	}
	h := r.scratch[:pcapFileHeaderLen]
	if err := r.fill(h[:4], 0, "file header", 4, false); err != nil {
		if gzipped && errors.Is(err, ErrTruncated) {
			err = fmt.Errorf("%w: %s", err, gzipNoCapture)
		}
		return r.fail(0, 0, err)
	}
	switch m := binary.BigEndian.Uint32(h); m {
	case blockSHB:
		r.format = FormatPcapNG
		if err := r.readSHB(0, 0, 4); err != nil {
			return err
		}
		return r.leadingIDBs()
	case 0xa1b2c3d4, 0xa1b23c4d:
		r.order, r.big = binary.BigEndian, true
	case 0xd4c3b2a1, 0x4d3cb2a1:
		r.order, r.big = binary.LittleEndian, false
	default:
		if gzipped {
			return r.fail(0, 0, fmt.Errorf("%w 0x%08x: %s", ErrBadMagic, m, gzipNoCapture))
		}
		return r.fail(0, 0, fmt.Errorf("%w 0x%08x: not pcap, pcapng or gzip", ErrBadMagic, m))
	}
	r.format = FormatPcap
	r.nanos = h[0] == 0x4d || h[3] == 0x4d
	if err := r.fill(h[4:], 0, "file header", pcapFileHeaderLen, false); err != nil {
		return r.fail(0, 0, err)
	}
	// The full 32 bits: gopacket v1.1.19 keeps only the low 8.
	r.linkType = layers.LinkType(r.order.Uint32(h[20:]))
	return nil
}

// leadingIDBs reads the interface blocks before the first packet, so that
// LinkType and Nanos answer as soon as NewReader returns. It peeks, so a
// block that is not (or not yet visibly) an interface description stays
// for nextNg.
func (r *Reader) leadingIDBs() error {
	for {
		h, _ := r.in.Peek(8)
		if len(h) < 8 || binary.BigEndian.Uint32(h) == blockSHB || r.order.Uint32(h) != blockIDB {
			return nil
		}
		start := r.off
		if err := r.fill(r.scratch[:8], start, "block header", 8, false); err != nil {
			return r.fail(0, start, err)
		}
		blen := r.order.Uint32(r.scratch[4:])
		err := checkBlockLen(blockIDB, blen)
		if err == nil {
			err = r.readIDB(start, blen)
		}
		if err != nil {
			return r.fail(0, start, err)
		}
	}
}

// blockLenOK reports a pcapng block length that can be: its type, length
// and trailing length at least, in whole words, no longer than maxBlock.
func blockLenOK(blen uint32) bool { return blen >= 12 && blen%4 == 0 && blen <= maxBlock }

// epbFixed is an enhanced (or obsolete) packet block's fields between its
// type and length and its packet data: interface, timestamp (two words),
// captured and original lengths.
const epbFixed = 20

func checkBlockLen(typ, blen uint32) error {
	if !blockLenOK(blen) {
		return fmt.Errorf("%w: block type %d has length %d", ErrBadBlock, typ, blen)
	}
	return nil
}

// fill reads len(buf) bytes of a unit of want bytes (header, record or
// block) that began at start. At a unit's first byte (first=true) a clean
// end of stream is io.EOF; anywhere else it is truncation.
func (r *Reader) fill(buf []byte, start int64, what string, want int, first bool) error {
	n, err := io.ReadFull(r.in, buf)
	r.off += int64(n)
	if err == nil || first && n == 0 && err == io.EOF {
		return err
	}
	return r.short(err, start, what, want)
}

// short turns an end of stream inside a unit into ErrTruncated; other
// errors (I/O, gzip corruption) pass through.
func (r *Reader) short(err error, start int64, what string, want int) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w %s (wanted %d bytes, got %d)", ErrTruncated, what, want, r.off-start)
	}
	return err
}

// fail records a FileError for the unit that began at start.
func (r *Reader) fail(packet int, start int64, err error) error {
	if err == io.EOF {
		return err
	}
	return &FileError{File: r.name, Packet: packet, Offset: start, Err: err}
}

// grow returns b resized to n bytes, reusing its memory when it can. A
// nil b gets exactly n bytes (Next hands the memory over); a reused one
// doubles, so a stream of ever larger packets costs log(n) allocations.
// resize makes *b n bytes long: in place when it has the room (a length
// store only, no pointer store and so no write barrier), else grown.
func resize(b *[]byte, n int) {
	if *b != nil && cap(*b) >= n {
		*b = (*b)[:n]
		return
	}
	*b = grow(*b, n)
}

func grow(b []byte, n int) []byte {
	if b == nil && n == 0 {
		return []byte{} // an empty record is still a packet; zero-size make does not allocate
	}
	if cap(b) >= n {
		return b[:n]
	}
	if c := 2 * cap(b); c > n {
		return make([]byte, n, min(c, MaxCaplen))
	}
	return make([]byte, n)
}

// pcapFileHeaderLen is the size of a pcap file's header, before its first
// record.
const pcapFileHeaderLen = 24

// nextPcap reads a record with copying reads, saying what is wrong with
// it if anything is: the careful path, for the records NextInto does not
// find whole in its window (one that straddles the end of the buffer, a damaged one, the
// first of a file).
func (r *Reader) nextPcap(p *Packet) error {
	start, h := r.off, r.scratch[:16]
	p.Offset = start
	if err := r.fill(h, start, "record header", 16, true); err != nil {
		return r.fail(r.n+1, start, err)
	}
	a, b, _ := r.pcapHeader(h) // the words only: the record is not in h
	caplen := uint32(b)
	// The header's snaplen is not trusted as a limit: writers put 0 or
	// 65535 there and then write longer frames, and readers accept them.
	if caplen > MaxCaplen {
		return r.fail(r.n+1, start, fmt.Errorf("%w: record of %d bytes (limit %d)", ErrCaplen, caplen, MaxCaplen))
	}
	p.Data = grow(p.Data, int(caplen))
	if err := r.fill(p.Data, start+16, "record", int(caplen), false); err != nil {
		return r.fail(r.n+1, start, err)
	}
	r.setRecord(p, a, b)
	return nil
}

// setRecord sets p's time, length on the wire and link from a pcap record
// header's words, as pcapHeader reads them.
func (r *Reader) setRecord(p *Packet, a, b uint64) {
	frac := int64(a >> 32)
	if !r.nanos {
		frac *= 1000
	}
	p.Time, p.Length = time.Unix(int64(uint32(a)), frac), int(b>>32)
	p.LinkType, p.Interface = r.linkType, 0
}

// pcapHeader reads the record header at the start of w in the file's byte
// order: a holds the seconds (low half) and the fraction, b the captured
// length (low half) and the length on the wire. ok says that the record
// lies whole in w and is no longer than MaxCaplen.
func (r *Reader) pcapHeader(w []byte) (a, b uint64, ok bool) {
	if len(w) < 16 {
		return 0, 0, false
	}
	h := (*[16]byte)(w)
	a, b = binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:])
	if r.big { // each 32-bit half reversed in place
		a, b = bits.RotateLeft64(bits.ReverseBytes64(a), 32), bits.RotateLeft64(bits.ReverseBytes64(b), 32)
	}
	return a, b, uint64(uint32(b)) <= uint64(min(len(w)-16, MaxCaplen))
}

// nextEPBBuffered reads an enhanced packet block that lies whole in the
// window, as NextInto reads a pcap record: in place, its bytes copied once
// into p.Data. It reports false, having consumed nothing and synced the
// window, for any other block (a section or interface block, one to
// skip), one not buffered whole, and one with anything wrong; nextNg then
// reads it or says what is wrong.
func (r *Reader) nextEPBBuffered(p *Packet) bool {
	w := r.win[r.wpos:]
	e, ok := r.epb(w)
	if !ok {
		w = r.refill()
		if e, ok = r.epb(w); !ok {
			r.sync()
			return false
		}
	}
	caplen := int(e.caplen)
	resize(&p.Data, caplen)
	copy(p.Data, w[28:28+caplen])
	r.wpos += int(e.blen)
	p.Offset = r.off
	r.off += int64(e.blen)
	in := &r.ifaces[e.ifc]
	p.Time, p.Length = in.time(uint64(e.tsHigh)<<32|uint64(e.tsLow)), int(e.length)
	p.LinkType, p.Interface = in.linkType, int(e.ifc)
	return true
}

// epbHead is the fixed part of an enhanced packet block, after its type.
type epbHead struct{ blen, ifc, tsHigh, tsLow, caplen, length uint32 }

// epb reads the enhanced packet block at the start of w; ok says that it
// lies whole in w and that readPacketBlock would take it without a word:
// a sound length, the same at both ends, a declared interface and a
// captured length within MaxCaplen and the block.
func (r *Reader) epb(w []byte) (e epbHead, ok bool) {
	if len(w) < 8+epbFixed {
		return e, false
	}
	h := (*[8 + epbFixed]byte)(w)
	le := binary.LittleEndian
	typ := le.Uint32(h[:4])
	e = epbHead{le.Uint32(h[4:8]), le.Uint32(h[8:12]), le.Uint32(h[12:16]), le.Uint32(h[16:20]), le.Uint32(h[20:24]), le.Uint32(h[24:28])}
	if r.big {
		typ = bits.ReverseBytes32(typ)
		e = epbHead{bits.ReverseBytes32(e.blen), bits.ReverseBytes32(e.ifc), bits.ReverseBytes32(e.tsHigh),
			bits.ReverseBytes32(e.tsLow), bits.ReverseBytes32(e.caplen), bits.ReverseBytes32(e.length)}
	}
	if typ != blockEPB || !blockLenOK(e.blen) || e.blen < 12+epbFixed || int(e.blen) > len(w) ||
		e.ifc >= uint32(len(r.ifaces)) || e.caplen > MaxCaplen || e.caplen > e.blen-(12+epbFixed) {
		return e, false
	}
	return e, r.u32(w[e.blen-4:]) == e.blen
}

// u32 reads a number in the byte order of the file or section.
func (r *Reader) u32(b []byte) uint32 {
	v := binary.LittleEndian.Uint32(b)
	if r.big {
		v = bits.ReverseBytes32(v)
	}
	return v
}

// refill discards the records read from the window and peeks all that in
// has buffered as the new window.
func (r *Reader) refill() []byte {
	r.sync()
	if n := r.in.Buffered(); n > 0 {
		r.win, _ = r.in.Peek(n)
	}
	return r.win
}

// sync discards from in the records read from the window, and empties the
// window, so in can be read directly.
func (r *Reader) sync() {
	if r.wpos > 0 {
		_, _ = r.in.Discard(r.wpos) // buffered bytes: it cannot fail
	}
	r.win, r.wpos = nil, 0
}

func (r *Reader) nextNg(p *Packet) error {
	for {
		start, h := r.off, r.scratch[:8]
		if err := r.fill(h, start, "block header", 8, true); err != nil {
			return r.fail(r.n+1, start, err)
		}
		if binary.BigEndian.Uint32(h) == blockSHB {
			if err := r.readSHB(start, r.n+1, 8); err != nil {
				return err
			}
			continue
		}
		typ, blen := r.order.Uint32(h), r.order.Uint32(h[4:])
		err := checkBlockLen(typ, blen)
		switch {
		case err != nil:
		case typ == blockEPB || typ == blockOPB || typ == blockSPB:
			p.Offset = start
			err = r.readPacketBlock(p, start, typ, blen)
			if err == nil {
				return nil
			}
		case typ == blockIDB:
			err = r.readIDB(start, blen)
		default: // statistics, name resolution, custom blocks: not needed
			err = r.skipRest(start, blen, 8)
		}
		if err != nil {
			return r.fail(r.n+1, start, err)
		}
	}
}

// readMeta reads the rest of a block kept in memory, after its first
// `have` bytes, and checks the trailing length. It returns the body between
// the block length and the trailing length.
func (r *Reader) readMeta(start int64, blen uint32, have int) ([]byte, error) {
	if blen > maxMetaBlock {
		return nil, fmt.Errorf("%w: metadata block of %d bytes (limit %d)", ErrBadBlock, blen, maxMetaBlock)
	}
	r.meta = grow(r.meta, int(blen)-have)
	if err := r.fill(r.meta, start, "block", int(blen), false); err != nil {
		return nil, err
	}
	body, trailer := r.meta[:len(r.meta)-4], r.meta[len(r.meta)-4:]
	if got := r.order.Uint32(trailer); got != blen {
		return nil, fmt.Errorf("%w: trailing length %d, leading length %d", ErrBadBlock, got, blen)
	}
	return body, nil
}

// readSHB reads a section header block whose first `have` bytes (4 or 8)
// are in r.scratch; the byte-order magic decides how the section's numbers,
// its length included, read.
func (r *Reader) readSHB(start int64, packet, have int) error {
	h := r.scratch[4:12]
	if err := r.fill(r.scratch[have:12], start, "section header", 28, false); err != nil {
		return r.fail(packet, start, err)
	}
	switch binary.LittleEndian.Uint32(h[4:]) {
	case 0x1a2b3c4d:
		r.order, r.big = binary.LittleEndian, false
	case 0x4d3c2b1a:
		r.order, r.big = binary.BigEndian, true
	default:
		return r.fail(packet, start, fmt.Errorf("%w: section byte-order magic % x", ErrBadMagic, h[4:]))
	}
	blen := r.order.Uint32(h)
	if blen < 28 || blen%4 != 0 {
		return r.fail(packet, start, fmt.Errorf("%w: section header length %d", ErrBadBlock, blen))
	}
	body, err := r.readMeta(start, blen, 12)
	if err != nil {
		return r.fail(packet, start, err)
	}
	if major := r.order.Uint16(body); major != 1 {
		return r.fail(packet, start, fmt.Errorf("%w: pcapng version %d", ErrBadBlock, major))
	}
	r.ifaces = r.ifaces[:0] // interface numbers restart with each section
	return nil
}

func (r *Reader) readIDB(start int64, blen uint32) error {
	body, err := r.readMeta(start, blen, 8)
	if err != nil {
		return err
	}
	if len(body) < 8 || len(r.ifaces) >= maxIfaces {
		return fmt.Errorf("%w: interface description of %d bytes after %d interfaces", ErrBadBlock, blen, len(r.ifaces))
	}
	ifc := ngIface{linkType: layers.LinkType(r.order.Uint16(body)), snaplen: r.order.Uint32(body[4:]), tsresol: 6}
	for opts := body[8:]; len(opts) >= 4; {
		code, l := r.order.Uint16(opts), int(r.order.Uint16(opts[2:]))
		if code == 0 {
			break
		}
		if 4+l > len(opts) {
			return fmt.Errorf("%w: interface option %d overruns its block", ErrBadBlock, code)
		}
		switch v := opts[4 : 4+l]; {
		case code == 9 && l >= 1:
			// Beyond 10^-19 or 2^-63 a unit count no longer fits the arithmetic.
			if v[0]&0x80 == 0 && v[0] > 19 || v[0]&0x7f > 63 {
				return fmt.Errorf("%w: if_tsresol 0x%02x", ErrBadBlock, v[0])
			}
			ifc.tsresol = v[0]
		case code == 14 && l >= 8:
			ifc.tsoffset = int64(r.order.Uint64(v))
		case code == 8 && l >= 8:
			ifc.speed = r.order.Uint64(v)
		}
		opts = opts[min(len(opts), 4+(l+3)&^3):]
	}
	r.ifaces = append(r.ifaces, ifc)
	return nil
}

// skipRest discards a block after its first `have` bytes and checks its
// trailing length, without holding the block in memory.
func (r *Reader) skipRest(start int64, blen uint32, have int) error {
	n, err := r.in.Discard(int(blen) - have - 4)
	r.off += int64(n)
	if err != nil {
		return r.short(err, start, "block", int(blen))
	}
	t := r.scratch[28:32]
	if err := r.fill(t, start, "block", int(blen), false); err != nil {
		return err
	}
	if got := r.order.Uint32(t); got != blen {
		return fmt.Errorf("%w: trailing length %d, leading length %d", ErrBadBlock, got, blen)
	}
	return nil
}

func (r *Reader) readPacketBlock(p *Packet, start int64, typ, blen uint32) error {
	fixed := epbFixed
	if typ == blockSPB {
		fixed = 4
	}
	if int(blen) < 12+fixed {
		return fmt.Errorf("%w: packet block of %d bytes", ErrBadBlock, blen)
	}
	h := r.scratch[8 : 8+fixed]
	if err := r.fill(h, start, "block", int(blen), false); err != nil {
		return err
	}
	o := r.order
	var ifc, caplen, length uint32
	var ts uint64
	switch typ {
	case blockEPB:
		ifc = o.Uint32(h)
	case blockOPB:
		ifc = uint32(o.Uint16(h))
	}
	if typ == blockSPB {
		length = o.Uint32(h)
		caplen = min(length, blen-16)
		if len(r.ifaces) > 0 && r.ifaces[0].snaplen > 0 {
			caplen = min(caplen, r.ifaces[0].snaplen)
		}
	} else {
		ts = uint64(o.Uint32(h[4:]))<<32 | uint64(o.Uint32(h[8:]))
		caplen, length = o.Uint32(h[12:]), o.Uint32(h[16:])
	}
	if int(ifc) >= len(r.ifaces) {
		return fmt.Errorf("%w: packet on undeclared interface %d", ErrBadBlock, ifc)
	}
	if caplen > MaxCaplen {
		return fmt.Errorf("%w: packet of %d bytes (limit %d)", ErrCaplen, caplen, MaxCaplen)
	}
	if caplen > blen-12-uint32(fixed) {
		return fmt.Errorf("%w: %d packet bytes overrun a block of %d", ErrBadBlock, caplen, blen)
	}
	p.Data = grow(p.Data, int(caplen))
	if err := r.fill(p.Data, start, "block", int(blen), false); err != nil {
		return err
	}
	if err := r.skipRest(start, blen, 8+fixed+int(caplen)); err != nil {
		return err
	}
	in := &r.ifaces[ifc]
	stamp := time.Unix(0, 0) // a simple packet block carries no timestamp
	if typ != blockSPB {
		stamp = in.time(ts)
	}
	p.Time, p.Length = stamp, int(length)
	p.LinkType, p.Interface = in.linkType, int(ifc)
	return nil
}

var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
	1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// time converts a timestamp in the interface's units since the epoch.
func (in *ngIface) time(ts uint64) time.Time {
	var sec, nsec uint64
	if e := in.tsresol; e&0x80 == 0 {
		sec, nsec = ts/pow10[e], ts%pow10[e]
		if e <= 9 {
			nsec *= pow10[9-e]
		} else {
			nsec /= pow10[e-9]
		}
	} else {
		e &= 0x7f
		sec, nsec = ts>>e, ts&(1<<e-1)
		// nsec·10^9 / 2^e in 128 bits: the product overflows 64 for e > 34.
		hi, lo := bits.Mul64(nsec, 1e9)
		nsec = hi<<(64-e) | lo>>e
	}
	return time.Unix(int64(sec)+in.tsoffset, int64(nsec))
}
