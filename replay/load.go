package replay

import (
	"errors"
	"fmt"
	"io"
	"net/netip"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// Frame is one captured frame held in memory, with what the analysis of
// the whole capture said about it.
type Frame struct {
	// The frame as captured (Number counts from 1 in the capture); Data
	// is a copy the frame owns.
	capture.Packet

	// Selected says the frame is to be replayed (every frame when no
	// selection was asked for).
	Selected bool
	// Conv is the conversation (index+1 into Capture.Convs; 0 for none) and
	// Dir its direction: 1 for A→B, 2 for B→A.
	Conv uint32
	Dir  uint8
	// IB says the frame carries an IB transport packet; Opcode is its
	// opcode.
	IB     bool
	Opcode layers.Opcode
	// PSNSpace is the QPN that receives the request stream this packet's
	// PSN counts in: the destination QP of a request, the responder's QP
	// for a response. HasPSNSpace is false when it is unknown (a response
	// whose connection was never paired).
	PSNSpace    uint32
	HasPSNSpace bool
	// Retransmission says the analysis saw this request PSN before.
	Retransmission bool
	// ResponseTo is, for a response, the frame number of the request it
	// answers (0 if unknown).
	ResponseTo int

	// Data[PayloadStart:PayloadEnd] is the IB transport packet, BTH
	// through ICRC (empty when the frame has none or is damaged). RoCEv2
	// says it is a RoCEv2 UDP payload; TrafficClass and HopLimit are then
	// its IP header's.
	RoCEv2                   bool
	PayloadStart, PayloadEnd int
	TrafficClass, HopLimit   uint8
}

// Datagram returns the IB transport packet, BTH through ICRC: the UDP
// payload of a RoCEv2 frame.
func (f *Frame) Datagram() []byte { return f.Data[f.PayloadStart:f.PayloadEnd] }

// Capture is a whole capture file in memory, analysed once: replay needs
// the pairing of every connection before the first frame goes out, as
// tcpreplay's --preload-pcap holds the file in memory.
type Capture struct {
	Name     string
	Format   capture.Format
	LinkType layers.LinkType
	Nanos    bool
	Frames   []Frame
	// Convs are the analyser's conversations, in order of appearance;
	// Frame.Conv indexes them from 1.
	Convs []decode.Conversation
	// Decode is how the frames were decoded.
	Decode decode.Options
}

// LoadOptions say how to decode a capture and which frames to select.
type LoadOptions struct {
	Decode decode.Options
	// Select, when set, is the display filter (-Y): it sees every packet
	// after analysis. Frames it rejects are not Selected.
	Select func(*decode.Packet) bool
	// WholeConnections selects every frame of a conversation that has at
	// least one frame Select accepts.
	WholeConnections bool
	// MaxFrames stops reading after that many frames (0: all).
	MaxFrames int
}

// Load reads the capture at path into memory and analyses it.
func Load(path string, opts LoadOptions) (*Capture, error) {
	r, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return Read(r, opts)
}

// Read reads every frame of r into memory and analyses it.
func Read(r *capture.Reader, opts LoadOptions) (*Capture, error) {
	c := &Capture{Name: r.Name(), Format: r.Format(), LinkType: r.LinkType(), Nanos: r.Nanos(), Decode: opts.Decode}
	opts.Decode.SkipCRC = true
	dec := decode.NewDecoder(opts.Decode)
	an := decode.NewAnalyzer(decode.AnalyzerOptions{})
	type raw struct {
		conv uint32
		dir  uint8
	}
	var info []raw
	// Set-up messages (TCP exchanges, CM REQ/REP) and who sent them.
	type oobFrame struct {
		i   int
		src decode.Endpoint
		qpn uint32
	}
	var oob []oobFrame
	for opts.MaxFrames == 0 || len(c.Frames) < opts.MaxFrames {
		pk, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		f := Frame{Packet: pk, Selected: true}
		f.Data = append([]byte(nil), pk.Data...)
		p := dec.Decode(f.Packet)
		an.Analyze(p)
		if opts.Select != nil {
			f.Selected = opts.Select(p)
		}
		if b := p.BTH(); b != nil {
			f.IB, f.Opcode = true, b.Opcode
			info := b.Opcode.Info()
			if info.IsRequest() {
				f.PSNSpace, f.HasPSNSpace = b.DestQP, true
				f.Retransmission = p.Analysis.RetransmittedFrame != 0 || p.Analysis.Has(decode.FindRetransmission)
			}
			f.ResponseTo = int(p.Analysis.RequestFrame)
			locateDatagram(&f, p)
		}
		if p.HasTCP() {
			if q, ok := oobQPN(p.Headers.TCP.Payload); ok {
				oob = append(oob, oobFrame{i: len(c.Frames), src: decode.Endpoint{Addr: srcAddr(p)}, qpn: q})
			}
		}
		if q, ok := cmAnnouncement(p); ok {
			src, _ := p.Endpoints()
			oob = append(oob, oobFrame{i: len(c.Frames), src: src, qpn: q})
		}
		info = append(info, raw{conv: p.Analysis.Conv, dir: p.Analysis.Dir})
		c.Frames = append(c.Frames, f)
	}
	an.Finish()
	c.Convs = an.Conversations()
	// The analyser names a conversation by its id; ids merged into another
	// (aliases) point at the one that absorbed them.
	index := make(map[uint32]uint32)
	for i, cv := range c.Convs {
		index[cv.ID] = uint32(i + 1)
		for _, a := range cv.Aliases {
			index[a] = uint32(i + 1)
		}
	}
	for i := range c.Frames {
		f := &c.Frames[i]
		f.Conv, f.Dir = index[info[i].conv], info[i].dir
		if f.Conv == 0 || !f.IB || !f.Opcode.Info().Response {
			continue
		}
		cv := &c.Convs[f.Conv-1]
		switch f.Dir {
		case 2:
			f.PSNSpace, f.HasPSNSpace = cv.QPNAB, true
		case 1:
			f.PSNSpace, f.HasPSNSpace = cv.QPNBA, cv.HasBA
		}
	}
	// A set-up message announces the sender's QPN and the first PSN of the
	// requests it will send: they go to its peer's QP, which the pairing of
	// the connection names.
	peer := make(map[oobKey]uint32)
	for _, cv := range c.Convs {
		if cv.HasBA {
			peer[oobKey{cv.A, cv.QPNBA}] = cv.QPNAB
			peer[oobKey{cv.B, cv.QPNAB}] = cv.QPNBA
		}
	}
	for _, o := range oob {
		if q, ok := peer[oobKey{o.src, o.qpn}]; ok {
			c.Frames[o.i].PSNSpace, c.Frames[o.i].HasPSNSpace = q, true
		}
	}
	if opts.Select != nil && opts.WholeConnections {
		chosen := make(map[uint32]bool)
		for _, f := range c.Frames {
			if f.Selected && f.Conv != 0 {
				chosen[f.Conv] = true
			}
		}
		for i := range c.Frames {
			if c.Frames[i].Conv != 0 && chosen[c.Frames[i].Conv] {
				c.Frames[i].Selected = true
			}
		}
	}
	return c, nil
}

// Selected returns the number of selected frames.
func (c *Capture) Selected() int {
	n := 0
	for _, f := range c.Frames {
		if f.Selected {
			n++
		}
	}
	return n
}

// Rewrite applies rules to every selected frame, in place.
func (c *Capture) Rewrite(rules *Rules, opts decode.Options) (RewriteStats, error) {
	rw, err := NewRewriter(rules, opts)
	if err != nil {
		return RewriteStats{}, err
	}
	for i := range c.Frames {
		if c.Frames[i].Selected {
			rw.Rewrite(&c.Frames[i])
		}
	}
	return rw.Stats, nil
}

// WriteFile writes the selected frames to a capture file (pcap or pcapng),
// with their captured timestamps.
func (c *Capture) WriteFile(path string, format capture.Format) error {
	w, err := capture.Create(path, format, c.LinkType, c.Nanos)
	if err != nil {
		return err
	}
	s := &FileSender{w: w}
	for i := range c.Frames {
		if c.Frames[i].Selected {
			if _, err := s.Send(c.Frames[i : i+1]); err != nil {
				w.Close()
				return fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	return s.Close()
}

// locateDatagram finds the IB transport packet (BTH through ICRC) of a
// frame, and for RoCEv2 the IP facts that go with it.
func locateDatagram(f *Frame, p *decode.Packet) {
	h := p.Headers
	if p.Err != nil {
		return
	}
	tr := h.BTH.Trailer.Contents
	start, end := offsetIn(f.Data, h.BTH.Contents), offsetIn(f.Data, tr)+len(tr)
	if start < 0 || end > len(f.Data) || end-start < layers.BTHLength+layers.ICRCLength {
		return
	}
	f.PayloadStart, f.PayloadEnd = start, end
	switch p.Encapsulation {
	case layers.EncapRoCEv2IPv4:
		f.RoCEv2, f.TrafficClass, f.HopLimit = true, h.IPv4.TOS, h.IPv4.TTL
	case layers.EncapRoCEv2IPv6:
		f.RoCEv2, f.TrafficClass, f.HopLimit = true, h.IPv6.TrafficClass, h.IPv6.HopLimit
	}
}

// oobKey names a QP by its host's address.
type oobKey struct {
	ep  decode.Endpoint
	qpn uint32
}

// srcAddr returns the source IP address of a frame.
func srcAddr(p *decode.Packet) netip.Addr {
	var a netip.Addr
	switch {
	case p.HasIPv4():
		a, _ = netip.AddrFromSlice(p.Headers.IPv4.SrcIP.To4())
	case p.HasIPv6():
		a, _ = netip.AddrFromSlice(p.Headers.IPv6.SrcIP)
	}
	return a.Unmap()
}
