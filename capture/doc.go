// Package capture reads and writes packet captures and captures live
// traffic, in pure Go (no cgo, no libpcap).
//
// Sources yield [Packet] values: the frame bytes, gopacket's CaptureInfo,
// the frame's link type (layers.LinkType, which also says which layer
// decodes the frame's start), the interface it came from and its 1-based
// frame number. A [Reader] reads classic pcap (either byte order, microsecond or
// nanosecond timestamps), pcapng (several interfaces with mixed link types)
// and gzip-compressed forms of both. It sniffs the format from the first
// bytes and never seeks, so a pipe such as
//
//	tcpdump -i mlx5_0 -w - | ibdump -r -
//
// works exactly like a file. [OpenMulti] reads several files in a row with
// one frame numbering. [Reader.NextInto] reuses the caller's buffer and
// allocates nothing per packet once the buffer has grown.
//
// The package reads the link type and timestamp resolution from the file
// header itself: gopacket v1.1.19's pcapgo truncates link types to 8 bits
// (LINUX_SLL2, 276, becomes 20) and reports the resolution inverted.
//
// A damaged file ends with a [*FileError] naming the file, the packet
// number being read and the byte offset of the damaged record, after every
// intact packet before it has been returned. Its Err matches one of the
// sentinel errors ([ErrTruncated], [ErrBadMagic], [ErrCaplen],
// [ErrBadBlock]) with errors.Is.
//
// [Writer] writes pcap or pcapng; a pcapng writer adds an interface for
// each new link type it meets. [LiveSource] captures from a Linux
// interface through an AF_PACKET socket with a BPF program attached in the
// kernel; [RoCEFilter] is the built-in RoCE program and [MatchRoCE] runs
// the same program in x/net/bpf's VM, so offline and live filtering agree.
package capture
