package layers

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/gopacket"
)

// AETHLength is the size of the ACK Extended Transport Header.
const AETHLength = 4

// AETH is the ACK Extended Transport Header (IBTA Vol 1 §9.3.5) carried by
// acknowledgements, NAKs and the first and last READ responses.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|R| Typ |  Value  |       Message Sequence Number (24)          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	 \___ Syndrome ___/
type AETH struct {
	ethBase
	Syndrome AETHSyndrome
	MSN      uint32 // 24 bits
}

var aethFields = []FieldSpan{{"Syndrome", 0, 1}, {"MSN", 1, 3}}

// LayerType returns LayerTypeAETH.
func (a *AETH) LayerType() gopacket.LayerType { return LayerTypeAETH }

// CanDecode returns LayerTypeAETH.
func (a *AETH) CanDecode() gopacket.LayerClass { return LayerTypeAETH }

// DecodeFromBytes decodes an AETH in place.
func (a *AETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := a.split("AETH", aethFields, AETHLength, data, df); err != nil {
		return err
	}
	a.setWord(binary.BigEndian.Uint32(data[0:4]))
	return nil
}

func (a *AETH) setWord(w uint32) { a.Syndrome, a.MSN = AETHSyndrome(w>>24), w&0xFFFFFF }

// SerializeTo prepends the header.
func (a *AETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(AETHLength)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(buf, uint32(a.Syndrome)<<24|a.MSN&0xFFFFFF)
	return nil
}

// AETHSyndrome is the AETH's first byte: a reserved bit, a two-bit type and a
// five-bit value whose meaning depends on the type (Table 43 of Vol 1).
type AETHSyndrome uint8

// AETHType is bits 6-5 of the syndrome (Wireshark: infiniband.aeth.syndrome.opcode).
type AETHType uint8

// AETH syndrome types.
const (
	AETHAck      AETHType = 0 // ACK, value = credit count code
	AETHRNRNak   AETHType = 1 // receiver not ready, value = RNR timer code
	AETHReserved AETHType = 2
	AETHNak      AETHType = 3 // NAK, value = NAK code
)

var aethTypeNames = [...]string{"ACK", "RNR NAK", "Reserved", "NAK"}

func (t AETHType) String() string { return aethTypeNames[t&3] }

// NAKCode is the value of a NAK syndrome.
type NAKCode uint8

// NAK codes (IBTA Vol 1 Table 43).
const (
	NAKPSNSequenceError       NAKCode = 0
	NAKInvalidRequest         NAKCode = 1
	NAKRemoteAccessError      NAKCode = 2
	NAKRemoteOperationalError NAKCode = 3
	NAKInvalidRDRequest       NAKCode = 4
)

var nakNames = [...]struct{ text, key string }{
	{"PSN Sequence Error", "psn_seq_err"},
	{"Invalid Request", "invalid_req"},
	{"Remote Access Error", "remote_access_err"},
	{"Remote Operational Error", "remote_op_err"},
	{"Invalid RD Request", "invalid_rd_req"},
}

// String returns the IBTA name of the code, as tshark prints it.
func (c NAKCode) String() string {
	if int(c) < len(nakNames) {
		return nakNames[c].text
	}
	return fmt.Sprintf("Reserved(%d)", uint8(c))
}

// Key returns a short snake_case name for statistics and JSON keys
// ("psn_seq_err", "remote_access_err", ...).
func (c NAKCode) Key() string {
	if int(c) < len(nakNames) {
		return nakNames[c].key
	}
	return fmt.Sprintf("reserved_%d", uint8(c))
}

// Type returns the syndrome type.
func (s AETHSyndrome) Type() AETHType { return AETHType(s>>5) & 3 }

// Value returns the low five bits.
func (s AETHSyndrome) Value() uint8 { return uint8(s) & 0x1F }

// Reserved reports the reserved top bit.
func (s AETHSyndrome) Reserved() bool { return s&0x80 != 0 }

// IsAck reports an ACK syndrome.
func (s AETHSyndrome) IsAck() bool { return s.Type() == AETHAck }

// IsNak reports a NAK syndrome (not an RNR NAK).
func (s AETHSyndrome) IsNak() bool { return s.Type() == AETHNak }

// IsRNRNak reports an RNR NAK syndrome.
func (s AETHSyndrome) IsRNRNak() bool { return s.Type() == AETHRNRNak }

// NAKCode returns the NAK code of a NAK syndrome.
func (s AETHSyndrome) NAKCode() NAKCode { return NAKCode(s.Value()) }

// CreditCode returns the credit count code of an ACK syndrome.
func (s AETHSyndrome) CreditCode() uint8 { return s.Value() }

// Credits decodes the credit count of an ACK: the number of receive WQEs the
// responder has, and false for code 0x1F, which means "no end-to-end credits"
// (rxe's AETH_ACK_UNLIMITED).
func (s AETHSyndrome) Credits() (int, bool) {
	c := s.Value()
	if c == 0x1F {
		return 0, false
	}
	return creditTable[c], true
}

// creditTable decodes credit codes 0-0x1E (IBTA Vol 1 Table 44).
var creditTable = [31]int{0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768,
	1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768}

// RNRTimer returns the minimum delay an RNR NAK asks the requester to wait.
func (s AETHSyndrome) RNRTimer() time.Duration { return RNRTimerCode(s.Value()).Duration() }

// RNRTimerCode is the five-bit RNR NAK timer field (IBTA Vol 1 Table 45).
type RNRTimerCode uint8

// rnrMicros decodes RNR timer codes, in microseconds (code 0 is the longest).
var rnrMicros = [32]int64{655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760,
	327680, 491520}

// Duration returns the timer value.
func (c RNRTimerCode) Duration() time.Duration {
	return time.Duration(rnrMicros[c&0x1F]) * time.Microsecond
}

// String prints the timer as tshark does ("0.64 ms", "655.36 ms").
func (c RNRTimerCode) String() string {
	return fmt.Sprintf("%.2f ms", float64(rnrMicros[c&0x1F])/1000)
}

// String describes the syndrome: "ACK credits=6", "RNR NAK timer=0.64 ms",
// "NAK PSN Sequence Error".
func (s AETHSyndrome) String() string {
	switch s.Type() {
	case AETHAck:
		if n, ok := s.Credits(); ok {
			return fmt.Sprintf("ACK credits=%d", n)
		}
		return "ACK credits=unlimited"
	case AETHRNRNak:
		return "RNR NAK timer=" + RNRTimerCode(s.Value()).String()
	case AETHNak:
		return "NAK " + s.NAKCode().String()
	}
	return fmt.Sprintf("Reserved(0x%02x)", uint8(s))
}

// MakeAckSyndrome builds an ACK syndrome with a credit code.
func MakeAckSyndrome(creditCode uint8) AETHSyndrome { return AETHSyndrome(creditCode & 0x1F) }

// MakeNakSyndrome builds a NAK syndrome.
func MakeNakSyndrome(c NAKCode) AETHSyndrome { return AETHSyndrome(0x60 | uint8(c)&0x1F) }

// MakeRNRNakSyndrome builds an RNR NAK syndrome with a timer code.
func MakeRNRNakSyndrome(c RNRTimerCode) AETHSyndrome { return AETHSyndrome(0x20 | uint8(c)&0x1F) }
