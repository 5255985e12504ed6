package decode

import (
	"time"

	"github.com/ibwire/ibwire/layers"
)

// nvmeFields are Wireshark 4.0's nvme-rdma.* and nvme.* fields for what
// the NVMe-oF analysis (nvme.go) found in a packet, with tshark's names,
// types and bases, shown where tshark shows them: Fabrics commands under
// nvme.fabrics.*, other commands under nvme.cmd.*, completions under
// nvme.cqe.*; plus ibwire.nvme.* for what tshark does not give in one
// field (the command's name, its bytes, the latency to its first data).
// Every getter starts with one check, p.Analysis.NVMe != nil, so other
// packets cost nothing more.
func nvmeFields() []*Field {
	N := func(p *Packet) *NVMePacket { return p.Analysis.NVMe }
	onConn := func(p *Packet) bool { return N(p) != nil }
	cmd := func(p *Packet) bool { n := N(p); return n != nil && n.Kind == NVMeCommand }
	cqe := func(p *Packet) bool { n := N(p); return n != nil && n.Kind == NVMeCompletion }
	plain := func(p *Packet) bool { return cmd(p) && !N(p).SQE.IsFabrics() }
	fab := func(p *Packet) bool { return cmd(p) && N(p).SQE.IsFabrics() }
	fabIs := func(t layers.NVMeFabricsType) func(p *Packet) bool {
		return func(p *Packet) bool { return fab(p) && N(p).SQE.FabricsType() == t }
	}
	connect := fabIs(layers.NVMeFabricsConnect)
	prop := func(p *Packet) bool {
		return fab(p) && (N(p).SQE.FabricsType() == layers.NVMeFabricsPropertyGet || N(p).SQE.FabricsType() == layers.NVMeFabricsPropertySet)
	}
	sgl := func(p *Packet) bool { return plain(p) || connect(p) }
	sqe := func(n *NVMePacket) []byte { return n.sqeBytes[:] }
	adminOp := func(op layers.NVMeOpcode) func(p *Packet) bool {
		return func(p *Packet) bool { return plain(p) && N(p).Admin && N(p).SQE.Opcode == op }
	}
	rw := func(p *Packet) bool {
		if !plain(p) || N(p).Admin {
			return false
		}
		op := N(p).SQE.Opcode
		return op == layers.NVMeOpRead || op == layers.NVMeOpWrite
	}
	// dword says whether tshark shows CDW10+i as a plain nvme.cmd.dwordN:
	// not for Reads and Writes (their fields instead), nor where a
	// command's own fields take the dword.
	dword := func(i int) func(p *Packet) bool {
		return func(p *Packet) bool {
			if !plain(p) || rw(p) {
				return false
			}
			n := N(p)
			if !n.Admin {
				return true
			}
			switch n.SQE.Opcode {
			case layers.NVMeOpIdentify:
				return i == 2 || i == 3 || i == 5
			case layers.NVMeOpGetLogPage:
				return i == 3 || i == 5
			case layers.NVMeOpSetFeatures:
				return i == 2 && !nvmeSetFeaturesDword12(n.SQE.FeatureID()) || i == 3 || i == 5
			case layers.NVMeOpGetFeatures:
				return i == 2 || i == 3 || i == 5
			}
			return true
		}
	}
	// A data packet resent in a transfer shows its command too (Resent,
	// not HasCmd: it counts nowhere).
	data := func(p *Packet) bool {
		n := N(p)
		return n != nil && n.Kind == NVMeData && (n.HasCmd || n.Resent && n.Cmd.Frame != 0)
	}
	op := func(p *Packet) layers.Operation { return p.Headers.BTH.Opcode.Info().Operation }
	cqeFab := func(p *Packet) bool { return cqe(p) && N(p).HasCmd && N(p).Cmd.Opcode == layers.NVMeOpFabrics }
	cqePlain := func(p *Packet) bool { return cqe(p) && !cqeFab(p) }
	cqeFabIs := func(t layers.NVMeFabricsType) func(p *Packet) bool {
		return func(p *Packet) bool { return cqeFab(p) && N(p).Cmd.Fabrics == t }
	}
	// tshark shows a Set Features (Number of Queues) result in a field of
	// its own instead.
	cqeDW0 := func(p *Packet) bool {
		if !cqePlain(p) {
			return false
		}
		c := &N(p).Cmd
		return !(N(p).HasCmd && c.Admin && c.Opcode == layers.NVMeOpSetFeatures && layers.NVMeFeature(c.CDW10) == nvmeFeatureNumQueues)
	}

	cqePropGet, propSet := cqeFabIs(layers.NVMeFabricsPropertyGet), fabIs(layers.NVMeFabricsPropertySet)
	cqeConnect := cqeFabIs(layers.NVMeFabricsConnect)

	u := func(name, title string, t FieldType, base Base, has func(*Packet) bool, get func(*NVMePacket) uint64) *Field {
		return uintField(name, title, t, base, func(p *Packet) (uint64, bool) {
			if !has(p) {
				return 0, false
			}
			return get(N(p)), true
		})
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	latency := func(name string, has func(*Packet) bool) *Field {
		return &Field{Name: name, Title: "Cmd Latency", Type: FTDouble, get: func(p *Packet, v *Value) bool {
			if !has(p) || !N(p).HasCmd {
				return false
			}
			v.F = ms(N(p).Latency)
			return true
		}}
	}
	cmdPkt := func(name, title string, has func(*Packet) bool) *Field {
		return u(name, title, FTUint32, BaseDec, func(p *Packet) bool { return has(p) && (N(p).HasCmd || data(p)) },
			func(n *NVMePacket) uint64 { return uint64(n.Cmd.Frame) })
	}
	S := func(n *NVMePacket) *layers.NVMeSQE { return &n.SQE }
	// raw is a reserved run of the SQE, bytes [from, to).
	raw := func(name string, has func(*Packet) bool, from, to int) *Field {
		return bytesField(name, "Reserved", FTBytes, func(p *Packet) ([]byte, bool) {
			if !has(p) {
				return nil, false
			}
			return N(p).sqeBytes[from:to], true
		})
	}
	Q := func(n *NVMePacket) *layers.NVMeCQE { return &n.CQE }

	fields := []*Field{
		protoField("nvme-rdma", "NVM Express Fabrics RDMA", func(p *Packet) bool { return onConn(p) || p.Analysis.Info&InfoNVMeCM != 0 }),
	}
	fields = append(fields, nvmeCMFields()...)
	fields = append(fields, []*Field{
		u("nvme-rdma.cmd.qid", "Cmd Qid", FTUint16, BaseHex, func(p *Packet) bool { return onConn(p) && N(p).HasQID },
			func(n *NVMePacket) uint64 { return uint64(n.QID) }),
		// Data transfers, in nvme-rdma's subtree as tshark shows them.
		noneField("nvme-rdma.write_to_host_req", "RDMA Write Request Sent to Host", func(p *Packet) bool { return data(p) && op(p) == layers.OpRDMAWrite }),
		u("nvme-rdma.write_to_host_prev", "Previous Write Transfer", FTUint32, BaseDec,
			func(p *Packet) bool { return data(p) && op(p) == layers.OpRDMAWrite && N(p).PrevFrame != 0 },
			func(n *NVMePacket) uint64 { return uint64(n.PrevFrame) }),
		noneField("nvme-rdma.read_to_host_req", "RDMA Read Request Sent to Host", func(p *Packet) bool { return data(p) && op(p) == layers.OpRDMAReadRequest }),
		u("nvme-rdma.read_from_host_prev", "Previous Read Transfer", FTUint32, BaseDec, func(p *Packet) bool { return data(p) && N(p).ReadPrevFrame != 0 },
			func(n *NVMePacket) uint64 { return uint64(n.ReadPrevFrame) }),
		bytesField("nvme-rdma.read_from_host_resp", "RDMA Read Transfer Sent from Host", FTBytes, func(p *Packet) ([]byte, bool) {
			if !data(p) || N(p).ReadReqFrame == 0 {
				return nil, false
			}
			return N(p).Payload, true
		}),
		withParent("nvme-rdma.read_from_host_resp", u("nvme.fabrics.data_req", "DATA Transfer Request", FTUint32, BaseDec, func(p *Packet) bool { return data(p) && N(p).ReadReqFrame != 0 },
			func(n *NVMePacket) uint64 { return uint64(n.ReadReqFrame) })),
	}...)
	// A Connect's data (in its capsule, or fetched by RDMA READ), in
	// nvme-rdma's subtree under the READ's response as tshark shows it.
	hasConnect := func(p *Packet) bool { return onConn(p) && N(p).HasConnect }
	connectRaw := func(n *NVMePacket) []byte { return n.Connect.Raw }
	connectReserved := nvmeCapsuleFields(N, "nvme.fabrics.cmd.connect.data.", nvmeConnectData, hasConnect, connectRaw)
	for _, f := range []*Field{
		bytesField("nvme.fabrics.cmd.connect.data.hostid", "Host Identifier", FTBytes, func(p *Packet) ([]byte, bool) {
			if !hasConnect(p) {
				return nil, false
			}
			return N(p).Connect.HostID, true
		}),
		u("nvme.fabrics.cmd.connect.data.cntrlid", "Controller ID", FTUint16, BaseHex, hasConnect,
			func(n *NVMePacket) uint64 { return uint64(n.Connect.CNTLID) }),
		connectReserved[0],
		{Name: "nvme.fabrics.cmd.connect.data.subnqn", Title: "Subsystem NQN", Type: FTString, get: func(p *Packet, v *Value) bool {
			if !hasConnect(p) {
				return false
			}
			v.S = N(p).Connect.SubNQN
			return true
		}},
		{Name: "nvme.fabrics.cmd.connect.data.hostnqn", Title: "Host NQN", Type: FTString, get: func(p *Packet, v *Value) bool {
			if !hasConnect(p) {
				return false
			}
			v.S = N(p).Connect.HostNQN
			return true
		}},
		connectReserved[1],
	} {
		fields = append(fields, withParent("nvme-rdma.read_from_host_resp", f))
	}
	fields = append(fields, []*Field{
		protoField("nvme", "NVM Express", func(p *Packet) bool { return cmd(p) || cqe(p) || N(p) != nil && N(p).data.kind != nvmeDataNone }),
	}...)
	// The structure a data packet holds of its command's data, first in
	// nvme's subtree: a packet has it or a command or a completion.
	fields = append(fields, bytesField("nvme.data", "Nvme Data", FTBytes, func(p *Packet) ([]byte, bool) {
		// A log page's data, each packet whole, heads its structure's fields.
		n := N(p)
		if n == nil || !n.data.kind.logPage() {
			return nil, false
		}
		return n.data.payload, true
	}))
	fields = append(fields, nvmeDataFields(N)...)
	fields = append(fields, []*Field{
		// Fabrics commands.
		noneField("nvme.fabrics.cmd", "Cmd", fab),
		bytesField("nvme.fabrics.cmd.opc", "Opcode", FTBytes, func(p *Packet) ([]byte, bool) {
			if !fab(p) {
				return nil, false
			}
			return fabricsOpcode[:], true
		}),
		u("nvme.fabrics.cmd.rsvd", "Reserved", FTUint8, BaseHex, fab, func(n *NVMePacket) uint64 { return uint64(n.SQE.PSDT<<6 | n.SQE.Fuse) }),
		u("nvme.fabrics.cmd.cid", "Command Identifier", FTUint16, BaseHex, fab, func(n *NVMePacket) uint64 { return uint64(n.SQE.CID) }),
		u("nvme.fabrics.cmd.fctype", "Fabric Command Type", FTUint8, BaseHex, fab, func(n *NVMePacket) uint64 { return uint64(n.SQE.FabricsType()) }),
		u("nvme.fabrics.cmd.connect.recfmt", "Record Format", FTUint16, BaseDec, connect, func(n *NVMePacket) uint64 { return uint64(S(n).ConnectRecFmt()) }),
		u("nvme.fabrics.cmd.connect.qid", "Queue ID", FTUint16, BaseDec, connect, func(n *NVMePacket) uint64 { return uint64(S(n).ConnectQID()) }),
		u("nvme.fabrics.cmd.connect.sqsize", "Submission Queue Size", FTUint16, BaseDec, connect, func(n *NVMePacket) uint64 { return uint64(S(n).ConnectSQSize()) }),
		u("nvme.fabrics.cmd.connect.cattr", "Connect Attributes", FTUint8, BaseHex, connect, func(n *NVMePacket) uint64 { return uint64(S(n).ConnectCAttr()) }),
		u("nvme.fabrics.cmd.connect.kato", "Keep Alive Timeout", FTUint32, BaseDec, connect, func(n *NVMePacket) uint64 { return uint64(S(n).ConnectKATO()) }),
		raw("nvme.fabrics.cmd.prop_get_set.rsvd0", prop, 5, 40),
		u("nvme.fabrics.cmd.prop_get_set.attrib", "Attributes", FTUint8, BaseHex, prop, func(n *NVMePacket) uint64 { return uint64(S(n).PropertyAttrib() & 7) }),
		u("nvme.fabrics.cmd.prop_get_set.attrib.size", "Property Size", FTUint8, BaseHex, prop, func(n *NVMePacket) uint64 { return uint64(S(n).PropertyAttrib() & 7) }),
		u("nvme.fabrics.cmd.prop_get_set.attrib.rsvd", "Reserved", FTUint8, BaseHex, prop, func(n *NVMePacket) uint64 { return uint64(S(n).PropertyAttrib() >> 3) }),
		raw("nvme.fabrics.cmd.prop_get_set.rsvd1", prop, 41, 44),
		u("nvme.fabrics.cmd.prop_get_set.offset", "Offset", FTUint32, BaseHex, prop, func(n *NVMePacket) uint64 { return uint64(S(n).PropertyOffset()) }),
		raw("nvme.fabrics.cmd.prop_get.rsvd2", fabIs(layers.NVMeFabricsPropertyGet), 48, 64),
		raw("nvme.fabrics.cmd.prop_set.rsvd", fabIs(layers.NVMeFabricsPropertySet), 56, 64),

		// Other commands.
		u("nvme.cmd.opc", "Opcode", FTUint8, BaseHex, plain, func(n *NVMePacket) uint64 { return uint64(n.SQE.Opcode) }),
		u("nvme.cmd.fuse_op", "Fuse Operation", FTUint8, BaseHex, plain, func(n *NVMePacket) uint64 { return uint64(n.SQE.Fuse) }),
		u("nvme.cmd.rsvd", "Reserved", FTUint8, BaseHex, plain, func(n *NVMePacket) uint64 { return uint64(n.sqeBytes[1] >> 2 & 0xf) }),
		u("nvme.cmd.psdt", "PRP Or SGL", FTUint8, BaseHex, plain, func(n *NVMePacket) uint64 { return uint64(n.SQE.PSDT) }),
		u("nvme.cmd.cid", "Command ID", FTUint16, BaseHex, plain, func(n *NVMePacket) uint64 { return uint64(n.SQE.CID) }),
		u("nvme.cmd.nsid", "Namespace Id", FTUint32, BaseHex, plain, func(n *NVMePacket) uint64 { return uint64(n.SQE.NSID) }),
		raw("nvme.cmd.rsvd1", plain, 8, 16),
		u("nvme.cmd.mptr", "Metadata Pointer", FTUint64, BaseHex, plain, func(n *NVMePacket) uint64 { return n.SQE.MPTR }),
		noneField("nvme.cmd.sgl1", "SGL1", plain), // a Connect's is nvme.fabrics.cmd.connect.sgl1
		u("nvme.cmd.sgl.type", "Descriptor Type", FTUint8, BaseHex, sgl, func(n *NVMePacket) uint64 { return uint64(n.SQE.SGL.Type) }),
		u("nvme.cmd.sgl.subtype", "Descriptor Sub Type", FTUint8, BaseHex, sgl, func(n *NVMePacket) uint64 { return uint64(n.SQE.SGL.Subtype) }),
		u("nvme.cmd.sgl1.addr", "Address", FTUint64, BaseHex, sgl, func(n *NVMePacket) uint64 { return n.SQE.SGL.Address }),
		u("nvme.cmd.sgl1.len", "Length", FTUint32, BaseDec, sgl, func(n *NVMePacket) uint64 { return uint64(n.SQE.SGL.Length) }),
		u("nvme.cmd.sgl1.key", "Key", FTUint32, BaseHex, func(p *Packet) bool { return sgl(p) && N(p).SQE.SGL.Keyed() },
			func(n *NVMePacket) uint64 { return uint64(n.SQE.SGL.Key) }),
		// An unkeyed descriptor (in-capsule data) has 3 reserved bytes where
		// a keyed one has the rest of its key: SQE bytes 36-38.
		raw("nvme.cmd.sgl1.rsvd", func(p *Packet) bool { return sgl(p) && !N(p).SQE.SGL.Keyed() }, 36, 39),
	}...)
	fields = append(fields, nvmeAdminDwordFields(N, adminOp(layers.NVMeOpIdentify), adminOp(layers.NVMeOpGetLogPage))...)
	setFeatures := adminOp(layers.NVMeOpSetFeatures)
	feature := func(id layers.NVMeFeature) func(p *Packet) bool {
		return func(p *Packet) bool { return setFeatures(p) && S(N(p)).FeatureID() == id }
	}
	fields = append(fields, nvmeCapsuleFields(N, "nvme.fabrics.cmd.connect.", nvmeConnectSQE, connect, sqe)...)
	fields = append(fields, nvmeCapsuleFields(N, "nvme.cmd.", nvmeSetFeaturesSQE, setFeatures, sqe)...)
	for _, f := range nvmeSetFeatures {
		fields = append(fields, nvmeCapsuleFields(N, "nvme.cmd.set_features.", f.rows, feature(f.fid), sqe)...)
	}
	fields = append(fields, []*Field{
		u("nvme.cmd.get_features.dword10.fid", "Feature Identifier", FTUint32, BaseHex, adminOp(layers.NVMeOpGetFeatures),
			func(n *NVMePacket) uint64 { return uint64(S(n).FeatureID()) }),
		u("nvme.cmd.slba", "Start LBA", FTUint64, BaseHex, rw, func(n *NVMePacket) uint64 { return S(n).SLBA() }),
		u("nvme.cmd.nlb", "Absolute Number of Logical Blocks", FTUint16, BaseDecHex, rw, func(n *NVMePacket) uint64 { return uint64(S(n).Blocks()) }),
		// CDW12's upper half as tshark slices it (its PRINFO masks are one bit each).
		u("nvme.cmd.rsvd2", "Reserved", FTUint16, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[2] >> 16 & 0x3ff) }),
		u("nvme.cmd.prinfo", "Protection info fields", FTUint16, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[2] >> 26 & 1) }),
		u("nvme.cmd.prinfo.lbrtag", "check Logical block reference tag", FTUint16, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[2] >> 26 & 1) }),
		u("nvme.cmd.prinfo.apptag", "check application tag field", FTUint16, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[2] >> 27 & 1) }),
		u("nvme.cmd.prinfo.guard", "check guard field", FTUint16, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[2] >> 28 & 1) }),
		u("nvme.cmd.prinfo.action", "action", FTUint16, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[2] >> 29 & 1) }),
		u("nvme.cmd.fua", "Force Unit Access", FTUint16, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[2] >> 30 & 1) }),
		u("nvme.cmd.lr", "Limited Retry", FTUint16, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[2] >> 31) }),
		u("nvme.cmd.eilbrt", "Expected Initial Logical Block Reference Tag", FTUint32, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[4]) }),
		u("nvme.cmd.elbat", "Expected Logical Block Application Tag Mask", FTUint16, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(uint16(n.SQE.CDW[5])) }),
		u("nvme.cmd.elbatm", "Expected Logical Block Application Tag", FTUint16, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[5] >> 16) }),
		noneField("nvme.cmd.dsm", "DSM Flags", rw),
		u("nvme.cmd.dsm.access_freq", "Access frequency", FTUint8, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.sqeBytes[52] & 0xf) }),
		u("nvme.cmd.dsm.access_lat", "Access latency", FTUint8, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.sqeBytes[52] >> 4 & 3) }),
		// tshark 4.0 gives both the mask 0x40.
		u("nvme.cmd.dsm.seq_req", "Sequential Request", FTUint8, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.sqeBytes[52] >> 6 & 1) }),
		u("nvme.cmd.dsm.incompressible", "Incompressible", FTUint8, BaseHex, rw, func(n *NVMePacket) uint64 { return uint64(n.sqeBytes[52] >> 6 & 1) }),
		raw("nvme.cmd.rsvd3", rw, 53, 56),
		u("nvme.cmd.dword10", "DWORD10", FTUint32, BaseHex, dword(0), func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[0]) }),
		u("nvme.cmd.dword11", "DWORD11", FTUint32, BaseHex, dword(1), func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[1]) }),
		u("nvme.cmd.dword12", "DWORD12", FTUint32, BaseHex, dword(2), func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[2]) }),
		u("nvme.cmd.dword13", "DWORD13", FTUint32, BaseHex, dword(3), func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[3]) }),
		u("nvme.cmd.dword14", "DWORD14", FTUint32, BaseHex, dword(4), func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[4]) }),
		u("nvme.cmd.dword15", "DWORD15", FTUint32, BaseHex, dword(5), func(n *NVMePacket) uint64 { return uint64(n.SQE.CDW[5]) }),

		// Completions.
		noneField("nvme.fabrics.cqe", "Cqe", cqeFab),
		// tshark names a data transfer's command with the Fabrics field too.
		cmdPkt("nvme.fabrics.cmd_pkt", "Fabric Cmd in", func(p *Packet) bool { return cqeFab(p) || data(p) }),
		latency("nvme.fabrics.cmd_latency", cqeFab),
		u("nvme.fabrics.cqe.connect.cntrlid", "Controller ID", FTUint16, BaseHex, cqeFabIs(layers.NVMeFabricsConnect),
			func(n *NVMePacket) uint64 { return uint64(uint16(n.CQE.DW0)) }),
		u("nvme.fabrics.cqe.connect.authreq", "Authentication Required", FTUint16, BaseHex, cqeFabIs(layers.NVMeFabricsConnect),
			func(n *NVMePacket) uint64 { return uint64(n.CQE.DW0 >> 16) }),
		bytesField("nvme.fabrics.cqe.connect.rsvd", "Reserved", FTBytes, func(p *Packet) ([]byte, bool) {
			if !cqeConnect(p) {
				return nil, false
			}
			return N(p).cqeBytes[4:8], true
		}),
		opens(bytesField("nvme.fabrics.prop_get_set.data", "Property Data", FTBytes, func(p *Packet) ([]byte, bool) {
			switch {
			case cqePropGet(p):
				return N(p).cqeBytes[:8], true
			case propSet(p):
				return N(p).sqeBytes[48:56], true
			}
			return nil, false
		})),
	}...)
	fields = append(fields, nvmePropertyFields(N, cqePropGet, propSet, cqeFabIs(layers.NVMeFabricsPropertySet))...)
	cqeBytes := func(n *NVMePacket) []byte { return n.cqeBytes[:] }
	fields = append(fields, nvmeCapsuleFields(N, "nvme.cqe.", nvmeSetFeaturesNQResult, func(p *Packet) bool { return cqePlain(p) && !cqeDW0(p) }, cqeBytes)...)
	answers := func(op layers.NVMeOpcode) func(p *Packet) bool {
		return func(p *Packet) bool { n := N(p); return cqePlain(p) && n.HasCmd && n.Cmd.Admin && n.Cmd.Opcode == op }
	}
	getFeatures := answers(layers.NVMeOpGetFeatures)
	for _, f := range nvmeGetFeaturesResult {
		fid := f.fid
		fields = append(fields, nvmeCapsuleFields(N, "nvme.cqe.dword0.get_features.", f.rows,
			func(p *Packet) bool { return getFeatures(p) && layers.NVMeFeature(N(p).Cmd.CDW10) == fid }, cqeBytes)...)
	}
	fields = append(fields, nvmeCapsuleFields(N, "nvme.cqe.dword0.", nvmeAsyncEventResult, answers(layers.NVMeOpAsyncEvent), cqeBytes)...)
	fields = append(fields, []*Field{
		cmdPkt("nvme.cmd_pkt", "Cmd in", cqePlain),
		latency("nvme.cmd_latency", cqePlain),
		u("nvme.cqe.dword0", "DWORD0", FTUint32, BaseHex, cqeDW0, func(n *NVMePacket) uint64 { return uint64(n.CQE.DW0) }),
		u("nvme.cqe.dword1", "DWORD1", FTUint32, BaseHex, cqePlain, func(n *NVMePacket) uint64 { return uint64(n.CQE.DW1) }),
		u("nvme.cqe.sqhd", "SQ Head Pointer", FTUint16, BaseHex, cqe, func(n *NVMePacket) uint64 { return uint64(n.CQE.SQHD) }),
		u("nvme.cqe.sqid", "SQ Identifier", FTUint16, BaseHex, cqe, func(n *NVMePacket) uint64 { return uint64(n.CQE.SQID) }),
		u("nvme.cqe.cid", "Command Identifier", FTUint16, BaseHex, cqe, func(n *NVMePacket) uint64 { return uint64(n.CQE.CID) }),
		u("nvme.cqe.status", "Status Field", FTUint16, BaseHex, cqe, func(n *NVMePacket) uint64 { return uint64(n.CQE.Status) }),
		u("nvme.cqe.status.rsvd", "Reserved", FTUint16, BaseHex, cqeFab, func(n *NVMePacket) uint64 { return uint64(Q(n).Status & 1) }),
		u("nvme.cqe.status.p", "Phase Tag", FTUint16, BaseHex, cqePlain, func(n *NVMePacket) uint64 { return uint64(Q(n).Status & 1) }),
		u("nvme.cqe.status.sc", "Status Code", FTUint16, BaseHex, cqe, func(n *NVMePacket) uint64 { return uint64(Q(n).Status.SC()) }),
		u("nvme.cqe.status.sct", "Status Code Type", FTUint16, BaseHex, cqe, func(n *NVMePacket) uint64 { return uint64(Q(n).Status.SCT()) }),
		u("nvme.cqe.status.crd", "Command Retry Delay", FTUint16, BaseHex, cqe, func(n *NVMePacket) uint64 { return uint64(Q(n).Status.CRD()) }),
		boolField("nvme.cqe.status.m", "More Infornation in Log Page", func(p *Packet) (bool, bool) { return cqe(p) && N(p).CQE.Status.More(), cqe(p) }),
		boolField("nvme.cqe.status.dnr", "Do not Retry", func(p *Packet) (bool, bool) { return cqe(p) && N(p).CQE.Status.DNR(), cqe(p) }),
	}...)
	return append(fields, ibwireNVMeFields(N)...)
}

