package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// tsharkDivergences is the one table of places where ibdump -T fields
// differs from tshark 4.0 on purpose (PROTOCOL.md §1.12). Everything else
// must be identical.
var tsharkDivergences = []struct {
	applies func(r row) bool
	fields  []string // nil: every infiniband field of such a packet
	why     string
}{
	{func(r row) bool { return r.op >= 0x40 && r.op <= 0x5F }, nil,
		"tshark parses every RD opcode as Mellanox DC (a 20-byte BTH); ibdump parses RD as the IBTA defines it (--dc gives DC)"},
	{func(r row) bool { return !r.op.Info().WiresharkDissects() }, []string{
		"infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen", "infiniband.atomiceth.swapdt",
		"infiniband.atomiceth.cmpdt", "infiniband.immdt", "infiniband.ieth", "infiniband.aeth.syndrome",
		"infiniband.aeth.syndrome.reserved", "infiniband.aeth.syndrome.opcode", "infiniband.aeth.syndrome.credit_count",
		"infiniband.aeth.syndrome.timer", "infiniband.aeth.syndrome.reserved_value", "infiniband.aeth.syndrome.error_code",
		"infiniband.aeth.msn", "infiniband.atomicacketh.origremdt", "infiniband.deth.q_key", "infiniband.deth.srcqp",
		"infiniband.rdeth.eecnxt", "infiniband.reth", "infiniband.atomiceth", "infiniband.aeth", "infiniband.atomicacketh",
		"infiniband.deth", "infiniband.rdeth"},
		"tshark 4.0 does not parse the headers of XRC, FLUSH, ATOMIC WRITE and CNP packets (it shows them as infiniband.vendor); ibdump decodes them"},
	{func(row) bool { return true }, []string{"infiniband.cm.req.prim_flowlabel", "infiniband.cm.req.prim_reserved0",
		"infiniband.cm.req.prim_pktrate", "infiniband.cm.req.alt_flowlabel", "infiniband.cm.req.alt_reserved0",
		"infiniband.cm.req.alt_pktrate"},
		"tshark 4.0 reads a REQ path's flow label from 3 bytes under the mask of 4 (0x00732 for the 0x7327d rping sends) and the reserved bits and packet rate from the word's first byte; ibdump decodes the 32-bit word as the IBTA lays it out (flow label 20 bits, reserved 6, packet rate 6)"},
	{func(r row) bool {
		return r.mad == "0x04/0x0012" || r.mad == "0x04/0x001d" || r.mad == "0x04/0x0001" || saRecordsWithRID[r.mad]
	},
		[]string{"infiniband.invariant.crc", "infiniband.variant.crc"},
		"tshark 4.0 shows no ICRC or VCRC after a PerfMgt PortCounters, PortCountersExtended or ClassPortInfo MAD, or after an SA record that opens with a RID (NodeRecord ... VLArbitrationTableRecord, LinkRecord, ServiceRecord, MCMemberRecord, InformInfoRecord: its SA dissector skips the 200 data bytes from the end of the RID, past the MAD; pcaps/mgmt_smp_sa_perf.pcap frames 11-13, 25-26, pcaps/mgmt_sa_records.pcap, pcaps/mgmt_traps_classportinfo.pcap frames 20-21); ibdump shows the packet's trailer"},
	{func(r row) bool { return r.trap == uint16(layers.TrapBadPKeyAtSwitch) }, []string{"infiniband.notice.datadetails",
		"infiniband.trap.lidaddr1", "infiniband.trap.lidaddr2", "infiniband.trap.pkey", "infiniband.trap.sl",
		"infiniband.trap.qp1", "infiniband.trap.qp2", "infiniband.trap.gidaddr1", "infiniband.trap.gidaddr2",
		"infiniband.trap.portno", "infiniband.invariant.crc", "infiniband.variant.crc", "infiniband.reserved"},
		"tshark 4.0 registers trap 259's 2-byte DataValid as an IPv6 address, calls the Notice malformed there and shows nothing after it (no trap 259 fields, DataDetails, the SMP's last reserved bytes, ICRC or VCRC: pcaps/mgmt_traps_classportinfo.pcap frame 16); ibdump decodes trap 259 as the IBTA lays it out (DataValid and SWLIDADDR, FT_IPv6 names for 2-byte values, stay without a value)"},
	{func(r row) bool { return r.truncated }, []string{"infiniband.invariant.crc", "infiniband.variant.crc"},
		"for a packet cut short tshark shows its last bytes as the ICRC (and VCRC); ibdump shows no trailer for it"},
	// The NVMe-oF fields are compared with tshark's by decode's
	// TestNVMeMatchesTshark (pcaps/rxe/nvme_rdma_connect.pcap), which skips
	// these capsules for this reason; the .tsv files here are made with
	// nvme-rdma disabled, so no row of them carries an nvme field.
	{func(row) bool { return true }, []string{"nvme.cmd.opc", "nvme.cmd.cid", "nvme.cmd.nsid", "nvme.cmd.slba", "nvme.cmd.nlb",
		"nvme.fabrics.cmd.fctype", "nvme.fabrics.cmd.cid", "nvme.fabrics.cmd.connect.qid", "nvme.cqe.cid", "nvme.cqe.status",
		"nvme.cmd_latency", "nvme.fabrics.cmd_latency", "nvme-rdma.unknown_data"},
		"tshark 4.0 does not reassemble an NVMe-oF capsule sent as several RC SEND packets (FIRST, MIDDLE ..., LAST: a Write with 4 KiB of in-capsule data, a Connect with its 1 KiB of data): it shows their payloads as nvme-rdma.unknown_data, and their completions (plain SEND ONLY) undecoded too (it decodes 8 of the 136 Writes of ../shared/pcaps-ulp/nvme_rdma.pcap); ibdump reassembles them and decodes each command and its completion once"},
	{func(row) bool { return true }, []string{"smb_direct.fragments", "smb_direct.fragment", "smb_direct.fragment.count",
		"smb_direct.reassembled.length"},
		"tshark 4.0 does not reassemble an RC SEND's packets, so a Data Transfer longer than the path MTU (an 8 KiB fragment of a 12 KiB SMB2 READ response: pcaps/smbdirect.pcap frames 26 and 35) reaches its dissector cut to the first packet, whose data it then skips: it never joins the fragments of the SMB2 message; ibdump reads the header at the SEND FIRST as tshark does and lists the fragments at the last one"},
	{func(r row) bool { return tsharkExceptions[r.at] }, []string{"infiniband.invariant.crc", "infiniband.variant.crc"},
		"tshark 4.0's upper-layer dissector throws on these frames (tsharkExceptions: the NVMe dissector on a Get Log Page's data, the NFS dissector on a READ reply whose data came by a write chunk) and shows no ICRC after it; ibdump shows the packet's trailer"},
}

