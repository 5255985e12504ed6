package layers

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// NVMe over Fabrics, RDMA transport (NVMe-oF 1.1 §7.3 and TP 8000; NVMe
// Base 2.0 §3.3 and §4): the host sends each command as one RC SEND, the
// command capsule: a 64-byte submission queue entry (SQE), then, for a
// Write with in-capsule data or a Fabrics Connect, the data. The
// controller answers with one SEND (or SEND with Invalidate), the response
// capsule: a 16-byte completion queue entry (CQE). Data the command's SGL
// names moves by RDMA: the controller WRITEs a Read's data into the host's
// buffer and READs a Write's data from it, with the SGL's key as the R_Key.
//
// A capsule spans several packets when it is larger than the path MTU (a
// 4 KiB in-capsule Write is SEND FIRST, MIDDLE..., LAST): these decoders
// take the reassembled message, not one packet's payload. All multi-byte
// fields are little-endian.
//
// Command capsule, the SQE (NVMe Base §4.2, Figure 88):
//
//	 0               1               2               3
//	+---------------+---------------+-------------------------------+
//	| OPC           |PSDT|rsvd|FUSE | CID                           |  0
//	+---------------+---------------+-------------------------------+
//	| NSID (Fabrics commands: byte 4 is FCTYPE)                     |  4
//	+---------------------------------------------------------------+
//	| CDW2, CDW3 (reserved)                                         |  8
//	+---------------------------------------------------------------+
//	| MPTR: metadata pointer                                        | 16
//	+---------------------------------------------------------------+
//	| DPTR: SGL descriptor 1 (16 bytes)                             | 24
//	|   keyed data block: Address (8), Length (3), Key (4), Type (1)|
//	+---------------------------------------------------------------+
//	| CDW10 ... CDW15 (command specific)                            | 40
//	+---------------------------------------------------------------+
//
// Response capsule, the CQE (NVMe Base §4.6, Figure 93):
//
//	+---------------------------------------------------------------+
//	| DW0: command specific                                         |  0
//	+---------------------------------------------------------------+
//	| DW1: command specific                                         |  4
//	+-------------------------------+-------------------------------+
//	| SQHD                          | SQID                          |  8
//	+-------------------------------+-------------------------------+
//	| CID                           | Status (DNR M CRD SCT SC P)   | 12
//	+-------------------------------+-------------------------------+

// NVMe capsule sizes.
const (
	NVMeSQELength         = 64
	NVMeCQELength         = 16
	NVMeConnectDataLength = 1024
	// NVMeOFPort is the IANA port of NVMe over Fabrics (RDMA and TCP): the
	// RDMA CM service ID of an NVMe-oF connection is the IP-CM one for it.
	NVMeOFPort = 4420
)

var (
	errNVMeSQEShort     = errors.New("nvme: command capsule shorter than 64 bytes")
	errNVMeCQEShort     = errors.New("nvme: response capsule shorter than 16 bytes")
	errNVMeConnectShort = errors.New("nvme: connect data shorter than 1024 bytes")
)

// NVMeOpcode is an SQE's command opcode. Its meaning depends on the queue:
// queue 0 is the admin queue, the others are I/O queues; 0x7f is a Fabrics
// command on either.
type NVMeOpcode uint8

// NVMe opcodes used below by name.
const (
	NVMeOpFlush         NVMeOpcode = 0x00 // I/O
	NVMeOpWrite         NVMeOpcode = 0x01 // I/O
	NVMeOpRead          NVMeOpcode = 0x02 // I/O
	NVMeOpGetLogPage    NVMeOpcode = 0x02 // admin
	NVMeOpIdentify      NVMeOpcode = 0x06 // admin
	NVMeOpWriteZeroes   NVMeOpcode = 0x08 // I/O
	NVMeOpSetFeatures   NVMeOpcode = 0x09 // admin
	NVMeOpDatasetMgmt   NVMeOpcode = 0x09 // I/O
	NVMeOpGetFeatures   NVMeOpcode = 0x0a // admin
	NVMeOpAsyncEvent    NVMeOpcode = 0x0c // admin
	NVMeOpKeepAlive     NVMeOpcode = 0x18 // admin
	NVMeOpFabrics       NVMeOpcode = 0x7f // both
	nvmeOpUnknownPrefix            = "Unknown"
)

