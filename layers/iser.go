package layers

import (
	"encoding/binary"
	"strconv"
)

// iSER, the iSCSI Extensions for RDMA (RFC 7145, which obsoletes RFC 5046),
// carries iSCSI (RFC 7143) over an RC connection. Every iSCSI PDU travels
// in one SEND that opens with the 28-byte iSER header below, followed by
// the PDU's 48-byte Basic Header Segment, its additional header segments
// and its data segment (a Login's key=value text, immediate data). The
// SCSI data does not travel in PDUs: the target RDMA WRITEs a SCSI READ's
// data into the initiator's buffer named by the header's Read STag and
// base offset, and RDMA READs a SCSI WRITE's data from the buffer named by
// the Write STag and base offset.
//
// iSER header (RFC 7145 §9.2), big-endian:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-------+-+-+-+-+-----------------------------------------------+
//	|Opcode |W|R|Rsv| Reserved                                      |  0
//	+-------+-+-+-+-+-----------------------------------------------+
//	| Write STag                                                    |  4
//	+---------------------------------------------------------------+
//	| Write Base Offset (64)                                        |  8
//	+---------------------------------------------------------------+
//	| Read STag                                                     | 16
//	+---------------------------------------------------------------+
//	| Read Base Offset (64)                                         | 20
//	+---------------------------------------------------------------+
//	| iSCSI PDU (opcode 1)                                          | 28
//
// Opcode 1 is an iSCSI control-type PDU; W (0x08) says the Write STag is
// valid, R (0x04) the Read STag. The Hello (2) and HelloReply (3) messages
// (§9.3, §9.4) put the versions in the second byte (MaxVer, MinVer or
// CurVer, 4 bits each; RFC 7145's version is 10) and the initiator's IRD
// or the target's ORD in bytes 2-3; HelloReply's 0x01 flag is the
// target's reject.

// ISERPort is the iSCSI port: the RDMA CM service ID of an iSER
// connection is the IP-CM one for it (RFC 7145 §5.1).
const ISERPort = 3260

// Lengths of the iSER header and the iSCSI Basic Header Segment.
const (
	ISERHeaderLength = 28
	ISCSIBHSLength   = 48
)

// ISEROpcode is the iSER header's opcode (its first byte's high nibble).
type ISEROpcode uint8

// iSER opcodes (RFC 7145 §9.2).
const (
	ISERControl    ISEROpcode = 1 // an iSCSI control-type PDU follows
	ISERHello      ISEROpcode = 2
	ISERHelloReply ISEROpcode = 3
)

// iSER header flags (the first byte's low nibble).
const (
	ISERFlagWSV = 0x08 // Write STag valid
	ISERFlagRSV = 0x04 // Read STag valid
	ISERFlagREJ = 0x01 // HelloReply: the target rejects the connection
)

// Known reports an opcode RFC 7145 defines.
func (o ISEROpcode) Known() bool { return o >= ISERControl && o <= ISERHelloReply }

// iSCSI flags-byte bits (RFC 7143 §11): each opcode reads the ones it has.
const (
	ISCSIFlagF    = 0x80 // Final
	ISCSIFlagR    = 0x40 // SCSI Command: Read; Data-In: A (acknowledge); Text and Login: C (continue)
	ISCSIFlagW    = 0x20 // SCSI Command: Write
	ISCSIFlagBidi = 0x10 // SCSI Response: o (bidirectional overflow)
	ISCSIFlagBidU = 0x08 // SCSI Response: u (bidirectional underflow)
	ISCSIFlagO    = 0x04 // SCSI Response, Data-In: O (overflow)
	ISCSIFlagU    = 0x02 // SCSI Response, Data-In: U (underflow)
	ISCSIFlagS    = 0x01 // Data-In: S (status)
)

// ISERVersion is RFC 7145's iSER version.
const ISERVersion = 10

