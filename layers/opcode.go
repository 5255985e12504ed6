package layers

import "fmt"

// Opcode is the BTH OpCode (IBTA Vol 1 §9.2, Table 38): bits 7-5 select the
// transport service, bits 4-0 the operation. The table below is the only place
// in ibwire that lists opcodes; everything else asks it.
type Opcode uint8

// ServiceType is the transport service an opcode belongs to.
type ServiceType uint8

// Transport services (IBTA Vol 1 §9.2 Table 38, Annex A14 XRC, Annex A17 CNP).
const (
	ServiceUnknown ServiceType = iota
	ServiceRC                  // Reliable Connection
	ServiceUC                  // Unreliable Connection
	ServiceRD                  // Reliable Datagram
	ServiceUD                  // Unreliable Datagram
	ServiceCNP                 // Congestion Notification Packet
	ServiceXRC                 // Extended Reliable Connection
)

var serviceNames = [...]string{"Unknown", "RC", "UC", "RD", "UD", "CNP", "XRC"}

func (s ServiceType) String() string {
	if int(s) < len(serviceNames) {
		return serviceNames[s]
	}
	return fmt.Sprintf("Unknown(%d)", uint8(s))
}

// Operation is what a packet does, independent of the service.
type Operation uint8

// Operations carried by IB transport packets.
const (
	OpUnknown Operation = iota
	OpSend
	OpRDMAWrite
	OpRDMAReadRequest
	OpRDMAReadResponse
	OpAcknowledge
	OpAtomicAcknowledge
	OpCompareSwap
	OpFetchAdd
	OpResync
	OpFlush
	OpAtomicWrite
	OpCNP
)

// TakesResponderResource reports whether a request of this operation holds
// one of the responder's outstanding READ/atomic resources
// (max_dest_rd_atomic) until it is answered: RDMA READ and the atomics.
func (o Operation) TakesResponderResource() bool {
	return o == OpRDMAReadRequest || o == OpCompareSwap || o == OpFetchAdd
}

var operationNames = [...]string{"Unknown", "SEND", "RDMA_WRITE", "RDMA_READ_REQUEST", "RDMA_READ_RESPONSE",
	"ACKNOWLEDGE", "ATOMIC_ACKNOWLEDGE", "COMPARE_SWAP", "FETCH_ADD", "RESYNC", "FLUSH", "ATOMIC_WRITE", "CNP"}

func (o Operation) String() string {
	if int(o) < len(operationNames) {
		return operationNames[o]
	}
	return fmt.Sprintf("Unknown(%d)", uint8(o))
}

// Position is where a packet sits in a multi-packet message.
type Position uint8

// Packet positions within a message.
const (
	PosNone   Position = iota // not part of a segmented message (ACK, atomic, CNP)
	PosFirst                  // FIRST
	PosMiddle                 // MIDDLE
	PosLast                   // LAST
	PosOnly                   // ONLY: the whole message in one packet
)

var positionNames = [...]string{"", "FIRST", "MIDDLE", "LAST", "ONLY"}

func (p Position) String() string {
	if int(p) < len(positionNames) {
		return positionNames[p]
	}
	return fmt.Sprintf("Unknown(%d)", uint8(p))
}

// Segments is how many packets carry a message of length bytes at path MTU
// mtu: one for an empty message, and one when the MTU is not known (0).
// A READ request takes as many PSNs, one per response packet.
func Segments(length, mtu int) int {
	if mtu <= 0 || length <= 0 {
		return 1
	}
	return (length + mtu - 1) / mtu
}

// PositionOf is the position of a packet that starts its message (first),
// ends it (last), both, or neither.
func PositionOf(first, last bool) Position {
	switch {
	case first && last:
		return PosOnly
	case first:
		return PosFirst
	case last:
		return PosLast
	}
	return PosMiddle
}

// SegmentPosition is the position of packet i (from 0) of a message sent
// in n packets.
func SegmentPosition(i, n int) Position { return PositionOf(i == 0, i == n-1) }

// HeaderKind names an extended transport header (ETH) that may follow the BTH.
type HeaderKind uint8

