package craft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// ISERSession crafts an iSER conversation (RFC 7145) on one RC connection,
// as Linux's ib_iser initiator and LIO's ib_isert target carry it: the CM
// exchange with the IP-CM service ID of port 3260, the initiator's iSCSI
// requests in SENDs that open with the iSER header, the target's
// responses in SENDs (with Invalidate of the STag a SCSI command
// named), and a SCSI command's data by RDMA: the target WRITEs a READ's
// data into the Read STag's buffer and READs a WRITE's from the Write
// STag's. Two Conns model the two directions (the initiator's requests,
// the target's), on one clock; Trace merges them.
type ISERSession struct {
	init, tgt *Conn
	cmdSN     uint32
	statSN    uint32
	stag      uint32
	va        uint64
	// Delay is the target's time to answer a request; 0: 200 µs.
	Delay time.Duration
	// NextFaults apply to the next SEND either side makes (then cleared):
	// a lost ACK makes the initiator send a command again.
	NextFaults Faults
}

// NewISER returns a session whose initiator is cfg.Requester and target
// cfg.Responder (RC only).
func NewISER(cfg Config) (*ISERSession, error) {
	if cfg.Service != layers.ServiceUnknown && cfg.Service != layers.ServiceRC {
		return nil, errors.New("craft: iSER runs on RC")
	}
	init, err := New(cfg)
	if err != nil {
		return nil, err
	}
	rev := init.Config()
	rev.Requester, rev.Responder = rev.Responder, rev.Requester
	tgt, err := New(rev)
	if err != nil {
		return nil, err
	}
	return &ISERSession{init: init, tgt: tgt, statSN: 0x1000, stag: 0x1500, va: 0x7f0000200000}, nil
}

// Trace returns the conversation's frames so far, in time order.
func (s *ISERSession) Trace() Trace { return Merge(s.init.Trace(), s.tgt.Trace()) }

// sync moves the lagging side's clock to the other's.
func (s *ISERSession) sync() {
	n := max(s.init.now, s.tgt.now)
	s.init.now, s.tgt.now = n, n
}

func (s *ISERSession) delay() time.Duration {
	if s.Delay > 0 {
		return s.Delay
	}
	return 200 * time.Microsecond
}

// Connect appends the CM REQ/REP/RTU that name the iSER service
// (0x0000000001060CBC: IP-CM, TCP, port 3260).
func (s *ISERSession) Connect() error {
	err := s.init.Connect(CMOptions{ServiceID: layers.IPCMServiceID(layers.PortSpaceTCP, layers.ISERPort), SrcPort: 49843})
	s.sync()
	return err
}

// Hello appends the initiator's Hello (IRD ird) and the target's
// HelloReply (ORD ord; reject when reject), RFC 7145 §9.3-9.4. Linux does
// not send them; the RFC's iSER does.
func (s *ISERSession) Hello(ird, ord uint16, reject bool) error {
	h := layers.ISERHeader{Flags: byte(layers.ISERHello) << 4, MaxVer: layers.ISERVersion, MinVer: layers.ISERVersion, IRDORD: ird}
	if err := s.send(s.init, h.AppendTo(nil), 0); err != nil {
		return err
	}
	r := layers.ISERHeader{Flags: byte(layers.ISERHelloReply) << 4, MaxVer: layers.ISERVersion, MinVer: layers.ISERVersion, IRDORD: ord}
	if reject {
		r.Flags |= layers.ISERFlagREJ
	}
	s.tgt.Wait(s.delay())
	return s.send(s.tgt, r.AppendTo(nil), 0)
}

// send runs one SEND (with Invalidate of inv when not 0) from c.
func (s *ISERSession) send(c *Conn, msg []byte, inv uint32) error {
	op := Op{Kind: OpSend, Data: msg, Wait: true}
	if inv != 0 {
		op.Kind, op.InvRKey = OpSendInv, inv
	}
	f := s.NextFaults
	s.NextFaults = Faults{}
	err := c.Run([]Op{op}, f)
	s.sync()
	return err
}