func (o ISEROpcode) String() string {
	return enumName([]string{ISERControl: "iSCSI Control-Type PDU", ISERHello: "Hello Message", ISERHelloReply: "HelloReply Message"}, uint(o), "Unknown")
}

// ISERHeader is an iSER header.
type ISERHeader struct {
	Flags  uint8 // the whole first byte: opcode and flags
	Opcode ISEROpcode
	// WriteSTag and WriteVA name the initiator's buffer the target READs
	// a SCSI WRITE's data from (valid with WSV); ReadSTag and ReadVA the
	// buffer it WRITEs a SCSI READ's data into (valid with RSV).
	WriteSTag, ReadSTag uint32
	WriteVA, ReadVA     uint64
	// MaxVer and MinVer (Hello; MinVer is CurVer in a HelloReply), IRD
	// (Hello) or ORD (HelloReply).
	MaxVer, MinVer uint8
	IRDORD         uint16
	// Body is what follows the header: the iSCSI PDU.
	Body []byte
}

// WSV reports the Write STag valid flag.
func (h *ISERHeader) WSV() bool { return h.Flags&ISERFlagWSV != 0 }

// RSV reports the Read STag valid flag.
func (h *ISERHeader) RSV() bool { return h.Flags&ISERFlagRSV != 0 }

// Reject reports a HelloReply's REJ flag.
func (h *ISERHeader) Reject() bool { return h.Flags&ISERFlagREJ != 0 }

var iserSpans = []FieldSpan{{"Flags", 0, 1}, {"Write STag", 4, 4}, {"Write Base Offset", 8, 8}, {"Read STag", 16, 4}, {"Read Base Offset", 20, 8}}

// DecodeFromBytes decodes an iSER header; Body aliases data.
func (h *ISERHeader) DecodeFromBytes(data []byte) error {
	if err := checkLength("iSER", iserSpans, len(data)); err != nil {
		return err
	}
	be := binary.BigEndian
	h.Flags = data[0]
	h.Opcode = ISEROpcode(data[0] >> 4)
	h.MaxVer, h.MinVer = data[1]>>4, data[1]&0xf
	h.IRDORD = be.Uint16(data[2:4])
	h.WriteSTag, h.WriteVA = be.Uint32(data[4:8]), be.Uint64(data[8:16])
	h.ReadSTag, h.ReadVA = be.Uint32(data[16:20]), be.Uint64(data[20:28])
	h.Body = data[ISERHeaderLength:]
	switch h.Opcode {
	case ISERControl, ISERHello, ISERHelloReply:
	default:
		return malformed("iSER", "Opcode", 0, "opcode %d: iSER knows 1 (iSCSI control), 2 (Hello), 3 (HelloReply)", h.Opcode)
	}
	return nil
}

// ISCSIOpcode is an iSCSI PDU's opcode (RFC 7143 §11.2.1.2).
type ISCSIOpcode uint8

// iSCSI opcodes: the initiator's, then the target's.
const (
	ISCSINOPOut       ISCSIOpcode = 0x00
	ISCSISCSICommand  ISCSIOpcode = 0x01
	ISCSITaskMgmtReq  ISCSIOpcode = 0x02
	ISCSILoginReq     ISCSIOpcode = 0x03
	ISCSITextReq      ISCSIOpcode = 0x04
	ISCSIDataOut      ISCSIOpcode = 0x05
	ISCSILogoutReq    ISCSIOpcode = 0x06
	ISCSISNACKReq     ISCSIOpcode = 0x10
	ISCSINOPIn        ISCSIOpcode = 0x20
	ISCSISCSIResponse ISCSIOpcode = 0x21
	ISCSITaskMgmtResp ISCSIOpcode = 0x22
	ISCSILoginResp    ISCSIOpcode = 0x23
	ISCSITextResp     ISCSIOpcode = 0x24
	ISCSIDataIn       ISCSIOpcode = 0x25
	ISCSILogoutResp   ISCSIOpcode = 0x26
	ISCSIR2T          ISCSIOpcode = 0x31
	ISCSIAsyncMessage ISCSIOpcode = 0x32
	ISCSIReject       ISCSIOpcode = 0x3f
)