// Extended transport headers, in the order the IBTA places them.
const (
	HdrNone         HeaderKind = iota
	HdrRDETH                   // Reliable Datagram ETH, 4 bytes
	HdrDETH                    // Datagram ETH, 8 bytes
	HdrXRCETH                  // XRC ETH, 4 bytes
	HdrFETH                    // Flush ETH, 4 bytes
	HdrRETH                    // RDMA ETH, 16 bytes
	HdrAtomicETH               // Atomic ETH, 28 bytes
	HdrAETH                    // ACK ETH, 4 bytes
	HdrAtomicAckETH            // Atomic ACK ETH, 8 bytes
	HdrImmDt                   // Immediate data, 4 bytes
	HdrIETH                    // Invalidate ETH, 4 bytes
	HdrCNP                     // RoCEv2 CNP reserved block, 16 bytes
)

var headerKindInfo = [...]struct {
	name string
	size int
}{
	HdrNone: {"None", 0}, HdrRDETH: {"RDETH", 4}, HdrDETH: {"DETH", 8}, HdrXRCETH: {"XRCETH", 4},
	HdrFETH: {"FETH", 4}, HdrRETH: {"RETH", 16}, HdrAtomicETH: {"AtomicETH", 28}, HdrAETH: {"AETH", 4},
	HdrAtomicAckETH: {"AtomicAckETH", 8}, HdrImmDt: {"ImmDt", 4}, HdrIETH: {"IETH", 4}, HdrCNP: {"CNP", 16},
}

func (h HeaderKind) String() string {
	if int(h) < len(headerKindInfo) {
		return headerKindInfo[h].name
	}
	return fmt.Sprintf("Unknown(%d)", uint8(h))
}

// Size is the header's length in bytes.
func (h HeaderKind) Size() int {
	if int(h) < len(headerKindInfo) {
		return headerKindInfo[h].size
	}
	return 0
}

// maxETHs is the longest chain of extended headers any opcode has
// (RD RDMA WRITE ONLY with immediate: RDETH DETH RETH ImmDt).
const maxETHs = 4

// OpcodeInfo is everything ibwire knows about one opcode.
type OpcodeInfo struct {
	Opcode     Opcode
	Known      bool   // false for reserved or vendor values
	Name       string // IBTA spelling, e.g. "RC_RDMA_WRITE_ONLY"
	Wireshark  string // tshark 4.0 value string of infiniband.bth.opcode; "" when tshark has none
	Info       string // Wireshark's Info-column name (OpCodeMap), e.g. "RC RDMA Write Only"
	Service    ServiceType
	Operation  Operation
	Position   Position
	Headers    [maxETHs]HeaderKind // extended headers after the BTH, in wire order
	NHeaders   uint8
	Payload    bool // a payload may follow the headers
	Response   bool // sent by the responder (ACKs, read responses, atomic ACK)
	Immediate  bool // carries ImmDt
	Invalidate bool // carries IETH
}

// HeaderList returns the extended headers that follow the BTH, in order.
func (o *OpcodeInfo) HeaderList() []HeaderKind { return o.Headers[:o.NHeaders] }

// HeaderLength is the BTH plus the extended headers, in bytes (rxe's "length").
func (o *OpcodeInfo) HeaderLength() int {
	n := BTHLength
	for _, h := range o.HeaderList() {
		n += h.Size()
	}
	return n
}

// Has reports whether the opcode carries header h.
func (o *OpcodeInfo) Has(h HeaderKind) bool {
	for _, k := range o.HeaderList() {
		if k == h {
			return true
		}
	}
	return false
}

// IsRequest reports whether the opcode is sent by a requester.
func (o *OpcodeInfo) IsRequest() bool { return o.Known && !o.Response && o.Service != ServiceCNP }

// Info returns the table entry for op. Unknown opcodes get an entry with Known false.
func (op Opcode) Info() *OpcodeInfo { return &opcodeTable[op] }

// String returns the IBTA name ("RC_SEND_ONLY") or "Unknown(0x..)".
func (op Opcode) String() string {
	if e := &opcodeTable[op]; e.Known {
		return e.Name
	}
	return fmt.Sprintf("Unknown(0x%02x)", uint8(op))
}

// Service is the transport service of op.
func (op Opcode) Service() ServiceType { return opcodeTable[op].Service }

