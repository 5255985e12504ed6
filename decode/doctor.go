package decode

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ibwire/ibwire/layers"
)

// The doctor: a configuration lint of a RoCE fabric from a capture
// (ibdump --doctor). It reads what every packet says of its sender's
// settings — DSCP, VLAN priority, ECN codepoint, UDP source port, path MTU,
// RoCE version — and what the Analyzer found (ICRC errors, CM contract
// breaches), and reports each misconfiguration once, with frames that show
// it and the usual fix. It keeps a little state per direction and per host
// and runs only when asked: the plain decode path never sees it.

// DoctorCheck names one check of the doctor.
type DoctorCheck string

// The checks.
const (
	DoctorNotECT       DoctorCheck = "not_ect"         // RoCEv2 data not ECN-capable
	DoctorCNPClass     DoctorCheck = "cnp_class"       // CNPs on another DSCP or priority than the data they slow
	DoctorACKClass     DoctorCheck = "ack_class"       // ACKs and responses on another DSCP or priority than the requests
	DoctorPriority0    DoctorCheck = "priority0"       // data on priority 0, untagged, where PFC pauses other priorities
	DoctorMixedDSCP    DoctorCheck = "mixed_dscp"      // one direction's data on several DSCPs
	DoctorSmallMTU     DoctorCheck = "small_mtu"       // a path MTU below what the sender's other QPs show the link carries
	DoctorSourcePort   DoctorCheck = "udp_source_port" // several QPs of one host pair on one UDP source port
	DoctorRoCEMixed    DoctorCheck = "roce_v1_v2"      // RoCEv1 and RoCEv2 in one capture
	DoctorICRC         DoctorCheck = "icrc"            // ICRC or VCRC errors
	DoctorCMContract   DoctorCheck = "cm_contract"     // traffic breaking what the CM negotiated
	DoctorNoCCReaction DoctorCheck = "cnp_no_reaction" // a sender that does not slow down for CNPs
	DoctorGIDMismatch  DoctorCheck = "gid_ip"          // a CM REQ whose path GIDs are not the addresses it travels between
	maxDoctorEvidence              = 8
)

// DoctorFinding is one misconfiguration.
type DoctorFinding struct {
	Check    DoctorCheck
	Severity Severity
	What     string   // the problem, with its numbers
	Frames   []uint32 // evidence, at most maxDoctorEvidence
	Fix      string   // the usual fix
}

// Doctor collects what the checks need, packet by packet.
type Doctor struct {
	dirs      map[docKey]*docDir
	order     []docKey
	pfcPrios  uint16 // bit p: a PFC frame paused priority p; bit 8: an 802.3x PAUSE
	pfcFrame  uint32
	v1, v2    uint32 // a RoCEv1 and a RoCEv2 frame
	ecnInUse  uint32 // a frame that is ECN-capable, CE or a CNP: the fabric runs ECN
	hostLarge map[addrKey]docLarge
	gidBad    []docGID
}

// docGID is a CM REQ whose primary path names other GIDs than its packet's addresses.
type docGID struct {
	frame                   uint32
	local, remote, src, dst string
}

// docLarge is a host's largest RoCE payload and its frame.
type docLarge struct {
	payload int
	frame   uint32
}

type docKey struct {
	src, dst addrKey
	qp       uint32
}

// docClass is a packet's traffic class: its DSCP (-1 without IP) and
// priority (VLAN PCP, else DSCP/8; vlan says which).
type docClass struct {
	dscp int
	prio uint8
	vlan bool
}

func (c docClass) String() string {
	s := fmt.Sprintf("priority %d", c.prio)
	if c.vlan {
		s += " (VLAN)"
	}
	if c.dscp >= 0 {
		s = fmt.Sprintf("DSCP %d, ", c.dscp) + s
	}
	return s
}

// docClasses are the classes one kind of packet of a direction used, with
// the first frame of each.
type docClasses struct {
	seen   []docClass
	frames []uint32
}

func (cs *docClasses) add(c docClass, frame uint32) {
	for _, s := range cs.seen {
		if s == c {
			return
		}
	}
	if len(cs.seen) < 8 {
		cs.seen, cs.frames = append(cs.seen, c), append(cs.frames, frame)
	}
}

// docDir is what the doctor knows of one direction.
type docDir struct {
	flow         FlowKey
	v2           bool
	sport        uint16
	data, resp   docClasses
	cnp          docClasses
	dataPackets  uint64
	notECT       uint64
	notECTFrame  uint32
	segment      int // the payload of its FIRST and MIDDLE packets: the path MTU
	segmentFrame uint32
}