// Login appends a Login Request from stage csg to nsg (transit) with the
// key=value pairs kvs, and the target's Login Response with its pairs
// resp and status (0: success); itt is the task tag.
func (s *ISERSession) Login(itt uint32, isid uint64, csg, nsg uint8, kvs, resp []string, status uint16) error {
	flags := csg<<2 | nsg
	if csg != nsg {
		flags |= 0x80
	}
	req := layers.ISCSIPDU{Opcode: layers.ISCSILoginReq, Immediate: true, Flags: flags, LUN: isid << 16, ITT: itt, Data: keyValues(kvs)}
	req.W[0] = 1 << 16 // CID 1
	req.W[1], req.W[2] = s.cmdSN, s.statSN
	if err := s.send(s.init, s.message(&layers.ISERHeader{Flags: 0x10}, &req), 0); err != nil {
		return err
	}
	rsp := layers.ISCSIPDU{Opcode: layers.ISCSILoginResp, Flags: flags, LUN: isid<<16 | 1, ITT: itt, Data: keyValues(resp)}
	rsp.W[1], rsp.W[2], rsp.W[3] = s.statSN, s.cmdSN, s.cmdSN+64
	rsp.W[4] = uint32(status) << 16
	s.statSN++
	s.tgt.Wait(s.delay())
	return s.send(s.tgt, s.message(&layers.ISERHeader{Flags: 0x10}, &rsp), 0)
}

// Read appends a SCSI READ(10) of len(data)/blockSize blocks at lba: the
// command with its Read STag, the target's RDMA WRITE of data into the
// initiator's buffer, and the SCSI Response (status; Good is 0) in a SEND
// with Invalidate of the STag.
func (s *ISERSession) Read(itt uint32, lba uint32, blockSize int, data []byte, status layers.SCSIStatus) error {
	stag, va := s.nextBuffer()
	cmd := s.scsiCommand(itt, layers.SCSIRead10, lba, len(data), blockSize, 0x40)
	if err := s.send(s.init, s.message(&layers.ISERHeader{Flags: 0x10 | layers.ISERFlagRSV, ReadSTag: stag, ReadVA: va}, &cmd), 0); err != nil {
		return err
	}
	s.tgt.Wait(s.delay() / 2)
	if err := s.tgt.Run([]Op{{Kind: OpWrite, Data: data, VA: va, RKey: stag}}, Faults{}); err != nil {
		return err
	}
	s.sync()
	return s.send(s.tgt, s.message(&layers.ISERHeader{Flags: 0x10}, s.scsiResponse(itt, status)), stag)
}

// Write appends a SCSI WRITE(10) of data at lba: the command with its
// Write STag (no immediate data), the target's RDMA READ of the
// initiator's buffer, and the SCSI Response in a SEND with Invalidate.
func (s *ISERSession) Write(itt uint32, lba uint32, blockSize int, data []byte, status layers.SCSIStatus) error {
	stag, va := s.nextBuffer()
	cmd := s.scsiCommand(itt, layers.SCSIWrite10, lba, len(data), blockSize, 0x20)
	if err := s.send(s.init, s.message(&layers.ISERHeader{Flags: 0x10 | layers.ISERFlagWSV, WriteSTag: stag, WriteVA: va}, &cmd), 0); err != nil {
		return err
	}
	s.tgt.Wait(s.delay() / 2)
	if err := s.tgt.Run([]Op{{Kind: OpRead, Data: data, VA: va, RKey: stag}}, Faults{}); err != nil {
		return err
	}
	s.sync()
	return s.send(s.tgt, s.message(&layers.ISERHeader{Flags: 0x10}, s.scsiResponse(itt, status)), stag)
}

// Logout appends a Logout Request (close the session) and its response.
func (s *ISERSession) Logout(itt uint32) error {
	req := layers.ISCSIPDU{Opcode: layers.ISCSILogoutReq, Immediate: true, Flags: 0x80, ITT: itt}
	req.W[0] = 1 << 16
	req.W[1], req.W[2] = s.cmdSN, s.statSN
	if err := s.send(s.init, s.message(&layers.ISERHeader{Flags: 0x10}, &req), 0); err != nil {
		return err
	}
	rsp := layers.ISCSIPDU{Opcode: layers.ISCSILogoutResp, Flags: 0x80, ITT: itt}
	rsp.W[1], rsp.W[2], rsp.W[3] = s.statSN, s.cmdSN, s.cmdSN+64
	rsp.W[5] = 2 << 16 // Time2Wait 2 s
	s.statSN++
	s.tgt.Wait(s.delay())
	return s.send(s.tgt, s.message(&layers.ISERHeader{Flags: 0x10}, &rsp), 0)
}