// saRecordsWithRID are the SA attributes, as tshark prints "class/attribute",
// whose records open with a record identifier that tshark's SA dissector
// steps over before the data's 200 bytes.
var saRecordsWithRID = map[string]bool{"0x03/0x0011": true, "0x03/0x0012": true, "0x03/0x0013": true,
	"0x03/0x0014": true, "0x03/0x0015": true, "0x03/0x0016": true, "0x03/0x0017": true, "0x03/0x0018": true,
	"0x03/0x0020": true, "0x03/0x0030": true, "0x03/0x0031": true, "0x03/0x0033": true, "0x03/0x0036": true,
	"0x03/0x0038": true, "0x03/0x00f3": true}

// row is what the divergence rules know of a frame.
type row struct {
	op        layers.Opcode
	truncated bool   // ibdump reports the frame cut short
	mad       string // "class/attribute" of a MAD as tshark prints them ("0x04/0x0012"), "" for other packets
	trap      uint16 // a Notice's trap number, as ibdump decodes it; 0 for other packets
	at        string // "capture:frame" (base name), for the rules about one frame
}

// tsharkExceptions are frames on which tshark 4.0's dissector of an upper
// layer throws ("Malformed Packet (Exception occurred)") and so shows none
// of the InfiniBand items after it.
var tsharkExceptions = map[string]bool{
	// The NVMe dissector reads the RDMA WRITE FIRST/MIDDLE/LAST of a Get
	// Log Page's data (Commands Supported and Effects) past their ends
	// (tshark -Y _ws.malformed lists exactly these).
	"nvme_rdma_connect:137": true, "nvme_rdma_connect:138": true, "nvme_rdma_connect:139": true,
	"nvme_rdma_loss:138": true, "nvme_rdma_loss:139": true, "nvme_rdma_loss:140": true,
	// The NFS dissector reads an NFSv3 READ reply whose data came by a
	// write chunk twice, the second time past its end (a malformed inner
	// rpc/nfs layer: ../shared/pcaps-ulp/MANIFEST.md). The RPC-over-RDMA
	// fields themselves are compared by decode's TestRPCRDMAMatchesTshark.
	"nfs_rdma_v3_mount:108": true, "nfs_rdma_craft:17": true, "nfs_rdma_v3_loss:110": true,
	// The same for an NFSv4.1 COMPOUND (SEQUENCE PUTFH READ) reply.
	"nfs_rdma_v41_mount:128": true,
}