// NewDoctor returns an empty doctor.
func NewDoctor() *Doctor {
	return &Doctor{dirs: map[docKey]*docDir{}, hostLarge: map[addrKey]docLarge{}}
}

// Add looks at the next packet.
func (d *Doctor) Add(p *Packet) {
	frame := uint32(p.Number)
	h := p.Headers
	if p.HasMACControl() {
		m := &h.MACControl
		switch m.Opcode {
		case layers.MACControlPause:
			if m.PauseTime > 0 {
				d.pfcPrios |= 1 << 8
			}
		case layers.MACControlPFC:
			for prio := range layers.PFCPriorities {
				if m.Enabled(prio) && m.PauseTimes[prio] > 0 {
					d.pfcPrios |= 1 << prio
				}
			}
		}
		if d.pfcFrame == 0 {
			d.pfcFrame = frame
		}
		return
	}
	if !p.IsIB() || p.Err != nil && !p.Cut() || !p.HasEthernet() {
		return
	}
	b := &h.BTH
	v2 := p.HasUDP()
	switch {
	case v2 && d.v2 == 0:
		d.v2 = frame
	case !v2 && p.HasGRH() && d.v1 == 0:
		d.v1 = frame
	}
	if b.DestQP <= 1 {
		d.checkGIDs(p, frame)
		return // management (SMI, GSI: the CM) sets its own class
	}
	var k docKey
	packetKeyInto(&k, p, b.DestQP)
	dd := d.dirs[k]
	if dd == nil {
		dd = &docDir{flow: FlowKey{Src: k.src.endpoint(), Dst: k.dst.endpoint(), DestQP: b.DestQP}, v2: v2}
		if v2 {
			dd.sport = uint16(h.UDP.SrcPort)
		}
		d.dirs[k] = dd
		d.order = append(d.order, k)
	}
	prio, src, _ := p.Priority()
	c := docClass{dscp: -1, prio: prio, vlan: src == PriorityVLAN}
	switch {
	case p.HasIPv4():
		c.dscp = int(h.IPv4.TOS >> 2)
	case p.HasIPv6():
		c.dscp = int(h.IPv6.TrafficClass >> 2)
	}
	ecn, hasIP := ecnOf(p)
	info := b.Opcode.Info()
	switch {
	case serviceOf(b.Opcode) == layers.ServiceCNP:
		dd.cnp.add(c, frame)
		d.ecnUsed(frame)
		return
	case info.Response:
		dd.resp.add(c, frame)
	default:
		dd.data.add(c, frame)
		dd.dataPackets++
		if hasIP && ecn == ECNNotECT {
			if dd.notECT == 0 {
				dd.notECTFrame = frame
			}
			dd.notECT++
		}
	}
	if hasIP && ecn != ECNNotECT {
		d.ecnUsed(frame)
	}
	payload := p.PayloadLength()
	if !info.Response && (info.Position == layers.PosFirst || info.Position == layers.PosMiddle) && payload > dd.segment {
		dd.segment, dd.segmentFrame = payload, frame
	}
	if l := d.hostLarge[k.src]; payload > l.payload {
		d.hostLarge[k.src] = docLarge{payload, frame}
	}
}

// checkGIDs compares a CM REQ's primary path GIDs with the addresses of
// the packet that carries it (RoCEv2: its IP addresses, IPv4 mapped;
// RoCEv1: its GRH's GIDs): a host that picks a stale GID index, or a GID of
// another port, sends REQs its peer cannot answer on the path it names.
func (d *Doctor) checkGIDs(p *Packet, frame uint32) {
	h := p.Headers
	if !p.HasMAD() || p.Err != nil || h.MAD.MgmtClass != layers.MgmtClassCM || h.MAD.CM.AttributeID != layers.CMAttrREQ {
		return
	}
	var src, dst addrKey
	switch {
	case p.HasIPv4():
		src, dst = addrKeyOfBytes(ipv4Bytes(h.IPv4.SrcIP)), addrKeyOfBytes(ipv4Bytes(h.IPv4.DstIP))
	case p.HasIPv6():
		src, dst = addrKeyOfBytes(h.IPv6.SrcIP), addrKeyOfBytes(h.IPv6.DstIP)
	case p.HasGRH():
		src, dst = addrKeyOfBytes(h.GRH.SGID), addrKeyOfBytes(h.GRH.DGID)
	default:
		return
	}
	path := &h.MAD.CM.REQ.Primary
	local, remote := addrKeyOfBytes(path.LocalGID), addrKeyOfBytes(path.RemoteGID)
	if local != src || remote != dst {
		d.gidBad = append(d.gidBad, docGID{frame: frame, local: path.LocalGID.String(), remote: path.RemoteGID.String(),
			src: src.endpoint().String(), dst: dst.endpoint().String()})
	}
}

