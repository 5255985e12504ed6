package craft

import (
	"errors"
	"fmt"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// NVMeQueue crafts one NVMe over Fabrics queue on one RC connection (the
// RDMA transport, NVMe-oF 1.1 §7.3), as Linux's nvme-rdma host and the
// nvmet-rdma controller carry it: the CM exchange to the IP-CM service of
// port 4420 with the NVMe-oF private data (the queue id and sizes), each
// command a SEND of its command capsule (the SQE, then any in-capsule
// data), its data moved by the controller with RDMA (a WRITE into the
// host's keyed SGL buffer for a Read, a READ of it for a Write), and the
// response capsule (the CQE) a SEND, with Invalidate of the SGL's key when
// the host asked for it. Two Conns model the two directions (the host's
// commands, the controller's transfers and completions) on one clock;
// Trace merges them. Each command's completion comes its Latency after the
// command's SEND: the known answer of a service response time.
type NVMeQueue struct {
	host, ctrl *Conn
	qid        uint16
	sqsize     uint16 // 0-based
	sqhd       uint16
	key        uint32
	va         uint64
	errs       []nvmeError
	// Delay is a command's latency when it does not give one; 0: 100 µs.
	Delay time.Duration
}

// NewNVMeQueue returns queue qid (0: the admin queue) of sqsize+1 entries,
// whose host is cfg.Requester and controller cfg.Responder (RC only).
func NewNVMeQueue(cfg Config, qid, sqsize uint16) (*NVMeQueue, error) {
	if cfg.Service != layers.ServiceUnknown && cfg.Service != layers.ServiceRC {
		return nil, errors.New("craft: NVMe-oF runs on RC")
	}
	host, err := New(cfg)
	if err != nil {
		return nil, err
	}
	rev := host.Config()
	rev.Requester, rev.Responder = rev.Responder, rev.Requester
	ctrl, err := New(rev)
	if err != nil {
		return nil, err
	}
	return &NVMeQueue{host: host, ctrl: ctrl, qid: qid, sqsize: sqsize,
		key: 0x1000*uint32(qid+1) + 0x40, va: 0x7f3400000000 + uint64(qid)<<28}, nil
}

// nvmeError is a command completed with an error: its SEND and its CQE's,
// by the frames' direction, destination QP and PSN.
type nvmeError struct {
	cmd, cqe FrameInfo
	status   layers.NVMeStatus
}

// Trace returns the queue's frames so far, in time order, with a finding
// for each completion with an error status.
func (q *NVMeQueue) Trace() Trace {
	tr := Merge(q.host.Trace(), q.ctrl.Trace())
	at := func(i FrameInfo) int {
		for n, f := range tr.Frames {
			if f.Info.From == i.From && f.Info.DestQP == i.DestQP && f.Info.PSN == i.PSN && f.Info.Opcode == i.Opcode {
				return n + 1
			}
		}
		return 0
	}
	for _, e := range q.errs {
		tr.Findings = append(tr.Findings, Finding{Frame: at(e.cqe), Kind: FindingNVMeError, Ref: at(e.cmd), Detail: e.status.String()})
	}
	sortFindings(tr.Findings)
	return tr
}

// Now returns the time of the queue's next frame.
func (q *NVMeQueue) Now() time.Time { return q.host.Now() }

// WaitUntil moves the queue's clock to t, when t is later.
func (q *NVMeQueue) WaitUntil(t time.Time) {
	q.host.Wait(max(0, t.Sub(q.host.Now())))
	q.sync()
}

// sync moves the lagging side's clock to the other's.
func (q *NVMeQueue) sync() {
	n := max(q.host.now, q.ctrl.now)
	q.host.now, q.ctrl.now = n, n
}

// Connect appends the CM REQ/REP/RTU that open the queue: service
// 0x0000000001061144 (IP-CM, TCP, port 4420), the REQ's private data the
// queue id, the host's receive queue size and its send queue size
// (0-based) and controller id 0xffff, the REP's the controller's receive
// queue size.
func (q *NVMeQueue) Connect() error {
	req := layers.NVMeRDMACMReq{QID: q.qid, HRQSize: q.sqsize + 1, HSQSize: q.sqsize, CNTLID: 0xffff}
	rep := layers.NVMeRDMACMRep{CRQSize: q.sqsize + 1}
	err := q.host.Connect(CMOptions{ServiceID: layers.IPCMServiceID(layers.PortSpaceTCP, layers.NVMeOFPort),
		SrcPort: 52700 + q.qid, PrivateData: req.AppendTo(nil), REPPrivateData: rep.AppendTo(nil)})
	q.sync()
	return err
}

// Disconnect appends the CM DREQ/DREP.
func (q *NVMeQueue) Disconnect() error {
	err := q.host.Disconnect()
	q.sync()
	return err
}

// NVMeDir is where a command's data goes.
type NVMeDir uint8

// Data directions.
const (
	NVMeNoData    NVMeDir = iota // no data: a null keyed SGL
	NVMeToHost                   // the controller RDMA WRITEs it to the host (Read, Identify)
	NVMeFromHost                 // the controller RDMA READs it from the host (Write)
	NVMeInCapsule                // it follows the SQE in the command capsule
)

// NVMeCommand is one command of a queue and its completion.
type NVMeCommand struct {
	// SQE is the command; its SGL and PSDT are the transport's, set by
	// Command from Dir and Data.
	SQE  layers.NVMeSQE
	Dir  NVMeDir
	Data []byte
	// DW0, DW1 and Status are the CQE's; Command sets its SQ head, SQ id
	// and command id. A command whose Status is not success moves no data
	// to or from the host.
	DW0, DW1 uint32
	Status   layers.NVMeStatus
	// Latency is the time from the command's SEND to its CQE's; 0: Delay.
	Latency time.Duration
}

// Command appends a command: the host's SEND of the capsule, the
// controller's RDMA transfer of its data halfway through its latency, and
// the CQE. It fails when the transfer does not end before the latency.
func (q *NVMeQueue) Command(c NVMeCommand) error {
	lat := c.Latency
	if lat == 0 {
		lat = q.Delay
	}
	if lat == 0 {
		lat = 100 * time.Microsecond
	}
	sqe := c.SQE
	sqe.PSDT = 1 // SGL for the data transfer (NVMe-oF: always)
	sqe.InCapsule = nil
	var invalidate uint32
	switch c.Dir {
	case NVMeNoData:
		sqe.SGL = layers.NVMeSGL{Type: layers.NVMeSGLKeyedDataBlock}
	case NVMeToHost, NVMeFromHost:
		q.key++
		q.va += 0x100000
		// Linux asks for the key's remote invalidation (subtype 0xf).
		sqe.SGL = layers.NVMeSGL{Type: layers.NVMeSGLKeyedDataBlock, Subtype: 0xf, Address: q.va, Length: uint32(len(c.Data)), Key: q.key}
		invalidate = q.key
	case NVMeInCapsule:
		sqe.SGL = layers.NVMeSGL{Type: layers.NVMeSGLDataBlock, Subtype: 1, Length: uint32(len(c.Data))}
		sqe.InCapsule = c.Data
	default:
		return fmt.Errorf("craft: NVMe command cid %d: unknown data direction %d", c.SQE.CID, c.Dir)
	}
	if (c.Dir == NVMeToHost || c.Dir == NVMeFromHost) && len(c.Data) >= 1<<24 {
		return fmt.Errorf("craft: NVMe command cid %d: %d bytes do not fit a keyed SGL", c.SQE.CID, len(c.Data))
	}
	first := len(q.host.trace.Frames)
	if err := q.host.Run([]Op{{Kind: OpSend, Data: sqe.AppendTo(nil), Wait: true}}, Faults{}); err != nil {
		return err
	}
	at := q.host.trace.Frames[first].Time.Sub(q.host.cfg.Start)
	q.sync()
	if c.Status.OK() {
		var op Op
		switch c.Dir {
		case NVMeToHost:
			op = Op{Kind: OpWrite, Data: c.Data, VA: sqe.SGL.Address, RKey: sqe.SGL.Key}
		case NVMeFromHost:
			op = Op{Kind: OpRead, Data: c.Data, VA: sqe.SGL.Address, RKey: sqe.SGL.Key}
		}
		if op.Kind != 0 {
			q.ctrl.now = max(q.ctrl.now, at+lat/2)
			if err := q.ctrl.Run([]Op{op}, Faults{}); err != nil {
				return err
			}
			q.sync()
		}
	}
	if q.ctrl.now > at+lat {
		return fmt.Errorf("craft: NVMe command cid %d: its transfer ends %v after the command, past its latency %v",
			c.SQE.CID, q.ctrl.now-at, lat)
	}
	q.ctrl.now = at + lat
	q.sqhd = (q.sqhd + 1) % (q.sqsize + 1)
	cqe := layers.NVMeCQE{DW0: c.DW0, DW1: c.DW1, SQHD: q.sqhd, SQID: q.qid, CID: c.SQE.CID, Status: c.Status}
	op := Op{Kind: OpSend, Data: cqe.AppendTo(nil), Wait: true}
	if invalidate != 0 {
		op.Kind, op.InvRKey = OpSendInv, invalidate
	}
	n := len(q.ctrl.trace.Frames)
	err := q.ctrl.Run([]Op{op}, Faults{})
	q.sync()
	if err == nil && !c.Status.OK() {
		q.errs = append(q.errs, nvmeError{cmd: q.host.trace.Frames[first].Info, cqe: q.ctrl.trace.Frames[n].Info, status: c.Status})
	}
	return err
}

// FabricsConnect appends a Fabrics Connect of this queue with its Connect
// data in the capsule, answered with the controller id cntlid in DW0.
func (q *NVMeQueue) FabricsConnect(cid uint16, kato uint32, data layers.NVMeConnectData, cntlid uint16, latency time.Duration) error {
	sqe := layers.NVMeSQE{Opcode: layers.NVMeOpFabrics, CID: cid, NSID: uint32(layers.NVMeFabricsConnect)}
	sqe.CDW[0] = uint32(q.qid) << 16          // RECFMT 0, QID
	sqe.CDW[1] = uint32(q.sqsize) | 1<<(16+2) // SQSIZE; CATTR: SQ flow control disable
	sqe.CDW[2] = kato                         // KATO, ms
	return q.Command(NVMeCommand{SQE: sqe, Dir: NVMeInCapsule, Data: data.AppendTo(nil), DW0: uint32(cntlid), Latency: latency})
}

// Identify appends an Identify of structure cns (namespace nsid) whose
// data the controller WRITEs to the host.
func (q *NVMeQueue) Identify(cid uint16, cns layers.NVMeCNS, nsid uint32, data []byte, latency time.Duration) error {
	sqe := layers.NVMeSQE{Opcode: layers.NVMeOpIdentify, CID: cid, NSID: nsid}
	sqe.CDW[0] = uint32(cns)
	return q.Command(NVMeCommand{SQE: sqe, Dir: NVMeToHost, Data: data, Latency: latency})
}

// NVMeIO is a Read or Write of an I/O queue.
type NVMeIO struct {
	CID  uint16
	NSID uint32
	SLBA uint64
	// BlockSize is the namespace's logical block size; 0: 512. Data's
	// length is a multiple of it.
	BlockSize int
	Data      []byte
	Status    layers.NVMeStatus
	Latency   time.Duration
}

func (io *NVMeIO) sqe(op layers.NVMeOpcode) (layers.NVMeSQE, error) {
	bs := io.BlockSize
	if bs == 0 {
		bs = 512
	}
	n := len(io.Data) / bs
	if n == 0 || n > 1<<16 || len(io.Data)%bs != 0 {
		return layers.NVMeSQE{}, fmt.Errorf("craft: NVMe I/O cid %d: %d bytes are not 1 to 65536 blocks of %d", io.CID, len(io.Data), bs)
	}
	s := layers.NVMeSQE{Opcode: op, CID: io.CID, NSID: io.NSID}
	s.CDW[0], s.CDW[1] = uint32(io.SLBA), uint32(io.SLBA>>32)
	s.CDW[2] = uint32(n - 1) // NLB, 0-based
	return s, nil
}

// Read appends a Read: the controller WRITEs Data into the host's buffer,
// then the CQE.
func (q *NVMeQueue) Read(io NVMeIO) error { return q.io(layers.NVMeOpRead, NVMeToHost, io) }

// Write appends a Write: the controller READs Data from the host's
// buffer, then the CQE.
func (q *NVMeQueue) Write(io NVMeIO) error { return q.io(layers.NVMeOpWrite, NVMeFromHost, io) }

// WriteInCapsule appends a Write whose Data follows the SQE in its capsule.
func (q *NVMeQueue) WriteInCapsule(io NVMeIO) error {
	return q.io(layers.NVMeOpWrite, NVMeInCapsule, io)
}

func (q *NVMeQueue) io(op layers.NVMeOpcode, dir NVMeDir, io NVMeIO) error {
	sqe, err := io.sqe(op)
	if err != nil {
		return err
	}
	return q.Command(NVMeCommand{SQE: sqe, Dir: dir, Data: io.Data, Status: io.Status, Latency: io.Latency})
}

// NVMeStatusLBAOutOfRange is the status of an I/O past the namespace's
// end (generic status 0x80), with Do Not Retry.
const NVMeStatusLBAOutOfRange = layers.NVMeStatus(0x80<<1 | 1<<15)

// NVMeExampleCommand is what NVMeExample put on the wire for one command.
type NVMeExampleCommand struct {
	QID     uint16
	CID     uint16
	Name    string // the opcode's name (Wireshark's)
	Opcode  uint8
	Fabrics bool
	Status  layers.NVMeStatus
	Latency time.Duration
}

// NVMeExampleCommands are the commands of NVMeExample, in order.
var NVMeExampleCommands = []NVMeExampleCommand{
	{QID: 0, CID: 0x0001, Name: "Connect", Opcode: 0x7f, Fabrics: true, Latency: 310 * time.Microsecond},
	{QID: 0, CID: 0x0002, Name: "Identify", Opcode: 0x06, Latency: 250 * time.Microsecond},
	{QID: 1, CID: 0x0001, Name: "Connect", Opcode: 0x7f, Fabrics: true, Latency: 290 * time.Microsecond},
	{QID: 1, CID: 0x0010, Name: "Read", Opcode: 0x02, Latency: 180 * time.Microsecond},
	{QID: 1, CID: 0x0011, Name: "Write", Opcode: 0x01, Latency: 220 * time.Microsecond},
	{QID: 1, CID: 0x0012, Name: "Write", Opcode: 0x01, Latency: 90 * time.Microsecond},
	{QID: 1, CID: 0x0013, Name: "Read", Opcode: 0x02, Status: NVMeStatusLBAOutOfRange, Latency: 40 * time.Microsecond},
}

// NVMeExample is a whole crafted NVMe-oF association at path MTU 2048
// (cfg's MTU when it gives one; a Connect capsule is 1088 bytes and
// tshark 4.0 reads only one-packet capsules): the admin queue (host QP
// cfg.Requester's, controller QP cfg.Responder's) connected with its
// Fabrics Connect and an Identify Controller (4 KiB: RDMA WRITE FIRST and
// LAST), then I/O queue 1 on the next two QPNs: its Connect, a 1 KiB Read
// (RDMA WRITE), a 1 KiB Write (RDMA READ), a 512-byte Write in the capsule
// and a Read past the namespace's end answered LBA Out of Range; then both
// queues disconnect. The commands and their latencies are
// NVMeExampleCommands.
func NVMeExample(cfg Config) (Trace, error) {
	if cfg.MTU == 0 {
		cfg.MTU = 2048
	}
	admin, err := NewNVMeQueue(cfg, 0, 31)
	if err != nil {
		return Trace{}, err
	}
	c := admin.host.Config()
	c.UDPSrcPort = cfg.UDPSrcPort // 0: rxe's choice for each QP
	c.Requester.QPN, c.Responder.QPN = c.Requester.QPN+2, c.Responder.QPN+2
	c.Requester.PSN, c.Responder.PSN = c.Requester.PSN+0x1000, c.Responder.PSN+0x1000
	io, err := NewNVMeQueue(c, 1, 127)
	if err != nil {
		return Trace{}, err
	}
	cmds := NVMeExampleCommands
	connect := layers.NVMeConnectData{HostID: []byte{0x5e, 0x2d, 0x1c, 0x0b, 0xfa, 0xe9, 0x48, 0x37, 0x86, 0x75, 0x64, 0x53, 0x42, 0x31, 0x20, 0x1f},
		CNTLID: 0xffff, SubNQN: "nqn.2024-01.io.ibwire:craft-ram0", HostNQN: "nqn.2014-08.org.nvmexpress:uuid:5e2d1c0b-fae9-4837-8675-645342312011"}
	const cntlid = 1
	ioConnect := connect
	ioConnect.CNTLID = cntlid
	steps := []func() error{
		admin.Connect,
		func() error { return admin.FabricsConnect(cmds[0].CID, 5000, connect, cntlid, cmds[0].Latency) },
		func() error {
			return admin.Identify(cmds[1].CID, 1, 0, identifyController(connect.SubNQN), cmds[1].Latency)
		},
		func() error {
			// One QP1 on each side carries both queues' CM messages.
			io.WaitUntil(admin.Now())
			io.host.gsiPSN = admin.host.gsiPSN
			return io.Connect()
		},
		func() error { return io.FabricsConnect(cmds[2].CID, 0, ioConnect, cntlid, cmds[2].Latency) },
		func() error {
			return io.Read(NVMeIO{CID: cmds[3].CID, NSID: 1, SLBA: 0, Data: Pattern(1024, 0x31), Latency: cmds[3].Latency})
		},
		func() error {
			return io.Write(NVMeIO{CID: cmds[4].CID, NSID: 1, SLBA: 64, Data: Pattern(1024, 0x32), Latency: cmds[4].Latency})
		},
		func() error {
			return io.WriteInCapsule(NVMeIO{CID: cmds[5].CID, NSID: 1, SLBA: 128, Data: Pattern(512, 0x33), Latency: cmds[5].Latency})
		},
		func() error {
			return io.Read(NVMeIO{CID: cmds[6].CID, NSID: 1, SLBA: 1 << 21, Data: Pattern(4096, 0x34), Status: cmds[6].Status, Latency: cmds[6].Latency})
		},
		io.Disconnect,
		func() error {
			admin.WaitUntil(io.Now())
			admin.host.gsiPSN = io.host.gsiPSN
			return admin.Disconnect()
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return Trace{}, fmt.Errorf("craft: NVMe-oF example step %d: %w", i+1, err)
		}
	}
	return Merge(admin.Trace(), io.Trace()), nil
}

// identifyController is a 4 KiB Identify Controller structure (NVMe Base
// 2.0 Figure 275) with a PCI vendor id, serial and model numbers,
// firmware revision, an NVMe 1.3 version and the subsystem's NQN; the
// rest zero.
func identifyController(subnqn string) []byte {
	d := make([]byte, 4096)
	d[0], d[1] = 0x36, 0x1b // VID 0x1b36
	pad := func(b []byte, s string) {
		for i := range b {
			b[i] = ' '
		}
		copy(b, s)
	}
	pad(d[4:24], "ibwire-craft-0001")
	pad(d[24:64], "ibwire crafted NVMe-oF controller")
	pad(d[64:72], "1.0")
	d[80], d[81], d[82] = 0, 3, 1 // VER 1.3.0
	copy(d[768:1024], subnqn)
	return d
}
