// Package decode is ibwire's dissector engine: it turns captured frames into
// packets, names every value in them as Wireshark does, and follows the
// conversations the packets make up.
//
// A Decoder takes the frame records a capture source yields (Input is
// capture.Packet) and decodes each with a layers.Parser for the frame's
// first layer, checking the ICRC and VCRC unless told not to. The Packet it
// returns holds the decoded headers, the error of a malformed frame (the
// headers before the damage stay valid), and the frame's times; it is
// reused by the next Decode, so whoever keeps one copies what it needs.
//
// The field registry (Lookup, Fields) names each value of a packet with
// Wireshark's field name, type and display base, and formats it as tshark
// prints it in -T fields, -T json and -V; display filters (package dfilter)
// and every renderer read packets through it, so one definition of a
// field serves all of them. ibwire's own fields (ibwire.*) sit beside
// Wireshark's for what Wireshark does not compute: ICRC status, and the
// analysis.
//
// The registry also describes tshark's -V tree, so the tree renderer walks
// precomputed descriptors: a bit field carries Wireshark's mask (the line
// shows the containing integer's bit pattern), a field may head a subtree
// of the fields named under it (Field.Opens) or be written as a label of
// its own ("IP CM ServiceID", "Attribute (NodeInfo)"), a table's fields
// are shown entry by entry (Field.Row), and items only the tree shows sit
// at their places in FieldsInWireOrder (Field.TreeOnly: the reserved bytes
// Wireshark files under infiniband.reserved, one item per header field).
//
// An Analyzer follows the capture in order. It pairs the two directions of
// each queue-pair connection (by the CM exchange, by the tools' TCP set-up
// exchange, or by responses that answer requests), tracks each direction's
// PSNs (gaps, retransmissions, go-back-N after a NAK, implied ACK
// timeouts), counts each message once where it completes, matches requests
// with their responses for latency, and reports anomalies as Findings
// collected by the Expert. What it learns about a packet goes into
// Packet.Analysis, where the ibwire.analysis.* fields read it, so a filter
// can select on it; what it learns about a connection is a Conversation.
// Its memory is bounded by the live connections, not the capture's length.
// FrameLinks carries a first pass's knowledge back to a second (ibdump -2),
// so packets seen before their connection was paired get its final id.
//
// The Analyzer also follows NVMe over Fabrics on RDMA connections (found
// by their CM set-up, a -d override, or their content when the capture
// starts mid-stream): it reassembles command capsules, matches each command
// with its completion and its RDMA data transfers, and says so in
// Packet.Analysis.NVMe, which the nvme.*, nvme-rdma.* and ibwire.nvme.*
// fields read and -z nvme,srt counts. RPC over RDMA (NFS over RDMA) is
// found the same three ways; each call is matched with its reply by XID,
// an RDMA_NOMSG reply read from the reply chunk the server wrote, and the
// RDMA traffic of every chunk tied to its call, in Packet.Analysis.RPCRDMA,
// which the rpcordma.*, rpc.*, nfs.* and ibwire.rpc.* fields read and
// -z rpc,srt counts. iSER (iSCSI over RDMA) too: each iSCSI request is
// matched with its response by Initiator Task Tag, and a SCSI command with
// the RDMA WRITEs and READs of its data by the STags its iSER header
// names, in Packet.Analysis.ISER, which the iser.*, iscsi.* and
// ibwire.iscsi.* fields read and -z iscsi,srt counts.
//
// The Analyzer also keeps the pause timeline of lossless Ethernet: each
// PAUSE and PFC frame (macc.*) starts, refreshes or ends a pause of its
// sender's link partner on the priorities it names, for quanta of 512 bit
// times that PFCOptions.LinkSpeed turns into time. It reports per port and
// priority the pause intervals, paused time and storm windows (Analyzer.PFC),
// and the RoCE packets sent to a pausing port on a paused priority (their
// priority is the VLAN PCP, else DSCP/8: Packet.Priority). Without a link
// speed it counts frames and quanta only, rather than guess durations.
//
// The statistics tshark offers with -z (I/O intervals, endpoints, the
// opcode table) are built from the same packets and fields; they keep
// counts, and the renderers in internal/output draw them.
package decode
