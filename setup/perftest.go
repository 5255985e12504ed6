package setup

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"strconv"

	"github.com/ibwire/ibwire/layers"
)

// PerftestVersion is the version string a Go peer advertises: perftest
// 6.06 (Debian bookworm's 4.5-0.17). Peers from 6.28 on send a binary
// parameter block, native struct layout included, to any peer whose version
// is 6.28 or later; advertising 6.06 keeps them to the text exchange below
// (ENDPOINT.md §2.2 step 5).
const PerftestVersion = "6.06"

// perftestMinVersion is the oldest peer perftest 6.06 talks to; every
// version-dependent step (buffer sizes from 5.32, 2-byte MTU from 5.31,
// 8-byte iteration counts from 5.33) is therefore always in its modern form.
const perftestMinVersion = 5.70

// PerftestCycleBuffer and PerftestCacheLine are perftest's page-size and
// cache-line defaults, what a side proposes in the buffer-size exchange.
const (
	PerftestCycleBuffer = 4096
	PerftestCacheLine   = 64
)

// PerftestOutReads is the most READs/atomics outstanding perftest's read
// and atomic tests use and grant (-o 128, rxe's max_qp_rd_atom).
const PerftestOutReads = 128

// Sizes of perftest's fixed messages.
const (
	PerftestVersionSize = 16  // NUL-padded ASCII
	PerftestDestSize    = 108 // 107 characters and a NUL
	perftestMTUSize     = 2   // the ibv_mtu enum as one digit and a NUL
	perftestDone        = "done\x00"
)

// PerftestDest is perftest's "pingpong_dest" handshake message with a GID
// (the only form used on RoCE): "lid:out_reads:qpn:psn:rkey:vaddr:g0:…:g15:
// srqn:" with 4, 4, 6, 6, 8 and 16 hex digits, each GID byte as 2, and the
// SRQ number as 8.
type PerftestDest struct {
	LID      uint16
	OutReads uint16 // the sender's outstanding-READ depth (1 unless READ/atomic)
	QPN      uint32 // 24 bits
	PSN      layers.PSN
	RKey     uint32 // the sender's memory region
	VAddr    uint64
	GID      [16]byte
	SRQN     uint32
}

// Marshal returns the 108-byte message exactly as perftest sends it.
func (d PerftestDest) Marshal() []byte {
	b := make([]byte, 0, PerftestDestSize)
	b = fmt.Appendf(b, "%04x:%04x:%06x:%06x:%08x:%016x:", d.LID, d.OutReads, d.QPN&0xFFFFFF, uint32(d.PSN&layers.PSNMask), d.RKey, d.VAddr)
	for _, g := range d.GID {
		b = fmt.Appendf(b, "%02x:", g)
	}
	b = fmt.Appendf(b, "%08x:", d.SRQN)
	return append(b, 0)
}

// String returns the message without its NUL.
func (d PerftestDest) String() string {
	b := d.Marshal()
	return string(b[:len(b)-1])
}

