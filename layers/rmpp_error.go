package layers

// RMPPExtendedErrorLength is the size of the optional extended error data
// of an RMPP STOP or ABORT segment.
const RMPPExtendedErrorLength = 220

// ExtendedErrorData returns the optional extended error data of an RMPP
// STOP or ABORT segment (IBTA Vol 1 §13.6.2.2): the 220 bytes after the
// RMPP header, where a DATA segment carries its data. Reading an SA body
// this way is tshark's view, which ignores the SA header in such segments.
func (s *SA) ExtendedErrorData() ([]byte, bool) {
	if s.RMPP.Type != RMPPTypeStop && s.RMPP.Type != RMPPTypeAbort || len(s.Contents) < RMPPHeaderLength+RMPPExtendedErrorLength {
		return nil, false
	}
	return s.Contents[RMPPHeaderLength : RMPPHeaderLength+RMPPExtendedErrorLength], true
}

// StopAbortReserved returns the RMPP header's Data1 and Data2 words of a
// STOP or ABORT segment, which the IBTA reserves there (§13.6.2.2).
func (s *SA) StopAbortReserved() (data1, data2 []byte, ok bool) {
	if s.RMPP.Type != RMPPTypeStop && s.RMPP.Type != RMPPTypeAbort || len(s.Contents) < RMPPHeaderLength {
		return nil, nil, false
	}
	return s.Contents[4:8], s.Contents[8:12], true
}