// nvmeAdminOpNames are the admin command names (NVMe Base 2.0 Figure 28).
var nvmeAdminOpNames = map[NVMeOpcode]string{
	0x00: "Delete I/O Submission Queue", 0x01: "Create I/O Submission Queue", 0x02: "Get Log Page",
	0x04: "Delete I/O Completion Queue", 0x05: "Create I/O Completion Queue", 0x06: "Identify", 0x08: "Abort",
	0x09: "Set Features", 0x0a: "Get Features", 0x0c: "Asynchronous Event Request", 0x0d: "Namespace Management",
	0x10: "Firmware Commit", 0x11: "Firmware Image Download", 0x14: "Device Self-test", 0x15: "Namespace Attachment",
	0x18: "Keep Alive", 0x19: "Directive Send", 0x1a: "Directive Receive", 0x1c: "Virtualization Management",
	0x1d: "NVMe-MI Send", 0x1e: "NVMe-MI Receive", 0x7c: "Doorbell Buffer Config", 0x7f: "Fabrics",
	0x80: "Format NVM", 0x81: "Security Send", 0x82: "Security Receive", 0x84: "Sanitize", 0x86: "Get LBA Status",
}

// nvmeIOOpNames are the NVM command set's I/O command names (NVM Command
// Set 1.0 Figure 16, and the Fabrics opcode).
var nvmeIOOpNames = map[NVMeOpcode]string{
	0x00: "Flush", 0x01: "Write", 0x02: "Read", 0x04: "Write Uncorrectable", 0x05: "Compare",
	0x08: "Write Zeroes", 0x09: "Dataset Management", 0x0c: "Verify", 0x0d: "Reservation Register",
	0x0e: "Reservation Report", 0x11: "Reservation Acquire", 0x15: "Reservation Release", 0x19: "Copy",
	0x7f: "Fabrics",
}

// AdminName names op as an admin command, and reports whether it is one.
func (op NVMeOpcode) AdminName() (string, bool) { s, ok := nvmeAdminOpNames[op]; return s, ok }

// IOName names op as an I/O (NVM command set) command, and reports whether it is one.
func (op NVMeOpcode) IOName() (string, bool) { s, ok := nvmeIOOpNames[op]; return s, ok }

// Name names op on an admin (admin true) or I/O queue, "Unknown (0xNN)" otherwise.
func (op NVMeOpcode) Name(admin bool) string {
	names := nvmeIOOpNames
	if admin {
		names = nvmeAdminOpNames
	}
	if s, ok := names[op]; ok {
		return s
	}
	return nvmeOpUnknownPrefix + " (0x" + strconv.FormatUint(uint64(op), 16) + ")"
}

// Known reports an opcode named on either kind of queue.
func (op NVMeOpcode) Known() bool {
	_, a := nvmeAdminOpNames[op]
	_, i := nvmeIOOpNames[op]
	return a || i
}

// NVMeFabricsType is a Fabrics command's type, SQE byte 4 (NVMe-oF 1.1 Figure 11).
type NVMeFabricsType uint8

// Fabrics command types.
const (
	NVMeFabricsPropertySet NVMeFabricsType = 0x00
	NVMeFabricsConnect     NVMeFabricsType = 0x01
	NVMeFabricsPropertyGet NVMeFabricsType = 0x04
	NVMeFabricsAuthSend    NVMeFabricsType = 0x05
	NVMeFabricsAuthRecv    NVMeFabricsType = 0x06
	NVMeFabricsDisconnect  NVMeFabricsType = 0x08
)

var nvmeFabricsNames = map[NVMeFabricsType]string{
	0x00: "Property Set", 0x01: "Connect", 0x04: "Property Get", 0x05: "Authentication Send",
	0x06: "Authentication Receive", 0x08: "Disconnect",
}

func (t NVMeFabricsType) String() string {
	if s, ok := nvmeFabricsNames[t]; ok {
		return s
	}
	return "Unknown (0x" + strconv.FormatUint(uint64(t), 16) + ")"
}

