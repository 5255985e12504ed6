package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

const (
	nvmeCraft = "../../pcaps/nvme_rdma_craft.pcap"
	nfsCraft  = "../../pcaps/nfs_rdma_craft.pcap"
)

// srtRow is a row of -z nvme,srt or -z rpc,srt -T json.
type srtRow struct {
	Queue     string  `json:"queue"`
	Opcode    int     `json:"opcode"`
	Command   string  `json:"command"`
	Procedure int     `json:"procedure"`
	Name      string  `json:"name"`
	Count     int     `json:"count"`
	Errors    int     `json:"errors"`
	Min       float64 `json:"min_us"`
	Avg       float64 `json:"avg_us"`
	Max       float64 `json:"max_us"`
}

// srtWant is what a table row must say, from the latencies of its
// commands.
type srtWant struct {
	Count, Errors int
	Min, Avg, Max float64
	latencies     []float64
}

func (w *srtWant) add(lat time.Duration, failed bool) {
	us := float64(lat) / float64(time.Microsecond)
	w.latencies = append(w.latencies, us)
	w.Count++
	if failed {
		w.Errors++
	}
	w.Min, w.Max, w.Avg = math.Inf(1), 0, 0
	for _, l := range w.latencies {
		w.Min, w.Max, w.Avg = min(w.Min, l), max(w.Max, l), w.Avg+l/float64(len(w.latencies))
	}
}

func srt(t *testing.T, capture, table string) []srtRow {
	t.Helper()
	out, errOut, code := ibdump(t, nil, "-q", "-r", capture, "-z", table, "-T", "json")
	require.Zero(t, code, errOut)
	var rows []srtRow
	require.NoError(t, json.Unmarshal([]byte(out), &rows), out)
	return rows
}

