package craft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// RPCRDMAConn crafts an RPC-over-RDMA version 1 connection (RFC 8166), as
// Linux's xprtrdma client and svcrdma server carry NFS: the CM exchange
// to the IP-CM service of port 20049, each RPC call a SEND that opens with
// the transport header, its chunks moved by the server with RDMA (it READs
// a call's read chunk from the client, WRITEs a reply's bulk data into a
// write chunk, or the whole reply into a reply chunk, answered RDMA_NOMSG),
// and each reply a SEND, with Invalidate when the call named one memory
// handle. Two Conns model the two directions on one clock; Trace merges
// them. Each reply comes its Latency after the call's SEND.
type RPCRDMAConn struct {
	client, server *Conn
	xid, handle    uint32
	va             uint64
	// Credits are what the client asks for (0: 128) and the server grants
	// (0: 64) in their headers.
	ClientCredits, ServerCredits uint32
	// Delay is a call's latency when it does not give one; 0: 100 µs.
	Delay time.Duration
	// Machine is the AUTH_UNIX machine name of the calls; "": ibwire-client.
	Machine string
}

// NewRPCRDMA returns a connection whose client is cfg.Requester and server
// cfg.Responder (RC only).
func NewRPCRDMA(cfg Config) (*RPCRDMAConn, error) {
	if cfg.Service != layers.ServiceUnknown && cfg.Service != layers.ServiceRC {
		return nil, errors.New("craft: RPC over RDMA runs on RC")
	}
	client, err := New(cfg)
	if err != nil {
		return nil, err
	}
	rev := client.Config()
	rev.Requester, rev.Responder = rev.Responder, rev.Requester
	server, err := New(rev)
	if err != nil {
		return nil, err
	}
	return &RPCRDMAConn{client: client, server: server, xid: 0x5a3c0000, handle: 0x0c00, va: 0x7f8a20000000}, nil
}

// Trace returns the conversation's frames so far, in time order.
func (r *RPCRDMAConn) Trace() Trace { return Merge(r.client.Trace(), r.server.Trace()) }

func (r *RPCRDMAConn) sync() {
	n := max(r.client.now, r.server.now)
	r.client.now, r.server.now = n, n
}

// Connect appends the CM REQ/REP/RTU of service 0x0000000001064E51
// (IP-CM, TCP, port 20049).
func (r *RPCRDMAConn) Connect() error {
	err := r.client.Connect(CMOptions{ServiceID: layers.IPCMServiceID(layers.PortSpaceTCP, layers.RPCRDMAPort), SrcPort: 40950})
	r.sync()
	return err
}

// Disconnect appends the CM DREQ/DREP.
func (r *RPCRDMAConn) Disconnect() error {
	err := r.client.Disconnect()
	r.sync()
	return err
}

// RPCCall is one RPC call and its reply.
type RPCCall struct {
	// XID is the call's; 0: the connection's next.
	XID                         uint32
	Program, Version, Procedure uint32
	// Args are the call's XDR arguments sent inline. ReadData, when set,
	// is the call's last data item, moved in a read chunk (the server
	// READs it) at the position where the inline message ends: Args end
	// with its XDR length, as Linux sends an NFS WRITE.
	Args, ReadData []byte
	// Results are the reply's XDR results (accept_stat SUCCESS). WriteData,
	// when set, is the reply's bulk data, which the server WRITEs into a
	// write chunk the call offers: Results end with its XDR length, as
	// Linux's server sends an NFS READ reply.
	Results, WriteData []byte
	// ReplyChunk makes the call offer a reply chunk of ReplyChunkSize bytes
	// (0: 4096) and the server WRITE the whole reply into it, then send
	// RDMA_NOMSG.
	ReplyChunk     bool
	ReplyChunkSize int
	// Latency is the time from the call's SEND to its reply's; 0: Delay.
	Latency time.Duration
}

func (r *RPCRDMAConn) nextSegment(n int) layers.RPCRDMASegment {
	r.handle++
	r.va += 0x40000
	return layers.RPCRDMASegment{Handle: r.handle, Length: uint32(n), Offset: r.va}
}