// ParsePerftestDest parses a handshake message as perftest's sscanf with
// the format's widths as maximum field widths: each field may carry leading
// white space and a 0x prefix and be shorter than its width, and must be
// followed by ':'. Every field, the trailing SRQ number included, is
// required.
func ParsePerftestDest(msg []byte) (PerftestDest, error) {
	if i := bytes.IndexByte(msg, 0); i >= 0 {
		msg = msg[:i]
	}
	var d PerftestDest
	rest := msg
	field := func(name string, width int, max uint64) (uint64, error) {
		off := len(msg) - len(rest)
		v, r, ok := scanHex(rest, width)
		if !ok {
			return 0, &SyntaxError{Message: "perftest", Field: name, Offset: off, Reason: fmt.Sprintf("want up to %d hexadecimal digits, have %q", width, clip(rest))}
		}
		if v > max {
			return 0, &SyntaxError{Message: "perftest", Field: name, Offset: off, Reason: fmt.Sprintf("%#x is larger than %#x", v, max)}
		}
		rest = r
		if len(rest) == 0 || rest[0] != ':' {
			return 0, &SyntaxError{Message: "perftest", Field: name, Offset: len(msg) - len(rest), Reason: fmt.Sprintf("want ':' after it, have %q", clip(rest))}
		}
		rest = rest[1:]
		return v, nil
	}
	var v uint64
	var err error
	if v, err = field("lid", 4, 0xFFFF); err != nil {
		return PerftestDest{}, err
	}
	d.LID = uint16(v)
	if v, err = field("out_reads", 4, 0xFFFF); err != nil {
		return PerftestDest{}, err
	}
	d.OutReads = uint16(v)
	if v, err = field("qpn", 6, 0xFFFFFF); err != nil {
		return PerftestDest{}, err
	}
	d.QPN = uint32(v)
	if v, err = field("psn", 6, 0xFFFFFF); err != nil {
		return PerftestDest{}, err
	}
	d.PSN = layers.PSN(v)
	if v, err = field("rkey", 8, math.MaxUint32); err != nil {
		return PerftestDest{}, err
	}
	d.RKey = uint32(v)
	if d.VAddr, err = field("vaddr", 16, math.MaxUint64); err != nil {
		return PerftestDest{}, err
	}
	for i := range d.GID {
		if v, err = field("gid["+strconv.Itoa(i)+"]", 2, 0xFF); err != nil {
			return PerftestDest{}, err
		}
		d.GID[i] = byte(v)
	}
	if v, err = field("srqn", 8, math.MaxUint32); err != nil {
		return PerftestDest{}, err
	}
	d.SRQN = uint32(v)
	return d, nil
}

// PerftestBWReport is what xchg_bw_reports swaps after a bandwidth test:
// message size, iterations, peak and average bandwidth (in the unit the
// test prints, Gb/s by default) and message rate in Mpps. A write/read/
// atomic server sends whatever its report buffer holds (rxe's ib_write_bw
// server sends stack garbage) and prints the client's figures.
type PerftestBWReport struct {
	Size       uint64
	Iterations uint64
	BWPeak     float64
	BWAverage  float64
	MsgRate    float64
}

// PerftestConn runs perftest's TCP ("Ethernet") set-up exchange (ENDPOINT.md
// §2.2) one step at a time, in either role: every step is symmetric, the
// client writing first and the server reading first. The sequence for one
// RC QP, as perftest 6.06 runs it:
//
//	Open: ExchangeVersions, ExchangeBufferSizes, ExchangeMTU
//	Handshake(local) #1                      then both move their QP to RTR/RTS
//	Handshake(local) #2
//	Handshake(local) #3                      write/read/atomic; send_bw: see below
//	  … traffic …
//	Finish: Handshake(local)                 the server waits here for the client's end
//	        ExchangeBWReports(report)        non-duplex write/read/atomic only
//	        Handshake(local)                 closing
//	ExchangeDone()
//
// ib_send_bw does handshake #2 before printing, #3 for the remote print, and
// #4 once the server has posted its receives, right before traffic; after
// the traffic it only closes (one handshake, no reports).
type PerftestConn struct {
	c             msgConn
	server        bool
	remoteVersion string
	binary        bool // perftest -R: struct pingpong_dest in binary
}

// NewPerftestConn wraps an established connection; server says which side
// this is (the one that accepted).
func NewPerftestConn(conn net.Conn, server bool) *PerftestConn {
	return &PerftestConn{c: msgConn{conn: conn, message: "perftest"}, server: server}
}

// RemoteVersion returns the version string the peer sent.
func (p *PerftestConn) RemoteVersion() string { return p.remoteVersion }