// Known reports a defined Fabrics command type.
func (t NVMeFabricsType) Known() bool { _, ok := nvmeFabricsNames[t]; return ok }

// NVMeSGL is an SGL descriptor (NVMe Base §4.1.8, Figure 114-120): for
// NVMe-oF RDMA, a Keyed SGL Data Block (type 4) names a host buffer by
// address, length (24 bits) and R_Key; a Data Block with the Offset subtype
// (type 0, subtype 1) points into the capsule's in-capsule data.
type NVMeSGL struct {
	Address uint64
	Length  uint32 // 24 bits in a keyed descriptor, 32 in the others
	Key     uint32 // keyed descriptors only
	Type    uint8  // high nibble of byte 15
	Subtype uint8  // low nibble of byte 15
}

// SGL descriptor types.
const (
	NVMeSGLDataBlock      = 0x0
	NVMeSGLKeyedDataBlock = 0x4
)

// Keyed reports a Keyed SGL Data Block descriptor.
func (s *NVMeSGL) Keyed() bool { return s.Type == NVMeSGLKeyedDataBlock }

func (s *NVMeSGL) decode(d []byte) {
	le := binary.LittleEndian
	s.Address = le.Uint64(d[0:8])
	s.Type, s.Subtype = d[15]>>4, d[15]&0xf
	if s.Type == NVMeSGLKeyedDataBlock {
		s.Length = uint32(d[8]) | uint32(d[9])<<8 | uint32(d[10])<<16
		s.Key = le.Uint32(d[11:15])
	} else {
		s.Length, s.Key = le.Uint32(d[8:12]), 0
	}
}

// NVMeSQE is a command capsule's submission queue entry.
type NVMeSQE struct {
	Opcode NVMeOpcode
	Fuse   uint8 // FUSE, bits 1:0 of byte 1
	PSDT   uint8 // PRP or SGL, bits 7:6 of byte 1 (fabrics: always SGL)
	CID    uint16
	NSID   uint32 // bytes 4-7; in a Fabrics command byte 4 is FCTYPE
	MPTR   uint64
	SGL    NVMeSGL
	CDW    [6]uint32 // CDW10 ... CDW15
	// InCapsule is the data after the SQE in the capsule (a Write's
	// in-capsule data, the Connect data); it aliases the input.
	InCapsule []byte
}

// DecodeFromBytes decodes a command capsule. It keeps a slice of data.
func (s *NVMeSQE) DecodeFromBytes(data []byte) error {
	if len(data) < NVMeSQELength {
		return errNVMeSQEShort
	}
	le := binary.LittleEndian
	s.Opcode, s.Fuse, s.PSDT = NVMeOpcode(data[0]), data[1]&3, data[1]>>6
	s.CID, s.NSID = le.Uint16(data[2:4]), le.Uint32(data[4:8])
	s.MPTR = le.Uint64(data[16:24])
	s.SGL.decode(data[24:40])
	for i := range s.CDW {
		s.CDW[i] = le.Uint32(data[40+4*i:])
	}
	s.InCapsule = data[NVMeSQELength:]
	return nil
}

// IsFabrics reports a Fabrics command.
func (s *NVMeSQE) IsFabrics() bool { return s.Opcode == NVMeOpFabrics }

// FabricsType is the Fabrics command type (byte 4), for a Fabrics command.
func (s *NVMeSQE) FabricsType() NVMeFabricsType { return NVMeFabricsType(s.NSID & 0xff) }

// SLBA is a Read, Write, Write Zeroes or Compare's starting LBA (CDW11:CDW10).
func (s *NVMeSQE) SLBA() uint64 { return uint64(s.CDW[1])<<32 | uint64(s.CDW[0]) }

// NLB is the number of logical blocks, 0-based (CDW12 bits 15:0): 0 means one.
func (s *NVMeSQE) NLB() uint16 { return uint16(s.CDW[2]) }

// Blocks is the number of logical blocks a Read or Write moves (NLB + 1).
func (s *NVMeSQE) Blocks() uint32 { return uint32(s.NLB()) + 1 }

// FUA is a Read or Write's Force Unit Access bit (CDW12 bit 30).
func (s *NVMeSQE) FUA() bool { return s.CDW[2]&(1<<30) != 0 }