// opcodeTable is indexed by opcode. It is filled once from opcodeDefs, a short
// literal list, so the table costs nothing to read and a few microseconds to build.
var opcodeTable = buildOpcodeTable()

type opDef struct {
	op        Opcode
	service   ServiceType
	operation Operation
	pos       Position
	headers   []HeaderKind
	payload   bool
	wireshark string
	info      string
	name      string
}

// Shorthands keep the table readable: one line per opcode.
var (
	hNone     = []HeaderKind(nil)
	hImm      = []HeaderKind{HdrImmDt}
	hRETH     = []HeaderKind{HdrRETH}
	hRETHImm  = []HeaderKind{HdrRETH, HdrImmDt}
	hAETH     = []HeaderKind{HdrAETH}
	hAtomAck  = []HeaderKind{HdrAETH, HdrAtomicAckETH}
	hAtomic   = []HeaderKind{HdrAtomicETH}
	hIETH     = []HeaderKind{HdrIETH}
	hDETH     = []HeaderKind{HdrDETH}
	hDETHImm  = []HeaderKind{HdrDETH, HdrImmDt}
	hXRC      = []HeaderKind{HdrXRCETH}
	hXRCImm   = []HeaderKind{HdrXRCETH, HdrImmDt}
	hXRCRETH  = []HeaderKind{HdrXRCETH, HdrRETH}
	hXRCRImm  = []HeaderKind{HdrXRCETH, HdrRETH, HdrImmDt}
	hXRCAtom  = []HeaderKind{HdrXRCETH, HdrAtomicETH}
	hXRCIETH  = []HeaderKind{HdrXRCETH, HdrIETH}
	hRD       = []HeaderKind{HdrRDETH, HdrDETH}
	hRDImm    = []HeaderKind{HdrRDETH, HdrDETH, HdrImmDt}
	hRDRETH   = []HeaderKind{HdrRDETH, HdrDETH, HdrRETH}
	hRDRImm   = []HeaderKind{HdrRDETH, HdrDETH, HdrRETH, HdrImmDt}
	hRDAETH   = []HeaderKind{HdrRDETH, HdrAETH}
	hRDOnly   = []HeaderKind{HdrRDETH}
	hRDAtmAck = []HeaderKind{HdrRDETH, HdrAETH, HdrAtomicAckETH}
	hRDAtomic = []HeaderKind{HdrRDETH, HdrDETH, HdrAtomicETH}
	hFlush    = []HeaderKind{HdrFETH, HdrRETH}
	hCNP      = []HeaderKind{HdrCNP}
)

// transportPrefix is the common prefix of Wireshark's opcode names.
var transportPrefix = map[ServiceType]string{
	ServiceRC: "Reliable Connection (RC) - ", ServiceUC: "Unreliable Connection (UC) - ",
	ServiceRD: "Reliable Datagram (RD) - ", ServiceUD: "Unreliable Datagram (UD) - ",
	ServiceXRC: "Extended Reliable Connection (XRC) - ",
}

