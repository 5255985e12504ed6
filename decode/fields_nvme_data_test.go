package decode

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/layers"
)

// TestNVMeDataPacketRule: each packet of a structure's data shows the
// fields it holds whole, at the offset the command's earlier packets
// reached, each entry as often as the structure has it; checked on
// structures laid out by hand at MTUs the lab captures do not have.
func TestNVMeDataPacketRule(t *testing.T) {
	le := binary.LittleEndian
	ctrl := make([]byte, nvmeDataSize)
	copy(ctrl[768:], "nqn.test.subsystem")
	le.PutUint32(ctrl[1792:], 260) // IOCCSZ
	le.PutUint16(ctrl[2048:], 900) // PSD0 MP
	le.PutUint16(ctrl[2048+31*32:], 31)
	disc := make([]byte, 4*1024)
	le.PutUint64(disc[8:], 2) // NUMREC: 2 of the 3 records the host read
	for r := range 3 {
		copy(disc[1024*(r+1)+512:], "192.168.0."+string(rune('1'+r)))
	}
	disc[1024], disc[2048] = 1, 3         // TRTYPE: RDMA, then TCP
	disc[1024+768], disc[2048+768] = 2, 1 // RDMA_QPTYPE, SECTYPE
	nslist := make([]byte, nvmeDataSize)
	for i, id := range []uint32{1, 2, 0, 5} {
		le.PutUint32(nslist[4*i:], id)
	}
	ana := make([]byte, 16+36+40)
	le.PutUint16(ana[8:], 2) // NGD
	le.PutUint32(ana[16+4:], 1)
	le.PutUint32(ana[16+32:], 7)
	le.PutUint32(ana[52+4:], 2)
	le.PutUint32(ana[52+32:], 8)
	le.PutUint32(ana[52+36:], 9)
	errs := make([]byte, 2*64)
	le.PutUint64(errs[0:], 9)
	le.PutUint64(errs[64:], 8)
	le.PutUint32(errs[64+24:], 0x10001) // an NSID past 16 bits
	fw := make([]byte, 512)
	fw[0] = 0x21 // slot 1 active, slot 2 at the next reset
	ns := make([]byte, nvmeDataSize)
	ns[25] = 2 // NLBAF: 3 formats

	for _, c := range []struct {
		name  string
		kind  nvmeDataKind
		data  []byte
		from  int // the packet's bytes of data
		to    int
		field string
		want  []string
	}{
		{"4 KiB MTU: every power state", nvmeDataIdentifyCtrl, ctrl, 0, 4096, "nvme.cmd.identify.ctrl.psds.psd.mp", nvmeRepeat("0", 32, map[int]string{0: "900", 31: "31"})},
		{"a field a packet boundary cuts is in neither packet", nvmeDataIdentifyCtrl, ctrl, 0, 1000, "nvme.cmd.identify.ctrl.subnqn", nil},
		{"... nor in the next", nvmeDataIdentifyCtrl, ctrl, 1000, 2024, "nvme.cmd.identify.ctrl.subnqn", nil},
		{"the next shows what it holds whole", nvmeDataIdentifyCtrl, ctrl, 1000, 2024, "nvme.cmd.identify.ctrl.nvmeof.ioccsz", []string{"260"}},
		{"a string", nvmeDataIdentifyCtrl, ctrl, 0, 1024, "nvme.cmd.identify.ctrl.subnqn", []string{"nqn.test.subsystem"}},
		{"power states from the one a packet starts in whole", nvmeDataIdentifyCtrl, ctrl, 2050, 3072, "nvme.cmd.identify.ctrl.psds.psd.mp", nvmeRepeat("0", 31, map[int]string{30: "31"})},
		{"vendor specific: the part a packet holds", nvmeDataIdentifyNS, ns, 0, 1024, "nvme.cmd.identify.ns.vs", []string{strings.Repeat("00", 640)}},
		{"NLBAF + 1 formats", nvmeDataIdentifyNS, ns, 0, 1024, "nvme.cmd.identify.ns.lbaf", []string{"0x00000000", "0x00000000", "0x00000000"}},
		{"NUMREC records, not every 1024 bytes read", nvmeDataLogDiscovery, disc, 0, 4096, "nvme.cmd.get_logpage.identify.rcrd.traddr", []string{"192.168.0.1", "192.168.0.2"}},
		{"an RDMA record's transport address", nvmeDataLogDiscovery, disc, 0, 4096, "nvme.cmd.get_logpage.identify.rcrd.tsas.rdma_qptype", []string{"0x02"}},
		{"a TCP record's", nvmeDataLogDiscovery, disc, 0, 4096, "nvme.cmd.get_logpage.identify.rcrd.tsas.tcp_sectype", []string{"0x01"}},
		{"error log entries, 64 bytes each", nvmeDataLogErrors, errs, 0, len(errs), "nvme.cmd.get_logpage.errinf.errcnt", []string{"9", "8"}},
		{"an error entry's NSID is 4 bytes", nvmeDataLogErrors, errs, 0, len(errs), "nvme.cmd.get_logpage.errinf.nsid", []string{"0x00000000", "0x00010001"}},
		{"the active firmware slot", nvmeDataLogFirmware, fw, 0, len(fw), "nvme.cmd.get_logpage.fw_slot.afi.afs", []string{"0x01"}},
		{"the slot at the next reset", nvmeDataLogFirmware, fw, 0, len(fw), "nvme.cmd.get_logpage.fw_slot.afi.nfs", []string{"0x02"}},
		{"the changed namespaces, to the first zero", nvmeDataLogChangedNS, nslist, 0, 1024, "nvme.cmd.get_logpage.changed_nslist", []string{"0x00000001", "0x00000002"}},
		{"the list ends at its first zero", nvmeDataNSList, nslist, 0, 1024, "nvme.cmd.identify.nslist.nsid", []string{"0x00000001", "0x00000002"}},
		{"every group's NSIDs", nvmeDataLogANA, ana, 0, len(ana), "nvme.cmd.get_logpage.ana.grp.nsid", []string{"0x00000007", "0x00000008", "0x00000009"}},
		{"a group descriptor is 32 bytes and 4 per NSID", nvmeDataLogANA, ana, 0, len(ana), "nvme.cmd.get_logpage.ana.grp.nns", []string{"1", "2"}},
		{"a log page's packet whole", nvmeDataLogANA, ana, 0, len(ana), "nvme.data", []string{strings.Repeat("x", 2*len(ana))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			count := -1
			d := nvmeData{kind: c.kind, off: uint64(c.from), payload: c.data[c.from:c.to]}
			if c.from == 0 {
				count = nvmeHeaderCount(&d)
			} else {
				count = nvmeHeaderCount(&nvmeData{kind: c.kind, payload: c.data})
			}
			d.count = count
			var st nvmeState
			st.intern(&d)
			p := &Packet{}
			p.Analysis.NVMe = &NVMePacket{Kind: NVMeData, HasCmd: true, data: d, strs: st.strs}
			f := MustLookup(c.field)
			var got []string
			var v Value
			for i := 0; f.GetOccurrence(p, i, &v); i++ {
				got = append(got, f.String(&v))
			}
			if c.field == "nvme.data" {
				assert.Len(t, got, 1)
				assert.Len(t, got[0], len(c.want[0]))
				return
			}
			assert.Equal(t, c.want, got)
		})
	}
}