// LimitedRetry is a Read or Write's Limited Retry bit (CDW12 bit 31).
func (s *NVMeSQE) LimitedRetry() bool { return s.CDW[2]&(1<<31) != 0 }

// CNS is an Identify's Controller or Namespace Structure (CDW10 bits 7:0).
func (s *NVMeSQE) CNS() NVMeCNS { return NVMeCNS(s.CDW[0]) }

// CNTID is an Identify's controller identifier (CDW10 bits 31:16).
func (s *NVMeSQE) CNTID() uint16 { return uint16(s.CDW[0] >> 16) }

// LogPageID is a Get Log Page's log page identifier (CDW10 bits 7:0).
func (s *NVMeSQE) LogPageID() NVMeLogPage { return NVMeLogPage(s.CDW[0]) }

// LogPageDwords is a Get Log Page's number of dwords to return, 0-based
// (NUMDU, CDW11 bits 15:0, over NUMDL, CDW10 bits 31:16).
func (s *NVMeSQE) LogPageDwords() uint32 { return uint32(uint16(s.CDW[1]))<<16 | s.CDW[0]>>16 }

// FeatureID is a Set or Get Features' feature identifier (CDW10 bits 7:0).
func (s *NVMeSQE) FeatureID() NVMeFeature { return NVMeFeature(s.CDW[0]) }

// Save is a Set Features' Save bit (CDW10 bit 31).
func (s *NVMeSQE) Save() bool { return s.CDW[0]&(1<<31) != 0 }

// Select is a Get Features' Select field (CDW10 bits 10:8).
func (s *NVMeSQE) Select() uint8 { return uint8(s.CDW[0]>>8) & 7 }

// Connect fields (NVMe-oF 1.1 Figure 20): bytes 40-51 of a Connect SQE.

// ConnectRecFmt is a Connect's record format (bytes 40-41).
func (s *NVMeSQE) ConnectRecFmt() uint16 { return uint16(s.CDW[0]) }

// ConnectQID is the queue a Connect creates (bytes 42-43): 0 the admin queue.
func (s *NVMeSQE) ConnectQID() uint16 { return uint16(s.CDW[0] >> 16) }

// ConnectSQSize is a Connect's submission queue size, 0-based (bytes 44-45).
func (s *NVMeSQE) ConnectSQSize() uint16 { return uint16(s.CDW[1]) }

// ConnectCAttr is a Connect's attributes (byte 46).
func (s *NVMeSQE) ConnectCAttr() uint8 { return uint8(s.CDW[1] >> 16) }

// ConnectKATO is a Connect's keep alive timeout in milliseconds (bytes 48-51).
func (s *NVMeSQE) ConnectKATO() uint32 { return s.CDW[2] }

// Property Get and Set fields (NVMe-oF 1.1 Figures 25, 28).

// PropertyAttrib is a Property Get/Set's attributes (byte 40); bits 2:0
// give the size: 0 four bytes, 1 eight bytes.
func (s *NVMeSQE) PropertyAttrib() uint8 { return uint8(s.CDW[0]) }

// PropertyOffset is the property's offset (bytes 44-47): 0x0 CAP, 0x8 VS,
// 0x14 CC, 0x1c CSTS ...
func (s *NVMeSQE) PropertyOffset() uint32 { return s.CDW[1] }

// PropertyValue is a Property Set's value (bytes 48-55).
func (s *NVMeSQE) PropertyValue() uint64 { return uint64(s.CDW[3])<<32 | uint64(s.CDW[2]) }

// NVMeConnectData is the 1024 bytes a Fabrics Connect carries (NVMe-oF 1.1
// Figure 21), in the capsule or fetched by RDMA READ.
type NVMeConnectData struct {
	Raw     []byte // the 1024 bytes, aliasing the input (the reserved areas are read from it)
	HostID  []byte // 16 bytes
	CNTLID  uint16 // 0xffff: any controller (dynamic model)
	SubNQN  string // NUL-terminated within its 256 bytes
	HostNQN string
}

