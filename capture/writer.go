package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/ibwire/ibwire/layers"
	"io"
	"os"
)

// Writer writes packets to a pcap or pcapng stream. It buffers: call Flush
// (or Close) before the data is needed, and on Ctrl-C.
type Writer struct {
	w        *bufio.Writer
	file     io.Closer // the file Create opened; nil otherwise
	format   Format
	linkType layers.LinkType
	nanos    bool
	ifaces   []layers.LinkType // pcapng interfaces, in the order written
	// named: the interfaces were given up front (NewWriterInterfaces) and
	// a packet goes to the one its Interface says.
	named  bool
	hdr    [32]byte
	closed bool
}

// NewWriter starts a capture stream on w and writes its header at once, so
// even a capture without packets is a valid file. A pcap file holds only
// linkType, stored as the full 32 bits; a pcapng stream starts with an
// interface of linkType and gains one for each new link type it meets.
// With nanos, timestamps keep nanoseconds (pcap magic a1b23c4d, pcapng
// if_tsresol 9); otherwise microseconds.
func NewWriter(w io.Writer, format Format, linkType layers.LinkType, nanos bool) (*Writer, error) {
	if format != FormatPcap && format != FormatPcapNG {
		return nil, fmt.Errorf("capture: cannot write format %v", format)
	}
	wr := &Writer{w: bufio.NewWriterSize(w, 64<<10), format: format, linkType: linkType, nanos: nanos}
	if format == FormatPcap {
		h := wr.hdr[:pcapFileHeaderLen]
		magic := uint32(0xa1b2c3d4)
		if nanos {
			magic = 0xa1b23c4d
		}
		le := binary.LittleEndian
		le.PutUint32(h, magic)
		le.PutUint16(h[4:], 2) // version 2.4, as every libpcap writes
		le.PutUint16(h[6:], 4)
		le.PutUint64(h[8:], 0) // thiszone, sigfigs
		le.PutUint32(h[16:], MaxCaplen)
		le.PutUint32(h[20:], uint32(linkType))
		_, err := wr.w.Write(h)
		return wr, err
	}
	if err := wr.sectionHeader(); err != nil {
		return nil, err
	}
	if _, err := wr.iface(linkType); err != nil {
		return nil, err
	}
	return wr, nil
}

// sectionHeader writes a pcapng section header block: byte-order magic,
// version 1.0, section length unknown (-1) because the stream is not
// seekable.
func (w *Writer) sectionHeader() error {
	h := w.hdr[:28]
	le := binary.LittleEndian
	le.PutUint32(h, blockSHB)
	le.PutUint32(h[4:], 28)
	le.PutUint32(h[8:], 0x1a2b3c4d)
	le.PutUint32(h[12:], 1)
	le.PutUint64(h[16:], ^uint64(0))
	le.PutUint32(h[24:], 28)
	_, err := w.w.Write(h)
	return err
}