// iscsiOpNames are the opcodes' names as Wireshark's iscsi.opcode says them.
var iscsiOpNames = [64]string{
	ISCSINOPOut: "NOP Out", ISCSISCSICommand: "SCSI Command", ISCSITaskMgmtReq: "Task Management Function",
	ISCSILoginReq: "Login Command", ISCSITextReq: "Text Command", ISCSIDataOut: "SCSI Data Out",
	ISCSILogoutReq: "Logout Command", ISCSISNACKReq: "SNACK Request", ISCSINOPIn: "NOP In",
	ISCSISCSIResponse: "SCSI Response", ISCSITaskMgmtResp: "Task Management Function Response",
	ISCSILoginResp: "Login Response", ISCSITextResp: "Text Response", ISCSIDataIn: "SCSI Data In",
	ISCSILogoutResp: "Logout Response", ISCSIR2T: "Ready To Transfer", ISCSIAsyncMessage: "Asynchronous Message",
	ISCSIReject: "Reject",
}

// Known reports an opcode RFC 7143 defines.
func (o ISCSIOpcode) Known() bool { return o < 64 && iscsiOpNames[o] != "" }

func (o ISCSIOpcode) String() string {
	if o.Known() {
		return iscsiOpNames[o]
	}
	return "Unknown(" + strconv.Itoa(int(o)) + ")"
}

// FromTarget reports an opcode only a target sends (0x20 and up).
func (o ISCSIOpcode) FromTarget() bool { return o >= 0x20 }

// Response is the opcode of the PDU that answers a request of opcode o
// (NOP-Out: NOP-In; SCSI Command: SCSI Response ...), and false for a PDU
// no response answers by its Initiator Task Tag (Data-Out, SNACK) or a
// target's.
func (o ISCSIOpcode) Response() (ISCSIOpcode, bool) {
	switch o {
	case ISCSINOPOut, ISCSISCSICommand, ISCSITaskMgmtReq, ISCSILoginReq, ISCSITextReq, ISCSILogoutReq:
		return o | 0x20, true
	}
	return 0, false
}

// ISCSIReservedITT is the Initiator Task Tag no task uses: a NOP-Out that
// answers a target's NOP-In, or a target's unsolicited NOP-In, carries it.
const ISCSIReservedITT = 0xffffffff

// ISCSIPDU is an iSCSI PDU: its Basic Header Segment, decoded by opcode,
// with its additional header segments and data segment.
type ISCSIPDU struct {
	Opcode    ISCSIOpcode
	Immediate bool  // the I bit (a request for immediate delivery)
	Flags     uint8 // byte 1: F and the opcode's flags
	// B2 and B3 are the BHS's bytes 2 and 3: a SCSI Response's Response
	// and Status, a Login's VersionMax and VersionMin (or VersionActive),
	// a Task Management Response's, a Logout Response's response, a
	// Reject's reason.
	B2, B3         uint8
	TotalAHSLength uint8  // in 4-byte words
	DataLength     uint32 // DataSegmentLength: bytes, without padding
	LUN            uint64 // bytes 8-15: the LUN, or a Login's ISID and TSIH
	ITT            uint32 // Initiator Task Tag
	// W5 to W11 are the BHS's words at bytes 20 to 44, whose meaning the
	// opcode gives (the accessors below name them).
	W [7]uint32
	// CDB is a SCSI Command's 16 bytes at byte 32.
	CDB [16]byte
	// AHS is the additional header segments; Data the data segment, as
	// much of it as the packet holds; Pad the padding after it to a 4-byte
	// boundary, as much as the packet holds.
	AHS, Data, Pad []byte
}