// DecodeFromBytes decodes Connect data. The strings are copied out of data.
func (c *NVMeConnectData) DecodeFromBytes(data []byte) error {
	if len(data) < NVMeConnectDataLength {
		return errNVMeConnectShort
	}
	c.Raw = data[:NVMeConnectDataLength]
	c.HostID = data[0:16]
	c.CNTLID = binary.LittleEndian.Uint16(data[16:18])
	c.SubNQN, c.HostNQN = cString(data[256:512]), cString(data[512:768])
	return nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// NVMeCQE is a response capsule's completion queue entry.
type NVMeCQE struct {
	DW0, DW1 uint32
	SQHD     uint16
	SQID     uint16
	CID      uint16
	Status   NVMeStatus
}

// DecodeFromBytes decodes a response capsule.
func (c *NVMeCQE) DecodeFromBytes(data []byte) error {
	if len(data) < NVMeCQELength {
		return errNVMeCQEShort
	}
	le := binary.LittleEndian
	c.DW0, c.DW1 = le.Uint32(data[0:4]), le.Uint32(data[4:8])
	c.SQHD, c.SQID = le.Uint16(data[8:10]), le.Uint16(data[10:12])
	c.CID, c.Status = le.Uint16(data[12:14]), NVMeStatus(le.Uint16(data[14:16]))
	return nil
}

// NVMeStatus is a CQE's 16-bit status field: phase tag (bit 0), status code
// (bits 8:1), status code type (bits 11:9), command retry delay (13:12),
// more (14), do not retry (15).
type NVMeStatus uint16

// Phase is the phase tag.
func (s NVMeStatus) Phase() bool { return s&1 != 0 }

// SC is the status code.
func (s NVMeStatus) SC() uint8 { return uint8(s >> 1) }

// SCT is the status code type: 0 generic, 1 command specific, 2 media and
// data integrity, 3 path related, 7 vendor specific.
func (s NVMeStatus) SCT() uint8 { return uint8(s>>9) & 7 }

// CRD is the command retry delay selector.
func (s NVMeStatus) CRD() uint8 { return uint8(s>>12) & 3 }

// More says more status information is in the Error Information log page.
func (s NVMeStatus) More() bool { return s&(1<<14) != 0 }

// DNR is the Do Not Retry bit.
func (s NVMeStatus) DNR() bool { return s&(1<<15) != 0 }

// OK reports a successful completion (SCT 0, SC 0).
func (s NVMeStatus) OK() bool { return s.SC() == 0 && s.SCT() == 0 }

var nvmeSCTNames = [8]string{"Generic Command Status", "Command Specific Status", "Media and Data Integrity Errors",
	"Path Related Status", "Reserved", "Reserved", "Reserved", "Vendor Specific"}

// SCTName names the status code type.
func (s NVMeStatus) SCTName() string { return nvmeSCTNames[s.SCT()] }

// nvmeGenericStatus names generic status codes (NVMe Base 2.0 Figure 102,
// NVM Command Set Figure 19 for 0x80-0x84).
var nvmeGenericStatus = map[uint8]string{
	0x00: "Successful Completion", 0x01: "Invalid Command Opcode", 0x02: "Invalid Field in Command",
	0x03: "Command ID Conflict", 0x04: "Data Transfer Error", 0x05: "Commands Aborted due to Power Loss Notification",
	0x06: "Internal Error", 0x07: "Command Abort Requested", 0x08: "Command Aborted due to SQ Deletion",
	0x09: "Command Aborted due to Failed Fused Command", 0x0a: "Command Aborted due to Missing Fused Command",
	0x0b: "Invalid Namespace or Format", 0x0c: "Command Sequence Error", 0x0d: "Invalid SGL Segment Descriptor",
	0x0e: "Invalid Number of SGL Descriptors", 0x0f: "Data SGL Length Invalid", 0x10: "Metadata SGL Length Invalid",
	0x11: "SGL Descriptor Type Invalid", 0x12: "Invalid Use of Controller Memory Buffer", 0x13: "PRP Offset Invalid",
	0x14: "Atomic Write Unit Exceeded", 0x15: "Operation Denied", 0x16: "SGL Offset Invalid",
	0x18: "Host Identifier Inconsistent Format", 0x19: "Keep Alive Timer Expired", 0x1a: "Keep Alive Timeout Invalid",
	0x1b: "Command Aborted due to Preempt and Abort", 0x1c: "Sanitize Failed", 0x1d: "Sanitize In Progress",
	0x1e: "SGL Data Block Granularity Invalid", 0x1f: "Command Not Supported for Queue in CMB",
	0x20: "Namespace is Write Protected", 0x21: "Command Interrupted", 0x22: "Transient Transport Error",
	0x80: "LBA Out of Range", 0x81: "Capacity Exceeded", 0x82: "Namespace Not Ready", 0x83: "Reservation Conflict",
	0x84: "Format In Progress",
}

// nvmeCommandSpecificStatus names command specific status codes (NVMe Base
// 2.0 Figure 103; 0x80-0x84 are the Fabrics Connect ones of NVMe-oF 1.1
// Figure 22, the codes an NVMe-oF capture shows).
var nvmeCommandSpecificStatus = map[uint8]string{
	0x00: "Completion Queue Invalid", 0x01: "Invalid Queue Identifier", 0x02: "Invalid Queue Size",
	0x03: "Abort Command Limit Exceeded", 0x05: "Asynchronous Event Request Limit Exceeded",
	0x06: "Invalid Firmware Slot", 0x07: "Invalid Firmware Image", 0x08: "Invalid Interrupt Vector",
	0x09: "Invalid Log Page", 0x0a: "Invalid Format", 0x0b: "Firmware Activation Requires Conventional Reset",
	0x0c: "Invalid Queue Deletion", 0x0d: "Feature Identifier Not Saveable", 0x0e: "Feature Not Changeable",
	0x0f: "Feature Not Namespace Specific",
	0x80: "Connect Incompatible Format", 0x81: "Connect Controller Busy", 0x82: "Connect Invalid Parameters",
	0x83: "Connect Restart Discovery", 0x84: "Connect Invalid Host",
}

// nvmeMediaStatus names media and data integrity errors (NVM Command Set Figure 20).
var nvmeMediaStatus = map[uint8]string{
	0x80: "Write Fault", 0x81: "Unrecovered Read Error", 0x82: "End-to-end Guard Check Error",
	0x83: "End-to-end Application Tag Check Error", 0x84: "End-to-end Reference Tag Check Error",
	0x85: "Compare Failure", 0x86: "Access Denied", 0x87: "Deallocated or Unwritten Logical Block",
}

// nvmePathStatus names path related status codes (NVMe Base 2.0 Figure 105).
var nvmePathStatus = map[uint8]string{
	0x00: "Internal Path Error", 0x01: "Asymmetric Access Persistent Loss", 0x02: "Asymmetric Access Inaccessible",
	0x03: "Asymmetric Access Transition", 0x60: "Controller Pathing Error", 0x70: "Host Pathing Error",
	0x71: "Command Aborted By Host",
}

// String names the status: "Success" for a successful completion, the
// status code's name, or its type and code in hex.
func (s NVMeStatus) String() string {
	if n, ok := s.Name(); ok {
		return n
	}
	return "SCT 0x" + strconv.FormatUint(uint64(s.SCT()), 16) + " SC 0x" + strconv.FormatUint(uint64(s.SC()), 16)
}

// Name is the status's name without building a string: false for a code
// the specifications do not name.
func (s NVMeStatus) Name() (string, bool) {
	if s.OK() {
		return "Success", true
	}
	var names map[uint8]string
	switch s.SCT() {
	case 0:
		names = nvmeGenericStatus
	case 1:
		names = nvmeCommandSpecificStatus
	case 2:
		names = nvmeMediaStatus
	case 3:
		names = nvmePathStatus
	}
	n, ok := names[s.SC()]
	return n, ok
}

// NVMeCNS is an Identify's CNS value (NVMe Base 2.0 Figure 273).
type NVMeCNS uint8

// The CNS values whose data structures ibwire decodes field by field.
const (
	NVMeCNSNamespace    NVMeCNS = 0x00
	NVMeCNSController   NVMeCNS = 0x01
	NVMeCNSActiveNSList NVMeCNS = 0x02
)

var nvmeCNSNames = map[NVMeCNS]string{
	NVMeCNSNamespace: "Identify Namespace", NVMeCNSController: "Identify Controller", NVMeCNSActiveNSList: "Active Namespace ID list",
	0x03: "Namespace Identification Descriptor list", 0x04: "NVM Set List",
	0x05: "I/O Command Set specific Identify Namespace", 0x06: "I/O Command Set specific Identify Controller",
	0x07: "Active Namespace ID list for I/O Command Set", 0x10: "Allocated Namespace ID list",
	0x11: "Identify Allocated Namespace", 0x12: "Controller list attached to NSID", 0x13: "Controller list",
	0x14: "Primary Controller Capabilities", 0x15: "Secondary Controller list", 0x1c: "Identify I/O Command Set",
}

func (c NVMeCNS) String() string {
	if s, ok := nvmeCNSNames[c]; ok {
		return s
	}
	return "CNS 0x" + strconv.FormatUint(uint64(c), 16)
}

// NVMeLogPage is a Get Log Page's log page identifier (NVMe Base 2.0 Figure 202).
type NVMeLogPage uint8

// The log pages whose data structures ibwire decodes field by field.
const (
	NVMeLogErrors    NVMeLogPage = 0x01
	NVMeLogSMART     NVMeLogPage = 0x02
	NVMeLogFirmware  NVMeLogPage = 0x03
	NVMeLogChangedNS NVMeLogPage = 0x04
	NVMeLogEffects   NVMeLogPage = 0x05
	NVMeLogANA       NVMeLogPage = 0x0c
	NVMeLogDiscovery NVMeLogPage = 0x70
)

var nvmeLogPageNames = map[NVMeLogPage]string{
	NVMeLogErrors: "Error Information", NVMeLogSMART: "SMART / Health Information", NVMeLogFirmware: "Firmware Slot Information",
	NVMeLogChangedNS: "Changed Namespace List", NVMeLogEffects: "Commands Supported and Effects", 0x06: "Device Self-test",
	0x07: "Telemetry Host-Initiated", 0x08: "Telemetry Controller-Initiated", NVMeLogANA: "Asymmetric Namespace Access",
	0x0d: "Persistent Event Log", NVMeLogDiscovery: "Discovery", 0x80: "Reservation Notification", 0x81: "Sanitize Status",
}

func (l NVMeLogPage) String() string {
	if s, ok := nvmeLogPageNames[l]; ok {
		return s
	}
	return "Log Page 0x" + strconv.FormatUint(uint64(l), 16)
}

// NVMeFeature is a Set/Get Features' feature identifier (NVMe Base 2.0 Figure 317).
type NVMeFeature uint8

var nvmeFeatureNames = map[NVMeFeature]string{
	0x01: "Arbitration", 0x02: "Power Management", 0x03: "LBA Range Type", 0x04: "Temperature Threshold",
	0x05: "Error Recovery", 0x06: "Volatile Write Cache", 0x07: "Number of Queues", 0x08: "Interrupt Coalescing",
	0x09: "Interrupt Vector Configuration", 0x0a: "Write Atomicity Normal", 0x0b: "Asynchronous Event Configuration",
	0x0c: "Autonomous Power State Transition", 0x0d: "Host Memory Buffer", 0x0e: "Timestamp",
	0x0f: "Keep Alive Timer", 0x10: "Host Controlled Thermal Management", 0x11: "Non-Operational Power State Config",
	0x80: "Software Progress Marker", 0x81: "Host Identifier", 0x82: "Reservation Notification Mask",
	0x83: "Reservation Persistence",
}

func (f NVMeFeature) String() string {
	if s, ok := nvmeFeatureNames[f]; ok {
		return s
	}
	return "Feature 0x" + strconv.FormatUint(uint64(f), 16)
}

// NVMeRDMACMReq is the private data of the RDMA CM REQ that opens an
// NVMe-oF queue (NVMe-oF 1.1 §7.3.3.4, Figure 62), after the 36-byte IP-CM
// header: record format, queue id, host receive and send queue sizes
// (0-based sizes, as Wireshark shows them), controller id.
type NVMeRDMACMReq struct {
	RecFmt, QID, HRQSize, HSQSize, CNTLID uint16
}

// DecodeNVMeRDMACMReq decodes the NVMe-oF part of a CM REQ's private data
// (the 92 bytes of CMReq.PrivateData).
func DecodeNVMeRDMACMReq(priv []byte) (NVMeRDMACMReq, bool) {
	const at = 36 // after the IP-CM header
	if len(priv) < at+10 {
		return NVMeRDMACMReq{}, false
	}
	le := binary.LittleEndian
	d := priv[at:]
	return NVMeRDMACMReq{RecFmt: le.Uint16(d[0:]), QID: le.Uint16(d[2:]), HRQSize: le.Uint16(d[4:]),
		HSQSize: le.Uint16(d[6:]), CNTLID: le.Uint16(d[8:])}, true
}

// Encoders, for crafting capsules (package craft): each writes back what
// the decoder above reads, reserved bytes zero.

// appendTo appends the descriptor's 16 bytes.
func (s *NVMeSGL) appendTo(b []byte) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, s.Address)
	if s.Type == NVMeSGLKeyedDataBlock {
		b = append(b, byte(s.Length), byte(s.Length>>8), byte(s.Length>>16))
		b = le.AppendUint32(b, s.Key)
	} else {
		b = le.AppendUint32(b, s.Length)
		b = append(b, 0, 0, 0)
	}
	return append(b, s.Type<<4|s.Subtype&0xf)
}