// opcodeDefs lists every opcode ibwire knows: the 84 of Wireshark 4.0, plus
// RC FLUSH 0x1C, RC ATOMIC WRITE 0x1D, RD FLUSH 0x5C, RD ATOMIC WRITE 0x5D
// (IBTA 1.5) and the RoCEv2 CNP 0x81 (Annex A17). The wireshark column holds
// the suffix after the transport prefix; "" means tshark 4.0 does not know it.
var opcodeDefs = []opDef{
	// Reliable Connection (RC), bits 7-5 = 000.
	{0x00, ServiceRC, OpSend, PosFirst, hNone, true, "SEND First", "RC Send First", "RC_SEND_FIRST"},
	{0x01, ServiceRC, OpSend, PosMiddle, hNone, true, "SEND Middle", "RC Send Middle", "RC_SEND_MIDDLE"},
	{0x02, ServiceRC, OpSend, PosLast, hNone, true, "SEND Last", "RC Send Last", "RC_SEND_LAST"},
	{0x03, ServiceRC, OpSend, PosLast, hImm, true, "SEND Last with Immediate", "RC Send Last Immediate", "RC_SEND_LAST_WITH_IMMEDIATE"},
	{0x04, ServiceRC, OpSend, PosOnly, hNone, true, "SEND Only", "RC Send Only", "RC_SEND_ONLY"},
	{0x05, ServiceRC, OpSend, PosOnly, hImm, true, "SEND Only with Immediate", "RC Send Only Immediate", "RC_SEND_ONLY_WITH_IMMEDIATE"},
	{0x06, ServiceRC, OpRDMAWrite, PosFirst, hRETH, true, "RDMA WRITE First", "RC RDMA Write First", "RC_RDMA_WRITE_FIRST"},
	{0x07, ServiceRC, OpRDMAWrite, PosMiddle, hNone, true, "RDMA WRITE Middle", "RC RDMA Write Middle", "RC_RDMA_WRITE_MIDDLE"},
	{0x08, ServiceRC, OpRDMAWrite, PosLast, hNone, true, "RDMA WRITE Last", "RC RDMA Write Last", "RC_RDMA_WRITE_LAST"},
	{0x09, ServiceRC, OpRDMAWrite, PosLast, hImm, true, "RDMA WRITE Last with Immediate", "RC RDMA Write Last Immediate", "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE"},
	{0x0A, ServiceRC, OpRDMAWrite, PosOnly, hRETH, true, "RDMA WRITE Only", "RC RDMA Write Only", "RC_RDMA_WRITE_ONLY"},
	{0x0B, ServiceRC, OpRDMAWrite, PosOnly, hRETHImm, true, "RDMA WRITE Only with Immediate", "RC RDMA Write Only Immediate", "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"},
	{0x0C, ServiceRC, OpRDMAReadRequest, PosOnly, hRETH, false, "RDMA READ Request", "RC RDMA Read Request", "RC_RDMA_READ_REQUEST"},
	{0x0D, ServiceRC, OpRDMAReadResponse, PosFirst, hAETH, true, "RDMA READ response First", "RC RDMA Read Response First", "RC_RDMA_READ_RESPONSE_FIRST"},
	{0x0E, ServiceRC, OpRDMAReadResponse, PosMiddle, hNone, true, "RDMA READ response Middle", "RC RDMA Read Response Middle", "RC_RDMA_READ_RESPONSE_MIDDLE"},
	{0x0F, ServiceRC, OpRDMAReadResponse, PosLast, hAETH, true, "RDMA READ response Last", "RC RDMA Read Response Last", "RC_RDMA_READ_RESPONSE_LAST"},
	{0x10, ServiceRC, OpRDMAReadResponse, PosOnly, hAETH, true, "RDMA READ response Only", "RC RDMA Read Response Only", "RC_RDMA_READ_RESPONSE_ONLY"},
	{0x11, ServiceRC, OpAcknowledge, PosNone, hAETH, false, "Acknowledge", "RC Acknowledge", "RC_ACKNOWLEDGE"},
	{0x12, ServiceRC, OpAtomicAcknowledge, PosNone, hAtomAck, false, "ATOMIC Acknowledge", "RC Atomic Acknowledge", "RC_ATOMIC_ACKNOWLEDGE"},
	{0x13, ServiceRC, OpCompareSwap, PosOnly, hAtomic, false, "CmpSwap", "RC Compare Swap", "RC_COMPARE_SWAP"},
	{0x14, ServiceRC, OpFetchAdd, PosOnly, hAtomic, false, "FetchAdd", "RC Fetch Add", "RC_FETCH_ADD"},
	{0x15, ServiceRC, OpUnknown, PosNone, hNone, false, "Reserved", "Unknown OpCode", "RC_RESERVED"},
	{0x16, ServiceRC, OpSend, PosLast, hIETH, true, "SEND Last with Invalidate", "RC Send Last Invalidate", "RC_SEND_LAST_WITH_INVALIDATE"},
	{0x17, ServiceRC, OpSend, PosOnly, hIETH, true, "SEND Only with Invalidate", "RC Send Only Invalidate", "RC_SEND_ONLY_WITH_INVALIDATE"},
	{0x1C, ServiceRC, OpFlush, PosOnly, hFlush, false, "", "Unknown OpCode", "RC_FLUSH"},
	{0x1D, ServiceRC, OpAtomicWrite, PosOnly, hRETH, true, "", "Unknown OpCode", "RC_ATOMIC_WRITE"},

	// Unreliable Connection (UC), bits 7-5 = 001.
	{0x20, ServiceUC, OpSend, PosFirst, hNone, true, "SEND First", "UC Send First", "UC_SEND_FIRST"},
	{0x21, ServiceUC, OpSend, PosMiddle, hNone, true, "SEND Middle", "UC Send Middle", "UC_SEND_MIDDLE"},
	{0x22, ServiceUC, OpSend, PosLast, hNone, true, "SEND Last", "UC Send Last", "UC_SEND_LAST"},
	{0x23, ServiceUC, OpSend, PosLast, hImm, true, "SEND Last with Immediate", "UC Send Last Immediate", "UC_SEND_LAST_WITH_IMMEDIATE"},
	{0x24, ServiceUC, OpSend, PosOnly, hNone, true, "SEND Only", "UC Send Only", "UC_SEND_ONLY"},
	{0x25, ServiceUC, OpSend, PosOnly, hImm, true, "SEND Only with Immediate", "UC Send Only Immediate", "UC_SEND_ONLY_WITH_IMMEDIATE"},
	{0x26, ServiceUC, OpRDMAWrite, PosFirst, hRETH, true, "RDMA WRITE First", "UC RDMA Write First", "UC_RDMA_WRITE_FIRST"},
	{0x27, ServiceUC, OpRDMAWrite, PosMiddle, hNone, true, "RDMA WRITE Middle", "UC RDMA Write Middle", "UC_RDMA_WRITE_MIDDLE"},
	{0x28, ServiceUC, OpRDMAWrite, PosLast, hNone, true, "RDMA WRITE Last", "UC RDMA Write Last", "UC_RDMA_WRITE_LAST"},
	{0x29, ServiceUC, OpRDMAWrite, PosLast, hImm, true, "RDMA WRITE Last with Immediate", "UC RDMA Write Last Immediate", "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE"},
	{0x2A, ServiceUC, OpRDMAWrite, PosOnly, hRETH, true, "RDMA WRITE Only", "UC RDMA Write Only", "UC_RDMA_WRITE_ONLY"},
	{0x2B, ServiceUC, OpRDMAWrite, PosOnly, hRETHImm, true, "RDMA WRITE Only with Immediate", "UC RDMA Write Only Immediate", "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"},

	// Reliable Datagram (RD), bits 7-5 = 010, parsed as the IBTA defines them.
	{0x40, ServiceRD, OpSend, PosFirst, hRD, true, "SEND First", "DC Send First", "RD_SEND_FIRST"},
	{0x41, ServiceRD, OpSend, PosMiddle, hRD, true, "SEND Middle", "DC Send Middle", "RD_SEND_MIDDLE"},
	{0x42, ServiceRD, OpSend, PosLast, hRD, true, "SEND Last", "DC Send Last", "RD_SEND_LAST"},
	{0x43, ServiceRD, OpSend, PosLast, hRDImm, true, "SEND Last with Immediate", "DC Send Last Immediate", "RD_SEND_LAST_WITH_IMMEDIATE"},
	{0x44, ServiceRD, OpSend, PosOnly, hRD, true, "SEND Only", "DC Send Only", "RD_SEND_ONLY"},
	{0x45, ServiceRD, OpSend, PosOnly, hRDImm, true, "SEND Only with Immediate", "DC Send Only Immediate", "RD_SEND_ONLY_WITH_IMMEDIATE"},
	{0x46, ServiceRD, OpRDMAWrite, PosFirst, hRDRETH, true, "RDMA WRITE First", "DC RDMA Write First", "RD_RDMA_WRITE_FIRST"},
	{0x47, ServiceRD, OpRDMAWrite, PosMiddle, hRD, true, "RDMA WRITE Middle", "DC RDMA Write Middle", "RD_RDMA_WRITE_MIDDLE"},
	{0x48, ServiceRD, OpRDMAWrite, PosLast, hRD, true, "RDMA WRITE Last", "DC RDMA Write Last", "RD_RDMA_WRITE_LAST"},
	{0x49, ServiceRD, OpRDMAWrite, PosLast, hRDImm, true, "RDMA WRITE Last with Immediate", "DC RDMA Write Last Immediate", "RD_RDMA_WRITE_LAST_WITH_IMMEDIATE"},
	{0x4A, ServiceRD, OpRDMAWrite, PosOnly, hRDRETH, true, "RDMA WRITE Only", "DC RDMA Write Only", "RD_RDMA_WRITE_ONLY"},
	{0x4B, ServiceRD, OpRDMAWrite, PosOnly, hRDRImm, true, "RDMA WRITE Only with Immediate", "DC RDMA Write Only Immediate", "RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE"},
	{0x4C, ServiceRD, OpRDMAReadRequest, PosOnly, hRDRETH, false, "RDMA READ Request", "DC RDMA Read Request", "RD_RDMA_READ_REQUEST"},
	{0x4D, ServiceRD, OpRDMAReadResponse, PosFirst, hRDAETH, true, "RDMA READ response First", "DC RDMA Read Response First", "RD_RDMA_READ_RESPONSE_FIRST"},
	{0x4E, ServiceRD, OpRDMAReadResponse, PosMiddle, hRDOnly, true, "RDMA READ response Middle", "DC RDMA Read Response Middle", "RD_RDMA_READ_RESPONSE_MIDDLE"},
	{0x4F, ServiceRD, OpRDMAReadResponse, PosLast, hRDAETH, true, "RDMA READ response Last", "DC RDMA Read Response Last", "RD_RDMA_READ_RESPONSE_LAST"},
	{0x50, ServiceRD, OpRDMAReadResponse, PosOnly, hRDAETH, true, "RDMA READ response Only", "DC RDMA Read Response Only", "RD_RDMA_READ_RESPONSE_ONLY"},
	{0x51, ServiceRD, OpAcknowledge, PosNone, hRDAETH, false, "Acknowledge", "DC Acknowledge", "RD_ACKNOWLEDGE"},
	{0x52, ServiceRD, OpAtomicAcknowledge, PosNone, hRDAtmAck, false, "ATOMIC Acknowledge", "DC Atomic Acknowledge", "RD_ATOMIC_ACKNOWLEDGE"},
	{0x53, ServiceRD, OpCompareSwap, PosOnly, hRDAtomic, false, "CmpSwap", "DC Compare Swap", "RD_COMPARE_SWAP"},
	{0x54, ServiceRD, OpFetchAdd, PosOnly, hRDAtomic, false, "FetchAdd", "DC Fetch Add", "RD_FETCH_ADD"},
	{0x55, ServiceRD, OpResync, PosOnly, hRD, false, "RESYNC", "DC RESYNC", "RD_RESYNC"},
	{0x5C, ServiceRD, OpFlush, PosOnly, []HeaderKind{HdrRDETH, HdrDETH, HdrFETH, HdrRETH}, false, "", "Unknown OpCode", "RD_FLUSH"},
	{0x5D, ServiceRD, OpAtomicWrite, PosOnly, hRDRETH, true, "", "Unknown OpCode", "RD_ATOMIC_WRITE"},

	// Unreliable Datagram (UD), bits 7-5 = 011.
	{0x64, ServiceUD, OpSend, PosOnly, hDETH, true, "SEND only", "UD Send Only", "UD_SEND_ONLY"},
	{0x65, ServiceUD, OpSend, PosOnly, hDETHImm, true, "SEND only with Immediate", "UD Send Only Immediate", "UD_SEND_ONLY_WITH_IMMEDIATE"},

	// Congestion notification: 0x80 is the native-IB value Wireshark names "CNP";
	// 0x81 is RoCEv2's (Annex A17), followed by 16 reserved bytes.
	{0x80, ServiceCNP, OpCNP, PosNone, hNone, true, "CNP", "Unknown OpCode", "CNP"},
	{0x81, ServiceCNP, OpCNP, PosNone, hCNP, false, "", "Unknown OpCode", "ROCEV2_CNP"},

	// Extended Reliable Connection (XRC), bits 7-5 = 101 (Annex A14).
	{0xA0, ServiceXRC, OpSend, PosFirst, hXRC, true, "SEND First", "Unknown OpCode", "XRC_SEND_FIRST"},
	{0xA1, ServiceXRC, OpSend, PosMiddle, hXRC, true, "SEND Middle", "Unknown OpCode", "XRC_SEND_MIDDLE"},
	{0xA2, ServiceXRC, OpSend, PosLast, hXRC, true, "SEND Last", "Unknown OpCode", "XRC_SEND_LAST"},
	{0xA3, ServiceXRC, OpSend, PosLast, hXRCImm, true, "SEND Last with Immediate", "Unknown OpCode", "XRC_SEND_LAST_WITH_IMMEDIATE"},
	{0xA4, ServiceXRC, OpSend, PosOnly, hXRC, true, "SEND Only", "Unknown OpCode", "XRC_SEND_ONLY"},
	{0xA5, ServiceXRC, OpSend, PosOnly, hXRCImm, true, "SEND Only with Immediate", "Unknown OpCode", "XRC_SEND_ONLY_WITH_IMMEDIATE"},
	{0xA6, ServiceXRC, OpRDMAWrite, PosFirst, hXRCRETH, true, "RDMA WRITE First", "Unknown OpCode", "XRC_RDMA_WRITE_FIRST"},
	{0xA7, ServiceXRC, OpRDMAWrite, PosMiddle, hXRC, true, "RDMA WRITE Middle", "Unknown OpCode", "XRC_RDMA_WRITE_MIDDLE"},
	{0xA8, ServiceXRC, OpRDMAWrite, PosLast, hXRC, true, "RDMA WRITE Last", "Unknown OpCode", "XRC_RDMA_WRITE_LAST"},
	{0xA9, ServiceXRC, OpRDMAWrite, PosLast, hXRCImm, true, "RDMA WRITE Last with Immediate", "Unknown OpCode", "XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE"},
	{0xAA, ServiceXRC, OpRDMAWrite, PosOnly, hXRCRETH, true, "RDMA WRITE Only", "Unknown OpCode", "XRC_RDMA_WRITE_ONLY"},
	{0xAB, ServiceXRC, OpRDMAWrite, PosOnly, hXRCRImm, true, "RDMA WRITE Only with Immediate", "Unknown OpCode", "XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"},
	{0xAC, ServiceXRC, OpRDMAReadRequest, PosOnly, hXRCRETH, false, "RDMA READ Request", "Unknown OpCode", "XRC_RDMA_READ_REQUEST"},
	{0xAD, ServiceXRC, OpRDMAReadResponse, PosFirst, hAETH, true, "RDMA READ response First", "Unknown OpCode", "XRC_RDMA_READ_RESPONSE_FIRST"},
	{0xAE, ServiceXRC, OpRDMAReadResponse, PosMiddle, hNone, true, "RDMA READ response Middle", "Unknown OpCode", "XRC_RDMA_READ_RESPONSE_MIDDLE"},
	{0xAF, ServiceXRC, OpRDMAReadResponse, PosLast, hAETH, true, "RDMA READ response Last", "Unknown OpCode", "XRC_RDMA_READ_RESPONSE_LAST"},
	{0xB0, ServiceXRC, OpRDMAReadResponse, PosOnly, hAETH, true, "RDMA READ response Only", "Unknown OpCode", "XRC_RDMA_READ_RESPONSE_ONLY"},
	{0xB1, ServiceXRC, OpAcknowledge, PosNone, hAETH, false, "Acknowledge", "Unknown OpCode", "XRC_ACKNOWLEDGE"},
	{0xB2, ServiceXRC, OpAtomicAcknowledge, PosNone, hAtomAck, false, "ATOMIC Acknowledge", "Unknown OpCode", "XRC_ATOMIC_ACKNOWLEDGE"},
	{0xB3, ServiceXRC, OpCompareSwap, PosOnly, hXRCAtom, false, "CmpSwap", "Unknown OpCode", "XRC_COMPARE_SWAP"},
	{0xB4, ServiceXRC, OpFetchAdd, PosOnly, hXRCAtom, false, "FetchAdd", "Unknown OpCode", "XRC_FETCH_ADD"},
	{0xB6, ServiceXRC, OpSend, PosLast, hXRCIETH, true, "SEND Last with Invalidate", "Unknown OpCode", "XRC_SEND_LAST_WITH_INVALIDATE"},
	{0xB7, ServiceXRC, OpSend, PosOnly, hXRCIETH, true, "SEND Only with Invalidate", "Unknown OpCode", "XRC_SEND_ONLY_WITH_INVALIDATE"},
}

