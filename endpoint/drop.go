package endpoint

import (
	"fmt"
	"net/netip"

	"github.com/ibwire/ibwire/layers"
)

// DropReason says why the device dropped a received packet. Each reason
// also counts in one of the Counters fields (named in its comment).
type DropReason uint8

// Drop reasons, in the order of rxe's acceptance checks (ENDPOINT.md §1.3).
const (
	DropTooShort   DropReason = iota + 1 // shorter than its headers, or undecodable (DropShort)
	DropDestAddr                         // destination IP is not the device's address (DropAddr)
	DropHeader                           // BTH TVer ≠ 0 or destination QPN 0 (DropQP)
	DropUnknownQPN                       // no QP has the destination QPN (DropQP)
	DropBadICRC                          // the ICRC did not verify (DropICRC)
	DropInboxFull                        // the QP's input queue was full (DropQueue)
	DropQPType                           // the opcode's transport is not the QP's type (DropQP)
	DropQPState                          // the QP is not in a state that takes the packet (DropQP)
	DropSourceAddr                       // RC/UC: the source IP is not the QP's peer (DropAddr)
	DropPKey                             // P_Key outside the default partition (DropPKey)
	DropQKey                             // UD: Q_Key is not the QP's (DropQKey)
	DropResponder                        // the responder discarded the request silently (ResponderDrops)
	DropCompleter                        // the requester ignored a response that answers nothing outstanding as it stands (CompleterDrops)
	DropTooLong                          // longer than MaxDatagram: the wire could not read it whole (DropLong)
)

var dropReasonNames = [...]string{
	DropTooShort:   "short packet",
	DropDestAddr:   "wrong destination address",
	DropHeader:     "bad BTH",
	DropUnknownQPN: "unknown destination QPN",
	DropBadICRC:    "bad ICRC",
	DropInboxFull:  "QP input queue full",
	DropQPType:     "wrong QP type",
	DropQPState:    "QP not ready",
	DropSourceAddr: "wrong source address",
	DropPKey:       "P_Key mismatch",
	DropQKey:       "Q_Key mismatch",
	DropResponder:  "responder drop",
	DropCompleter:  "completer drop",
	DropTooLong:    "datagram too long",
}

func (r DropReason) String() string {
	if int(r) < len(dropReasonNames) && dropReasonNames[r] != "" {
		return dropReasonNames[r]
	}
	return fmt.Sprintf("Unknown(%d)", uint8(r))
}

// Drop describes one dropped packet. Fields a reason does not use are zero.
type Drop struct {
	Reason DropReason
	Src    netip.AddrPort // the datagram's source
	Dst    netip.Addr     // the datagram's destination address
	// QPN is the BTH destination QP and Opcode the BTH opcode (both zero
	// for DropTooShort and DropTooLong).
	QPN    uint32
	Opcode layers.Opcode
	// Got and Want are the packet's and the QP's value: the P_Key
	// (DropPKey), the Q_Key (DropQKey), the QP's type as a QPType in Want
	// (DropQPType), its state as a QPState in Want (DropQPState).
	Got, Want uint32
	// Peer is the QP's remote address (DropSourceAddr) or the device's
	// own address (DropDestAddr).
	Peer netip.Addr
	// Detail says what the responder found wrong (DropResponder) or why
	// the completer ignored a response (DropCompleter); a
	// constant string.
	Detail string
}

// DropHandler learns of every dropped packet. It runs on the device's
// receive goroutine or on a QP's goroutine, for each drop: it must return
// quickly, must not block and must not call into the device.
type DropHandler func(Drop)

// DeviceOption configures a Device at NewDevice.
type DeviceOption func(*Device)

// WithDropHandler makes the device call h for every packet it drops, with
// the reason — for diagnostics such as ibpeer's "dropped 3 packets from
// ...: unknown destination QPN". Without one a drop only counts.
func WithDropHandler(h DropHandler) DeviceOption {
	return func(d *Device) { d.onDrop = h }
}

// dropped reports a drop of p to the handler, if there is one. The
// counter is the caller's.
func (d *Device) dropped(p *rxPacket, dr Drop) {
	if d.onDrop == nil {
		return
	}
	dr.Src, dr.Dst = p.src, p.dst.Addr()
	// From the raw bytes: the BTH may not be decoded yet.
	if qpn, ok := layers.PeekDestQP(p.buf[:p.n]); ok && dr.Reason != DropTooShort {
		dr.Opcode, dr.QPN = layers.Opcode(p.buf[0]), qpn
	}
	d.onDrop(dr)
}
