package craft

import "time"

// NamedCongestion is a Congestion with the name of its corpus file.
type NamedCongestion struct {
	Name  string // file name without .pcap
	Title string
	Congestion
}

// CongestionCorpus is the DCQCN part of ibwire's capture corpus
// (pcaps/dcqcn_*.pcap): one flow at a 1 Gb/s line rate (138-byte frames,
// 1.104 µs apart) marked while it outpaces a 400 Mb/s bottleneck, under
// three DCQCN timer settings. Tests rebuild the model from here to get its
// answers (CE counts, CNP spacing, reaction times) without reading them
// back from the files they check.
func CongestionCorpus() []NamedCongestion {
	const us = time.Microsecond
	base := func(p DCQCN, interval time.Duration) Congestion {
		p.LineRate = 1e9
		return Congestion{
			Config:   Config{Encap: RoCEv2, DSCP: 26, Delay: 500 * time.Nanosecond},
			Payload:  64,
			Duration: 600 * us,
			DCQCN:    p,
			MarkFrom: 50 * us, MarkUntil: 350 * us, MarkAbove: 400e6,
			CNPInterval: interval,
		}
	}
	paper := base(DCQCN{IncreaseTimer: 55 * us, AlphaTimer: 55 * us, AI: 20e6, HAI: 100e6, ReactionDelay: 2 * us}, 50*us)
	paper.Victim = &Victim{
		Config: Config{Encap: RoCEv2, DSCP: 26, UDPSrcPort: 0xc001,
			Requester: Endpoint{QPN: 0x000013}, Responder: Endpoint{QPN: 0x000014}},
		Rate: 300e6, SlowRate: 100e6, SlowFrom: 200 * us, SlowUntil: 400 * us,
	}
	fast := base(DCQCN{IncreaseTimer: 10 * us, AlphaTimer: 20 * us, ByteCounter: 1500, AI: 20e6, HAI: 100e6, ReactionDelay: 1 * us}, 20*us)
	bytes := base(DCQCN{IncreaseTimer: 300 * us, AlphaTimer: 55 * us, ByteCounter: 1024, AI: 40e6, HAI: 100e6, ReactionDelay: 4 * us}, 50*us)
	return []NamedCongestion{
		{"dcqcn_paper", "DCQCN with the paper's timers (T = K = 55 µs, byte counter 10 MiB: timer-driven recovery), CNPs at most every 50 µs, reaction 2 µs; beside it a never-marked victim flow slowed from 300 to 100 Mb/s for 200 µs", paper},
		{"dcqcn_fast_timer", "DCQCN with a 10 µs increase timer and a 1500-byte byte counter (both stage counts pass F: hyper increase), K = 20 µs, CNPs at most every 20 µs, reaction 1 µs", fast},
		{"dcqcn_byte_counter", "DCQCN recovering on a 1024-byte byte counter (T = 300 µs never fires), R_AI 40 Mb/s, CNPs at most every 50 µs, reaction 4 µs", bytes},
	}
}
