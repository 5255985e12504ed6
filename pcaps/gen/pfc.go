package main

import (
	"time"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// pfcPauses is RoCEv2 traffic on priority 3 (DSCP 26, which the usual
// dscp-to-priority map, DSCP/8, puts on priority 3) with the responder's
// port pausing that priority by PFC: a pause refreshed before it expires,
// a zero-quanta resume, RoCE packets sent on the paused priority (one
// within a frame time of the pause, one long after), an 802.3x PAUSE, and
// a pause storm (priority 3 held paused by refreshes for 2 ms). At 100G a
// quantum is 5.12 ns, so 65535 quanta are 335.5392 µs.
func pfcPauses() (craft.Encap, craft.Trace, []string, error) {
	b, err := craft.NewBuilder(craft.Config{Encap: craft.RoCEv2, Service: layers.ServiceUC, DSCP: 26})
	if err != nil {
		return craft.RoCEv2, craft.Trace{}, nil, err
	}
	cfg := b.Config()
	pausing := cfg.Responder.MAC // the port that asks its link partner, the requester, to stop
	start := craft.DefaultStart
	at := func(ns int64) time.Time { return start.Add(time.Duration(ns)) }
	write, _ := layers.OpcodeFor(layers.ServiceUC, layers.OpRDMAWrite, layers.PosOnly, false, false)
	psn := cfg.Requester.PSN
	var frames []craft.Frame
	roce := func(ns int64, note string) {
		if err != nil {
			return
		}
		var f craft.Frame
		f, err = b.Build(craft.Packet{From: craft.Requester, Payload: craft.Pattern(1024, byte(psn)), BTH: layers.BTH{
			Opcode: write, PKey: 0xFFFF, DestQP: cfg.Responder.QPN, PSN: psn,
			RETH: layers.RETH{VA: 0x7f0000100000 + uint64(psn-cfg.Requester.PSN)*1024, RKey: 0x33, DMALength: 1024}}}, at(ns))
		psn = psn.Add(1)
		f.Info.Note = note
		frames = append(frames, f)
	}
	pfc := func(ns int64, quanta map[int]uint16) {
		if err != nil {
			return
		}
		var f craft.Frame
		f, err = craft.PFCFrame(pausing, quanta, at(ns))
		f.Info.From = craft.Responder
		frames = append(frames, f)
	}
	const us = int64(time.Microsecond)
	// 0-80 µs: traffic flows.
	for t := int64(0); t < 100*us; t += 20 * us {
		roce(t, "priority 3, not paused")
	}
	pfc(100*us, map[int]uint16{3: 65535, 4: 0}) // pause p3 until 435.5392 µs; p4's 0 resumes nothing
	roce(100*us+50, "sent 50 ns after the pause: a frame already on the wire")
	roce(250*us, "sent 150 µs into the pause: a PFC violation")
	pfc(300*us, map[int]uint16{3: 65535}) // refreshed before it expires: now until 635.5392 µs
	pfc(500*us, map[int]uint16{3: 0})     // resumed: the pause lasted 400 µs
	for t := int64(520 * us); t < 700*us; t += 40 * us {
		roce(t, "priority 3, resumed")
	}
	frame, perr := craft.PauseFrame(pausing, 1000, at(700*us)) // 5.12 µs at 100G
	if err == nil {
		err = perr
	}
	frame.Info.From = craft.Responder
	frames = append(frames, frame)
	roce(720*us, "after the PAUSE expired")
	// 1-3 ms: a storm: priority 3 refreshed every 200 µs, the last one
	// left to expire (3.0 ms + 335.5392 µs).
	for t := int64(1000 * us); t <= 3000*us; t += 200 * us {
		pfc(t, map[int]uint16{3: 65535})
	}
	roce(3400*us, "after the storm")
	if err != nil {
		return craft.RoCEv2, craft.Trace{}, nil, err
	}
	notes := []string{
		"Priority of the RoCE packets: 3, from DSCP 26 (no VLAN tag; DSCP/8). The pausing port is 02:00:00:00:00:02 (the responder's side of the link), so the paused sender is 02:00:00:00:00:01. A quantum is 512 bit times: 5.12 ns at 100G, 20.48 ns at 25G, 51.2 ns at 10G; durations are kept to the nanosecond (65535 quanta at 100G: 335.539 µs).",
		"`ibdump -q -z pfc,1ms,50 --link-speed 100G`: priority 3 paused twice, [100, 500) µs (frame 6, refreshed by frame 9, resumed by frame 10: 400 µs) and [1000, 3335.539) µs (frame 18, refreshed 10 times, left to expire: 2335.539 µs, the longest), 2735.539 µs in all, 80.46% of the 3400 µs capture; the PAUSE (frame 16) stops every priority for 5.120 µs; storms in the windows at 1000 and 2000 µs (100%; the 0 and 3000 µs windows are 40% and 33.55%); frame 7 is in flight (50 ns after the pause began), frame 8 sent on the paused priority (150 µs after).",
		"At 25G and 10G every pause lasts longer (65535 quanta: 1342.156 µs and 3355.392 µs), so the last storm pause outlives the capture (cut at 3400 µs: 2400 µs, 2800 µs in all); the PAUSE lasts 20.480 µs and 51.200 µs, long enough that frame 17 (720 µs) is sent while it holds, and frame 29 (3400 µs) is sent on paused priority 3.",
		"Priority 4's zero time in frame 6 resumes nothing (no pause was in effect); without --link-speed (pcap has no if_speed) the table gives quanta only.",
	}
	return craft.RoCEv2, craft.Trace{Frames: frames}, notes, nil
}