// DecodeFromBytes decodes an iSCSI PDU. AHS and Data alias data; a data
// segment shorter than DataSegmentLength (a PDU cut by the capture) is
// kept as far as it goes.
func (p *ISCSIPDU) DecodeFromBytes(data []byte) error {
	if len(data) < ISCSIBHSLength {
		return &DecodeError{Layer: "iSCSI", Field: "BHS", Need: ISCSIBHSLength, Have: len(data), Err: ErrTruncated}
	}
	be := binary.BigEndian
	p.Opcode, p.Immediate = ISCSIOpcode(data[0]&0x3f), data[0]&0x40 != 0
	p.Flags, p.B2, p.B3 = data[1], data[2], data[3]
	p.TotalAHSLength = data[4]
	p.DataLength = uint32(data[5])<<16 | uint32(be.Uint16(data[6:8]))
	p.LUN, p.ITT = be.Uint64(data[8:16]), be.Uint32(data[16:20])
	for i := range p.W {
		p.W[i] = be.Uint32(data[20+4*i:])
	}
	copy(p.CDB[:], data[32:48])
	rest := data[ISCSIBHSLength:]
	ahs := int(p.TotalAHSLength) * 4
	if ahs > len(rest) {
		p.AHS, p.Data, p.Pad = rest, nil, nil
		return &DecodeError{Layer: "iSCSI", Field: "TotalAHSLength", Offset: 4, Need: ahs, Have: len(rest), Err: ErrTruncated}
	}
	p.AHS, rest = rest[:ahs], rest[ahs:]
	n := min(len(rest), int(p.DataLength))
	p.Data, rest = rest[:n], rest[n:]
	p.Pad = rest[:min(len(rest), int(-p.DataLength&3))]
	return nil
}

// Final reports the F bit.
func (p *ISCSIPDU) Final() bool { return p.Flags&ISCSIFlagF != 0 }

// SCSI Command accessors (RFC 7143 §11.3).

// ReadFlag and WriteFlag report a SCSI Command's R and W bits.
func (p *ISCSIPDU) ReadFlag() bool  { return p.Flags&ISCSIFlagR != 0 }
func (p *ISCSIPDU) WriteFlag() bool { return p.Flags&ISCSIFlagW != 0 }

// Attr is a SCSI Command's task attribute.
func (p *ISCSIPDU) Attr() uint8 { return p.Flags & 7 }

// EDTL is a SCSI Command's Expected Data Transfer Length.
func (p *ISCSIPDU) EDTL() uint32 { return p.W[0] }

// The sequence numbers: a request's CmdSN (byte 24) and ExpStatSN (28), a
// response's StatSN (24), ExpCmdSN (28) and MaxCmdSN (32).
func (p *ISCSIPDU) CmdSN() uint32     { return p.W[1] }
func (p *ISCSIPDU) ExpStatSN() uint32 { return p.W[2] }
func (p *ISCSIPDU) StatSN() uint32    { return p.W[1] }
func (p *ISCSIPDU) ExpCmdSN() uint32  { return p.W[2] }
func (p *ISCSIPDU) MaxCmdSN() uint32  { return p.W[3] }

// TTT is the Target Transfer Tag (byte 20) of a NOP, Text, Data or R2T PDU.
func (p *ISCSIPDU) TTT() uint32 { return p.W[0] }