// Call appends a call, its chunks' transfers (the read chunk a third of
// its latency in, the write or reply chunk two thirds) and its reply; it
// returns the XID. It fails when the transfers do not end before the
// latency.
func (r *RPCRDMAConn) Call(c RPCCall) (uint32, error) {
	lat := firstNonZero(c.Latency, r.Delay, 100*time.Microsecond)
	xid := c.XID
	if xid == 0 {
		r.xid += 0x01000000 // Linux's XIDs step in the high byte
		xid = r.xid
	}
	machine := r.Machine
	if machine == "" {
		machine = "ibwire-client"
	}
	call := layers.RPCMsg{XID: xid, Type: layers.RPCCall, RPCVersion: 2, Program: c.Program, ProgVersion: c.Version,
		Procedure: c.Procedure, Cred: layers.RPCAuth{Flavor: layers.RPCAuthUnix, Unix: true, MachineName: []byte(machine)},
		Body: c.Args}
	msg := call.AppendTo(nil)
	h := layers.RPCRDMAHeader{XID: xid, Version: 1, Credits: firstNonZero(r.ClientCredits, 0, 128), Proc: layers.RPCRDMAMsg, Body: msg}
	var handles []uint32
	if c.ReadData != nil {
		s := r.nextSegment(len(c.ReadData))
		s.Position = uint32(len(msg))
		h.Reads = append(h.Reads, s)
		handles = append(handles, s.Handle)
	}
	if c.WriteData != nil {
		s := r.nextSegment(len(c.WriteData))
		h.Writes = append(h.Writes, s)
		handles = append(handles, s.Handle)
	}
	if c.ReplyChunk {
		s := r.nextSegment(firstNonZero(c.ReplyChunkSize, 0, 4096))
		h.Reply, h.HasReply = append(h.Reply, s), true
		handles = append(handles, s.Handle)
	}
	first := len(r.client.trace.Frames)
	if err := r.client.Run([]Op{{Kind: OpSend, Data: h.AppendTo(nil), Wait: true}}, Faults{}); err != nil {
		return 0, err
	}
	at := r.client.trace.Frames[first].Time.Sub(r.client.cfg.Start)
	r.sync()
	transfer := func(when time.Duration, op Op) error {
		r.server.now = max(r.server.now, at+when)
		err := r.server.Run([]Op{op}, Faults{})
		r.sync()
		return err
	}
	if c.ReadData != nil {
		s := h.Reads[0]
		if err := transfer(lat/3, Op{Kind: OpRead, Data: c.ReadData, VA: s.Offset, RKey: s.Handle}); err != nil {
			return 0, err
		}
	}
	reply := layers.RPCMsg{XID: xid, Type: layers.RPCReply, ReplyStat: layers.RPCAccepted, AcceptStat: layers.RPCSuccess, Body: c.Results}
	rh := layers.RPCRDMAHeader{XID: xid, Version: 1, Credits: firstNonZero(r.ServerCredits, 0, 64), Proc: layers.RPCRDMAMsg, Body: reply.AppendTo(nil)}
	if c.WriteData != nil {
		s := h.Writes[0]
		if err := transfer(2*lat/3, Op{Kind: OpWrite, Data: c.WriteData, VA: s.Offset, RKey: s.Handle}); err != nil {
			return 0, err
		}
		rh.Writes = append(rh.Writes, s)
	}
	if c.ReplyChunk {
		s := h.Reply[0]
		if len(rh.Body) > int(s.Length) {
			return 0, fmt.Errorf("craft: RPC xid 0x%08x: a reply of %d bytes in a reply chunk of %d", xid, len(rh.Body), s.Length)
		}
		if err := transfer(2*lat/3, Op{Kind: OpWrite, Data: rh.Body, VA: s.Offset, RKey: s.Handle}); err != nil {
			return 0, err
		}
		s.Length = uint32(len(rh.Body))
		rh.Proc, rh.Body, rh.Reply, rh.HasReply = layers.RPCRDMANoMsg, nil, []layers.RPCRDMASegment{s}, true
	}
	if r.server.now > at+lat {
		return 0, fmt.Errorf("craft: RPC xid 0x%08x: its transfers end %v after the call, past its latency %v", xid, r.server.now-at, lat)
	}
	r.server.now = at + lat
	op := Op{Kind: OpSend, Data: rh.AppendTo(nil), Wait: true}
	if len(handles) == 1 {
		op.Kind, op.InvRKey = OpSendInv, handles[0]
	}
	err := r.server.Run([]Op{op}, Faults{})
	r.sync()
	return xid, err
}

// firstNonZero returns the first of vs that is not zero.
func firstNonZero[T comparable](vs ...T) T {
	var zero T
	for _, v := range vs {
		if v != zero {
			return v
		}
	}
	return zero
}

// xdr builds XDR data: words, hypers, opaques.
type xdr []byte

func (x xdr) u32(vs ...uint32) xdr {
	for _, v := range vs {
		x = binary.BigEndian.AppendUint32(x, v)
	}
	return x
}

func (x xdr) u64(v uint64) xdr { return binary.BigEndian.AppendUint64(x, v) }

func (x xdr) opaque(v []byte) xdr {
	x = x.u32(uint32(len(v)))
	x = append(x, v...)
	return append(x, make([]byte, (4-len(v)%4)%4)...)
}

// NFSv3 (RFC 1813) procedures and values of the example.
const (
	nfs3Getattr, nfs3Lookup, nfs3Read, nfs3Write, nfs3Readdir = 1, 3, 6, 7, 16
	nfs3OK, nfs3ErrNoEnt                                      = 0, 2
	nfs3FileSync                                              = 2
)

