package layers

import (
	"encoding/binary"
	"strconv"
)

// RPC over RDMA version 1 (RFC 8166), the transport of NFS over RDMA. Each
// RPC message travels in one RC SEND that opens with the transport header
// below; the RPC call or reply (RFC 5531) follows it in the same SEND
// (RDMA_MSG), or travels entirely in a chunk (RDMA_NOMSG: the requester
// READs a call from a read chunk at position 0, the responder WRITEs a
// large reply into the reply chunk). Bulk data (an NFS WRITE's or READ's
// payload) moves in chunks: the responder READs a read chunk's segments
// from the requester, and WRITEs a reply's bulk data into a write chunk's
// segments. Every item is an XDR unsigned 32-bit word, big-endian; lists
// are XDR optional-data: a word 1 before each item, 0 after the last.
//
// Transport header (RFC 8166 §4.2):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+---------------------------------------------------------------+
//	| rdma_xid (the RPC message's XID)                              |  0
//	+---------------------------------------------------------------+
//	| rdma_vers (1)                                                 |  4
//	+---------------------------------------------------------------+
//	| rdma_credit (credits requested or granted)                    |  8
//	+---------------------------------------------------------------+
//	| rdma_proc: RDMA_MSG 0, RDMA_NOMSG 1, RDMA_ERROR 4             | 12
//	+---------------------------------------------------------------+
//	| read list:  { 1, position, handle, length, offset(64) } ... 0 | 16
//	| write list: { 1, count, { handle, length, offset(64) }... }.. 0
//	| reply chunk: 0, or 1, count, { handle, length, offset(64) }...
//	+---------------------------------------------------------------+
//	| the RPC message (RDMA_MSG)                                    |
//
// RDMA_ERROR carries, instead of the lists, an error code (ERR_VERS 1,
// with the lowest and highest versions the sender supports; ERR_CHUNK 2).
// RFC 5666's RDMA_MSGP (2) has two more words (align, threshold) before
// the lists; RDMA_DONE (3) has nothing more. Both are obsolete in RFC 8166.

// RPCRDMAPort is the IANA port of NFS over RDMA: the RDMA CM service ID
// of an RPC-over-RDMA connection is the IP-CM one for it (RFC 8267 §5).
const RPCRDMAPort = 20049

// RPCRDMAProc is the transport header's rdma_proc.
type RPCRDMAProc uint32

// RPC-over-RDMA procedures (RFC 8166 §4.2.4; MSGP and DONE from RFC 5666).
const (
	RPCRDMAMsg   RPCRDMAProc = 0
	RPCRDMANoMsg RPCRDMAProc = 1
	RPCRDMAMsgP  RPCRDMAProc = 2
	RPCRDMADone  RPCRDMAProc = 3
	RPCRDMAError RPCRDMAProc = 4
)

var rpcrdmaProcNames = [...]string{"RDMA_MSG", "RDMA_NOMSG", "RDMA_MSGP", "RDMA_DONE", "RDMA_ERROR"}

// Known reports a procedure RFC 8166 or RFC 5666 defines.
func (p RPCRDMAProc) Known() bool { return int(p) < len(rpcrdmaProcNames) }

func (p RPCRDMAProc) String() string { return enumName(rpcrdmaProcNames[:], uint(p), "Unknown") }

// Short is the procedure as the default line says it: "MSG", "NOMSG",
// "ERROR".
func (p RPCRDMAProc) Short() string {
	if p.Known() {
		return rpcrdmaProcNames[p][5:]
	}
	return p.String()
}

// RPCRDMAErrCode is an RDMA_ERROR's error code.
type RPCRDMAErrCode uint32

// RDMA_ERROR codes (RFC 8166 §4.2.4).
const (
	RPCRDMAErrVers  RPCRDMAErrCode = 1
	RPCRDMAErrChunk RPCRDMAErrCode = 2
)

func (e RPCRDMAErrCode) String() string {
	return enumName([]string{RPCRDMAErrVers: "ERR_VERS", RPCRDMAErrChunk: "ERR_CHUNK"}, uint(e), "Unknown")
}

// RPCRDMASegment is one RDMA segment of a chunk: the requester's memory
// the responder READs or WRITEs (handle is the R_Key, offset the VA).
type RPCRDMASegment struct {
	Handle uint32
	Length uint32
	Offset uint64
	// Position is a read segment's place in the RPC message's XDR stream
	// (0 for write and reply chunks).
	Position uint32
	// Chunk numbers the segment's write chunk in the write list (0 the
	// first); 0 for read and reply segments.
	Chunk uint8
}

// RPCRDMAHeader is an RPC-over-RDMA v1 transport header.
type RPCRDMAHeader struct {
	XID, Version, Credits uint32
	Proc                  RPCRDMAProc
	// Reads are the read list's segments; Writes the write list's, of
	// WriteChunks chunks; Reply the reply chunk's, when HasReply.
	Reads       []RPCRDMASegment
	Writes      []RPCRDMASegment
	WriteChunks int
	Reply       []RPCRDMASegment
	HasReply    bool
	// Align and Threshold are RDMA_MSGP's.
	Align, Threshold uint32
	// ErrCode, VersLow and VersHigh are RDMA_ERROR's.
	ErrCode           RPCRDMAErrCode
	VersLow, VersHigh uint32
	// Length is the header's length; Body what follows it (the RPC
	// message of an RDMA_MSG).
	Length int
	Body   []byte
}