// SCSI Response accessors (RFC 7143 §11.4): Response (byte 2), Status
// (byte 3), ExpDataSN (36), Bidirectional Read Residual Count (40),
// Residual Count (44).
func (p *ISCSIPDU) Response() uint8           { return p.B2 }
func (p *ISCSIPDU) Status() SCSIStatus        { return SCSIStatus(p.B3) }
func (p *ISCSIPDU) ExpDataSN() uint32         { return p.W[4] }
func (p *ISCSIPDU) BidiResidualCount() uint32 { return p.W[5] }
func (p *ISCSIPDU) ResidualCount() uint32     { return p.W[6] }
func (p *ISCSIPDU) DataSN() uint32            { return p.W[4] }
func (p *ISCSIPDU) BufferOffset() uint32      { return p.W[5] }
func (p *ISCSIPDU) DesiredDataLength() uint32 { return p.W[6] }
func (p *ISCSIPDU) ReferencedTaskTag() uint32 { return p.W[0] }
func (p *ISCSIPDU) RefCmdSN() uint32          { return p.W[3] }
func (p *ISCSIPDU) TaskMgmtFunction() uint8   { return p.Flags & 0x7f }
func (p *ISCSIPDU) LogoutReason() uint8       { return p.Flags & 0x7f }
func (p *ISCSIPDU) Time2Wait() uint16         { return uint16(p.W[5] >> 16) }
func (p *ISCSIPDU) Time2Retain() uint16       { return uint16(p.W[5]) }

// SenseLength is a SCSI Response's sense data length: the data segment's
// first two bytes, 0 when there is none.
func (p *ISCSIPDU) SenseLength() (uint16, bool) {
	if len(p.Data) < 2 {
		return 0, false
	}
	return binary.BigEndian.Uint16(p.Data), true
}

// Login accessors (RFC 7143 §11.12, §11.13): T, C, CSG and NSG in byte 1,
// ISID (bytes 8-13) and TSIH (14-15), CID (20-21, the request's), the
// response's Status-Class and Status-Detail (36-37).
func (p *ISCSIPDU) Transit() bool       { return p.Flags&0x80 != 0 }
func (p *ISCSIPDU) Continue() bool      { return p.Flags&0x40 != 0 }
func (p *ISCSIPDU) CSG() uint8          { return p.Flags >> 2 & 3 }
func (p *ISCSIPDU) NSG() uint8          { return p.Flags & 3 }
func (p *ISCSIPDU) ISID() uint64        { return p.LUN >> 16 }
func (p *ISCSIPDU) TSIH() uint16        { return uint16(p.LUN) }
func (p *ISCSIPDU) CID() uint16         { return uint16(p.W[0] >> 16) }
func (p *ISCSIPDU) LoginStatus() uint16 { return uint16(p.W[4] >> 16) }

// KeyValues calls fn with each NUL-terminated key=value pair of a Login's
// or Text's data segment, in order, until fn returns false.
func (p *ISCSIPDU) KeyValues(fn func(kv []byte) bool) {
	d := p.Data
	for len(d) > 0 {
		i := 0
		for i < len(d) && d[i] != 0 {
			i++
		}
		if i > 0 && !fn(d[:i]) {
			return
		}
		if i == len(d) {
			return
		}
		d = d[i+1:]
	}
}

// SCSIStatus is a SCSI status byte (SAM-5).
type SCSIStatus uint8

// SCSI status codes.
const (
	SCSIGood                SCSIStatus = 0x00
	SCSICheckCondition      SCSIStatus = 0x02
	SCSIConditionMet        SCSIStatus = 0x04
	SCSIBusy                SCSIStatus = 0x08
	SCSIReservationConflict SCSIStatus = 0x18
	SCSITaskSetFull         SCSIStatus = 0x28
	SCSIACAActive           SCSIStatus = 0x30
	SCSITaskAborted         SCSIStatus = 0x40
)

var scsiStatusNames = map[SCSIStatus]string{
	SCSIGood: "Good", SCSICheckCondition: "Check Condition", SCSIConditionMet: "Condition Met", SCSIBusy: "Busy",
	SCSIReservationConflict: "Reservation Conflict", SCSITaskSetFull: "Task Set Full", SCSIACAActive: "ACA Active",
	SCSITaskAborted: "Task Aborted",
}

// Name names a status SAM-5 defines.
func (s SCSIStatus) Name() (string, bool) { n, ok := scsiStatusNames[s]; return n, ok }

