package decode_test

import (
	"strings"
	"testing"

	"github.com/ibwire/ibwire/decode"
)

// FuzzRPCRDMAChunksAnalyze fuzzes a frame into conversations that
// reassemble RPC messages from chunks and walk NFSv4 COMPOUNDs: the
// crafted NFSv3 conversation (a WRITE whose data the server READs from a
// read chunk, a READ by a write chunk, a reply chunk) and the start of
// an NFSv4.1 mount (EXCHANGE_ID, CREATE_SESSION, OPEN answered in a reply
// chunk). Seeds: every frame of both.
func FuzzRPCRDMAChunksAnalyze(f *testing.F) {
	context := corpusFrames(f, "../pcaps/nfs_rdma_craft.pcap", 200)
	v4 := corpusFrames(f, "../pcaps/rxe/nfs_rdma_v41_mount.pcap", 139)
	context = append(context, v4...)
	for _, p := range context {
		f.Add(p.Data, uint32(p.LinkType))
	}
	var fields []*decode.Field
	for _, fd := range decode.Fields() {
		if strings.HasPrefix(fd.Name, "rpc") || strings.HasPrefix(fd.Name, "nfs") || strings.HasPrefix(fd.Name, "ibwire.rpc") {
			fields = append(fields, fd)
		}
	}
	n := len(context)
	f.Fuzz(func(t *testing.T, frame []byte, linkType uint32) {
		a := analyzeWithFuzzed(context, []int{n / 4, n / 2, n - 20}, frame, linkType, fields)
		for _, r := range a.RPCSRT().Rows() {
			_ = r.Quantile(0.99)
		}
	})
}