func diverges(r row, field string) bool {
	for _, d := range tsharkDivergences {
		if !d.applies(r) {
			continue
		}
		if d.fields == nil {
			return true
		}
		for _, f := range d.fields {
			if f == field {
				return true
			}
		}
	}
	return false
}

// captureFor finds the capture a checked-in tshark decoding was made from.
func captureFor(t *testing.T, name string) string {
	for _, p := range []string{"../../pcaps/rxe/" + name + ".pcap", "../../pcaps/rxe/interop/" + name + ".pcap",
		"../../testdata/vectors/" + name + ".pcap", "../../testdata/" + name + ".pcap", "../../pcaps/" + name + ".pcap"} {
		if _, err := os.Stat(p); err == nil {
			if strings.HasSuffix(name, "linktype147-userdlt") {
				// ibdump reads the LINKTYPE_INFINIBAND twin tshark cannot open.
				return strings.Replace(p, "linktype147-userdlt", "linktype247", 1)
			}
			return p
		}
	}
	t.Fatalf("no capture for %s", name)
	return ""
}

// corpusDirs hold the captures the differential test must cover, each with
// its tshark decoding checked in under its base name.
var corpusDirs = []string{"../../pcaps", "../../pcaps/rxe", "../../pcaps/rxe/interop", "../../testdata", "../../testdata/vectors"}

// TestEveryCaptureHasTsharkDecoding keeps the differential test complete:
// a capture added to the corpus without tshark's decoding (regen.sh, or the
// tshark build tag's test) would otherwise go uncompared.
func TestEveryCaptureHasTsharkDecoding(t *testing.T) {
	seen := map[string]string{}
	for _, dir := range corpusDirs {
		caps, err := filepath.Glob(filepath.Join(dir, "*.pcap"))
		require.NoError(t, err)
		for _, c := range caps {
			name := strings.TrimSuffix(filepath.Base(c), ".pcap")
			if other, dup := seen[name]; dup {
				t.Errorf("%s and %s share a base name: their tshark decodings would collide", c, other)
			}
			seen[name] = c
			if strings.HasSuffix(name, "linktype247") {
				continue // tshark 4.0 cannot read it; its linktype147 twin is compared
			}
			assert.FileExists(t, filepath.Join("testdata", "tshark", name+".tsv"),
				"%s has no tshark decoding: run testdata/tshark/regen.sh testdata/tshark/fields.txt testdata/tshark %s", c, c)
		}
	}
}

