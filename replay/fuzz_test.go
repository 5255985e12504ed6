package replay

import (
	"bytes"
	"testing"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/layers"
)

// fuzzRules swap pairs of values common in the corpus, in every kind of
// field: a rewrite can only be undone byte for byte when each new value is
// either new to the frame or itself rewritten. No rule maps to or from UDP port 4791 or QPN 0/1: those change how the
// rest of the frame decodes, so no rewrite could be undone field by field.
func fuzzRules() *Rules {
	r := &Rules{}
	for _, kv := range [][2]string{
		{KindMAC, "52:54:00:00:00:0b,52:54:00:00:00:0c"}, {KindMAC, "52:54:00:00:00:0c,52:54:00:00:00:0b"},
		{KindMAC, "02:00:00:00:00:01,02:00:00:00:00:02"}, {KindMAC, "02:00:00:00:00:02,02:00:00:00:00:01"},
		{KindIP, "192.168.77.11,192.168.77.12"}, {KindIP, "192.168.77.12,192.168.77.11"},
		{KindIP, "10.0.0.1,10.0.0.2"}, {KindIP, "10.0.0.2,10.0.0.1"},
		{KindGID, "fe80::1,fe80::2"}, {KindGID, "fe80::2,fe80::1"},
		{KindPort, "49441,50000"}, {KindPort, "50000,49441"}, {KindPort, "49152,49153"}, {KindPort, "49153,49152"},
		{KindLID, "1,2"}, {KindLID, "2,1"},
		{KindQPN, "0x11,0x22"}, {KindQPN, "0x22,0x11"}, {KindRKey, "0x2c6,0x1234"}, {KindRKey, "0x1234,0x2c6"},
		{KindVA, "0x7f0000000000,0x7f0000100000,0x100000"}, {KindVA, "0x7f0000100000,0x7f0000000000,0x100000"},
		{KindPSNBase, "0x11,+1000"}, {KindPSNBase, "0x22,-5"},
	} {
		if err := r.Add(kv[0], kv[1]); err != nil {
			panic(err)
		}
	}
	return r
}

// FuzzRewrite feeds arbitrary frames to the rewriter: it must not panic,
// and rewriting back must restore the frame — up to the one ambiguity of
// ones'-complement checksums, where an original 0xFFFF can come back as
// 0x0000 (both mean zero; no valid IPv4, UDP or TCP checksum is 0xFFFF).
func FuzzRewrite(f *testing.F) {
	for _, path := range corpus(f) {
		c, err := Load(path, LoadOptions{Decode: decodeOpts(), MaxFrames: 4})
		if err != nil {
			f.Fatal(err)
		}
		for _, fr := range c.Frames {
			f.Add(uint32(fr.LinkType), fr.Data, fr.Dir, true)
		}
	}
	rules := fuzzRules()
	inv, err := rules.Inverse()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, linkType uint32, data []byte, dir uint8, paired bool) {
		fr := Frame{Packet: capture.Packet{Number: 1, LinkType: layers.LinkType(linkType), Data: append([]byte(nil), data...)},
			PSNSpace: 0x11, HasPSNSpace: paired}
		fw, err := NewRewriter(rules, decodeOpts())
		if err != nil {
			t.Fatal(err)
		}
		fw.Rewrite(&fr)
		// The inverse keys the PSN shift by the new QPN: the frame's stream
		// is now 0x22's.
		fr.PSNSpace = 0x22
		bw, err := NewRewriter(inv, decodeOpts())
		if err != nil {
			t.Fatal(err)
		}
		bw.Rewrite(&fr)
		if bytes.Equal(fr.Data, data) {
			return
		}
		for i := range data {
			if fr.Data[i] != data[i] && !(data[i] == 0xFF && fr.Data[i] == 0x00) {
				t.Fatalf("byte %d: %#02x came back as %#02x\n% x\n% x", i, data[i], fr.Data[i], data, fr.Data)
			}
		}
	})
}

// FuzzDescribe feeds arbitrary datagrams to what compare mode makes of a
// live response: any bytes give a line, never a panic.
func FuzzDescribe(f *testing.F) {
	c, err := Load("../pcaps/rxe/read_bw.pcap", LoadOptions{Decode: decodeOpts(), MaxFrames: 80})
	if err != nil {
		f.Fatal(err)
	}
	for _, fr := range c.Frames {
		if fr.PayloadEnd > 0 {
			f.Add(fr.Datagram(), true)
		}
	}
	f.Fuzz(func(t *testing.T, dg []byte, payload bool) {
		if describe(dg, 100, 0x11, payload).Key == "" {
			t.Fatal("empty description")
		}
	})
}
