package decode

import "math/bits"

// The command dwords of Identify and Get Log Page as Wireshark 4.0 shows
// them (NVMe 1.4 §5.14, §5.15): each dword with its bit fields beneath it,
// with tshark's names, its typo among them (identify.dwrod11.nvmesetid).
// The plain nvme.cmd.dwordN fields show the dwords these leave out.

func nvmeAdminDwordFields(N func(*Packet) *NVMePacket, identify, logPage func(*Packet) bool) []*Field {
	// dword is CDW10+i of a command has selects, whole; bits is a bit field
	// of it under mask, shifted down.
	dword := func(name, title string, has func(*Packet) bool, i int) *Field {
		return opens(uintField(name, title, FTUint32, BaseHex, func(p *Packet) (uint64, bool) {
			if !has(p) {
				return 0, false
			}
			return uint64(N(p).SQE.CDW[i]), true
		}))
	}
	bits := func(name, title string, base Base, has func(*Packet) bool, i int, mask uint32, parent string) *Field {
		shift := bits.TrailingZeros32(mask)
		f := withMask(uintField(name, title, FTUint32, base, func(p *Packet) (uint64, bool) {
			if !has(p) {
				return 0, false
			}
			return uint64(N(p).SQE.CDW[i] & mask >> shift), true
		}), uint64(mask))
		if parent != "" {
			f.parent = parent // a name outside its dword's
		}
		return f
	}
	const id, lp = "nvme.cmd.identify.", "nvme.cmd.get_logpage."
	rae := withMask(boolField(lp+"dword10.rae", "Retain Asynchronous Event (RAE)", func(p *Packet) (bool, bool) {
		if !logPage(p) {
			return false, false
		}
		return N(p).SQE.CDW[0]&0x8000 != 0, true
	}), 0x8000)
	return []*Field{
		dword(id+"dword10", "DWORD10", identify, 0),
		bits(id+"dword10.cns", "Controller or Namespace Structure (CNS)", BaseHex, identify, 0, 0xff, ""),
		bits(id+"dword10.rsvd", "Reserved", BaseHex, identify, 0, 0xff00, ""),
		bits(id+"dword10.cntid", "Controller Identifier (CNTID)", BaseHex, identify, 0, 0xffff0000, ""),
		dword(id+"dword11", "DWORD11", identify, 1),
		bits(id+"dwrod11.nvmesetid", "NVM Set Identifier (NVMSETID)", BaseHex, identify, 1, 0xffff, id+"dword11"),
		bits(id+"dword11.rsvd", "Reserved", BaseHex, identify, 1, 0xffff0000, ""),
		dword(id+"dword14", "DWORD14", identify, 4),
		bits(id+"dword14.uuid_index", "UUID Index", BaseHex, identify, 4, 0x7f, ""),
		bits(id+"dword14.rsvd", "UUID Index", BaseHex, identify, 4, 0xffffff80, ""),

		dword(lp+"dword10", "DWORD 10", logPage, 0),
		bits(lp+"dword10.id", "Log Page Identifier (LID)", BaseDec, logPage, 0, 0xff, ""),
		bits(lp+"dword10.lsp", "Log Specific Field (LSP)", BaseHex, logPage, 0, 0x1f00, ""),
		bits(lp+"dword10.rsvd", "Reserved", BaseHex, logPage, 0, 0x6000, ""),
		rae,
		bits(lp+"dword10.numdl", "Number of Dwords Lower (NUMDL)", BaseHex, logPage, 0, 0xffff0000, ""),
		uintField(lp+"numd", "Number of Dwords", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			if !logPage(p) {
				return 0, false
			}
			return uint64(N(p).SQE.LogPageDwords()), true
		}),
		dword(lp+"dword11", "DWORD 11", logPage, 1),
		bits(lp+"dword11.numdu", "Number of Dwords Upper (NUMDU)", BaseHex, logPage, 1, 0xffff, ""),
		bits(lp+"dword11.lsi", "Log Specific Identifier", BaseHex, logPage, 1, 0xffff0000, ""),
		uintField(lp+"lpo", "Log Page Offset (DWORD 12 and DWORD 13)", FTUint64, BaseDec, func(p *Packet) (uint64, bool) {
			if !logPage(p) {
				return 0, false
			}
			c := &N(p).SQE.CDW
			return uint64(c[3])<<32 | uint64(c[2]), true
		}),
		dword(lp+"dword14", "DWORD 14", logPage, 4),
		bits(id+"get_logpage.dword14.uuid_index", "UUID Index", BaseHex, logPage, 4, 0x3f, lp+"dword14"),
		bits(id+"get_logpage.dword14.rsvd", "Reserved", BaseHex, logPage, 4, 0xffffffc0, lp+"dword14"),
	}
}