// TestDifferentialTshark compares ibdump -T fields with tshark 4.0.17's
// output for every infiniband field of every capture whose tshark decoding
// is checked in (testdata/tshark; regenerate with the tshark build tag).
func TestDifferentialTshark(t *testing.T) {
	t.Logf("%d field values compared with tshark", compareEveryTsv(t, "testdata/tshark/*.tsv"))
}

// compareEveryTsv compares each checked-in tshark decoding the pattern
// matches with ibdump's on its capture, and says how many values it
// compared.
func compareEveryTsv(t *testing.T, pattern string) int {
	tsvs, err := filepath.Glob(pattern)
	require.NoError(t, err)
	require.NotEmpty(t, tsvs)
	compared := 0
	for _, tsv := range tsvs {
		name := strings.TrimSuffix(filepath.Base(tsv), ".tsv")
		t.Run(name, func(t *testing.T) {
			compared += compareWithTshark(t, captureFor(t, name), tsv)
		})
	}
	return compared
}

// compareWithTshark runs ibdump on capture with the fields of the tshark
// output in tsv and compares every cell that is not a known divergence.
func compareWithTshark(t *testing.T, capture, tsv string) int {
	f, err := os.Open(tsv)
	require.NoError(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<22)
	var want []string
	for s.Scan() {
		if !strings.HasPrefix(s.Text(), "#") {
			want = append(want, s.Text())
		}
	}
	require.NotEmpty(t, want)
	head := strings.Split(want[0], "\t")
	args := []string{"-T", "fields", "-E", "header=y", "-E", "occurrence=a"}
	for _, h := range head {
		args = append(args, "-e", h)
	}
	// Two more columns: why ibdump found the frame malformed, and a
	// Notice's trap number (the tshark decodings may predate its field).
	args = append(args, "-e", "ibwire.malformed", "-e", "infiniband.notice.trapnumberdeviceid")
	out, stderr, code := ibdump(t, nil, append(args, capture)...)
	require.Zero(t, code, stderr)
	got := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Equal(t, len(want), len(got), "line count")
	require.Equal(t, want[0]+"\tibwire.malformed\tinfiniband.notice.trapnumberdeviceid", got[0], "header")
	opCol, classCol, attrCol := -1, -1, -1
	for i, h := range head {
		switch h {
		case "infiniband.bth.opcode":
			opCol = i
		case "infiniband.mad.mgmtclass":
			classCol = i
		case "infiniband.mad.attributeid":
			attrCol = i
		}
	}
	compared := 0
	for i := 1; i < len(want); i++ {
		w, g := strings.Split(want[i], "\t"), strings.Split(got[i], "\t")
		require.Len(t, g, len(w)+2, "frame %d", i)
		malformed, trap := g[len(w)], g[len(w)+1]
		g = g[:len(w)]
		if opCol >= 0 && w[opCol] == "" && g[opCol] != "" {
			// tshark did not take the frame for InfiniBand: its UDP dissector
			// tries the lower port first, so a RoCEv2 packet from a port with
			// a dissector of its own (69, TFTP) is not IB to it (§1.12 item 7).
			continue
		}
		r := row{truncated: strings.Contains(malformed, "truncated"),
			at: strings.TrimSuffix(filepath.Base(capture), ".pcap") + ":" + strconv.Itoa(i)}
		if trap != "" {
			n, err := strconv.ParseUint(strings.TrimPrefix(trap, "0x"), 16, 16)
			require.NoError(t, err)
			r.trap = uint16(n)
		}
		if opCol >= 0 && w[opCol] != "" {
			n, err := strconv.Atoi(w[opCol])
			require.NoError(t, err)
			r.op = layers.Opcode(n)
		}
		if classCol >= 0 && attrCol >= 0 && w[classCol] != "" {
			r.mad = w[classCol] + "/" + w[attrCol]
		}
		op := r.op
		for j := range w {
			if diverges(r, head[j]) {
				continue
			}
			if !assert.Equal(t, w[j], g[j], "frame %d %s (opcode %v)", i, head[j], op) {
				return compared
			}
			compared++
		}
	}
	return compared
}
