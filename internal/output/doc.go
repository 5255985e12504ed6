// Package output renders decoded packets the ways ibdump and ibtui show them:
// the one-line summary (tcpdump's shape with Wireshark's vocabulary), tshark's
// column line (-T text), the detail tree (-V), hex dumps (-x, -X), tshark's
// -T fields, -T json and -T ek, and ibwire's flat -T jsonl. Every renderer
// appends to a caller's buffer so a stream of packets costs no allocation
// per packet in the common modes.
//
// It draws what decode computed and decides nothing about the traffic: the
// statistics (-z conv,qp, latency, opcodes, endpoints,gid) are Tables, one
// list of columns each (header, width, alignment, getter) printed as
// tshark's text or as JSON and read by ibtui's QP table; -z follow,qp prints
// decode's Follower; --graph psn draws decode's PSNSeries. ClassOf is the one
// rule for a packet's colour and UseColor the one colour policy, for ibdump's
// lines and ibtui's rows alike.
package output
