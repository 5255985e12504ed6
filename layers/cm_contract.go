package layers

import "time"

// CMTimeout is the time a 5-bit CM timeout field stands for: 4.096 µs ×
// 2^n (IBTA Vol 1 §12.6: the REQ's CM Response Timeouts, the path's Local
// ACK Timeout, the MRA's Service Timeout). Bits above the fifth are ignored.
func CMTimeout(n uint8) time.Duration { return 4096 * time.Nanosecond << (n & 31) }

// The messages an MRA can acknowledge (IBTA Vol 1 §12.6.6 Message MRAed).
const (
	CMMRAedREQ CMMRAedMessage = 0
	CMMRAedREP CMMRAedMessage = 1
	CMMRAedLAP CMMRAedMessage = 2
)

// The messages a REJ can reject (IBTA Vol 1 §12.6.7 Message Rejected).
const (
	CMRejectedREQ   CMRejectedMessage = 0
	CMRejectedREP   CMRejectedMessage = 1
	CMRejectedOther CMRejectedMessage = 2
)
