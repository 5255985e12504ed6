// Package output renders decoded packets the ways ibdump and ibtui show them:
// the one-line summary (tcpdump's shape with Wireshark's vocabulary), tshark's
// column line (-T text), the detail tree (-V), hex dumps (-x, -X), tshark's
// -T fields, -T json and -T ek, and ibwire's flat -T jsonl. Every renderer
// appends to a caller's buffer so a stream of packets costs no allocation
// per packet in the common modes.
package output