// nvmeRepeat is n copies of s, with the values of set at their indexes.
func nvmeRepeat(s string, n int, set map[int]string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
		if v, ok := set[i]; ok {
			out[i] = v
		}
	}
	return out
}

// FuzzNVMeData reads every field of every data structure, every
// occurrence, from a fuzzed packet of a fuzzed structure at a fuzzed
// offset: no panic, and the same field reads the same twice. Seeded with
// the structures' packets of nvme_rdma_connect.pcap (an Identify
// Controller's four, the Discovery, effects, ANA and SMART logs, a
// namespace list, an Identify Namespace).
func FuzzNVMeData(f *testing.F) {
	r, err := capture.Open("../pcaps/rxe/nvme_rdma_connect.pcap")
	if err != nil {
		f.Fatal(err)
	}
	a, dec := NewAnalyzer(AnalyzerOptions{}), NewDecoder(Options{})
	var cp capture.Packet
	for r.NextInto(&cp) == nil {
		p := dec.Decode(cp)
		a.Analyze(p)
		if n := p.Analysis.NVMe; n != nil && n.data.kind != nvmeDataNone {
			f.Add(uint8(n.data.kind), n.data.off, append([]byte(nil), n.data.payload...))
		}
	}
	r.Close()
	// An ANA group whose NSIDs run past the packet.
	f.Add(uint8(nvmeDataLogANA), uint64(0), []byte{15: 0, 8: 1, 20: 9, 23: 0})
	var fields []*Field
	for _, fd := range Fields() {
		if strings.HasPrefix(fd.Name, "nvme.cmd.identify.") || strings.HasPrefix(fd.Name, "nvme.cmd.get_logpage.") || fd.Name == "nvme.data" {
			fields = append(fields, fd)
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, off uint64, payload []byte) {
		d := nvmeData{kind: nvmeDataKind(kind % uint8(nvmeDataLogOther+1)), off: off % (2 * nvmeDataSize), payload: payload}
		d.count = nvmeHeaderCount(&d)
		var st nvmeState
		st.intern(&d)
		p := &Packet{}
		p.Analysis.NVMe = &NVMePacket{Kind: NVMeData, HasCmd: true, data: d, strs: st.strs}
		var v, w Value
		for _, fd := range fields {
			for i := 0; i < 600 && fd.GetOccurrence(p, i, &v); i++ {
				if !fd.GetOccurrence(p, i, &w) || fd.String(&v) != fd.String(&w) {
					t.Fatalf("%s occurrence %d reads differently", fd.Name, i)
				}
			}
		}
	})
}