func buildOpcodeTable() (t [256]OpcodeInfo) {
	for i := range t {
		t[i] = OpcodeInfo{Opcode: Opcode(i), Payload: true}
	}
	for _, d := range opcodeDefs {
		e := &t[d.op]
		*e = OpcodeInfo{
			Opcode: d.op, Known: true, Name: d.name, Info: d.info,
			Service: d.service, Operation: d.operation, Position: d.pos, Payload: d.payload,
		}
		if d.wireshark != "" {
			if d.service == ServiceCNP {
				e.Wireshark = d.wireshark
			} else {
				e.Wireshark = transportPrefix[d.service] + d.wireshark
			}
		}
		if len(d.headers) > maxETHs {
			panic("layers: opcode table: too many headers for " + d.name)
		}
		e.NHeaders = uint8(copy(e.Headers[:], d.headers))
		switch d.operation {
		case OpRDMAReadResponse, OpAcknowledge, OpAtomicAcknowledge:
			e.Response = true
		}
		e.Immediate = e.Has(HdrImmDt)
		e.Invalidate = e.Has(HdrIETH)
	}
	return t
}

// KnownOpcodes returns every opcode in the table, in numeric order.
func KnownOpcodes() []Opcode {
	ops := make([]Opcode, 0, len(opcodeDefs))
	for i := range opcodeTable {
		if opcodeTable[i].Known {
			ops = append(ops, Opcode(i))
		}
	}
	return ops
}

