package layers

import (
	"encoding/binary"
	"fmt"
)

// SMB Direct ([MS-SMBD]), the RDMA transport of SMB 3. Every message is
// one RC SEND (a SEND ONLY when it fits the peer's receive size, which
// rxe-class MTUs and the protocol's defaults of 1364 bytes make the rule);
// all its integers are little-endian. The active side opens with a
// Negotiate Request, the passive side answers with a Negotiate Response,
// and from then on each side sends Data Transfer messages. A Data Transfer
// carries credits (the receiver grants sends) and one fragment of an upper
// layer message: RemainingLength says how many bytes of that message the
// following fragments hold, so the message ends with the fragment whose
// RemainingLength is 0. A Data Transfer without data (DataLength 0) only
// grants credits or asks for a reply (a keep-alive).
//
// Negotiate Request (§2.2.1), 20 bytes:
//
//	0 MinVersion  2 MaxVersion  4 Reserved  6 CreditsRequested
//	8 PreferredSendSize  12 MaxReceiveSize  16 MaxFragmentedSize
//
// Negotiate Response (§2.2.2), 32 bytes:
//
//	0 MinVersion  2 MaxVersion  4 NegotiatedVersion  6 Reserved
//	8 CreditsRequested  10 CreditsGranted  12 Status (NTSTATUS)
//	16 MaxReadWriteSize  20 PreferredSendSize  24 MaxReceiveSize
//	28 MaxFragmentedSize
//
// Data Transfer (§2.2.3), 20 bytes, 4 bytes of padding when data follows:
//
//	0 CreditsRequested  2 CreditsGranted  4 Flags (0x0001 ResponseRequested)
//	6 Reserved  8 RemainingLength  12 DataOffset (0, or 8-aligned, 24 in
//	practice)  16 DataLength  20 Padding, then the data at DataOffset
//
// The IP-CM service ID of an SMB Direct connection names port 445 over
// InfiniBand, RoCE v1 and v2 (they have a port space of their own), and
// 5445 over iWARP, where TCP's 445 is taken by SMB over TCP (Linux's ksmbd
// and cifs use both so).

// SMB Direct's IP-CM ports.
const (
	SMBDirectPort      = 445
	SMBDirectPortIWARP = 5445
)

// SMBDirectVersion1 is the only version [MS-SMBD] defines (1.0).
const SMBDirectVersion1 = 0x0100

// SMBDirectResponseRequested is the Data Transfer flag that asks the peer
// to send a message soon (its credits run low, or a keep-alive).
const SMBDirectResponseRequested = 0x0001

// SMBDirectKind says which message an SMB Direct SEND carries.
type SMBDirectKind uint8

// SMB Direct message kinds.
const (
	SMBDirectUnknown SMBDirectKind = iota
	SMBDirectNegotiateRequest
	SMBDirectNegotiateResponse
	SMBDirectDataTransfer
)

var smbDirectKindNames = [...]string{"Unknown", "NegotiateRequest", "NegotiateResponse", "DataMessage"}

// String names the kind as Wireshark's info column does.
func (k SMBDirectKind) String() string { return enumName(smbDirectKindNames[:], uint(k), "Unknown") }

// Lengths of SMB Direct's fixed parts.
const (
	SMBDirectNegotiateRequestLen  = 20
	SMBDirectNegotiateResponseLen = 32
	SMBDirectDataHeaderLen        = 20
)

// SMBDirectMsg is one decoded SMB Direct message; Data is a slice of the
// packet's payload.
type SMBDirectMsg struct {
	Kind                                      SMBDirectKind
	MinVersion, MaxVersion, NegotiatedVersion uint16
	CreditsRequested, CreditsGranted          uint16
	Status                                    uint32
	MaxReadWriteSize, PreferredSendSize       uint32
	MaxReceiveSize, MaxFragmentedSize         uint32
	Flags                                     uint16
	RemainingLength, DataOffset, DataLength   uint32
	Data                                      []byte
}