// TestNVMeSetFeaturesByFeature: Set Features' CDW11 (and CDW12) by the
// feature the command sets, with the spec's bits.
func TestNVMeSetFeaturesByFeature(t *testing.T) {
	for _, c := range []struct {
		fid          byte
		cdw11, cdw12 uint32
		field, want  string // want "" for a field the command does not have
	}{
		{0x0f, 120000, 0, "nvme.cmd.set_features.dword11.kat.kato", "120000"},
		{0x0f, 120000, 0, "nvme.cmd.set_features.dword11.aec", ""},
		{0x0b, 0x80000000, 0, "nvme.cmd.set_features.dword11.aec.disc", "1"},
		{0x07, 0x003f003f, 0, "nvme.cmd.set_features.dword11.nq.ncqr", "63"},
		{0x09, 0x10005, 0, "nvme.cmd.set_features.dword11.irqv.iv", "0x00000005"},
		{0x09, 0x10005, 0, "nvme.cmd.set_features.dword11.irqv.cd", "1"},
		{0x06, 1, 0, "nvme.cmd.set_features.dword11.vwce.wce", "1"},
		{0x12, 3, 0x5, "nvme.cmd.set_features.dword12.rrl.rrl", "0x00000005"},
		{0x12, 3, 0x5, "nvme.cmd.dword12", ""}, // shown as the feature's
		{0x0f, 120000, 0x5, "nvme.cmd.dword12", "0x00000005"},
		{0x0f, 120000, 0, "nvme.cmd.set_features.dword10.fid", "0x0000000f"},
	} {
		var sqe [64]byte
		sqe[0], sqe[1] = byte(layers.NVMeOpSetFeatures), 0x40
		sqe[40] = c.fid
		binary.LittleEndian.PutUint32(sqe[44:], c.cdw11)
		binary.LittleEndian.PutUint32(sqe[48:], c.cdw12)
		n := &NVMePacket{Kind: NVMeCommand, Admin: true, HasQID: true, sqeBytes: sqe}
		assert.NoError(t, n.SQE.DecodeFromBytes(sqe[:]))
		p := &Packet{}
		p.Analysis.NVMe = n
		f := MustLookup(c.field)
		var v Value
		got := ""
		if f.Get(p, &v) {
			got = f.String(&v)
		}
		assert.Equal(t, c.want, got, "feature 0x%02x %s", c.fid, c.field)
	}
}

// TestNVMeCompletionResults: a Get Features completion's DW0 by the
// feature its command asked for, an Asynchronous Event Request's by its
// fields.
func TestNVMeCompletionResults(t *testing.T) {
	for _, c := range []struct {
		op          layers.NVMeOpcode
		fid         uint32
		dw0         uint32
		field, want string
	}{
		{layers.NVMeOpGetFeatures, 0x0f, 120000, "nvme.cqe.dword0.get_features.kat.kato", "120000"},
		{layers.NVMeOpGetFeatures, 0x07, 0x001f003f, "nvme.cqe.dword0.get_features.nq.ncqa", "31"},
		{layers.NVMeOpGetFeatures, 0x07, 0x001f003f, "nvme.cqe.dword0.get_features.kat.kato", ""},
		{layers.NVMeOpGetFeatures, 0x06, 1, "nvme.cqe.dword0.get_features.vwce.wce", "1"},
		// A Discovery log page change notice: type 2 (notice), information
		// 0xf0, log page 0x70.
		{layers.NVMeOpAsyncEvent, 0, 0x70f002, "nvme.cqe.dword0.aev.aet", "0x00000002"},
		{layers.NVMeOpAsyncEvent, 0, 0x70f002, "nvme.cqe.dword0.aev.aei", "0x000000f0"},
		{layers.NVMeOpAsyncEvent, 0, 0x70f002, "nvme.cqe.dword0.aev.lpi", "112"},
		{layers.NVMeOpAsyncEvent, 0, 0x70f002, "nvme.cqe.dword0.get_features.kat", ""},
	} {
		var cqe [16]byte
		binary.LittleEndian.PutUint32(cqe[:], c.dw0)
		n := &NVMePacket{Kind: NVMeCompletion, HasCmd: true, Admin: true, cqeBytes: cqe,
			Cmd: NVMeCommandInfo{Opcode: c.op, Admin: true, CDW10: c.fid}}
		assert.NoError(t, n.CQE.DecodeFromBytes(cqe[:]))
		p := &Packet{}
		p.Analysis.NVMe = n
		f := MustLookup(c.field)
		var v Value
		got := ""
		if f.Get(p, &v) {
			got = f.String(&v)
		}
		assert.Equal(t, c.want, got, "%s", c.field)
	}
}