func (d *Doctor) ecnUsed(frame uint32) {
	if d.ecnInUse == 0 {
		d.ecnInUse = frame
	}
}

// packetKeyInto keys a packet's direction as the Analyzer does, without
// the UD source QP.
func packetKeyInto(k *docKey, p *Packet, qp uint32) {
	var dk dirKey
	packetKey(&dk, p, qp)
	k.src, k.dst, k.qp = dk.src, dk.dst, qp
}

// roceMTUs are the path MTUs RoCE can use.
var roceMTUs = []int{256, 512, 1024, 2048, 4096}

// Report runs the checks, with what a (which saw the same packets, and has
// finished) found. Findings come in order of severity, then check.
func (d *Doctor) Report(a *Analyzer) []DoctorFinding {
	var out []DoctorFinding
	add := func(f DoctorFinding) {
		if len(f.Frames) > maxDoctorEvidence {
			f.Frames = f.Frames[:maxDoctorEvidence]
		}
		out = append(out, f)
	}
	dirs := make([]*docDir, 0, len(d.order))
	for _, k := range d.order {
		dirs = append(dirs, d.dirs[k])
	}

	// ECN: RoCEv2 data that is not ECN-capable. A warning where the fabric
	// runs ECN (other traffic is ECN-capable, CNPs flow) or PFC: DCQCN
	// cannot slow this sender; a note where nothing in the capture uses
	// either (Soft-RoCE sends TOS 0).
	var notECT []string
	var notECTFrames []uint32
	for _, dd := range dirs {
		if dd.v2 && dd.notECT > 0 {
			notECT = append(notECT, fmt.Sprintf("%s (%d of %d data packets)", dd.flow.String(), dd.notECT, dd.dataPackets))
			notECTFrames = append(notECTFrames, dd.notECTFrame)
		}
	}
	if len(notECT) > 0 {
		sev, why := SevNote, "nothing in the capture uses ECN or PFC"
		if d.ecnInUse != 0 || d.pfcPrios != 0 {
			sev, why = SevWarn, "other traffic here runs ECN or PFC, so switches mark and NICs pace, but not these senders"
		}
		add(DoctorFinding{Check: DoctorNotECT, Severity: sev,
			What:   fmt.Sprintf("RoCEv2 data sent Not-ECT, so no switch can mark it and DCQCN cannot slow it (%s): %s", why, strings.Join(notECT, "; ")),
			Frames: notECTFrames,
			Fix:    "enable RoCE congestion control on the sender's priority (mlx5: echo 1 > /sys/class/net/IF/ecn/roce_rp/enable/PRIO and roce_np/enable/PRIO on the receiver) and have the stack set ECT: a RoCE ToS with ECT(0), e.g. 106 (DSCP 26 | ECT(0)) via cma_roce_tos or rdma_set_option(RDMA_OPTION_ID_TOS)"})
	}

	// Classes: one direction's data on several, CNPs and responses on
	// another than the data they belong to, data on priority 0 where PFC
	// pauses others.
	for _, dd := range dirs {
		if len(dd.data.seen) > 1 {
			var cs []string
			for _, c := range dd.data.seen {
				cs = append(cs, c.String())
			}
			add(DoctorFinding{Check: DoctorMixedDSCP, Severity: SevWarn,
				What:   fmt.Sprintf("%s sends its data in %d traffic classes (%s): its packets take different queues and may be reordered, and only one class is lossless", dd.flow.String(), len(cs), strings.Join(cs, ", ")),
				Frames: dd.data.frames,
				Fix:    "give the QP one traffic class: one ToS for the connection (rdma_set_option RDMA_OPTION_ID_TOS, or the QP's GRH traffic class), and no DSCP rewriting on the path"})
		}
	}
	for _, c := range a.Conversations() {
		for side := 0; side < 2; side++ {
			data := d.convDir(c, side)
			back := d.convDir(c, 1-side)
			if data == nil || back == nil || len(data.data.seen) != 1 {
				continue
			}
			want := data.data.seen[0]
			check := func(cs *docClasses, kind DoctorCheck, what, fix string) {
				for i, got := range cs.seen {
					if got.dscp != want.dscp || got.prio != want.prio {
						add(DoctorFinding{Check: kind, Severity: SevWarn,
							What:   fmt.Sprintf("%s for %s travel on %s, its data on %s", what, data.flow.String(), got, want),
							Frames: []uint32{data.data.frames[0], cs.frames[i]},
							Fix:    fix})
						return
					}
				}
			}
			check(&back.cnp, DoctorCNPClass, "CNPs",
				"send CNPs in the RoCE class (mlx5: /sys/class/net/IF/ecn/roce_np/cnp_dscp and cnp_802p_prio set to the data's DSCP and priority), or a strict-priority class the switch does not drop; a CNP that waits behind the congestion it reports comes too late")
			check(&back.resp, DoctorACKClass, "ACKs and responses",
				"set the same ToS on both ends of the connection (rdma_set_option RDMA_OPTION_ID_TOS on each side, or cma_roce_tos on both hosts): the responder's class is its own setting")
		}
	}
	if d.pfcPrios&0xff != 0 && d.pfcPrios&1 == 0 {
		var flows []string
		var frames []uint32
		for _, dd := range dirs {
			for i, c := range dd.data.seen {
				if c.prio == 0 && !c.vlan {
					flows = append(flows, dd.flow.String())
					frames = append(frames, dd.data.frames[i])
					break
				}
			}
		}
		if len(flows) > 0 {
			add(DoctorFinding{Check: DoctorPriority0, Severity: SevWarn,
				What:   fmt.Sprintf("PFC pauses priorities %s here, but %s send RoCE untagged on priority 0, which is not lossless", prioList(d.pfcPrios), strings.Join(flows, "; ")),
				Frames: append([]uint32{d.pfcFrame}, frames...),
				Fix:    "put RoCE on the PFC priority: trust DSCP on the NIC and switch (mlnx_qos -i IF --trust dscp) with a RoCE DSCP that maps to it (26 -> priority 3), or tag with that VLAN priority"})
		}
	}

	// Path MTU: a QP segmenting at less than the sender's other QPs carry.
	for _, dd := range dirs {
		l := d.hostLarge[addrKeyOf(dd.flow.Src)]
		if dd.segment == 0 || !isRoCEMTU(dd.segment) || l.payload <= dd.segment {
			continue
		}
		fits := dd.segment
		for _, m := range roceMTUs {
			if m <= l.payload {
				fits = m
			}
		}
		if fits <= dd.segment {
			continue
		}
		add(DoctorFinding{Check: DoctorSmallMTU, Severity: SevWarn,
			What:   fmt.Sprintf("%s segments its messages at %d bytes though its sender carries %d-byte payloads elsewhere: the path MTU could be %d", dd.flow.String(), dd.segment, l.payload, fits),
			Frames: []uint32{dd.segmentFrame, l.frame},
			Fix:    "raise the netdev MTU to at least the RoCE MTU plus headers (ip link set IF mtu 4200 or 9000) on both ends and every hop, and let the CM choose the active MTU (ibv_query_port active_mtu; rdma_cm takes the smaller of both ports)"})
	}

	// UDP source ports: ECMP hashes them, so QPs of one host pair on one
	// port share one path.
	type pairPort struct {
		src, dst addrKey
		port     uint16
	}
	shared := map[pairPort][]*docDir{}
	var pairs []pairPort
	for _, k := range d.order {
		dd := d.dirs[k]
		if !dd.v2 || dd.dataPackets == 0 || k.qp <= 1 {
			continue
		}
		pp := pairPort{k.src, k.dst, dd.sport}
		if shared[pp] == nil {
			pairs = append(pairs, pp)
		}
		shared[pp] = append(shared[pp], dd)
	}
	for _, pp := range pairs {
		ds := shared[pp]
		if len(ds) < 2 {
			continue
		}
		var qps []string
		var frames []uint32
		for _, dd := range ds {
			qps = append(qps, fmt.Sprintf("0x%06x", dd.flow.DestQP))
			frames = append(frames, dd.data.frames[0])
		}
		add(DoctorFinding{Check: DoctorSourcePort, Severity: SevWarn,
			What: fmt.Sprintf("%d QPs from %s to %s (destination QPs %s) all use UDP source port %d: ECMP puts them on one path",
				len(ds), pp.src.endpoint(), pp.dst.endpoint(), strings.Join(qps, ", "), pp.port),
			Frames: frames,
			Fix:    "let the NIC spread source ports per QP (it hashes the QPN, or the IPv6 flow label: set one per connection), or set them with rdma_set_option / the QP's flow label; check the switches hash on the UDP source port"})
	}

	if d.v1 != 0 && d.v2 != 0 {
		add(DoctorFinding{Check: DoctorRoCEMixed, Severity: SevWarn,
			What:   "RoCEv1 (Ethertype 0x8915) and RoCEv2 (UDP 4791) both in the capture: v1 is not routable and the two ends of a connection must agree",
			Frames: []uint32{d.v1, d.v2},
			Fix:    "use RoCEv2 everywhere: cma_roce_mode -d DEV -p PORT -m 2 (or the rdma_cm default), and GID indexes of type RoCE v2 for verbs applications"})
	}

	if len(d.gidBad) > 0 {
		g := d.gidBad[0]
		var frames []uint32
		for _, x := range d.gidBad {
			frames = append(frames, x.frame)
		}
		add(DoctorFinding{Check: DoctorGIDMismatch, Severity: SevWarn,
			What: fmt.Sprintf("%d CM REQs name path GIDs other than the addresses they travel between (the first: GIDs %s > %s, sent %s > %s)",
				len(d.gidBad), g.local, g.remote, g.src, g.dst),
			Frames: frames,
			Fix:    "use the GID index of the address and RoCE version the connection runs on (show_gids; ibv_query_gid), and let rdma_cm resolve it; a GID table out of date after an address change needs the interface brought down and up"})
	}

	// What the Analyzer found.
	for _, row := range a.Expert().Rows() {
		switch row.Kind {
		case FindICRCBad, FindVCRCBad:
			add(DoctorFinding{Check: DoctorICRC, Severity: SevError,
				What:   fmt.Sprintf("%d packets with a bad %s: the receiver drops them, so the sender times out or is NAKed", row.Count, strings.ToUpper(strings.TrimSuffix(row.Kind.Name(), "_bad"))),
				Frames: row.Frames,
				Fix:    "look for a damaged link (ethtool -S IF: rx_crc_errors, symbol errors; replace the cable or optic) or a middlebox rewriting fields the ICRC covers (a NAT or DSCP remark on RoCEv1)"})
		case FindCMReadsExceeded, FindCMRetryExceeded, FindCMRNRRetryExceeded, FindCMMTUExceeded, FindCMPathMismatch, FindCMMRAIgnored:
			add(DoctorFinding{Check: DoctorCMContract, Severity: row.Severity,
				What:   fmt.Sprintf("%s (%d times)", row.Summary, row.Count),
				Frames: row.Frames,
				Fix:    "make both ends use what the CM negotiated: the QP attributes (max_rd_atomic, retry_cnt, rnr_retry, path MTU, traffic class) must be those of the REQ and REP, set by rdma_cm or copied from them with ibv_modify_qp"})
		case FindDCQCNNoReaction:
			add(DoctorFinding{Check: DoctorNoCCReaction, Severity: SevWarn,
				What:   fmt.Sprintf("%d CNPs after which the sender went on at its rate: its NIC does not run DCQCN on that priority", row.Count),
				Frames: row.Frames,
				Fix:    "enable the reaction point on the sender's priority (mlx5: echo 1 > /sys/class/net/IF/ecn/roce_rp/enable/PRIO)"})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity > out[j].Severity })
	return out
}

// convDir is the doctor's direction of side (0: A to B) of c.
func (d *Doctor) convDir(c Conversation, side int) *docDir {
	src, dst, qp := c.A, c.B, c.QPNAB
	if side == 1 {
		if !c.HasBA {
			return nil
		}
		src, dst, qp = c.B, c.A, c.QPNBA
	}
	return d.dirs[docKey{addrKeyOf(src), addrKeyOf(dst), qp}]
}

func isRoCEMTU(n int) bool {
	for _, m := range roceMTUs {
		if n == m {
			return true
		}
	}
	return false
}

func prioList(mask uint16) string {
	var ps []string
	for p := range 8 {
		if mask&(1<<p) != 0 {
			ps = append(ps, fmt.Sprint(p))
		}
	}
	return strings.Join(ps, ", ")
}

// String names a flow as the doctor does: "192.168.1.1 > 192.168.1.2 QP 0x000012".
func (f FlowKey) String() string {
	return fmt.Sprintf("%s > %s QP 0x%06x", f.Src, f.Dst, f.DestQP)
}