// DecodeSMBDirect decodes b as a message of kind k (which the connection's
// state decides: a negotiate is its direction's first message). A Data
// Transfer whose data lies beyond b fails naming the field.
func DecodeSMBDirect(b []byte, k SMBDirectKind, m *SMBDirectMsg) error {
	return decodeSMBDirect(b, k, m, true)
}

// DecodeSMBDirectFirst decodes b, the first packet of a message sent in
// several: the headers are there whole, the data only begins (Data holds
// what b has of it; End says where the message must reach).
func DecodeSMBDirectFirst(b []byte, k SMBDirectKind, m *SMBDirectMsg) error {
	return decodeSMBDirect(b, k, m, false)
}

// End is the length the message must have: its header, or its data's end.
func (m *SMBDirectMsg) End() uint64 {
	switch m.Kind {
	case SMBDirectNegotiateRequest:
		return SMBDirectNegotiateRequestLen
	case SMBDirectNegotiateResponse:
		return SMBDirectNegotiateResponseLen
	}
	if m.DataLength == 0 {
		return SMBDirectDataHeaderLen
	}
	return uint64(m.DataOffset) + uint64(m.DataLength)
}

func decodeSMBDirect(b []byte, k SMBDirectKind, m *SMBDirectMsg, whole bool) error {
	*m = SMBDirectMsg{Kind: k}
	le := binary.LittleEndian
	need := func(n int, field string) error {
		if len(b) < n {
			return &DecodeError{Layer: "SMBDirect", Field: field, Need: n, Have: len(b), Err: ErrTruncated}
		}
		return nil
	}
	switch k {
	case SMBDirectNegotiateRequest:
		if err := need(SMBDirectNegotiateRequestLen, "MaxFragmentedSize"); err != nil {
			return err
		}
		m.MinVersion, m.MaxVersion, m.CreditsRequested = le.Uint16(b), le.Uint16(b[2:]), le.Uint16(b[6:])
		m.PreferredSendSize, m.MaxReceiveSize, m.MaxFragmentedSize = le.Uint32(b[8:]), le.Uint32(b[12:]), le.Uint32(b[16:])
	case SMBDirectNegotiateResponse:
		if err := need(SMBDirectNegotiateResponseLen, "MaxFragmentedSize"); err != nil {
			return err
		}
		m.MinVersion, m.MaxVersion, m.NegotiatedVersion = le.Uint16(b), le.Uint16(b[2:]), le.Uint16(b[4:])
		m.CreditsRequested, m.CreditsGranted, m.Status = le.Uint16(b[8:]), le.Uint16(b[10:]), le.Uint32(b[12:])
		m.MaxReadWriteSize, m.PreferredSendSize = le.Uint32(b[16:]), le.Uint32(b[20:])
		m.MaxReceiveSize, m.MaxFragmentedSize = le.Uint32(b[24:]), le.Uint32(b[28:])
	case SMBDirectDataTransfer:
		if err := need(SMBDirectDataHeaderLen, "DataLength"); err != nil {
			return err
		}
		m.CreditsRequested, m.CreditsGranted, m.Flags = le.Uint16(b), le.Uint16(b[2:]), le.Uint16(b[4:])
		m.RemainingLength, m.DataOffset, m.DataLength = le.Uint32(b[8:]), le.Uint32(b[12:]), le.Uint32(b[16:])
		if m.DataLength == 0 {
			return nil
		}
		if m.DataOffset < SMBDirectDataHeaderLen || m.DataOffset%8 != 0 {
			return &DecodeError{Layer: "SMBDirect", Field: "DataOffset", Err: ErrMalformed,
				Detail: fmt.Sprintf("data offset %d: 8-aligned, past the 20-byte header", m.DataOffset)}
		}
		end := m.End()
		if end > uint64(len(b)) && whole {
			return &DecodeError{Layer: "SMBDirect", Field: "DataLength", Need: int(min(end, 1<<31)), Have: len(b), Err: ErrTruncated,
				Detail: fmt.Sprintf("%d bytes of data at offset %d", m.DataLength, m.DataOffset)}
		}
		if uint64(m.DataOffset) < uint64(len(b)) {
			m.Data = b[m.DataOffset:min(end, uint64(len(b)))]
		}
	default:
		return &DecodeError{Layer: "SMBDirect", Field: "Kind", Err: ErrMalformed, Detail: "no message kind"}
	}
	return nil
}