// ulpTshark reads tshark 4.0.17's decoding of a crafted capture's
// commands and replies (testdata/tshark/ulp_srt, made by
// testdata/tshark/regen.sh testdata/tshark/ulp_srt/fields.txt
// testdata/tshark/ulp_srt CAPTURE): one map of field to value per frame
// that has any of the fields, values with occurrence=a (comma-joined).
func ulpTshark(t *testing.T, name string) []map[string]string {
	t.Helper()
	data, err := os.ReadFile("testdata/tshark/ulp_srt/" + name + ".tsv")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	require.Greater(t, len(lines), 2)
	require.True(t, strings.HasPrefix(lines[0], "# TShark (Wireshark) 4.0.17"), lines[0])
	header := strings.Split(lines[1], "\t")
	var rows []map[string]string
	for _, l := range lines[2:] {
		row := map[string]string{}
		for i, v := range strings.Split(l, "\t") {
			if v != "" && i < len(header) {
				row[header[i]] = v
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// seconds parses tshark's first value of a time field in unit s.
func seconds(t *testing.T, v string, unit time.Duration) time.Duration {
	t.Helper()
	f, err := strconv.ParseFloat(strings.Split(v, ",")[0], 64)
	require.NoError(t, err, v)
	return time.Duration(math.Round(f * float64(unit)))
}

// TestCraftedNVMeSRT: -z nvme,srt on nvme_rdma_craft.pcap counts each
// command craft put in once, by queue and opcode, with the errors (the
// Read answered LBA Out of Range) and the latencies craft gave it
// (craft.NVMeExampleCommands); tshark's nvme.cmd_latency and
// nvme.fabrics.cmd_latency of every completion are those latencies too.
func TestCraftedNVMeSRT(t *testing.T) {
	want := map[[2]string]*srtWant{}
	byCID := map[[2]uint16]craft.NVMeExampleCommand{}
	for _, c := range craft.NVMeExampleCommands {
		queue, name := "I/O", c.Name
		if c.QID == 0 {
			queue = "admin"
		}
		if c.Fabrics {
			name = "Fabrics " + name
		}
		k := [2]string{queue, name}
		if want[k] == nil {
			want[k] = &srtWant{}
		}
		want[k].add(c.Latency, !c.Status.OK())
		byCID[[2]uint16{c.QID, c.CID}] = c
	}
	got := map[[2]string]*srtWant{}
	for _, r := range srt(t, nvmeCraft, "nvme,srt") {
		got[[2]string{r.Queue, r.Command}] = &srtWant{Count: r.Count, Errors: r.Errors, Min: r.Min, Avg: r.Avg, Max: r.Max}
	}
	for k := range want {
		want[k].latencies = nil
	}
	assert.Equal(t, want, got)

	// tshark: every completion with its latency, in ms.
	matched := 0
	for _, row := range ulpTshark(t, "nvme_rdma_craft") {
		lat, ok := row["nvme.cmd_latency"]
		if !ok {
			lat, ok = row["nvme.fabrics.cmd_latency"]
		}
		if !ok {
			continue
		}
		qid, err := strconv.ParseUint(row["nvme-rdma.cmd.qid"], 0, 16)
		require.NoError(t, err)
		cid, err := strconv.ParseUint(row["nvme.cqe.cid"], 0, 16)
		require.NoError(t, err)
		c, ok := byCID[[2]uint16{uint16(qid), uint16(cid)}]
		require.True(t, ok, "frame %s: qid %d cid %d", row["frame.number"], qid, cid)
		assert.InDelta(t, c.Latency, seconds(t, lat, time.Millisecond), float64(time.Microsecond), "frame %s", row["frame.number"])
		matched++
	}
	assert.Equal(t, len(craft.NVMeExampleCommands), matched, "tshark times every command")
}

// TestCraftedRPCSRT: -z rpc,srt on nfs_rdma_craft.pcap counts each NFSv3
// call craft put in once with the latency craft gave it
// (craft.RPCExampleCalls), as tshark's rpc.time does for every call but
// two: tshark dissects the READ reply whose data came by a write chunk
// twice (both times with the right rpc.time), and it dissects the WRITE
// call where it finished reassembling the call's read chunk, at the last
// RDMA READ response, not at the SEND that carried it, so its rpc.time is
// shorter by the time between the two. ibdump's rpc.repframe and rpc.time
// say the same (the frame that shows the call); its ibwire.rpc.call_frame
// and -z rpc,srt count from the SEND.
func TestCraftedRPCSRT(t *testing.T) {
	want := map[string]*srtWant{}
	byProc := map[int]craft.RPCExampleCall{}
	for _, c := range craft.RPCExampleCalls {
		want["NFSv3 "+c.Name] = &srtWant{}
		want["NFSv3 "+c.Name].add(c.Latency, false)
		want["NFSv3 "+c.Name].latencies = nil
		byProc[int(c.Procedure)] = c
	}
	got := map[string]*srtWant{}
	for _, r := range srt(t, nfsCraft, "rpc,srt") {
		got[r.Name] = &srtWant{Count: r.Count, Errors: r.Errors, Min: r.Min, Avg: r.Avg, Max: r.Max}
	}
	assert.Equal(t, want, got)

	rows := ulpTshark(t, "nfs_rdma_craft")
	when := map[string]time.Duration{}
	for _, row := range rows {
		when[row["frame.number"]] = seconds(t, row["frame.time_epoch"], time.Second)
	}
	out, errOut, code := ibdump(t, nil, "-r", nfsCraft, "-T", "fields", "-e", "frame.number", "-e", "rpc.repframe", "-e", "ibwire.rpc.call_frame",
		"-Y", "rpc.msgtyp == 1")
	require.Zero(t, code, errOut)
	callOf := map[string]string{} // ibdump: reply frame -> call frame
	sendOf := map[string]string{} // reply frame -> the call's SEND
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, "\t")
		require.Len(t, f, 3, l)
		callOf[f[0]], sendOf[f[0]] = f[1], f[2]
	}
	timed := 0
	for _, row := range rows {
		v, ok := row["rpc.time"]
		if !ok {
			continue
		}
		proc, err := strconv.Atoi(strings.Split(row["rpc.procedure"], ",")[0])
		require.NoError(t, err)
		c, ok := byProc[proc]
		require.True(t, ok, "frame %s: procedure %d", row["frame.number"], proc)
		lat := seconds(t, v, time.Second)
		frame, tsharkCall := row["frame.number"], strings.Split(row["rpc.repframe"], ",")[0]
		assert.Equal(t, callOf[frame], tsharkCall, "frame %s: the call", frame)
		if c.Name == "WRITE" {
			require.NotEqual(t, sendOf[frame], tsharkCall, "tshark places the WRITE call at the end of its read chunk")
			lat += when[tsharkCall] - when[sendOf[frame]]
		} else {
			assert.Equal(t, sendOf[frame], tsharkCall, "frame %s: the call", frame)
		}
		assert.InDelta(t, c.Latency, lat, float64(time.Microsecond), "frame %s: %s", frame, c.Name)
		if c.Name == "READ" {
			assert.Len(t, strings.Split(v, ","), 2, "tshark dissects the READ reply twice")
		}
		timed++
	}
	assert.Equal(t, len(craft.RPCExampleCalls), timed, "tshark times every call")
}

// ulpFuzzSeeds are the seed files the crafted conversations give the
// NVMe-oF and RPC-over-RDMA fuzz targets, by path: every SEND payload of
// each (command and response capsules, RPC-over-RDMA messages) for the
// layers' targets, and every frame but the ACKs for the analyses'
// targets, which take a frame and its link type.
func ulpFuzzSeeds(t *testing.T) map[string]string {
	t.Helper()
	seeds := map[string]string{}
	for _, c := range []struct {
		name          string
		build         func(craft.Config) (craft.Trace, error)
		layers, frame string
	}{
		{"craft-nvme", craft.NVMeExample, "FuzzNVMeCapsules", "FuzzNVMeAnalyze"},
		{"craft-rpcrdma", craft.RPCRDMAExample, "FuzzRPCRDMA", "FuzzRPCRDMAAnalyze"},
	} {
		tr, err := c.build(craft.Config{})
		require.NoError(t, err)
		p := layers.NewParser(craft.RoCEv2.FirstLayer(), layers.ParserOptions{})
		for i, f := range tr.Frames {
			require.NoError(t, p.Decode(f.Data))
			info := p.BTH.Opcode.Info()
			if info.Operation == layers.OpAcknowledge {
				continue
			}
			name := fmt.Sprintf("%s-frame-%02d", c.name, i+1)
			seeds["../../decode/testdata/fuzz/"+c.frame+"/"+name] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nuint32(%d)\n", f.Data, f.LinkType)
			if info.Operation == layers.OpSend && p.BTH.DestQP != 1 {
				seeds["../../layers/testdata/fuzz/"+c.layers+"/"+name] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", p.BTH.PacketPayload())
			}
		}
	}
	return seeds
}

// TestULPFuzzSeeds keeps the fuzz targets' seeds from the crafted
// conversations what craft makes now (go test -run TestULPFuzzSeeds
// -update writes them).
func TestULPFuzzSeeds(t *testing.T) {
	seeds := ulpFuzzSeeds(t)
	require.Greater(t, len(seeds), 50)
	for path, want := range seeds {
		if *update {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
			continue
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -run TestULPFuzzSeeds -update")
		assert.Equal(t, want, string(got), path)
	}
	for _, dir := range []string{"../../decode/testdata/fuzz/FuzzNVMeAnalyze", "../../decode/testdata/fuzz/FuzzRPCRDMAAnalyze",
		"../../layers/testdata/fuzz/FuzzNVMeCapsules", "../../layers/testdata/fuzz/FuzzRPCRDMA"} {
		stale, err := filepath.Glob(dir + "/craft-*")
		require.NoError(t, err)
		for _, s := range stale {
			assert.Contains(t, seeds, s, "not made by craft any more: delete it")
		}
	}
}