// ExchangeVersions swaps 16-byte NUL-padded version strings and rejects a
// peer older than 5.70, as perftest does (it compares with atof).
func (p *PerftestConn) ExchangeVersions(local string) (string, error) {
	var out, in [PerftestVersionSize]byte
	if len(local) >= len(out) {
		return "", fmt.Errorf("perftest set-up: version %q is longer than %d bytes", local, len(out)-1)
	}
	copy(out[:], local)
	if err := p.c.exchange(p.server, "version", out[:], in[:]); err != nil {
		return "", err
	}
	remote := string(in[:])
	if i := bytes.IndexByte(in[:], 0); i >= 0 {
		remote = string(in[:i])
	}
	p.remoteVersion = remote
	if v := perftestAtof(remote); v < perftestMinVersion {
		return remote, fmt.Errorf("perftest set-up: peer version %q is older than %.2f", remote, perftestMinVersion)
	}
	return remote, nil
}

// perftestAtof reads the longest decimal prefix of s as C's atof does (0 when there
// is none).
func perftestAtof(s string) float64 {
	end, dot := 0, false
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.' && !dot) {
		dot = dot || s[end] == '.'
		end++
	}
	v, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		return 0
	}
	return v
}

// ExchangeBufferSizes swaps the cycle buffer size and then the cache line
// size (each a big-endian int32, in two exchanges) and returns the larger
// of each, which both sides then use.
func (p *PerftestConn) ExchangeBufferSizes(cycleBuffer, cacheLine int32) (int32, int32, error) {
	cb, err := p.exchangeInt32("cycle buffer size", cycleBuffer)
	if err != nil {
		return 0, 0, err
	}
	cl, err := p.exchangeInt32("cache line size", cacheLine)
	if err != nil {
		return 0, 0, err
	}
	return max(cb, cycleBuffer), max(cl, cacheLine), nil
}

func (p *PerftestConn) exchangeInt32(step string, v int32) (int32, error) {
	var out, in [4]byte
	binary.BigEndian.PutUint32(out[:], uint32(v))
	if err := p.c.exchange(p.server, step, out[:], in[:]); err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(in[:])), nil
}

// ExchangeMTU swaps the active MTU as verbs' enum ibv_mtu (1 = 256 … 5 =
// 4096, the IBTA codes of layers.PathMTU), sent as one decimal digit and a
// NUL, and returns the smaller one.
func (p *PerftestConn) ExchangeMTU(mtu layers.PathMTU) (layers.PathMTU, error) {
	if mtu < layers.MTU256 || mtu > layers.MTU4096 {
		return 0, fmt.Errorf("perftest set-up: MTU enum %d is not 1 (256) … 5 (4096)", mtu)
	}
	out := [perftestMTUSize]byte{byte('0' + mtu), 0}
	var in [perftestMTUSize]byte
	if err := p.c.exchange(p.server, "MTU", out[:], in[:]); err != nil {
		return 0, err
	}
	if in[0] < '1' || in[0] > '5' || in[1] != 0 {
		return 0, &SyntaxError{Message: "perftest", Field: "MTU", Offset: 0, Reason: fmt.Sprintf("want a digit 1-5 and a NUL, have %q", in[:])}
	}
	return min(mtu, layers.PathMTU(in[0]-'0')), nil
}

// PerftestParams is what one side brings to the opening of a perftest
// session.
type PerftestParams struct {
	CycleBuffer int32          // this side's cycle buffer size
	CacheLine   int32          // this side's cache line size
	MaxCycle    int32          // the largest cycle buffer this side can allocate; 0: no limit
	MTU         layers.PathMTU // this side's active MTU
}

// PerftestOpening is what the opening steps of a perftest session settle.
type PerftestOpening struct {
	Version     string         // the peer's
	CycleBuffer int32          // the larger of the two sides'
	CacheLine   int32          // the larger of the two sides'
	MTU         layers.PathMTU // the smaller of the two active MTUs
}

// Open runs a session's opening steps: versions (this side PerftestVersion),
// then Negotiate.
func (p *PerftestConn) Open(local PerftestParams) (PerftestOpening, error) {
	v, err := p.ExchangeVersions(PerftestVersion)
	if err != nil {
		return PerftestOpening{Version: v}, err
	}
	o, err := p.Negotiate(local)
	o.Version = v
	return o, err
}