// SMBDirectNegotiateForm tells a negotiate message by its form alone: the
// exact length and version 1.0 where [MS-SMBD] puts them. A connection's
// first message in each direction is a negotiate; this is how a capture
// that starts mid-stream, or a direction whose first message was lost,
// still tells them apart.
func SMBDirectNegotiateForm(b []byte) SMBDirectKind {
	le := binary.LittleEndian
	switch {
	case len(b) == SMBDirectNegotiateRequestLen && le.Uint16(b) == SMBDirectVersion1 && le.Uint16(b[2:]) == SMBDirectVersion1 && le.Uint16(b[4:]) == 0:
		return SMBDirectNegotiateRequest
	case len(b) == SMBDirectNegotiateResponseLen && le.Uint16(b) == SMBDirectVersion1 && le.Uint16(b[2:]) == SMBDirectVersion1 &&
		le.Uint16(b[4:]) == SMBDirectVersion1 && le.Uint16(b[6:]) == 0:
		return SMBDirectNegotiateResponse
	}
	return SMBDirectUnknown
}

// SMBDirectCarriesSMB2 reports a Data Transfer whose data starts an SMB2
// message (protocol ID 0xFE 'S' 'M' 'B' at the 24-byte data offset): the
// content test that labels a connection seen without its CM set-up.
func SMBDirectCarriesSMB2(b []byte) bool {
	le := binary.LittleEndian
	return len(b) >= 24+SMB2HeaderLen && le.Uint32(b[12:]) == 24 && le.Uint32(b[16:]) >= SMB2HeaderLen &&
		le.Uint16(b[6:]) == 0 && le.Uint32(b[20:]) == 0 && le.Uint32(b[24:]) == smb2ProtocolID
}

// SMB2 ([MS-SMB2] §2.2.1): the 64-byte header every SMB2 message opens
// with, little-endian; a compound message chains headers by NextCommand.
//
//	0 ProtocolId 0xFE 'S' 'M' 'B'  4 StructureSize (64)  6 CreditCharge
//	8 Status (responses; ChannelSequence in 3.x requests)  12 Command
//	14 CreditRequest/CreditResponse  16 Flags  20 NextCommand
//	24 MessageId  32 Reserved/AsyncId  36 TreeId  40 SessionId
//	48 Signature

// SMB2HeaderLen is the SMB2 header's length.
const SMB2HeaderLen = 64

const smb2ProtocolID = 0x424d53fe // 0xFE 'S' 'M' 'B', read little-endian

// SMB2 header flags.
const (
	SMB2FlagServerToRedir = 0x00000001 // a response
	SMB2FlagAsyncCommand  = 0x00000002
)

// SMB2Command is an SMB2 header's command code.
type SMB2Command uint16

// SMB2 commands ([MS-SMB2] §2.2.1.2).
const (
	SMB2Negotiate SMB2Command = iota
	SMB2SessionSetup
	SMB2Logoff
	SMB2TreeConnect
	SMB2TreeDisconnect
	SMB2Create
	SMB2Close
	SMB2Flush
	SMB2Read
	SMB2Write
	SMB2Lock
	SMB2IOCtl
	SMB2Cancel // reuses its target's MessageId and has no response
	SMB2Echo
	SMB2QueryDirectory
	SMB2ChangeNotify
	SMB2QueryInfo
	SMB2SetInfo
	SMB2OplockBreak
)

