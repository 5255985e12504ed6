package pcaps

import _ "embed"

// Sample is the capture ibdump and ibtui decode when given none: Linux rxe
// running rping (RDMA CM connect, SEND, READ, WRITE, ACKs, disconnect),
// 127 frames from rxe/rping.pcap.
//
//go:embed rxe/rping.pcap
var Sample []byte

// SampleName names Sample in messages.
const SampleName = "pcaps/rxe/rping.pcap"