func (s SCSIStatus) String() string {
	if n, ok := s.Name(); ok {
		return n
	}
	return "Unknown(0x" + strconv.FormatUint(uint64(s), 16) + ")"
}

// SCSIOpcode is a CDB's operation code (SPC-5, SBC-4).
type SCSIOpcode uint8

// The CDB operation codes whose LBA and transfer length ibwire reads.
const (
	SCSIRead6   SCSIOpcode = 0x08
	SCSIWrite6  SCSIOpcode = 0x0a
	SCSIRead10  SCSIOpcode = 0x28
	SCSIWrite10 SCSIOpcode = 0x2a
	SCSIRead12  SCSIOpcode = 0xa8
	SCSIWrite12 SCSIOpcode = 0xaa
	SCSIRead16  SCSIOpcode = 0x88
	SCSIWrite16 SCSIOpcode = 0x8a
)

var scsiOpNames = map[SCSIOpcode]string{
	0x00: "TEST UNIT READY", 0x03: "REQUEST SENSE", 0x04: "FORMAT UNIT", SCSIRead6: "READ(6)", SCSIWrite6: "WRITE(6)",
	0x12: "INQUIRY", 0x15: "MODE SELECT(6)", 0x1a: "MODE SENSE(6)", 0x1b: "START STOP UNIT",
	0x1e: "PREVENT ALLOW MEDIUM REMOVAL", 0x25: "READ CAPACITY(10)", SCSIRead10: "READ(10)", SCSIWrite10: "WRITE(10)",
	0x2f: "VERIFY(10)", 0x35: "SYNCHRONIZE CACHE(10)", 0x41: "WRITE SAME(10)", 0x42: "UNMAP", 0x4d: "LOG SENSE",
	0x55: "MODE SELECT(10)", 0x5a: "MODE SENSE(10)", 0x5e: "PERSISTENT RESERVE IN", 0x5f: "PERSISTENT RESERVE OUT",
	0x83: "EXTENDED COPY", 0x84: "RECEIVE COPY RESULTS", SCSIRead16: "READ(16)", 0x89: "COMPARE AND WRITE",
	SCSIWrite16: "WRITE(16)", 0x8f: "VERIFY(16)", 0x91: "SYNCHRONIZE CACHE(16)", 0x93: "WRITE SAME(16)",
	0x9e: "SERVICE ACTION IN(16)", 0xa0: "REPORT LUNS", 0xa3: "MAINTENANCE IN", SCSIRead12: "READ(12)",
	SCSIWrite12: "WRITE(12)",
}

// Name names an operation code ibwire knows.
func (o SCSIOpcode) Name() (string, bool) { n, ok := scsiOpNames[o]; return n, ok }

func (o SCSIOpcode) String() string {
	if n, ok := o.Name(); ok {
		return n
	}
	return "Unknown(0x" + strconv.FormatUint(uint64(o), 16) + ")"
}

// CDBRange returns a READ or WRITE CDB's logical block address and
// transfer length in blocks (READ(6)'s length 0 means 256 blocks), and
// false for any other command.
func CDBRange(cdb []byte) (lba uint64, blocks uint32, ok bool) {
	if len(cdb) == 0 {
		return 0, 0, false
	}
	be := binary.BigEndian
	switch SCSIOpcode(cdb[0]) {
	case SCSIRead6, SCSIWrite6:
		if len(cdb) < 6 {
			return 0, 0, false
		}
		lba, blocks = uint64(cdb[1]&0x1f)<<16|uint64(be.Uint16(cdb[2:4])), uint32(cdb[4])
		if blocks == 0 {
			blocks = 256
		}
		return lba, blocks, true
	case SCSIRead10, SCSIWrite10:
		if len(cdb) < 10 {
			return 0, 0, false
		}
		return uint64(be.Uint32(cdb[2:6])), uint32(be.Uint16(cdb[7:9])), true
	case SCSIRead12, SCSIWrite12:
		if len(cdb) < 12 {
			return 0, 0, false
		}
		return uint64(be.Uint32(cdb[2:6])), be.Uint32(cdb[6:10]), true
	case SCSIRead16, SCSIWrite16:
		if len(cdb) < 16 {
			return 0, 0, false
		}
		return be.Uint64(cdb[2:10]), be.Uint32(cdb[10:14]), true
	}
	return 0, 0, false
}