var smb2CommandNames = [...]string{"NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT", "TREE_DISCONNECT",
	"CREATE", "CLOSE", "FLUSH", "READ", "WRITE", "LOCK", "IOCTL", "CANCEL", "ECHO", "QUERY_DIRECTORY",
	"CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO", "OPLOCK_BREAK"}

// Known reports a command [MS-SMB2] defines.
func (c SMB2Command) Known() bool { return int(c) < len(smb2CommandNames) }

// String names the command as [MS-SMB2] does: "READ", "SESSION_SETUP".
func (c SMB2Command) String() string { return enumName(smb2CommandNames[:], uint(c), "Unknown") }

// SMB2Header is what ibwire reads of an SMB2 header: enough to say what
// each message was and to match a response with its request.
type SMB2Header struct {
	Command     SMB2Command
	Status      uint32 // NTSTATUS, in responses
	Flags       uint32
	Credits     uint16 // CreditRequest or CreditResponse
	NextCommand uint32
	MessageID   uint64
	TreeID      uint32
	SessionID   uint64
}

// Response reports a response (the server-to-redirector flag).
func (h *SMB2Header) Response() bool { return h.Flags&SMB2FlagServerToRedir != 0 }

// Interim reports an interim response (STATUS_PENDING): the final one
// follows, with the same MessageId.
func (h *SMB2Header) Interim() bool { return h.Response() && h.Status == NTStatusPending }

// Failed reports a response whose NT status says the request failed:
// error severity (0xC...), but for SESSION_SETUP's
// STATUS_MORE_PROCESSING_REQUIRED, which asks for the authentication's
// next leg.
func (h *SMB2Header) Failed() bool {
	return h.Response() && h.Status>>30 == 3 && h.Status != NTStatusMoreProcessingRequired
}

// DecodeSMB2Header decodes the header at the start of b.
func DecodeSMB2Header(b []byte, h *SMB2Header) error {
	if len(b) < SMB2HeaderLen {
		return &DecodeError{Layer: "SMB2", Field: "Signature", Need: SMB2HeaderLen, Have: len(b), Err: ErrTruncated}
	}
	le := binary.LittleEndian
	if le.Uint32(b) != smb2ProtocolID {
		return &DecodeError{Layer: "SMB2", Field: "ProtocolId", Err: ErrMalformed, Detail: fmt.Sprintf("0x%08x, want 0xfe534d42", binary.BigEndian.Uint32(b))}
	}
	if s := le.Uint16(b[4:]); s != SMB2HeaderLen {
		return &DecodeError{Layer: "SMB2", Field: "StructureSize", Err: ErrMalformed, Detail: fmt.Sprintf("%d, want 64", s)}
	}
	*h = SMB2Header{Command: SMB2Command(le.Uint16(b[12:])), Status: le.Uint32(b[8:]), Credits: le.Uint16(b[14:]),
		Flags: le.Uint32(b[16:]), NextCommand: le.Uint32(b[20:]), MessageID: le.Uint64(b[24:]),
		TreeID: le.Uint32(b[36:]), SessionID: le.Uint64(b[40:])}
	return nil
}

// AppendSMB2Header appends a header with h's values (and ProtocolId,
// StructureSize, CreditCharge 1), for crafting.
func AppendSMB2Header(b []byte, h *SMB2Header) []byte {
	var w [SMB2HeaderLen]byte
	le := binary.LittleEndian
	le.PutUint32(w[0:], smb2ProtocolID)
	le.PutUint16(w[4:], SMB2HeaderLen)
	le.PutUint16(w[6:], 1)
	le.PutUint32(w[8:], h.Status)
	le.PutUint16(w[12:], uint16(h.Command))
	le.PutUint16(w[14:], h.Credits)
	le.PutUint32(w[16:], h.Flags)
	le.PutUint32(w[20:], h.NextCommand)
	le.PutUint64(w[24:], h.MessageID)
	le.PutUint32(w[36:], h.TreeID)
	le.PutUint64(w[40:], h.SessionID)
	return append(b, w[:]...)
}