// fattr3 is a regular file's (or directory's) attributes: mode 0644
// (0755), uid and gid 1000, its size, fsid 1, fileid, fixed times.
func (x xdr) fattr3(dir bool, size, fileid uint64) xdr {
	typ, mode := uint32(1), uint32(0o644)
	if dir {
		typ, mode = 2, 0o755
	}
	x = x.u32(typ, mode, 1, 1000, 1000).u64(size).u64((size+4095)&^4095).u32(0, 0).u64(1).u64(fileid)
	for range 3 {
		x = x.u32(1700000000, 123456789)
	}
	return x
}

// RPCExampleCall is what RPCRDMAExample put on the wire for one call.
type RPCExampleCall struct {
	Procedure uint32
	Name      string
	Latency   time.Duration
}

// RPCExampleCalls are the NFSv3 calls of RPCRDMAExample, in order.
var RPCExampleCalls = []RPCExampleCall{
	{nfs3Getattr, "GETATTR", 120 * time.Microsecond},
	{nfs3Lookup, "LOOKUP", 80 * time.Microsecond},
	{nfs3Read, "READ", 300 * time.Microsecond},
	{nfs3Write, "WRITE", 350 * time.Microsecond},
	{nfs3Readdir, "READDIR", 210 * time.Microsecond},
}

// RPCRDMAExample is a whole crafted NFSv3-over-RDMA exchange at path MTU
// 512 (cfg's MTU when it gives one): the CM connection to port 20049, a
// GETATTR in RDMA_MSG both ways, a LOOKUP answered NFS3ERR_NOENT, a 1 KiB
// READ whose data the server WRITEs into the call's write chunk (WRITE
// FIRST and LAST), a 1 KiB WRITE whose data the server READs from the call's read chunk, a READDIR
// whose reply the server WRITEs into the call's reply chunk and announces
// with RDMA_NOMSG, then the disconnect. The calls and their latencies are
// RPCExampleCalls.
func RPCRDMAExample(cfg Config) (Trace, error) {
	if cfg.MTU == 0 {
		cfg.MTU = 512
	}
	r, err := NewRPCRDMA(cfg)
	if err != nil {
		return Trace{}, err
	}
	fh := []byte{1, 0, 1, 1, 0, 0, 0, 0, 0x2a, 0x7e, 0, 0, 0x4f, 0x9b, 0, 0xa7}
	dirFH := []byte{1, 0, 1, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0}
	const fileid, dirid, size = 32260, 2, 16384
	read, written := Pattern(1024, 0x51), Pattern(1024, 0x52)
	lat := func(i int) time.Duration { return RPCExampleCalls[i].Latency }
	calls := []RPCCall{
		{Procedure: nfs3Getattr, Args: xdr(nil).opaque(fh), Results: xdr(nil).u32(nfs3OK).fattr3(false, size, fileid), Latency: lat(0)},
		{Procedure: nfs3Lookup, Args: xdr(nil).opaque(dirFH).opaque([]byte("missing.txt")),
			Results: xdr(nil).u32(nfs3ErrNoEnt, 1).fattr3(true, 4096, dirid), Latency: lat(1)},
		{Procedure: nfs3Read, Args: xdr(nil).opaque(fh).u64(0).u32(uint32(len(read))), WriteData: read,
			Results: xdr(nil).u32(nfs3OK, 1).fattr3(false, size, fileid).u32(uint32(len(read)), 0, uint32(len(read))), Latency: lat(2)},
		{Procedure: nfs3Write, Args: xdr(nil).opaque(fh).u64(1024).u32(uint32(len(written)), nfs3FileSync, uint32(len(written))), ReadData: written,
			Results: xdr(nil).u32(nfs3OK, 0, 1).fattr3(false, size, fileid).u32(uint32(len(written)), nfs3FileSync).u64(0x1122334455667788), Latency: lat(3)},
		{Procedure: nfs3Readdir, Args: xdr(nil).opaque(dirFH).u64(0).u64(0).u32(4096), ReplyChunk: true,
			Results: xdr(nil).u32(nfs3OK, 1).fattr3(true, 4096, dirid).u64(0x0102030405060708).
				u32(1).u64(dirid).opaque([]byte(".")).u64(1).
				u32(1).u64(dirid).opaque([]byte("..")).u64(2).
				u32(1).u64(fileid).opaque([]byte("data.bin")).u64(3).
				u32(0, 1), Latency: lat(4)},
	}
	if err := r.Connect(); err != nil {
		return Trace{}, err
	}
	for i, c := range calls {
		c.Program, c.Version = layers.RPCProgNFS, 3
		if _, err := r.Call(c); err != nil {
			return Trace{}, fmt.Errorf("craft: RPC-over-RDMA example call %d: %w", i+1, err)
		}
	}
	if err := r.Disconnect(); err != nil {
		return Trace{}, err
	}
	return r.Trace(), nil
}