// RPCRDMAMinLength is the shortest transport header: the four fixed words.
const RPCRDMAMinLength = 16

// rpcrdmaMaxSegments bounds the segments a header may list: more is not a
// header a Linux or any other implementation sends (Linux caps a chunk
// list at its inline threshold), so it is an impossible one.
const rpcrdmaMaxSegments = 256

// xdrReader reads XDR words from a slice and remembers the first problem.
type xdrReader struct {
	b     []byte
	off   int
	field string // the field being read when the data ran out
	short bool
}

func (r *xdrReader) u32(field string) uint32 {
	if r.short {
		return 0
	}
	if len(r.b)-r.off < 4 {
		r.short, r.field = true, field
		return 0
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *xdrReader) u64(field string) uint64 {
	hi := uint64(r.u32(field))
	return hi<<32 | uint64(r.u32(field))
}

// opaque skips a variable-length opaque of at most max bytes and returns it.
func (r *xdrReader) opaque(field string, max uint32) ([]byte, bool) {
	n := r.u32(field)
	if r.short {
		return nil, false
	}
	if n > max {
		return nil, false
	}
	padded := int(n+3) &^ 3
	if len(r.b)-r.off < padded {
		r.short, r.field = true, field
		return nil, false
	}
	v := r.b[r.off : r.off+int(n)]
	r.off += padded
	return v, true
}

func (r *xdrReader) err(layer string) error {
	return &DecodeError{Layer: layer, Field: r.field, Offset: r.off, Need: 4, Have: len(r.b) - r.off, Err: ErrTruncated}
}

// rpcrdmaSegmentFields name a list's segment fields, for errors.
var rpcrdmaSegmentFields = map[string][3]string{
	"read list":   {"read list.rdma_handle", "read list.rdma_length", "read list.rdma_offset"},
	"write list":  {"write list.rdma_handle", "write list.rdma_length", "write list.rdma_offset"},
	"reply chunk": {"reply chunk.rdma_handle", "reply chunk.rdma_length", "reply chunk.rdma_offset"},
}

func (h *RPCRDMAHeader) segment(r *xdrReader, names *[3]string) RPCRDMASegment {
	var s RPCRDMASegment
	s.Handle = r.u32(names[0])
	s.Length = r.u32(names[1])
	s.Offset = r.u64(names[2])
	return s
}

func (r *xdrReader) malformed(layer, field, detail string) error {
	return &DecodeError{Layer: layer, Field: field, Offset: r.off, Err: ErrMalformed, Detail: detail}
}

// DecodeFromBytes decodes a transport header from a SEND's payload (an
// RC SEND carries one whole: RPC-over-RDMA never splits a message over
// packets beyond its inline threshold, and Linux's is 4 KiB). Its slices
// are reused from call to call; Body points into data.
func (h *RPCRDMAHeader) DecodeFromBytes(data []byte) error {
	h.Reads, h.Writes, h.Reply = h.Reads[:0], h.Writes[:0], h.Reply[:0]
	h.WriteChunks, h.HasReply = 0, false
	h.Align, h.Threshold, h.ErrCode, h.VersLow, h.VersHigh = 0, 0, 0, 0, 0
	h.Body = nil
	r := xdrReader{b: data}
	h.XID = r.u32("rdma_xid")
	h.Version = r.u32("rdma_vers")
	h.Credits = r.u32("rdma_credit")
	h.Proc = RPCRDMAProc(r.u32("rdma_proc"))
	if r.short {
		return r.err("RPCoRDMA")
	}
	malformed := func(field, detail string) error { return r.malformed("RPCoRDMA", field, detail) }
	if h.Version != 1 {
		return malformed("rdma_vers", "version "+strconv.FormatUint(uint64(h.Version), 10)+", not 1")
	}
	switch h.Proc {
	case RPCRDMAError:
		h.ErrCode = RPCRDMAErrCode(r.u32("rdma_err"))
		if h.ErrCode == RPCRDMAErrVers {
			h.VersLow, h.VersHigh = r.u32("rdma_vers_low"), r.u32("rdma_vers_high")
		}
		if r.short {
			return r.err("RPCoRDMA")
		}
		h.Length = r.off
		return nil
	case RPCRDMADone:
		h.Length = r.off
		return nil
	case RPCRDMAMsgP:
		h.Align, h.Threshold = r.u32("rdma_align"), r.u32("rdma_thresh")
	case RPCRDMAMsg, RPCRDMANoMsg:
	default:
		return malformed("rdma_proc", "procedure "+h.Proc.String())
	}
	n := 0
	readNames, writeNames, replyNames := rpcrdmaSegmentFields["read list"], rpcrdmaSegmentFields["write list"], rpcrdmaSegmentFields["reply chunk"]
	// more reads a list's "another item follows" boolean: 1 or 0, anything
	// else is no XDR boolean and the header malformed.
	var bad error
	more := func(field string) bool {
		v := r.u32(field)
		if v > 1 && !r.short {
			bad = malformed(field, "list marker "+strconv.FormatUint(uint64(v), 10)+": an XDR boolean is 0 or 1")
		}
		return v == 1
	}
	for more("read list") {
		if n++; n > rpcrdmaMaxSegments {
			return malformed("read list", "more than 256 segments")
		}
		pos := r.u32("read list.position")
		s := h.segment(&r, &readNames)
		s.Position = pos
		h.Reads = append(h.Reads, s)
	}
	for bad == nil && !r.short && more("write list") {
		count := r.u32("write list.segment_count")
		if n += int(count); n > rpcrdmaMaxSegments || h.WriteChunks == 255 {
			return malformed("write list.segment_count", "more than 256 segments")
		}
		for range count {
			s := h.segment(&r, &writeNames)
			s.Chunk = uint8(h.WriteChunks)
			h.Writes = append(h.Writes, s)
		}
		h.WriteChunks++
	}
	if bad == nil && !r.short && more("reply chunk") {
		count := r.u32("reply chunk.segment_count")
		if n += int(count); n > rpcrdmaMaxSegments {
			return malformed("reply chunk.segment_count", "more than 256 segments")
		}
		h.HasReply = true
		for range count {
			h.Reply = append(h.Reply, h.segment(&r, &replyNames))
		}
	}
	if bad != nil {
		return bad
	}
	if r.short {
		return r.err("RPCoRDMA")
	}
	h.Length = r.off
	h.Body = data[r.off:]
	return nil
}

// RPCRDMAPlausible reports whether a SEND's payload looks like an
// RPC-over-RDMA v1 message, for finding the protocol on a connection whose
// set-up is not in the capture: version 1, a credit value a transport
// uses (1 to 4096: Linux asks for 128 and grants up to its max_requests),
// a known procedure, lists that decode and end where the payload can hold
// them, and for an RDMA_MSG an RPC message with the same XID. Wrong
// guesses cost more than missed ones, so every test must pass.
func RPCRDMAPlausible(data []byte, h *RPCRDMAHeader, m *RPCMsg) bool {
	if len(data) < RPCRDMAMinLength || binary.BigEndian.Uint32(data[4:]) != 1 {
		return false
	}
	if c := binary.BigEndian.Uint32(data[8:]); c == 0 || c > 4096 {
		return false
	}
	if h.DecodeFromBytes(data) != nil {
		return false
	}
	switch h.Proc {
	case RPCRDMAMsg:
		return m.DecodeFromBytes(h.Body) == nil && m.XID == h.XID && (m.Type == RPCReply || m.RPCVersion == 2)
	case RPCRDMANoMsg:
		return len(h.Body) == 0 && (len(h.Reads) > 0 || h.HasReply)
	}
	return false
}

// AppendTo appends the transport header (the lists from Reads, Writes
// grouped by their Chunk, and Reply when HasReply), then Body: what
// DecodeFromBytes reads back.
func (h *RPCRDMAHeader) AppendTo(b []byte) []byte {
	be := binary.BigEndian
	b = be.AppendUint32(b, h.XID)
	b = be.AppendUint32(b, h.Version)
	b = be.AppendUint32(b, h.Credits)
	b = be.AppendUint32(b, uint32(h.Proc))
	seg := func(b []byte, s *RPCRDMASegment) []byte {
		b = be.AppendUint32(b, s.Handle)
		b = be.AppendUint32(b, s.Length)
		return be.AppendUint64(b, s.Offset)
	}
	switch h.Proc {
	case RPCRDMAError:
		b = be.AppendUint32(b, uint32(h.ErrCode))
		if h.ErrCode == RPCRDMAErrVers {
			b = be.AppendUint32(b, h.VersLow)
			b = be.AppendUint32(b, h.VersHigh)
		}
		return b
	case RPCRDMADone:
		return b
	case RPCRDMAMsgP:
		b = be.AppendUint32(b, h.Align)
		b = be.AppendUint32(b, h.Threshold)
	}
	for i := range h.Reads {
		b = be.AppendUint32(b, 1)
		b = be.AppendUint32(b, h.Reads[i].Position)
		b = seg(b, &h.Reads[i])
	}
	b = be.AppendUint32(b, 0)
	for i := 0; i < len(h.Writes); {
		j := i
		for j < len(h.Writes) && h.Writes[j].Chunk == h.Writes[i].Chunk {
			j++
		}
		b = be.AppendUint32(b, 1)
		b = be.AppendUint32(b, uint32(j-i))
		for ; i < j; i++ {
			b = seg(b, &h.Writes[i])
		}
	}
	b = be.AppendUint32(b, 0)
	if h.HasReply {
		b = be.AppendUint32(b, 1)
		b = be.AppendUint32(b, uint32(len(h.Reply)))
		for i := range h.Reply {
			b = seg(b, &h.Reply[i])
		}
	} else {
		b = be.AppendUint32(b, 0)
	}
	return append(b, h.Body...)
}