// AppendSMBDirect appends m in its wire form (Data Transfer data at offset
// 24, after the padding), for crafting.
func AppendSMBDirect(b []byte, m *SMBDirectMsg) []byte {
	le := binary.LittleEndian
	switch m.Kind {
	case SMBDirectNegotiateRequest:
		var w [SMBDirectNegotiateRequestLen]byte
		le.PutUint16(w[0:], m.MinVersion)
		le.PutUint16(w[2:], m.MaxVersion)
		le.PutUint16(w[6:], m.CreditsRequested)
		le.PutUint32(w[8:], m.PreferredSendSize)
		le.PutUint32(w[12:], m.MaxReceiveSize)
		le.PutUint32(w[16:], m.MaxFragmentedSize)
		return append(b, w[:]...)
	case SMBDirectNegotiateResponse:
		var w [SMBDirectNegotiateResponseLen]byte
		le.PutUint16(w[0:], m.MinVersion)
		le.PutUint16(w[2:], m.MaxVersion)
		le.PutUint16(w[4:], m.NegotiatedVersion)
		le.PutUint16(w[8:], m.CreditsRequested)
		le.PutUint16(w[10:], m.CreditsGranted)
		le.PutUint32(w[12:], m.Status)
		le.PutUint32(w[16:], m.MaxReadWriteSize)
		le.PutUint32(w[20:], m.PreferredSendSize)
		le.PutUint32(w[24:], m.MaxReceiveSize)
		le.PutUint32(w[28:], m.MaxFragmentedSize)
		return append(b, w[:]...)
	}
	var w [SMBDirectDataHeaderLen + 4]byte
	le.PutUint16(w[0:], m.CreditsRequested)
	le.PutUint16(w[2:], m.CreditsGranted)
	le.PutUint16(w[4:], m.Flags)
	le.PutUint32(w[8:], m.RemainingLength)
	n := SMBDirectDataHeaderLen
	if len(m.Data) > 0 {
		le.PutUint32(w[12:], 24)
		le.PutUint32(w[16:], uint32(len(m.Data)))
		n = 24
	}
	return append(append(b, w[:n]...), m.Data...)
}

// NTStatusName names the NTSTATUS values ([MS-ERREF] §2.3) SMB Direct's
// negotiate and an SMB2 exchange commonly carry, as Wireshark's NT_errors
// names them.
func NTStatusName(v uint32) (string, bool) {
	n, ok := ntStatusNames[v]
	return n, ok
}

// NT status values the SMB2 analysis acts on.
const (
	NTStatusPending                = 0x00000103
	NTStatusMoreProcessingRequired = 0xC0000016
)

var ntStatusNames = map[uint32]string{
	0x00000000:                     "STATUS_SUCCESS",
	NTStatusPending:                "STATUS_PENDING",
	0x80000005:                     "STATUS_BUFFER_OVERFLOW",
	0x80000006:                     "STATUS_NO_MORE_FILES",
	0xC0000001:                     "STATUS_UNSUCCESSFUL",
	0xC000000D:                     "STATUS_INVALID_PARAMETER",
	0xC000000F:                     "STATUS_NO_SUCH_FILE",
	0xC0000011:                     "STATUS_END_OF_FILE",
	NTStatusMoreProcessingRequired: "STATUS_MORE_PROCESSING_REQUIRED",
	0xC0000022:                     "STATUS_ACCESS_DENIED",
	0xC0000034:                     "STATUS_OBJECT_NAME_NOT_FOUND",
	0xC0000035:                     "STATUS_OBJECT_NAME_COLLISION",
	0xC000009A:                     "STATUS_INSUFFICIENT_RESOURCES",
	0xC00000BB:                     "STATUS_NOT_SUPPORTED",
	0xC0000120:                     "STATUS_CANCELLED",
	0xC0000203:                     "STATUS_USER_SESSION_DELETED",
}