// ISERPlausible reports whether data, the payload of a SEND ONLY, looks
// like an iSER message carrying an iSCSI PDU, for finding iSER on a
// connection whose set-up the capture lacks: opcode 1 with no reserved
// flag or byte set, STags zero unless their flag says valid, a known
// iSCSI opcode and a data segment that fits the SEND. h and p receive the
// header and PDU.
func ISERPlausible(data []byte, h *ISERHeader, p *ISCSIPDU) bool {
	if len(data) < ISERHeaderLength+ISCSIBHSLength || data[0]&^(ISERFlagWSV|ISERFlagRSV) != byte(ISERControl)<<4 || data[1]|data[2]|data[3] != 0 {
		return false
	}
	if h.DecodeFromBytes(data) != nil || !h.WSV() && (h.WriteSTag != 0 || h.WriteVA != 0) || !h.RSV() && (h.ReadSTag != 0 || h.ReadVA != 0) {
		return false
	}
	if p.DecodeFromBytes(h.Body) != nil || !p.Opcode.Known() {
		return false
	}
	pad := (int(p.DataLength) + 3) &^ 3
	return len(h.Body) >= ISCSIBHSLength+int(p.TotalAHSLength)*4+int(p.DataLength) &&
		len(h.Body) <= ISCSIBHSLength+int(p.TotalAHSLength)*4+pad+8 // header and data digests at most
}

// AppendTo appends the header's 28 bytes to b: Flags as given (the opcode
// in its high nibble); for a Hello or HelloReply, MaxVer/MinVer and
// IRD/ORD in bytes 1-3 and zeros after; for a control message, the STags
// and base offsets.
func (h *ISERHeader) AppendTo(b []byte) []byte {
	be := binary.BigEndian
	var w [ISERHeaderLength]byte
	w[0] = h.Flags
	if ISEROpcode(h.Flags>>4) != ISERControl {
		w[1] = h.MaxVer<<4 | h.MinVer&0xf
		be.PutUint16(w[2:4], h.IRDORD)
		return append(b, w[:]...)
	}
	be.PutUint32(w[4:8], h.WriteSTag)
	be.PutUint64(w[8:16], h.WriteVA)
	be.PutUint32(w[16:20], h.ReadSTag)
	be.PutUint64(w[20:28], h.ReadVA)
	return append(b, w[:]...)
}

// AppendTo appends the PDU to b: the BHS from its fields (DataSegmentLength
// from len(Data), TotalAHSLength from len(AHS), which must be a multiple
// of 4), the AHS, the data segment and its padding to 4 bytes.
func (p *ISCSIPDU) AppendTo(b []byte) []byte {
	be := binary.BigEndian
	var w [ISCSIBHSLength]byte
	w[0] = byte(p.Opcode) & 0x3f
	if p.Immediate {
		w[0] |= 0x40
	}
	w[1], w[2], w[3] = p.Flags, p.B2, p.B3
	w[4] = byte(len(p.AHS) / 4)
	n := len(p.Data)
	w[5], w[6], w[7] = byte(n>>16), byte(n>>8), byte(n)
	be.PutUint64(w[8:16], p.LUN)
	be.PutUint32(w[16:20], p.ITT)
	for i, v := range p.W {
		be.PutUint32(w[20+4*i:], v)
	}
	if p.Opcode == ISCSISCSICommand {
		copy(w[32:48], p.CDB[:])
	}
	b = append(append(append(b, w[:]...), p.AHS...), p.Data...)
	return append(b, make([]byte, -n&3)...)
}
