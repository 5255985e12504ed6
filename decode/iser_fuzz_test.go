package decode_test

import (
	"strings"
	"testing"

	"github.com/ibwire/ibwire/decode"
)

// FuzzISERAnalyze runs the iSER analysis over iser_login.pcap (the CM
// set-up, the discovery and normal sessions' Logins, Text, the SCSI scan,
// READs with RDMA WRITE data, WRITEs in SEND FIRST/MIDDLE/LAST) with a
// fuzzed frame in the middle, twice (as if resent), seeded with the
// excerpt's own frames and the mid-stream excerpt's RDMA READ of a WRITE's
// data: no panic, and every iser, iscsi and ibwire.iscsi field of every
// packet reads.
func FuzzISERAnalyze(f *testing.F) {
	context := corpusFrames(f, "../pcaps/rxe/iser_login.pcap", 260)
	for i, p := range context {
		if i < 30 || i%4 == 0 {
			f.Add(p.Data, uint32(p.LinkType))
		}
	}
	for i, p := range corpusFrames(f, "../pcaps/rxe/iser_midstream.pcap", 271) {
		if i >= 120 && i <= 140 {
			f.Add(p.Data, uint32(p.LinkType))
		}
	}
	var fields []*decode.Field
	for _, fd := range decode.Fields() {
		if strings.HasPrefix(fd.Name, "iser") || strings.HasPrefix(fd.Name, "iscsi") || strings.HasPrefix(fd.Name, "ibwire.iscsi") {
			fields = append(fields, fd)
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte, linkType uint32) {
		a := analyzeWithFuzzed(context, []int{30, 120}, frame, linkType, fields)
		for _, r := range a.ISCSISRT().Rows() {
			_ = r.Quantile(0.99)
		}
	})
}