// Negotiate runs the opening steps after the versions: buffer sizes, which
// it refuses, before the next step, when the peer's cycle buffer exceeds
// local.MaxCycle, and active MTU. It is Open for a side that exchanged
// versions itself (to tell a silent peer from a perftest one, say).
func (p *PerftestConn) Negotiate(local PerftestParams) (PerftestOpening, error) {
	var o PerftestOpening
	var err error
	if o.CycleBuffer, o.CacheLine, err = p.ExchangeBufferSizes(local.CycleBuffer, local.CacheLine); err != nil {
		return o, err
	}
	if local.MaxCycle > 0 && o.CycleBuffer > local.MaxCycle {
		return o, fmt.Errorf("perftest set-up: the peer's cycle buffer of %d bytes is more than the %d this side allocates", o.CycleBuffer, local.MaxCycle)
	}
	o.MTU, err = p.ExchangeMTU(local.MTU)
	return o, err
}

// Finish runs the steps of a bandwidth test after its traffic: the
// handshake at which the server waits for the client's end, the reports
// (this side's report out, the peer's back), then between (a function of
// the peer's report: printing it, checking the QP before the peer may tear
// it down; nil for nothing) and the closing handshake. The TCP exchange
// then ends with ExchangeDone; perftest -R ends with its RDMA CM
// disconnects instead.
func (p *PerftestConn) Finish(local PerftestDest, report PerftestBWReport, between func(theirs PerftestBWReport) error) error {
	return p.FinishChecked(local, report, nil, between)
}

// FinishChecked is Finish with check applied to the peer's message of the
// first handshake, as HandshakeChecked applies it: a server refuses there,
// before it answers, a client that did not run the traffic it expects.
func (p *PerftestConn) FinishChecked(local PerftestDest, report PerftestBWReport, check func(PerftestDest) error, between func(theirs PerftestBWReport) error) error {
	if _, err := p.HandshakeChecked(local, check); err != nil {
		return err
	}
	theirs, err := p.ExchangeBWReports(report)
	if err != nil {
		return err
	}
	if between != nil {
		if err := between(theirs); err != nil {
			return err
		}
	}
	_, err = p.Handshake(local)
	return err
}

// Handshake swaps 108-byte PerftestDest messages.
func (p *PerftestConn) Handshake(local PerftestDest) (PerftestDest, error) {
	return p.HandshakeChecked(local, nil)
}

// HandshakeChecked is Handshake with check (nil: none) applied to the
// peer's message. The server reads first, so it checks before it answers:
// when check fails it returns check's error without sending local, and the
// peer, waiting for the answer, sees the connection close instead. The
// client sends first and checks what comes back.
func (p *PerftestConn) HandshakeChecked(local PerftestDest, check func(PerftestDest) error) (PerftestDest, error) {
	out, in := local.Marshal(), make([]byte, PerftestDestSize)
	parse := ParsePerftestDest
	if p.binary {
		out, in, parse = local.MarshalBinary(), make([]byte, PerftestDestBinarySize), ParsePerftestDestBinary
	}
	if !p.server {
		if err := p.c.write("handshake", out); err != nil {
			return PerftestDest{}, err
		}
	}
	if err := p.c.read("handshake", in); err != nil {
		return PerftestDest{}, err
	}
	remote, err := parse(in)
	if err != nil {
		return PerftestDest{}, err
	}
	if check != nil {
		if err := check(remote); err != nil {
			return remote, err
		}
	}
	if p.server {
		if err := p.c.write("handshake", out); err != nil {
			return PerftestDest{}, err
		}
	}
	return remote, nil
}

