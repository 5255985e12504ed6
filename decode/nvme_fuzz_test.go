package decode_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// FuzzNVMeAnalyze runs the NVMe-oF analysis over the opening of the
// discovery and admin queues of nvme_rdma_connect.pcap with a fuzzed
// frame in the middle, twice (as if resent), seeded with the excerpt's
// own frames (command and response capsules, data, the multi-packet
// Connect and Writes): no panic, and every nvme field of every packet
// reads.
func FuzzNVMeAnalyze(f *testing.F) {
	context := corpusFrames(f, "../pcaps/rxe/nvme_rdma_connect.pcap", 330)
	for i, p := range context {
		if i%3 == 0 || (i >= 168 && i <= 175) || i >= 288 {
			f.Add(p.Data, uint32(p.LinkType))
		}
	}
	var nvmeFields []*decode.Field
	for _, fd := range decode.Fields() {
		if strings.HasPrefix(fd.Name, "nvme") || strings.HasPrefix(fd.Name, "ibwire.nvme") {
			nvmeFields = append(nvmeFields, fd)
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte, linkType uint32) {
		a := analyzeWithFuzzed(context[:200], []int{100, 170}, frame, linkType, nvmeFields)
		for _, r := range a.NVMeSRT().Rows() {
			_ = r.Quantile(0.99)
		}
	})
}

// FuzzRPCRDMAAnalyze runs the RPC-over-RDMA analysis over
// nfs_rdma_v3_mount.pcap with a fuzzed frame in the middle, seeded with
// the excerpt's own frames (calls, replies in RDMA_MSG and RDMA_NOMSG,
// the RDMA WRITEs of write and reply chunks): no panic, and every rpc,
// nfs and ibwire.rpc field of every packet reads.
func FuzzRPCRDMAAnalyze(f *testing.F) {
	context := corpusFrames(f, "../pcaps/rxe/nfs_rdma_v3_mount.pcap", 110)
	for i, p := range context {
		if i >= 26 {
			f.Add(p.Data, uint32(p.LinkType))
		}
	}
	var fields []*decode.Field
	for _, fd := range decode.Fields() {
		if strings.HasPrefix(fd.Name, "rpc") || strings.HasPrefix(fd.Name, "nfs") || strings.HasPrefix(fd.Name, "ibwire.rpc") {
			fields = append(fields, fd)
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte, linkType uint32) {
		a := analyzeWithFuzzed(context, []int{40, 70}, frame, linkType, fields)
		for _, r := range a.RPCSRT().Rows() {
			_ = r.Quantile(0.99)
		}
	})
}

// analyzeWithFuzzed decodes and analyzes the context frames with the
// fuzzed frame put before each index of at, reads every occurrence of
// fields on every packet and copies its ULP records, and returns the
// finished analyzer: the upper-layer fuzz targets' run.
func analyzeWithFuzzed(context []capture.Packet, at []int, frame []byte, linkType uint32, fields []*decode.Field) *decode.Analyzer {
	a := decode.NewAnalyzer(decode.AnalyzerOptions{MaxLive: 8})
	dec := decode.NewDecoder(decode.Options{})
	n := 0
	var v decode.Value
	feed := func(data []byte, lt uint32) {
		n++
		p := dec.Decode(decode.Input{Number: n, Time: time.Unix(0, int64(n)*1000), Length: len(data), LinkType: layers.LinkType(lt), Data: data})
		a.Analyze(p)
		for _, fd := range fields {
			for i := 0; i < 300 && fd.GetOccurrence(p, i, &v); i++ {
				_ = fd.AppendValue(nil, &v)
			}
		}
		if nv := p.Analysis.NVMe; nv != nil {
			_ = nv.Clone()
		}
		if r := p.Analysis.RPCRDMA; r != nil {
			_ = r.Clone()
		}
		if i := p.Analysis.ISER; i != nil {
			_ = i.Clone()
		}
	}
	for i, p := range context {
		if slices.Contains(at, i) {
			feed(frame, linkType)
		}
		feed(p.Data, uint32(p.LinkType))
	}
	a.Finish()
	return a
}
