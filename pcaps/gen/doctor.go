package main

import (
	"bytes"
	"fmt"
	"net"
	"time"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// doctorSpecs are the captures of ibdump --doctor: each shows one RoCE
// misconfiguration, and nothing else the doctor warns about. (ICRC errors,
// CM contract breaches and senders deaf to CNPs have theirs already:
// broken_bad_icrc, cm_contract_*, rc_cnp_ecn.)
func doctorSpecs() []spec {
	return []spec{
		{"doctor_not_ect", "two RC connections between the same hosts: one ECN-capable (ECT(0)), the other sending its data Not-ECT", doctorNotECT},
		{"doctor_cnp_class", "a DCQCN flow (as dcqcn_paper, 200 µs) whose receiver sends its CNPs on DSCP 48 while the data is on DSCP 26", doctorCNPClass},
		{"doctor_ack_class", "RC WRITEs on DSCP 26 whose responder ACKs on DSCP 0", doctorACKClass},
		{"doctor_priority0", "PFC pausing priority 3 while RoCE data travels untagged on DSCP 0 (priority 0)", doctorPriority0},
		{"doctor_mixed_dscp", "one RC connection whose requests alternate between DSCP 26 and DSCP 10", doctorMixedDSCP},
		{"doctor_small_mtu", "from one host, a QP at path MTU 1024 and a QP at 4096, both writing 8 KiB", doctorSmallMTU},
		{"doctor_udp_source_port", "three RC connections between the same two hosts, all from UDP source port 49152", doctorSourcePort},
		{"doctor_roce_v1_v2", "a RoCEv1 and a RoCEv2 connection between the same hosts", doctorRoCEMixed},
		{"doctor_gid_ip", "a CM connection whose REQ names the requester's GID as ::ffff:192.168.1.9 while it is sent from 192.168.1.1 (a stale GID entry)", doctorGIDMismatch},
	}
}

// mixedEncap names the files whose frames are of more than one
// encapsulation (their manifest gives the first's).
var mixedEncap = map[string]bool{"doctor_roce_v1_v2.pcap": true}

// qps returns a Config for a second (third ...) connection between the
// default hosts: its own QPs and UDP source port.
func qps(n int, cfg craft.Config) craft.Config {
	// Distinct PSNs too, so pairing by answered PSNs cannot mix them up.
	cfg.Requester = craft.Endpoint{QPN: uint32(0x11 + 0x10*n), PSN: layers.PSN(0x100 + 0x1000*n)}
	cfg.Responder = craft.Endpoint{QPN: uint32(0x12 + 0x10*n), PSN: layers.PSN(0x800 + 0x1000*n)}
	if cfg.UDPSrcPort == 0 {
		cfg.UDPSrcPort = uint16(0xc000 + n)
	}
	cfg.Start = craft.DefaultStart.Add(time.Duration(n) * 500 * time.Nanosecond)
	return cfg
}

func writes(n, size int) []craft.Op {
	var ops []craft.Op
	for i := range n {
		ops = append(ops, craft.Op{Kind: craft.OpWrite, Data: craft.Pattern(size, byte(i)), VA: 0x7f0000100000 + uint64(i*size), RKey: 0x77})
	}
	return ops
}

// conns runs ops on each config and interleaves the captures by time.
func conns(ops []craft.Op, cfgs ...craft.Config) (craft.Trace, error) {
	var ts []craft.Trace
	for _, cfg := range cfgs {
		c := newConn(cfg)
		if err := c.Run(ops, craft.Faults{}); err != nil {
			return craft.Trace{}, err
		}
		ts = append(ts, c.Trace())
	}
	return craft.Merge(ts...), nil
}

func doctorNotECT() (craft.Encap, craft.Trace, []string, error) {
	tr, err := conns(writes(3, 100), qps(0, craft.Config{DSCP: 26}), qps(1, craft.Config{DSCP: 26, ECN: craft.NotECT}))
	return craft.RoCEv2, tr, []string{"`ibdump --doctor`: not_ect (warning): QP 0x000022's data is Not-ECT while QP 0x000012's is ECT(0)."}, err
}

func doctorCNPClass() (craft.Encap, craft.Trace, []string, error) {
	c := craft.CongestionCorpus()[0].Congestion
	c.Victim, c.Duration = nil, 200*time.Microsecond
	r, err := c.Build()
	if err != nil {
		return craft.RoCEv2, craft.Trace{}, nil, err
	}
	for i := range r.Trace.Frames {
		if r.Trace.Frames[i].Info.Note == "CNP" {
			if err := craft.SetDSCP(&r.Trace.Frames[i], 48); err != nil {
				return craft.RoCEv2, craft.Trace{}, nil, err
			}
		}
	}
	return craft.RoCEv2, r.Trace, []string{"`ibdump --doctor`: cnp_class (warning): the CNPs (DSCP 48, priority 6) are not in the data's class (DSCP 26, priority 3)."}, nil
}

func doctorACKClass() (craft.Encap, craft.Trace, []string, error) {
	tr, err := conns(writes(3, 100), craft.Config{DSCP: 26})
	for i := range tr.Frames {
		if err == nil && tr.Frames[i].Info.From == craft.Responder {
			err = craft.SetDSCP(&tr.Frames[i], 0)
		}
	}
	return craft.RoCEv2, tr, []string{"`ibdump --doctor`: ack_class (warning): the responder's ACKs are on DSCP 0 (priority 0), the WRITEs on DSCP 26 (priority 3)."}, err
}

func doctorPriority0() (craft.Encap, craft.Trace, []string, error) {
	tr, err := conns(writes(4, 100), craft.Config{Service: 0})
	if err != nil {
		return craft.RoCEv2, tr, nil, err
	}
	f, err := craft.PFCFrame(craft.DefaultResponder.MAC, map[int]uint16{3: 1000}, craft.DefaultStart.Add(2*time.Microsecond))
	f.Info.From = craft.Responder
	tr = craft.Merge(tr, craft.Trace{Frames: []craft.Frame{f}})
	return craft.RoCEv2, tr, []string{"`ibdump --doctor`: priority0 (warning): PFC pauses priority 3, the RoCE data is untagged on DSCP 0 (priority 0, not lossless)."}, err
}

func doctorMixedDSCP() (craft.Encap, craft.Trace, []string, error) {
	tr, err := conns(writes(4, 100), craft.Config{DSCP: 26})
	n := 0
	for i := range tr.Frames {
		if err == nil && tr.Frames[i].Info.From == craft.Requester {
			if n%2 == 1 {
				err = craft.SetDSCP(&tr.Frames[i], 10)
			}
			n++
		}
	}
	return craft.RoCEv2, tr, []string{"`ibdump --doctor`: mixed_dscp (warning): QP 0x000012's requests use DSCP 26 (priority 3) and DSCP 10 (priority 1)."}, err
}

func doctorSmallMTU() (craft.Encap, craft.Trace, []string, error) {
	tr, err := conns(writes(1, 8192), qps(0, craft.Config{MTU: 1024}), qps(1, craft.Config{MTU: 4096}))
	return craft.RoCEv2, tr, []string{"`ibdump --doctor`: small_mtu (warning): QP 0x000012 segments at 1024 bytes where the same sender's QP 0x000022 carries 4096."}, err
}

func doctorSourcePort() (craft.Encap, craft.Trace, []string, error) {
	tr, err := conns(writes(2, 100), qps(0, craft.Config{UDPSrcPort: 49152}), qps(1, craft.Config{UDPSrcPort: 49152}), qps(2, craft.Config{UDPSrcPort: 49152}))
	return craft.RoCEv2, tr, []string{"`ibdump --doctor`: udp_source_port (warning): QPs 0x000012, 0x000022 and 0x000032 all from source port 49152."}, err
}

func doctorRoCEMixed() (craft.Encap, craft.Trace, []string, error) {
	tr, err := conns(writes(2, 100), qps(0, craft.Config{Encap: craft.RoCEv2}), qps(1, craft.Config{Encap: craft.RoCEv1}))
	return craft.RoCEv2, tr, []string{"`ibdump --doctor`: roce_v1_v2 (warning): QP 0x000012 over RoCEv2, QP 0x000022 over RoCEv1."}, err
}

func doctorGIDMismatch() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{})
	err := firstErr(c.Connect(craft.CMOptions{}), c.Run(writes(2, 100), craft.Faults{}), c.Disconnect())
	tr := c.Trace()
	right := net.ParseIP("::ffff:192.168.1.1").To16()
	wrong := net.ParseIP("::ffff:192.168.1.9").To16()
	for i := range tr.Frames {
		f := &tr.Frames[i]
		if err != nil || f.Info.Note != "CM REQ" {
			continue
		}
		at := bytes.Index(f.Data[62:], right) // the first GID after the MAD header: the primary path's local GID
		if at < 0 {
			return craft.RoCEv2, tr, nil, fmt.Errorf("doctor_gid_ip: no local GID in the REQ")
		}
		copy(f.Data[62+at:], wrong)
		err = craft.RecomputeICRC(f)
	}
	return craft.RoCEv2, tr, []string{"`ibdump --doctor`: gid_ip (warning): the REQ (frame 1) names local GID ::ffff:192.168.1.9, its IP source is 192.168.1.1."}, err
}