// ExchangeBWReports swaps the five report values, each in its own 8-byte
// exchange: size and iterations as big-endian uint64, the rest as IEEE-754
// doubles in big-endian byte order.
func (p *PerftestConn) ExchangeBWReports(local PerftestBWReport) (PerftestBWReport, error) {
	out := [5]uint64{local.Size, local.Iterations, math.Float64bits(local.BWPeak), math.Float64bits(local.BWAverage), math.Float64bits(local.MsgRate)}
	steps := [5]string{"report size", "report iterations", "report peak bandwidth", "report average bandwidth", "report message rate"}
	var in [5]uint64
	for i := range out {
		var o, r [8]byte
		binary.BigEndian.PutUint64(o[:], out[i])
		if err := p.c.exchange(p.server, steps[i], o[:], r[:]); err != nil {
			return PerftestBWReport{}, err
		}
		in[i] = binary.BigEndian.Uint64(r[:])
	}
	return PerftestBWReport{
		Size:       in[0],
		Iterations: in[1],
		BWPeak:     math.Float64frombits(in[2]),
		BWAverage:  math.Float64frombits(in[3]),
		MsgRate:    math.Float64frombits(in[4]),
	}, nil
}

// ExchangeDone swaps the final "done" and NUL; perftest does not check
// what the peer sent, and neither does this.
func (p *PerftestConn) ExchangeDone() error {
	var in [len(perftestDone)]byte
	return p.c.exchange(p.server, "done", []byte(perftestDone), in[:])
}

// PerftestDestBinarySize is the size of perftest's struct pingpong_dest as
// perftest -R sends it over its rdma_cm set-up connection.
const PerftestDestBinarySize = 56

// NewPerftestConnRDMACM is NewPerftestConn for perftest -R (--rdma_cm):
// the exchange runs over conn (a MsgConn on an rdma_cm connection) and
// the QP messages are struct pingpong_dest in binary.
func NewPerftestConnRDMACM(conn net.Conn, server bool) *PerftestConn {
	p := NewPerftestConn(conn, server)
	p.binary = true
	return p
}

// MarshalBinary writes d as perftest -R does: struct pingpong_dest with
// every integer big endian (x86-64 layout, 56 bytes):
//
//	 0 lid (4)  4 out_reads (4)  8 qpn (4)  12 psn (4)  16 rkey (4)
//	20 padding (4)  24 vaddr (8)  32 gid (16)  48 srqn (4)  52 gid_index (4)
//
// gid_index is written as 1, the IPv4 RoCEv2 GID of rxe.
func (d PerftestDest) MarshalBinary() []byte {
	b := make([]byte, PerftestDestBinarySize)
	be := binary.BigEndian
	be.PutUint32(b[0:], uint32(d.LID))
	be.PutUint32(b[4:], uint32(d.OutReads))
	be.PutUint32(b[8:], d.QPN&0xFFFFFF)
	be.PutUint32(b[12:], uint32(d.PSN&layers.PSNMask))
	be.PutUint32(b[16:], d.RKey)
	be.PutUint64(b[24:], d.VAddr)
	copy(b[32:48], d.GID[:])
	be.PutUint32(b[48:], d.SRQN)
	be.PutUint32(b[52:], 1)
	return b
}

// ParsePerftestDestBinary reads a struct pingpong_dest of perftest -R.
func ParsePerftestDestBinary(b []byte) (PerftestDest, error) {
	if len(b) < PerftestDestBinarySize {
		return PerftestDest{}, &SyntaxError{Message: "perftest", Field: "pingpong_dest", Offset: len(b),
			Reason: fmt.Sprintf("%d bytes, want %d", len(b), PerftestDestBinarySize)}
	}
	be := binary.BigEndian
	d := PerftestDest{LID: uint16(be.Uint32(b[0:])), OutReads: uint16(be.Uint32(b[4:])), QPN: be.Uint32(b[8:]) & 0xFFFFFF,
		PSN: layers.PSN(be.Uint32(b[12:])) & layers.PSNMask, RKey: be.Uint32(b[16:]), VAddr: be.Uint64(b[24:]), SRQN: be.Uint32(b[48:])}
	copy(d.GID[:], b[32:48])
	return d, nil
}

// ExchangeEmptyDest is the exchange of an all-zero struct pingpong_dest
// that perftest -R does before and after it connects the data QP.
func (p *PerftestConn) ExchangeEmptyDest() error {
	var out, in [PerftestDestBinarySize]byte
	return p.c.exchange(p.server, "rdma_cm handshake", out[:], in[:])
}
