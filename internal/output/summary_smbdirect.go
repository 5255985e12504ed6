package output

import (
	"strconv"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// appendSMBDirect summarizes an SMB Direct message and the SMB2 commands
// its data starts:
//
//	, SMBDirect NegotiateRequest credits 255 max receive 8192
//	, SMBDirect NegotiateResponse v1.0 credits 255 granted 255 max r/w 1048576
//	, SMBDirect DataMessage credits 255/1 SMB2 READ Request id 7
//	, SMBDirect DataMessage credits 255/1 SMB2 READ Response id 7 STATUS_SUCCESS [latency 80 µs]
//	, SMBDirect DataMessage credits 255/1, fragment, 1340 bytes to follow
func appendSMBDirect(buf []byte, s *decode.SMBDirectPacket) []byte {
	buf = append(buf, ", SMBDirect "...)
	if s.Err != nil {
		return append(append(append(buf, "[malformed: "...), s.Err.Error()...), ']')
	}
	m := &s.Msg
	buf = append(buf, m.Kind.String()...)
	switch m.Kind {
	case layers.SMBDirectNegotiateRequest:
		buf = append(buf, " credits "...)
		buf = strconv.AppendUint(buf, uint64(m.CreditsRequested), 10)
		buf = append(buf, " max receive "...)
		return strconv.AppendUint(buf, uint64(m.MaxReceiveSize), 10)
	case layers.SMBDirectNegotiateResponse:
		buf = append(buf, " v"...)
		buf = strconv.AppendUint(buf, uint64(m.NegotiatedVersion>>8), 10)
		buf = append(buf, '.')
		buf = strconv.AppendUint(buf, uint64(m.NegotiatedVersion&0xff), 10)
		if m.Status != 0 {
			buf = append(buf, ' ')
			buf = appendNTStatus(buf, m.Status)
		}
		buf = append(buf, " credits "...)
		buf = strconv.AppendUint(buf, uint64(m.CreditsRequested), 10)
		buf = append(buf, " granted "...)
		buf = strconv.AppendUint(buf, uint64(m.CreditsGranted), 10)
		buf = append(buf, " max r/w "...)
		return strconv.AppendUint(buf, uint64(m.MaxReadWriteSize), 10)
	}
	buf = append(buf, " credits "...)
	buf = strconv.AppendUint(buf, uint64(m.CreditsRequested), 10)
	buf = append(buf, '/')
	buf = strconv.AppendUint(buf, uint64(m.CreditsGranted), 10)
	if m.Flags&layers.SMBDirectResponseRequested != 0 {
		buf = append(buf, " response requested"...)
	}
	for i := range s.NSMB2 {
		h := &s.SMB2[i]
		if i == 0 {
			buf = append(buf, " SMB2 "...)
		} else {
			buf = append(buf, "; "...)
		}
		buf = append(buf, h.Command.String()...)
		if h.Response() {
			buf = append(buf, " Response id "...)
		} else {
			buf = append(buf, " Request id "...)
		}
		buf = strconv.AppendUint(buf, h.MessageID, 10)
		if h.Response() {
			buf = append(buf, ' ')
			buf = appendNTStatus(buf, h.Status)
		}
		if s.Matched[i] {
			buf = append(buf, " [latency "...)
			buf = strconv.AppendInt(buf, s.Latency[i].Microseconds(), 10)
			buf = append(buf, " µs]"...)
		}
	}
	switch {
	case m.RemainingLength > 0:
		buf = append(buf, ", fragment, "...)
		buf = strconv.AppendUint(buf, uint64(m.RemainingLength), 10)
		buf = append(buf, " bytes to follow"...)
	case len(s.Fragments) > 1:
		buf = append(buf, ", last fragment of "...)
		buf = strconv.AppendInt(buf, int64(len(s.Fragments)), 10)
		buf = append(buf, ", "...)
		buf = strconv.AppendUint(buf, uint64(s.FragmentBytes), 10)
		buf = append(buf, " bytes"...)
	case m.DataLength == 0:
		buf = append(buf, ", no data"...)
	}
	return buf
}

func appendNTStatus(buf []byte, v uint32) []byte {
	if n, ok := layers.NTStatusName(v); ok {
		return append(buf, n...)
	}
	return appendHex(buf, uint64(v), 8)
}