// Create creates (or truncates) the file path and starts a capture on it
// as NewWriter does; "-" means standard output. Close closes the file.
func Create(path string, format Format, linkType layers.LinkType, nanos bool) (*Writer, error) {
	if path == "-" {
		return NewWriter(os.Stdout, format, linkType, nanos)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	w, err := NewWriter(f, format, linkType, nanos)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.file = f
	return w, nil
}

// iface returns the pcapng interface of link type lt, writing its
// interface description block the first time.
func (w *Writer) iface(lt layers.LinkType) (int, error) {
	for i, have := range w.ifaces {
		if have == lt {
			return i, nil
		}
	}
	return w.addInterface("", lt)
}

// addInterface writes an interface description block: link type, snapshot
// length, the if_name option when name is set, if_tsresol for nanoseconds.
func (w *Writer) addInterface(name string, lt layers.LinkType) (int, error) {
	if lt > 0xffff { // the block's link type field is 16 bits wide
		return 0, fmt.Errorf("capture: %w: %v in pcapng", ErrLinkType, lt)
	}
	le := binary.LittleEndian
	b := make([]byte, 16, 64)
	le.PutUint32(b, blockIDB)
	le.PutUint16(b[8:], uint16(lt))
	le.PutUint32(b[12:], MaxCaplen)
	option := func(code uint16, value []byte) {
		b = le.AppendUint16(b, code)
		b = le.AppendUint16(b, uint16(len(value)))
		b = append(b, value...)
		b = append(b, make([]byte, -len(value)&3)...)
	}
	if name != "" {
		option(2, []byte(name)) // if_name
	}
	if w.nanos {
		option(9, []byte{9}) // if_tsresol: 10^-9 s
	}
	if len(b) > 16 {
		b = append(b, 0, 0, 0, 0) // opt_endofopt
	}
	b = le.AppendUint32(b, uint32(len(b)+4))
	le.PutUint32(b[4:], uint32(len(b)))
	if _, err := w.w.Write(b); err != nil {
		return 0, err
	}
	w.ifaces = append(w.ifaces, lt)
	return len(w.ifaces) - 1, nil
}

// NamedInterface is one interface of a pcapng stream NewWriterInterfaces
// starts: its if_name and link type.
type NamedInterface struct {
	Name     string
	LinkType layers.LinkType
}

// NewWriterInterfaces starts a pcapng stream on w with the interfaces
// given, in order (as mergecap writes one per input); WritePacket then
// writes each packet on the interface its Interface field numbers, which
// must have the packet's link type.
func NewWriterInterfaces(w io.Writer, ifaces []NamedInterface, nanos bool) (*Writer, error) {
	if len(ifaces) == 0 {
		return nil, errors.New("capture: a pcapng stream needs an interface")
	}
	wr := &Writer{w: bufio.NewWriterSize(w, 64<<10), format: FormatPcapNG, linkType: ifaces[0].LinkType, nanos: nanos, named: true}
	if err := wr.sectionHeader(); err != nil {
		return nil, err
	}
	for _, ifc := range ifaces {
		if _, err := wr.addInterface(ifc.Name, ifc.LinkType); err != nil {
			return nil, err
		}
	}
	return wr, nil
}

// CreateInterfaces creates (or truncates) the file path and starts a
// pcapng stream on it as NewWriterInterfaces does; "-" means standard
// output.
func CreateInterfaces(path string, ifaces []NamedInterface, nanos bool) (*Writer, error) {
	if path == "-" {
		return NewWriterInterfaces(os.Stdout, ifaces, nanos)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	w, err := NewWriterInterfaces(f, ifaces, nanos)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.file = f
	return w, nil
}

// WritePacket appends p. The captured length is len(p.Data); the original
// length is p.Length, or len(p.Data) if that is smaller. p.LinkType
// must be the file's link type for pcap.
func (w *Writer) WritePacket(p Packet) error {
	if w.closed {
		return errors.New("capture: write to closed writer")
	}
	if len(p.Data) > MaxCaplen {
		return fmt.Errorf("capture: %w: packet of %d bytes (limit %d)", ErrCaplen, len(p.Data), MaxCaplen)
	}
	caplen, length := uint32(len(p.Data)), uint32(max(p.Length, len(p.Data)))
	ns := p.Time.UnixNano()
	le := binary.LittleEndian
	if w.format == FormatPcap {
		if p.LinkType != w.linkType {
			return fmt.Errorf("capture: %w: %v packet in a %v pcap file", ErrLinkType, p.LinkType, w.linkType)
		}
		sec, frac := p.Time.Unix(), p.Time.Nanosecond()
		if !w.nanos {
			frac /= 1000
		}
		h := w.hdr[:16]
		le.PutUint32(h, uint32(sec))
		le.PutUint32(h[4:], uint32(frac))
		le.PutUint32(h[8:], caplen)
		le.PutUint32(h[12:], length)
		if _, err := w.w.Write(h); err != nil {
			return err
		}
		_, err := w.w.Write(p.Data)
		return err
	}
	ifc := p.Interface
	if !w.named {
		var err error
		if ifc, err = w.iface(p.LinkType); err != nil {
			return err
		}
	} else if ifc < 0 || ifc >= len(w.ifaces) || w.ifaces[ifc] != p.LinkType {
		return fmt.Errorf("capture: %w: %v packet on interface %d of %d", ErrLinkType, p.LinkType, ifc, len(w.ifaces))
	}
	units := uint64(ns)
	if !w.nanos {
		units = uint64(ns / 1000)
	}
	pad := -len(p.Data) & 3
	blen := uint32(32 + len(p.Data) + pad)
	h := w.hdr[:28]
	le.PutUint32(h, blockEPB)
	le.PutUint32(h[4:], blen)
	le.PutUint32(h[8:], uint32(ifc))
	le.PutUint32(h[12:], uint32(units>>32))
	le.PutUint32(h[16:], uint32(units))
	le.PutUint32(h[20:], caplen)
	le.PutUint32(h[24:], length)
	if _, err := w.w.Write(h); err != nil {
		return err
	}
	if _, err := w.w.Write(p.Data); err != nil {
		return err
	}
	t := w.hdr[28:32]
	le.PutUint32(t, blen)
	var zero [3]byte
	if _, err := w.w.Write(zero[:pad]); err != nil {
		return err
	}
	_, err := w.w.Write(t)
	return err
}

// Flush writes buffered data to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

// Close flushes and, for a Writer from Create, closes the file. It does
// not close a writer passed to NewWriter.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.w.Flush()
	if w.file != nil {
		if cerr := w.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