// Disconnect appends the CM DREQ/DREP.
func (s *ISERSession) Disconnect() error {
	err := s.init.Disconnect()
	s.sync()
	return err
}

func (s *ISERSession) nextBuffer() (uint32, uint64) {
	s.stag++
	s.va += 0x10000
	return s.stag, s.va
}

func (s *ISERSession) message(h *layers.ISERHeader, p *layers.ISCSIPDU) []byte {
	return p.AppendTo(h.AppendTo(nil))
}

func (s *ISERSession) scsiCommand(itt uint32, op layers.SCSIOpcode, lba uint32, n, blockSize int, rw uint8) layers.ISCSIPDU {
	p := layers.ISCSIPDU{Opcode: layers.ISCSISCSICommand, Flags: 0x80 | rw | 1, LUN: 0, ITT: itt}
	p.W[0], p.W[1], p.W[2] = uint32(n), s.cmdSN, s.statSN
	s.cmdSN++
	p.CDB[0] = byte(op)
	binary.BigEndian.PutUint32(p.CDB[2:6], lba)
	binary.BigEndian.PutUint16(p.CDB[7:9], uint16(n/blockSize))
	return p
}

func (s *ISERSession) scsiResponse(itt uint32, status layers.SCSIStatus) *layers.ISCSIPDU {
	p := &layers.ISCSIPDU{Opcode: layers.ISCSISCSIResponse, Flags: 0x80, B3: byte(status), ITT: itt}
	p.W[1], p.W[2], p.W[3] = s.statSN, s.cmdSN, s.cmdSN+64
	s.statSN++
	if status == layers.SCSICheckCondition {
		// Fixed-format sense data: ILLEGAL REQUEST, INVALID FIELD IN CDB.
		sense := []byte{0x70, 0, 0x05, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0x24, 0, 0, 0, 0, 0}
		p.Data = append([]byte{0, byte(len(sense))}, sense...)
	}
	return p
}

// keyValues joins key=value pairs, each NUL-terminated.
func keyValues(kvs []string) []byte {
	var b []byte
	for _, kv := range kvs {
		b = append(append(b, kv...), 0)
	}
	return b
}

// ISERExample is a whole crafted iSER session: connect, Login (security
// to operational to full feature in one step), two READ(10)s of 4 KiB, a
// WRITE(10) of 8 KiB, a READ(10) answered CHECK CONDITION, Logout,
// disconnect.
func ISERExample(cfg Config) (Trace, error) {
	s, err := NewISER(cfg)
	if err != nil {
		return Trace{}, err
	}
	steps := []func() error{
		s.Connect,
		func() error {
			return s.Login(0, 0x023d000001, 1, 3,
				[]string{"InitiatorName=iqn.2024-01.example:init", "TargetName=iqn.2024-01.example:target0", "SessionType=Normal", "RDMAExtensions=Yes"},
				[]string{"TargetPortalGroupTag=1", "RDMAExtensions=Yes", "MaxRecvDataSegmentLength=262144"}, 0)
		},
		func() error { return s.Read(0x10, 0, 512, Pattern(4096, 1), layers.SCSIGood) },
		func() error { return s.Read(0x11, 8, 512, Pattern(4096, 2), layers.SCSIGood) },
		func() error { return s.Write(0x12, 64, 512, Pattern(8192, 3), layers.SCSIGood) },
		func() error { return s.Read(0x13, 1<<20, 512, Pattern(512, 4), layers.SCSICheckCondition) },
		func() error { return s.Logout(0x14) },
		s.Disconnect,
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return Trace{}, fmt.Errorf("craft: iSER example step %d: %w", i+1, err)
		}
	}
	return s.Trace(), nil
}