// withParent files f in the -V tree under the header named parent, which
// its name does not say.
func withParent(parent string, f *Field) *Field {
	f.parent = parent
	return f
}

// fabricsOpcode is the value of nvme.fabrics.cmd.opc, which tshark
// registers as bytes.
var fabricsOpcode = [1]byte{byte(layers.NVMeOpFabrics)}

// ibwireNVMeFields are ibwire's per-command NVMe-oF fields: on a command,
// its completion and its data packets alike, so one filter
// (ibwire.nvme.cid == 0x41) selects a command's whole exchange.
func ibwireNVMeFields(N func(p *Packet) *NVMePacket) []*Field {
	has := func(p *Packet) bool { n := N(p); return n != nil && n.HasCmd }
	u := func(name, title string, t FieldType, base Base, ok func(*Packet) bool, get func(*NVMePacket) uint64) *Field {
		return uintField(name, title, t, base, func(p *Packet) (uint64, bool) {
			if !ok(p) {
				return 0, false
			}
			return get(N(p)), true
		})
	}
	isCQE := func(p *Packet) bool { n := N(p); return n != nil && n.Kind == NVMeCompletion }
	rw := func(p *Packet) bool { return has(p) && N(p).Cmd.Blocks != 0 }
	return []*Field{
		// A header of its own: the ibwire subtree ends before the nvme ones.
		protoField("ibwire.nvme", "NVMe-oF analysis", func(p *Packet) bool { n := N(p); return n != nil && n.Kind != NVMeNone }),
		{Name: "ibwire.nvme.kind", Title: "NVMe-oF packet", Type: FTString, get: func(p *Packet, v *Value) bool {
			n := N(p)
			if n == nil || n.Kind == NVMeNone {
				return false
			}
			v.S = nvmeKindNames[n.Kind]
			return true
		}},
		u("ibwire.nvme.qid", "Queue ID", FTUint16, BaseDec, func(p *Packet) bool { n := N(p); return n != nil && n.HasQID },
			func(n *NVMePacket) uint64 { return uint64(n.QID) }),
		u("ibwire.nvme.cid", "Command ID", FTUint16, BaseHex, has, func(n *NVMePacket) uint64 { return uint64(n.Cmd.CID) }),
		{Name: "ibwire.nvme.opcode", Title: "Command", Type: FTString, get: func(p *Packet, v *Value) bool {
			if !has(p) {
				return false
			}
			v.S = N(p).Cmd.Name()
			return true
		}},
		u("ibwire.nvme.nsid", "Namespace", FTUint32, BaseDec, func(p *Packet) bool { return has(p) && N(p).Cmd.NSID != 0 },
			func(n *NVMePacket) uint64 { return uint64(n.Cmd.NSID) }),
		u("ibwire.nvme.lba", "Starting LBA", FTUint64, BaseDec, rw, func(n *NVMePacket) uint64 { return n.Cmd.SLBA }),
		u("ibwire.nvme.blocks", "Logical blocks", FTUint32, BaseDec, rw, func(n *NVMePacket) uint64 { return uint64(n.Cmd.Blocks) }),
		u("ibwire.nvme.bytes", "Data bytes (SGL or in-capsule)", FTUint32, BaseDec, has, func(n *NVMePacket) uint64 { return uint64(n.Cmd.Bytes) }),
		u("ibwire.nvme.cmd_frame", "Command in frame", FTUint32, BaseDec, has, func(n *NVMePacket) uint64 { return uint64(n.Cmd.Frame) }),
		{Name: "ibwire.nvme.latency", Title: "Command to completion", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			if !isCQE(p) || !has(p) {
				return false
			}
			v.D = N(p).Latency
			return true
		}},
		{Name: "ibwire.nvme.data_latency", Title: "Command to first data", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			n := N(p)
			if n == nil || !n.HasToDat {
				return false
			}
			v.D = n.ToData
			return true
		}},
		u("ibwire.nvme.outstanding", "Commands outstanding on the queue", FTUint16, BaseDec,
			func(p *Packet) bool {
				n := N(p)
				return n != nil && (n.Kind == NVMeCommand || n.Kind == NVMeCompletion) && !n.Resent
			},
			func(n *NVMePacket) uint64 { return uint64(n.Outstanding) }),
		{Name: "ibwire.nvme.status", Title: "Completion status", Type: FTString, get: func(p *Packet, v *Value) bool {
			if !isCQE(p) {
				return false
			}
			var ok bool
			if v.S, ok = N(p).CQE.Status.Name(); !ok {
				v.S = "Unknown" // nvme.cqe.status.sct and .sc give the codes
			}
			return true
		}},
	}
}

var nvmeKindNames = [...]string{"", "command", "completion", "data"}