// AppendTo appends the command capsule: the 64-byte SQE (CDW2 and CDW3
// zero), then InCapsule.
func (s *NVMeSQE) AppendTo(b []byte) []byte {
	le := binary.LittleEndian
	b = append(b, byte(s.Opcode), s.PSDT<<6|s.Fuse&3)
	b = le.AppendUint16(b, s.CID)
	b = le.AppendUint32(b, s.NSID)
	b = append(b, make([]byte, 8)...)
	b = le.AppendUint64(b, s.MPTR)
	b = s.SGL.appendTo(b)
	for _, w := range s.CDW {
		b = le.AppendUint32(b, w)
	}
	return append(b, s.InCapsule...)
}

// AppendTo appends the 16-byte CQE.
func (c *NVMeCQE) AppendTo(b []byte) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, c.DW0)
	b = le.AppendUint32(b, c.DW1)
	b = le.AppendUint16(b, c.SQHD)
	b = le.AppendUint16(b, c.SQID)
	b = le.AppendUint16(b, c.CID)
	return le.AppendUint16(b, uint16(c.Status))
}

// AppendTo appends the 1024 bytes of Connect data from HostID, CNTLID,
// SubNQN and HostNQN (Raw is not read); an NQN is cut to 255 bytes.
func (c *NVMeConnectData) AppendTo(b []byte) []byte {
	d := make([]byte, NVMeConnectDataLength)
	copy(d[0:16], c.HostID)
	binary.LittleEndian.PutUint16(d[16:18], c.CNTLID)
	copy(d[256:511], c.SubNQN)
	copy(d[512:767], c.HostNQN)
	return append(b, d...)
}

// AppendTo appends the 32 bytes of NVMe-oF private data of a CM REQ (the
// consumer's part, after the IP-CM header).
func (r *NVMeRDMACMReq) AppendTo(b []byte) []byte {
	le := binary.LittleEndian
	for _, v := range [...]uint16{r.RecFmt, r.QID, r.HRQSize, r.HSQSize, r.CNTLID} {
		b = le.AppendUint16(b, v)
	}
	return append(b, make([]byte, 22)...)
}

// NVMeRDMACMRep is the private data of the CM REP that accepts an NVMe-oF
// queue (NVMe-oF 1.1 Figure 63): record format and the controller's
// receive queue size.
type NVMeRDMACMRep struct {
	RecFmt, CRQSize uint16
}

// AppendTo appends its 32 bytes.
func (r *NVMeRDMACMRep) AppendTo(b []byte) []byte {
	le := binary.LittleEndian
	b = le.AppendUint16(b, r.RecFmt)
	b = le.AppendUint16(b, r.CRQSize)
	return append(b, make([]byte, 28)...)
}