// opcodeMeaning is what an opcode says: service, operation, position in
// the message, immediate data, invalidate.
type opcodeMeaning struct {
	service    ServiceType
	operation  Operation
	position   Position
	immediate  bool
	invalidate bool
}

// opcodesByMeaning is derived from the table, so builders (craft, endpoint)
// find opcodes by meaning and never list them. Where two opcodes mean the
// same (only the CNP: 0x80 as Wireshark has it and RoCEv2's 0x81) the lower
// one is kept.
var opcodesByMeaning = func() map[opcodeMeaning]Opcode {
	m := make(map[opcodeMeaning]Opcode)
	for _, op := range KnownOpcodes() {
		in := op.Info()
		k := opcodeMeaning{in.Service, in.Operation, in.Position, in.Immediate, in.Invalidate}
		if _, dup := m[k]; !dup {
			m[k] = op
		}
	}
	return m
}()

// OpcodeFor returns the opcode of service s that carries operation o at
// position p, with immediate data and invalidate as asked; ok is false
// when the table has no such opcode (a READ with immediate, say).
func OpcodeFor(s ServiceType, o Operation, p Position, immediate, invalidate bool) (op Opcode, ok bool) {
	op, ok = opcodesByMeaning[opcodeMeaning{s, o, p, immediate, invalidate}]
	return op, ok
}

// OpcodeByName looks an opcode up by its IBTA name ("RC_SEND_ONLY"), its
// Wireshark name, or its Info-column name, so filters can say
// `bth.opcode == RC_RDMA_WRITE_ONLY`.
func OpcodeByName(name string) (Opcode, bool) {
	for i := range opcodeTable {
		e := &opcodeTable[i]
		if e.Known && (e.Name == name || (e.Wireshark != "" && e.Wireshark == name) || (e.Info != "Unknown OpCode" && e.Info == name)) {
			return Opcode(i), true
		}
	}
	return 0, false
}

// WiresharkDissects reports whether tshark 4.0 parses the headers after the
// BTH for this opcode. When it does not (XRC, CNPs, the reserved RC 0x15,
// FLUSH, ATOMIC WRITE and unknown values) it shows everything after the BTH,
// ICRC included, as infiniband.vendor and no infiniband.invariant.crc
// (PROTOCOL.md §1.4, "Vendor Specific or Unknown Header Sequence").
func (o *OpcodeInfo) WiresharkDissects() bool {
	switch o.Service {
	case ServiceRC, ServiceUC, ServiceRD, ServiceUD:
		return o.Wireshark != "" && o.Operation != OpUnknown
	}
	return false
}
