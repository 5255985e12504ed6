package decode

import (
	"encoding/binary"
	"math/bits"

	"github.com/ibwire/ibwire/layers"
)

// The data structures an admin command's data transfer carries (the
// controller's RDMA WRITEs tied to an Identify or Get Log Page), as
// Wireshark 4.0 shows them under nvme.cmd.identify.* and
// nvme.cmd.get_logpage.*: one table per structure, each row a field with
// tshark's name and title, its byte offset and size in the structure (NVMe
// Base 1.4 and NVMe-oF 1.1 give the layouts), its type, base and bitmask.
// The data comes a packet at a time (a 4 KiB Identify is four RDMA WRITE
// packets at a 1024-byte MTU); as tshark does, each packet shows the
// fields whose bytes it holds whole, at the structure offset the command's
// earlier data packets reached, so a field a packet boundary cuts is shown
// in neither packet. Structures of repeated entries (power state
// descriptors, discovery log records, command effects, LBA formats, ANA
// groups) give their entry's fields once, with the entries' place.

// nvmeToEnd is the size of a field that runs to the end of its structure
// (a vendor specific area); a packet shows the part it holds.
const nvmeToEnd = -1

// nvmeDataSize is the size of the Identify structures: 4 KiB.
const nvmeDataSize = 4096

// nvmeDF is one field of an NVMe data structure.
type nvmeDF struct {
	name      string // after the structure's prefix
	title     string
	off, size int // bytes, in the structure or in its entry
	t         FieldType
	base      Base
	mask      uint64 // bits of the little-endian integer of size bytes; 0 the whole
}

// nvmeDataKind is the data structure a command's data carries.
type nvmeDataKind uint8

// The data structures decoded, by Identify CNS or Get Log Page LID.
const (
	nvmeDataNone nvmeDataKind = iota
	nvmeDataIdentifyNS
	nvmeDataIdentifyCtrl
	nvmeDataNSList
	nvmeDataLogDiscovery
	nvmeDataLogSMART
	nvmeDataLogEffects
	nvmeDataLogANA
	nvmeDataLogErrors
	nvmeDataLogFirmware
	nvmeDataLogChangedNS
	nvmeDataLogOther // a log page tshark shows as nvme.data only
)

// logPage reports a Get Log Page's data: nvme.data shows each of its packets whole.
func (k nvmeDataKind) logPage() bool { return k >= nvmeDataLogDiscovery }

// nvmeDataKindOf is the structure command s's data carries, and where in
// the structure its data starts (a Get Log Page's offset).
func nvmeDataKindOf(s *layers.NVMeSQE, admin bool) (nvmeDataKind, uint64) {
	if !admin {
		return nvmeDataNone, 0
	}
	switch s.Opcode {
	case layers.NVMeOpIdentify:
		switch s.CNS() {
		case layers.NVMeCNSNamespace:
			return nvmeDataIdentifyNS, 0
		case layers.NVMeCNSController:
			return nvmeDataIdentifyCtrl, 0
		case layers.NVMeCNSActiveNSList:
			return nvmeDataNSList, 0
		}
	case layers.NVMeOpGetLogPage:
		// The offset's two low bits are reserved (a dword offset).
		lpo := (uint64(s.CDW[3])<<32 | uint64(s.CDW[2])) &^ 3
		switch s.LogPageID() {
		case layers.NVMeLogDiscovery:
			return nvmeDataLogDiscovery, lpo
		case layers.NVMeLogSMART:
			return nvmeDataLogSMART, lpo
		case layers.NVMeLogEffects:
			return nvmeDataLogEffects, lpo
		case layers.NVMeLogANA:
			return nvmeDataLogANA, lpo
		case layers.NVMeLogErrors:
			return nvmeDataLogErrors, lpo
		case layers.NVMeLogFirmware:
			return nvmeDataLogFirmware, lpo
		case layers.NVMeLogChangedNS:
			return nvmeDataLogChangedNS, lpo
		}
		return nvmeDataLogOther, lpo
	}
	return nvmeDataNone, 0
}

// nvmeCount says how many entries a layout has.
type nvmeCount uint8

const (
	nvmeCountFixed     nvmeCount = iota // count
	nvmeCountHeader                     // the structure's header says (NLBAF + 1, NUMREC): nvmeData.count
	nvmeCountUntilZero                  // up to the first zero entry (a namespace ID list)
	nvmeCountANA                        // one per ANA group descriptor (32 bytes and 4 per NSID)
	nvmeCountANANSID                    // the NSIDs of every ANA group descriptor
)

// nvmeLayout is a structure's fields at one place: a flat part (stride 0)
// or entries of stride bytes from base.
type nvmeLayout struct {
	kind         nvmeDataKind
	prefix       string
	base, stride int
	count        int
	counted      nvmeCount
	// when, if set, picks the entries that have these fields (a discovery
	// record's transport specific address is its transport's).
	when   func(entry []byte) bool
	fields []nvmeDF
}

// nvmeData is what a data packet holds of its command's structure.
type nvmeData struct {
	kind    nvmeDataKind
	off     uint64 // the structure offset of the payload's first byte
	payload []byte
	count   int // the header's entry count (NUMREC, NLBAF + 1); -1 unknown

	// An until-zero list's end in this packet, found once: every
	// occurrence of its field is below it, and walking the entries again
	// for each occurrence made a list of n entries cost n² reads.
	listEndKnown      bool
	listFrom, listEnd int
}

// nvmeLayouts are the structures' fields, each structure's layouts in the
// order tshark shows them.
var nvmeLayouts = []nvmeLayout{
	{kind: nvmeDataIdentifyCtrl, prefix: "nvme.cmd.identify.ctrl.", fields: nvmeIdentifyCtrl},
	{kind: nvmeDataIdentifyCtrl, prefix: "nvme.cmd.identify.ctrl.psds.psd", base: 2048, stride: 32, count: 32, fields: nvmePowerState},
	{kind: nvmeDataIdentifyNS, prefix: "nvme.cmd.identify.ns.", fields: nvmeIdentifyNS},
	{kind: nvmeDataIdentifyNS, prefix: "nvme.cmd.identify.ns.", base: 128, stride: 4, counted: nvmeCountHeader,
		fields: []nvmeDF{{"lbaf", "LBA Format", 0, 4, FTUint32, BaseHex, 0}}},
	{kind: nvmeDataNSList, prefix: "nvme.cmd.identify.nslist.", stride: 4, count: nvmeDataSize / 4, counted: nvmeCountUntilZero,
		fields: []nvmeDF{{"nsid", "Namespace list element", 0, 4, FTUint32, BaseHex, 0}}},
	{kind: nvmeDataLogDiscovery, prefix: "nvme.cmd.get_logpage.identify.", fields: nvmeDiscoveryHeader},
	{kind: nvmeDataLogDiscovery, prefix: "nvme.cmd.get_logpage.identify.rcrd", base: 1024, stride: 1024, counted: nvmeCountHeader, fields: nvmeDiscoveryRecord},
	{kind: nvmeDataLogDiscovery, prefix: "nvme.cmd.get_logpage.identify.rcrd", base: 1024, stride: 1024, counted: nvmeCountHeader,
		when: nvmeTransport(1), fields: nvmeDiscoveryTSASRDMA},
	{kind: nvmeDataLogDiscovery, prefix: "nvme.cmd.get_logpage.identify.rcrd", base: 1024, stride: 1024, counted: nvmeCountHeader,
		when: nvmeTransport(3), fields: nvmeDiscoveryTSASTCP},
	{kind: nvmeDataLogErrors, prefix: "nvme.cmd.get_logpage.errinf.", stride: 64, count: nvmeDataMaxRecords, fields: nvmeErrorInfo},
	{kind: nvmeDataLogFirmware, prefix: "nvme.cmd.get_logpage.fw_slot.", fields: nvmeFirmwareSlots},
	{kind: nvmeDataLogChangedNS, prefix: "nvme.cmd.get_logpage.", stride: 4, count: 1024, counted: nvmeCountUntilZero,
		fields: []nvmeDF{{"changed_nslist", "Changed Namespace", 0, 4, FTUint32, BaseHex, 0}}},
	{kind: nvmeDataLogSMART, prefix: "nvme.cmd.get_logpage.smart.", fields: nvmeSMART},
	// Admin commands' entries (ACS0-255), then I/O commands' (IOCS0-255).
	{kind: nvmeDataLogEffects, prefix: "nvme.cmd.get_logpage.cmd_and_eff.", stride: 4, count: 512, fields: nvmeCommandEffects},
	{kind: nvmeDataLogANA, prefix: "nvme.cmd.get_logpage.ana.", fields: nvmeANAHeader},
	{kind: nvmeDataLogANA, prefix: "nvme.cmd.get_logpage.ana.", base: 16, counted: nvmeCountANA, fields: nvmeANAGroup},
	{kind: nvmeDataLogANA, prefix: "nvme.cmd.get_logpage.ana.", base: 16, counted: nvmeCountANANSID,
		fields: []nvmeDF{{"grp.nsid", "Namespace Identifier", 32, 4, FTUint32, BaseHex, 0}}},
}

// Identify Controller (NVMe Base 1.4 Figure 247, NVMe-oF 1.1 Figure 28 for
// the Fabrics attributes at 1792).
var nvmeIdentifyCtrl = []nvmeDF{
	{"vid", "PCI Vendor ID (VID)", 0, 2, FTUint16, BaseHex, 0},
	{"ssvid", "PCI Subsystem Vendor ID (SSVID)", 2, 2, FTUint16, BaseHex, 0},
	{"sn", "Serial Number (SN)", 4, 20, FTString, BaseNone, 0},
	{"mn", "Model Number (MN)", 24, 40, FTString, BaseNone, 0},
	{"fr", "Firmware Revision (FR)", 64, 8, FTBytes, BaseNone, 0},
	{"rab", "Recommended Arbitration Burst (RAB)", 72, 1, FTUint16, BaseDec, 0},
	{"ieee", "IEEE OUI Identifier (IEEE)", 73, 3, FTUint32, BaseHex, 0},
	{"cmic", "Controller Multi-Path I/O and Namespace Sharing Capabilities (CMIC)", 76, 1, FTUint8, BaseHex, 0},
	{"cmic.mp", "Multiple Ports Support", 76, 1, FTBool, BaseNone, 0x1},
	{"cmic.mc", "Multiple Controllers Support", 76, 1, FTBool, BaseNone, 0x2},
	{"cmic.sriov", "SRIOV Association", 76, 1, FTBool, BaseNone, 0x4},
	{"cmic.ana", "ANA Reporting Support", 76, 1, FTBool, BaseNone, 0x8},
	{"cmic.rsvd", "Reserved", 76, 1, FTUint8, BaseHex, 0xf0},
	{"mdts", "Maximum Data Transfer Size (MDTS)", 77, 1, FTUint8, BaseDec, 0},
	{"cntlid", "Controller ID (CNTLID)", 78, 2, FTUint16, BaseHex, 0},
	{"ver", "Version (VER)", 80, 4, FTUint32, BaseHex, 0},
	{"ver.mjr", "Major Version Number (MJR)", 82, 2, FTUint16, BaseDec, 0},
	{"ver.min", "Minor Version Number (MNR)", 81, 1, FTUint8, BaseDec, 0},
	{"ver.ter", "Tertiary Version Number (TER)", 80, 1, FTUint8, BaseDec, 0},
	{"rtd3r", "RTD3 Resume Latency (RTD3R)", 84, 4, FTUint32, BaseDec, 0},
	{"rtd3e", "RTD3 Entry Latency (RTD3E)", 88, 4, FTUint32, BaseDec, 0},
	{"oaes", "Optional Asynchronous Events Supported (OAES)", 92, 4, FTUint32, BaseHex, 0},
	{"oaes.rsvd0", "Reserved", 92, 4, FTUint32, BaseHex, 0xff},
	{"oaes.nan", "Namespace Attribute Notices Supported", 92, 4, FTBool, BaseNone, 0x100},
	{"oaes.fan", "Firmware Activation Supported", 92, 4, FTBool, BaseNone, 0x200},
	{"oaes.rsvd1", "Reserved", 92, 4, FTUint32, BaseHex, 0x400},
	{"oaes.ana", "Asymmetric Namespace Access Change Notices Supported", 92, 4, FTBool, BaseNone, 0x800},
	{"oaes.ple", "Predictable Latency Event Aggregate Log Change Notices Supported", 92, 4, FTBool, BaseNone, 0x1000},
	{"oaes.lba", "LBA Status Information Notices Supported", 92, 4, FTBool, BaseNone, 0x2000},
	{"oaes.ege", "Endurance Group Event Aggregate Log Page Change Notices Supported", 92, 4, FTBool, BaseNone, 0x4000},
	{"oaes.rsvd2", "Reserved", 92, 4, FTUint32, BaseHex, 0xffff8000},
	{"ctratt", "Controller Attributes (CTRATT)", 96, 4, FTUint32, BaseHex, 0},
	{"ctratt.hi_128", "128-bit Host Identifier Support", 96, 4, FTBool, BaseNone, 0x1},
	{"ctratt.nopspm", "Non-Operational Power State Permissive Mode Supported", 96, 4, FTBool, BaseNone, 0x2},
	{"ctratt.nvmset", "NVM Sets Supported", 96, 4, FTBool, BaseNone, 0x4},
	{"ctratt.rrl", "Read Recovery Levels Supported", 96, 4, FTBool, BaseNone, 0x8},
	{"ctratt.eg", "Endurance Groups Supported", 96, 4, FTBool, BaseNone, 0x10},
	{"ctratt.plm", "Predictable Latency Mode Supported", 96, 4, FTBool, BaseNone, 0x20},
	{"ctratt.tbkas", "Traffic Based Keep Alive Support (TBKAS)", 96, 4, FTBool, BaseNone, 0x40},
	{"ctratt.ng", "Namespace Granularity", 96, 4, FTBool, BaseNone, 0x80},
	{"ctratt.sqa", "SQ Associations Support", 96, 4, FTBool, BaseNone, 0x100},
	{"ctratt.uuidl", "UUID List Support", 96, 4, FTBool, BaseNone, 0x200},
	{"ctratt.rsvd", "Reserved", 96, 4, FTUint32, BaseHex, 0xfffffc00},
	{"rrls", "Read Recovery Levels Support (RRLS)", 100, 2, FTUint16, BaseHex, 0},
	{"rrls.rrls0", "Read Recovery Level 0 Support", 100, 2, FTBool, BaseNone, 0x1},
	{"rrls.rrls1", "Read Recovery Level 1 Support", 100, 2, FTBool, BaseNone, 0x2},
	{"rrls.rrls2", "Read Recovery Level 2 Support", 100, 2, FTBool, BaseNone, 0x4},
	{"rrls.rrls3", "Read Recovery Level 3 Support", 100, 2, FTBool, BaseNone, 0x8},
	{"rrls.rrls4", "Read Recovery Level 4 (Default) Support", 100, 2, FTBool, BaseNone, 0x10},
	{"rrls.rrls5", "Read Recovery Level 5 Support", 100, 2, FTBool, BaseNone, 0x20},
	{"rrls.rrls6", "Read Recovery Level 6 Support", 100, 2, FTBool, BaseNone, 0x40},
	{"rrls.rrls7", "Read Recovery Level 7 Support", 100, 2, FTBool, BaseNone, 0x80},
	{"rrls.rrls8", "Read Recovery Level 8 Support", 100, 2, FTBool, BaseNone, 0x100},
	{"rrls.rrls9", "Read Recovery Level 9 Support", 100, 2, FTBool, BaseNone, 0x200},
	{"rrls.rrls10", "Read Recovery Level 10 Support", 100, 2, FTBool, BaseNone, 0x400},
	{"rrls.rrls11", "Read Recovery Level 11 Support", 100, 2, FTBool, BaseNone, 0x800},
	{"rrls.rrls12", "Read Recovery Level 12 Support", 100, 2, FTBool, BaseNone, 0x1000},
	{"rrls.rrls13", "Read Recovery Level 13 Support", 100, 2, FTBool, BaseNone, 0x2000},
	{"rrls.rrls14", "Read Recovery Level 14 Support", 100, 2, FTBool, BaseNone, 0x4000},
	{"rrls.rrls15", "Read Recovery Level 15 (Fast Fail) Support", 100, 2, FTBool, BaseNone, 0x8000},
	{"rsvd0", "Reserved", 102, 9, FTBytes, BaseNone, 0},
	{"cntrltype", "Controller Type (CNTRLTYPE)", 111, 1, FTUint8, BaseHex, 0},
	{"fguid", "FRU Globally Unique Identifier (FGUID)", 112, 16, FTBytes, BaseNone, 0},
	{"fguid.vse", "Vendor Specific Extension Identifier", 112, 8, FTUint64, BaseHex, 0},
	{"fguid.oui", "Organizationally Unique Identifier", 120, 3, FTUint32, BaseHex, 0},
	{"fguid.ei", "Extension Identifier", 123, 5, FTUint64, BaseHex, 0},
	{"crdt1", "Command Retry Delay Time 1", 128, 2, FTUint16, BaseDec, 0},
	{"crdt2", "Command Retry Delay Time 2", 130, 2, FTUint16, BaseDec, 0},
	{"crdt3", "Command Retry Delay Time 3", 132, 2, FTUint16, BaseDec, 0},
	{"rsvd1", "Reserved", 134, 106, FTBytes, BaseNone, 0},
	{"mi", "NVMe Management Interface", 240, 16, FTBytes, BaseNone, 0},
	{"mi.rsvd", "Reserved", 240, 13, FTBytes, BaseNone, 0},
	{"mi.nvmsr", "NVM Subsystem Report (NVMSR)", 253, 1, FTUint8, BaseHex, 0},
	{"mi.nvmsr.nvmesd", "NVMe Storage Device (NVMESD)", 253, 1, FTBool, BaseNone, 0x1},
	{"mi.nvmsr.nvmee", "NVMe Enclosure (NVMEE)", 253, 1, FTBool, BaseNone, 0x2},
	{"mi.nvmsr.rsvd", "Reserved", 253, 1, FTUint8, BaseHex, 0xfc},
	{"mi.vwci", "VPD Write Cycle Information (VWCI)", 254, 1, FTUint8, BaseHex, 0},
	{"mi.vwci.vwcr", "VPD Write Cycles Remaining (VWCR)", 254, 1, FTUint8, BaseHex, 0x7f},
	{"mi.vwci.vwcrv", "VPD Write Cycle Remaining Valid (VWCRV)", 254, 1, FTBool, BaseNone, 0x80},
	{"mi.mec", "Management Endpoint Capabilities (MEC)", 255, 1, FTUint8, BaseHex, 0},
	{"mi.mec.smbusme", "SMBus/I2C Port Management Endpoint (SMBUSME)", 255, 1, FTBool, BaseNone, 0x1},
	{"mi.mec.pcieme", "PCIe Port Management Endpoint (PCIEME)", 255, 1, FTBool, BaseNone, 0x2},
	{"mi.mec.rsvd", "Reserved", 255, 1, FTUint8, BaseHex, 0xfc},
	{"oacs", "Optional Admin Command Support (OACS)", 256, 2, FTUint16, BaseHex, 0},
	{"oacs.sec", "Security Send and Security Receive Support", 256, 2, FTBool, BaseNone, 0x1},
	{"oacs.fmt", "Format NVM Support", 256, 2, FTBool, BaseNone, 0x2},
	{"oacs.fw", "Firmware Download and Commit Support", 256, 2, FTBool, BaseNone, 0x4},
	{"oacs.nsmgmt", "Namespace Management Support", 256, 2, FTBool, BaseNone, 0x8},
	{"oacs.stst", "Device Self-Test Support", 256, 2, FTBool, BaseNone, 0x10},
	{"oacs.dtv", "Directive Send and Directive Receive Support", 256, 2, FTBool, BaseNone, 0x20},
	{"oacs.mi", "NVMe-MI Send and NVMe Receive Support", 256, 2, FTBool, BaseNone, 0x40},
	{"oacs.vm", "Virtualization Management Support", 256, 2, FTBool, BaseNone, 0x80},
	{"oacs.db", "Dorbell Buffer Config Support", 256, 2, FTBool, BaseNone, 0x100},
	{"oacs.sec.lba", "Get LBA Status Support", 256, 2, FTBool, BaseNone, 0x200},
	{"oacs.sec.rsvd", "Reserved", 256, 2, FTUint16, BaseHex, 0xfc00},
	{"acl", "Abort Command Limit (ACL)", 258, 1, FTUint8, BaseDec, 0},
	{"aerl", "Asynchronous Event Request Limit (AERL)", 259, 1, FTUint8, BaseDec, 0},
	{"frmw", "Firmware Updates (FRMW)", 260, 1, FTUint8, BaseHex, 0},
	{"frmw.fro", "First Firmware Slot Read-Only", 260, 1, FTBool, BaseNone, 0x1},
	{"frmw.fsn", "Number of Firmware Slots", 260, 1, FTUint8, BaseHex, 0xe},
	{"frmw.anr", "Supports Activation Without Reset", 260, 1, FTBool, BaseNone, 0x10},
	{"frmw.rsvd", "Reserved", 260, 1, FTUint8, BaseHex, 0xe0},
	{"lpa", "Log Page Attributes (LPA)", 261, 1, FTBool, BaseNone, 0},
	{"lpa.smrt", "Smart Log Page per Namespace Support", 261, 1, FTBool, BaseNone, 0x1},
	{"lpa.cmds", "Commands Supported and Effects Log Page Support", 261, 1, FTBool, BaseNone, 0x2},
	{"lpa.elp", "Extended Data Get Log Page Support", 261, 1, FTBool, BaseNone, 0x4},
	{"lpa.tel", "Telemetry Log Page and Notices Support", 261, 1, FTBool, BaseNone, 0x8},
	{"lpa.ple", "Persistent Event Log Support", 261, 1, FTBool, BaseNone, 0x10},
	{"lpa.rsvd", "Reserved", 261, 1, FTUint8, BaseHex, 0xe0},
	{"elpe", "Error Log Page Entries (ELPE)", 262, 1, FTUint8, BaseDec, 0},
	{"npss", "Number of Power States Supported (NPSS)", 263, 1, FTUint8, BaseDec, 0},
	{"avscc", "Admin Vendor Specific Command Configuration (AVSCC)", 264, 1, FTUint8, BaseHex, 0},
	{"avscc.std", "Standard Command Format", 264, 1, FTBool, BaseNone, 0x1},
	{"avscc.rsvd", "Reserved", 264, 1, FTUint8, BaseHex, 0xfe},
	{"apsta", "Autonomous Power State Transition Attributes (APSTA)", 265, 1, FTUint8, BaseHex, 0},
	{"apsta.aut", "Autonomous Power State Transitions Supported", 265, 1, FTBool, BaseNone, 0x1},
	{"apsta.rsvd", "Reserved", 265, 1, FTUint8, BaseHex, 0xfe},
	{"wctemp", "Warning Composite Temperature Threshold (WCTEMP)", 266, 2, FTUint16, BaseDec, 0},
	{"cctemp", "Critical Composite Temperature Threshold (CCTEMP)", 268, 2, FTUint16, BaseDec, 0},
	{"mtfa", "Maximum Time for Firmware Activation (MTFA)", 270, 2, FTUint16, BaseDec, 0},
	{"hmpre", "Host Memory Buffer Preferred Size (HMPRE)", 272, 4, FTUint32, BaseDec, 0},
	{"hmmin", "Host Memory Buffer Minimum Size (HMMIN)", 276, 4, FTUint32, BaseDec, 0},
	{"tnvmcap", "Total NVM Capacity (TNVMCAP)", 280, 16, FTBytes, BaseNone, 0},
	{"unvmcap", "Unallocated NVM Capacity (UNVMCAP)", 296, 16, FTBytes, BaseNone, 0},
	{"rpmbs", "Replay Protected Memory Block Support (RPMBS)", 312, 4, FTUint32, BaseHex, 0},
	{"rpmbs.nu", "Number of RPMB Units", 312, 4, FTUint32, BaseHex, 0x7},
	{"rpmbs.au", "Authentication Method", 312, 4, FTUint32, BaseHex, 0x38},
	{"rpmbs.rsvd", "Reserved", 312, 4, FTUint32, BaseHex, 0xffc0},
	{"rpmbs.ts", "Total RPMB Unit Size (128 KiB blocks, zero based)", 312, 4, FTUint32, BaseHex, 0xff0000},
	{"rpmbs.as", "Access Size (512-byte blocks, zero based)", 312, 4, FTUint32, BaseHex, 0xff000000},
	{"edstt", "Extended Device Self-test Time (EDSTT) (in minutes)", 316, 2, FTUint16, BaseDec, 0},
	{"dsto", "Device Self-test Options (DSTO)", 318, 1, FTUint8, BaseHex, 0},
	{"dsto.mds", "Concurrent Self-Tests for Multiple Devices Support", 318, 1, FTBool, BaseNone, 0x1},
	{"dsto.rsvd", "Reserved", 318, 1, FTUint8, BaseHex, 0xfe},
	{"fwug", "Firmware Update Granularity in 4 KiB Units (FWUG)", 319, 1, FTUint8, BaseDec, 0},
	{"kas", "Keep Alive Support - Timer Value (KAS)", 320, 2, FTUint16, BaseDec, 0},
	{"hctma", "Host Controlled Thermal Management Attributes (HCTMA)", 322, 2, FTUint16, BaseHex, 0},
	{"hctma.sup", "Controller Supports Thermal Management", 322, 2, FTBool, BaseNone, 0x1},
	{"hctma.rsvd", "Reserved", 322, 2, FTUint16, BaseHex, 0xfffe},
	{"mntmt", "Minimum Thermal Management Temperature (MNTMT)", 324, 2, FTUint16, BaseDec, 0},
	{"mxtmt", "Maximum Thermal Management Temperature (MXTMT)", 326, 2, FTUint16, BaseDec, 0},
	{"sanicap", "Sanitize Capabilities (SANICAP)", 328, 4, FTUint32, BaseHex, 0},
	{"sanicap.ces", "Crypto Erase Support (CES)", 328, 4, FTBool, BaseNone, 0x1},
	{"sanicap.bes", "Block Erase Support (BES)", 328, 4, FTBool, BaseNone, 0x2},
	{"sanicap.ows", "Overwrite Support (OWS)", 328, 4, FTBool, BaseNone, 0x4},
	{"sanicap.rsvd", "Reserved", 328, 4, FTUint32, BaseHex, 0x1ffffff8},
	{"sanicap.ndi", "No-Deallocate Inhibited (NDI)", 328, 4, FTBool, BaseNone, 0x20000000},
	{"sanicap.nodmmas", "No-Deallocate Modifies Media After Sanitize (NODMMAS)", 328, 4, FTUint32, BaseHex, 0xc0000000},
	{"hmmminds", "Host Memory Buffer Minimum Descriptor Entry Size in 4 KiB Units (HMMINDS)", 332, 4, FTUint32, BaseDec, 0},
	{"hmmaxd", "Host Memory Maximum Descriptors Entries (HMMAXD)", 336, 2, FTUint16, BaseDec, 0},
	{"nsetidmax", "NVM Set Identifier Maximum (NSETIDMAX)", 338, 2, FTUint16, BaseHex, 0},
	{"endgidmax", "Endurance Group Identifier Maximum (ENDGIDMAX)", 340, 2, FTUint16, BaseHex, 0},
	{"anatt", "ANA Transition Time in Seconds (ANATT)", 342, 1, FTUint8, BaseDec, 0},
	{"anacap", "Asymmetric Namespace Access Capabilities (ANACAP)", 343, 1, FTUint8, BaseHex, 0},
	{"anacap.osr", "Reports ANA Optimized State", 343, 1, FTBool, BaseNone, 0x1},
	{"anacap.nosr", "Reports ANA Non-Optimized State", 343, 1, FTBool, BaseNone, 0x2},
	{"anacap.isr", "Reports Innaccessible State", 343, 1, FTBool, BaseNone, 0x4},
	{"anacap.plsr", "Reports ANA Persistent Loss State", 343, 1, FTBool, BaseNone, 0x8},
	{"anacap.csr", "Reports ANA Change Sate", 343, 1, FTBool, BaseNone, 0x10},
	{"anacap.rsvd", "Reserved", 343, 1, FTBool, BaseNone, 0x20},
	{"anacap.panagrpid", "ANAGRPID field in the Identify Namespace does not change", 343, 1, FTBool, BaseNone, 0x40},
	{"anacap.nzpanagrpid", "Supports non-zero value in the ANAGRPID field", 343, 1, FTBool, BaseNone, 0x80},
	{"anagrpmax", "ANA Group Identifier Maximum (ANAGRPMAX)", 344, 4, FTUint32, BaseHex, 0},
	{"nanagrpid", "Number of ANA Group Identifiers (NANAGRPID)", 348, 4, FTUint32, BaseDec, 0},
	{"pels", "Persistent Event Log Size in 64 KiB Units (PELS)", 352, 4, FTUint32, BaseDec, 0},
	{"rsvd2", "Reserved", 356, 156, FTBytes, BaseNone, 0},
	{"sqes", "Submission Queue Entry Size (SQES)", 512, 1, FTUint8, BaseHex, 0},
	{"sqes.mins", "Minimum (required) Size", 512, 1, FTUint8, BaseDec, 0xf},
	{"sqes.maxs", "Maximum (allowed) Size", 512, 1, FTUint8, BaseDec, 0xf0},
	{"cqes", "Completion Queue Entry Size (CQES)", 513, 1, FTUint8, BaseHex, 0},
	{"cqes.mins", "Minimum (required) Size", 513, 1, FTUint8, BaseDec, 0xf},
	{"cqes.maxs", "Maximum (allowed) Size", 513, 1, FTUint8, BaseDec, 0xf0},
	{"maxcmd", "Maximum Outstanding Commands (MAXCMD)", 514, 2, FTUint16, BaseDec, 0},
	{"nn", "Number of Namespaces (NN)", 516, 4, FTUint32, BaseDec, 0},
	{"oncs", "Optional NVM Command Support (ONCS)", 520, 2, FTUint16, BaseHex, 0},
	{"oncs.ccs", "Supports Compare Command", 520, 2, FTBool, BaseNone, 0x1},
	{"oncs.wus", "Supports Write Uncorrectable Command", 520, 2, FTBool, BaseNone, 0x2},
	{"oncs.dsms", "Supports Dataset Management Command", 520, 2, FTBool, BaseNone, 0x4},
	{"oncs.wzs", "Support Write Zeroes Command", 520, 2, FTBool, BaseNone, 0x8},
	{"oncs.nzfs", "Supports non-zero Save Filed in Set/Get Features", 520, 2, FTBool, BaseNone, 0x10},
	{"oncs.ress", "Supports Reservations", 520, 2, FTBool, BaseNone, 0x20},
	{"oncs.tstmps", "Supports Timestamps", 520, 2, FTBool, BaseNone, 0x40},
	{"oncs.vers", "Supports Verify Command", 520, 2, FTBool, BaseNone, 0x80},
	{"oncs.rsvd", "Reserved", 520, 2, FTUint16, BaseHex, 0xff00},
	{"fuses", "Fused Operation Support (FUSES)", 522, 2, FTUint16, BaseHex, 0},
	{"fuses.cws", "Compare and Write Fused Operation Support", 522, 2, FTBool, BaseNone, 0x1},
	{"fuses.rsvd", "Reserved", 522, 2, FTUint16, BaseHex, 0xfffe},
	{"fna", "Format NVM Attributes (FNA)", 524, 1, FTUint8, BaseHex, 0},
	{"fna.fall", "Format Operation Applies to all Namespaces", 524, 1, FTBool, BaseNone, 0x1},
	{"fna.seall", "Secure Erase Operation Applies to all Namespaces", 524, 1, FTBool, BaseNone, 0x2},
	{"fna.ces", "Cryptographic Erase Supported", 524, 1, FTBool, BaseNone, 0x4},
	{"fna.rsvd", "Reserved", 524, 1, FTUint8, BaseHex, 0xf8},
	{"vwc", "Volatile Write Cache (VWC)", 525, 1, FTUint8, BaseHex, 0},
	{"vwc.cp", "Volatile Write Cache Present", 525, 1, FTBool, BaseNone, 0x1},
	{"vwc.cfb", "Flush Command Behavior", 525, 1, FTUint8, BaseHex, 0x6},
	{"vwc.rsvd", "Reserved", 525, 1, FTUint8, BaseHex, 0xf8},
	{"awun", "Atomic Write Unit Normal (AWUN)", 526, 2, FTUint16, BaseDec, 0},
	{"awupf", "Atomic Write Unit Power Fail (AWUPF)", 528, 2, FTUint16, BaseDec, 0},
	{"nvscc", "NVM Vendor Specific Command Configuration (NVSCC)", 530, 1, FTUint8, BaseHex, 0},
	{"nvscc.std", "Standard Format Used for Vendor Specific Commands", 530, 1, FTBool, BaseNone, 0x1},
	{"nvscc.rsvd", "Reserved", 530, 1, FTUint8, BaseHex, 0xfe},
	{"nwpc", "Namespace Write Protection Capabilities (NWPC)", 531, 1, FTUint8, BaseHex, 0},
	{"nwpc.wpss", "No Write Protect and Write Protect namespace write protection states Support", 531, 1, FTBool, BaseNone, 0x1},
	{"nwpc.wppcs", "Write Protect Until Power Cycle state Support", 531, 1, FTBool, BaseNone, 0x2},
	{"nwpc.pwpss", "Permanent Write Protect state Support", 531, 1, FTBool, BaseNone, 0x4},
	{"nwpc.rsvd", "Reserved", 531, 1, FTUint8, BaseHex, 0xf8},
	{"acwu", "Atomic Compare & Write Unit (ACWU)", 532, 2, FTUint16, BaseDec, 0},
	{"rsvd3", "Reserved", 534, 2, FTBytes, BaseNone, 0},
	{"sgls", "SGL Support (SGLS)", 536, 4, FTUint32, BaseHex, 0},
	{"sgls.sgls", "SGL Supported", 536, 4, FTUint32, BaseHex, 0x3},
	{"sgls.kdbs", "Supports Keyed SGL Data Block Descriptor", 536, 4, FTBool, BaseNone, 0x4},
	{"sgls.rsvd0", "Reserved", 536, 4, FTUint32, BaseHex, 0xfff8},
	{"sgls.bbd", "Supports SGL Bit Bucket Descriptor", 536, 4, FTBool, BaseNone, 0x10000},
	{"sgls.bufmptr", "Supports byte aligned contiguous buffer in MPTR Field", 536, 4, FTBool, BaseNone, 0x20000},
	{"sgls.lsgl", "Supports Larger SGL List than Command Requires", 536, 4, FTBool, BaseNone, 0x40000},
	{"sgls.kmptr", "Supports SGL Segment in MPTR Field", 536, 4, FTBool, BaseNone, 0x80000},
	{"sgls.offs", "Supports Address Field as offset in Data Block, Segment and Last Segment SGLs", 536, 4, FTBool, BaseNone, 0x100000},
	{"sgls.tdbd", "Supports Transport SGL Data Block Descriptor", 536, 4, FTBool, BaseNone, 0x200000},
	{"sgls.rsvd1", "Reserved", 536, 4, FTUint32, BaseHex, 0xffc00000},
	{"mnan", "Maximum Number of Allowed Namespaces (MNAN)", 540, 4, FTUint32, BaseDec, 0},
	{"rsvd4", "Reserved", 544, 224, FTBytes, BaseNone, 0},
	{"subnqn", "NVM Subsystem NVMe Qualified Name (SUBNQN)", 768, 256, FTString, BaseNone, 0},
	{"rsvd5", "Reserved", 1024, 768, FTBytes, BaseNone, 0},
	{"nvmeof", "NVMeOF Attributes", 1792, 256, FTBytes, BaseNone, 0},
	{"nvmeof.ioccsz", "I/O Queue Command Capsule Supported Size (IOCCSZ)", 1792, 4, FTUint32, BaseDec, 0},
	{"nvmeof.iorcsz", "I/O Queue Response Capsule Supported Size (IORCSZ)", 1796, 4, FTUint32, BaseDec, 0},
	{"nvmeof.icdoff", "In Capsule Data Offset (ICDOFF)", 1800, 2, FTUint16, BaseDec, 0},
	{"nvmeof.fcatt", "Fabrics Controller Attributes (FCATT)", 1802, 1, FTUint8, BaseHex, 0},
	{"nvmeof.fcatt.dcm", "Dynamic Controller Model", 1802, 1, FTBool, BaseNone, 0x1},
	{"nvmeof.fcatt.rsvd", "Reserved", 1802, 1, FTUint8, BaseHex, 0xfe},
	{"nvmeof.msdbd", "Maximum SGL Data Block Descriptors (MSDBD)", 1803, 1, FTUint8, BaseDec, 0},
	{"nvmeof.ofcs", "Optional Fabric Commands Support (OFCS)", 1804, 2, FTUint16, BaseHex, 0},
	{"nvmeof.ofcs.dcs", "Supports Disconnect Command", 1804, 2, FTBool, BaseNone, 0x1},
	{"nvmeof.ofcs.rsvd", "Reserved", 1804, 2, FTUint16, BaseHex, 0xfffe},
	{"nvmeof.rsvd", "Reserved", 1806, 242, FTBytes, BaseNone, 0},
	{"psds", "Power State Attributes", 2048, 1024, FTBytes, BaseNone, 0},
	{"vs", "Vendor Specific", 3072, nvmeToEnd, FTBytes, BaseNone, 0},
}

// A power state descriptor (NVMe Base 1.4 Figure 248), 32 of them from byte 2048.
var nvmePowerState = []nvmeDF{
	{"", "Power State Descriptor", 0, 32, FTBytes, BaseNone, 0},
	{".mp", "Maximum Power (MP)", 0, 2, FTUint16, BaseDec, 0},
	{".rsvd0", "Reserved", 2, 1, FTUint8, BaseHex, 0},
	{".mxps", "Max Power Scale (MXPS)", 3, 1, FTBool, BaseNone, 0x1},
	{".nops", "Non-Operational State (NOPS)", 3, 1, FTBool, BaseNone, 0x2},
	{".rsvd1", "Reserved", 3, 1, FTUint8, BaseHex, 0xfc},
	{".enlat", "Entry Latency (ENLAT)", 4, 4, FTUint32, BaseDec, 0},
	{".exlat", "Exit Latency (EXLAT)", 8, 4, FTUint32, BaseDec, 0},
	{".rrt", "Relative Read Throughput (RRT)", 12, 1, FTUint8, BaseDec, 0x1f},
	{".rsvd2", "Reserved", 12, 1, FTUint8, BaseHex, 0xe0},
	{".rrl", "Relative Read Latency (RRL)", 13, 1, FTUint8, BaseDec, 0x1f},
	{".rsvd3", "Reserved", 13, 1, FTUint8, BaseHex, 0xe0},
	{".rwt", "Relative Write Throughput (RWT)", 14, 1, FTUint8, BaseDec, 0x1f},
	{".rsvd4", "Reserved", 14, 1, FTUint8, BaseHex, 0xe0},
	{".rwl", "Relative Write Latency (RWL)", 15, 1, FTUint8, BaseDec, 0x1f},
	{".rsvd5", "Reserved", 15, 1, FTUint8, BaseHex, 0xe0},
	{".idlp", "Idle Power (IDLP)", 16, 2, FTUint16, BaseDec, 0},
	{".rsvd6", "Reserved", 18, 1, FTUint8, BaseHex, 0x3f},
	{".ips", "Idle Power Scale (IPS)", 18, 1, FTUint8, BaseHex, 0xc0},
	{".rsvd7", "Reserved", 19, 1, FTUint8, BaseHex, 0},
	{".actp", "Active Power (ACTP)", 20, 2, FTUint16, BaseDec, 0},
	{".apw", "Active Power Workload (APW)", 22, 1, FTUint8, BaseHex, 0x7},
	{".rsvd8", "Reserved", 22, 1, FTUint8, BaseHex, 0x38},
	{".aps", "Active Power Scale (APS)", 22, 1, FTUint8, BaseHex, 0xc0},
	{".rsvd9", "Reserved", 23, 9, FTBytes, BaseNone, 0},
}

// Identify Namespace (NVMe Base 1.4 Figure 245): the fields tshark 4.0 shows.
var nvmeIdentifyNS = []nvmeDF{
	{"nsze", "Namespace Size (NSZE)", 0, 8, FTUint64, BaseDecHex, 0},
	{"ncap", "Namespace Capacity (NCAP)", 8, 8, FTUint64, BaseHex, 0},
	{"nuse", "Namespace Utilization (NUSE)", 16, 8, FTUint64, BaseHex, 0},
	{"nsfeat", "Namespace Features (NSFEAT)", 24, 1, FTUint8, BaseHex, 0},
	{"nlbaf", "Number of LBA Formats (NLBAF)", 25, 1, FTUint8, BaseDecHex, 0},
	{"flbas", "Formatted LBA Size (FLBAS)", 26, 1, FTUint8, BaseDecHex, 0},
	{"mc", "Metadata Capabilities (MC)", 27, 1, FTUint8, BaseHex, 0},
	{"dpc", "End-to-end Data Protection Capabilities (DPC)", 28, 1, FTUint8, BaseHex, 0},
	{"dps", "End-to-end Data Protection Type Settings (DPS)", 29, 1, FTUint8, BaseHex, 0},
	{"nmic", "Namespace Multi-path I/O and Namespace Sharing Capabilities (NMIC)", 30, 1, FTUint8, BaseHex, 0},
	{"nguid", "Namespace Globally Unique Identifier (NGUID)", 104, 16, FTBytes, BaseNone, 0},
	{"eui64", "IEEE Extended Unique Identifier (EUI64)", 120, 8, FTBytes, BaseNone, 0},
	{"lbafs", "LBA Formats", 128, 64, FTNone, BaseNone, 0},
	{"rsvd", "Reserved", 192, 192, FTBytes, BaseNone, 0},
	{"vs", "Vendor Specific", 384, nvmeToEnd, FTBytes, BaseNone, 0},
}

// The Discovery log page header (NVMe-oF 1.1 Figure 31) and its 1024-byte records from byte 1024 (Figure 32).
var nvmeDiscoveryHeader = []nvmeDF{
	{"genctr", "Generation Counter (GENCTR)", 0, 8, FTUint64, BaseDec, 0},
	{"numrec", "Number of Records (NUMREC)", 8, 8, FTUint64, BaseDec, 0},
	{"recfmt", "Record Format (RECFMT)", 16, 2, FTUint16, BaseDec, 0},
	{"rsvd", "Reserved", 18, 1006, FTBytes, BaseNone, 0},
}

var nvmeDiscoveryRecord = []nvmeDF{
	{"", "Discovery Log Entry", 0, 1024, FTBytes, BaseNone, 0},
	{".trtype", "Transport Type (TRTYPE)", 0, 1, FTUint8, BaseHex, 0},
	{".adrfam", "Address Family (ADRFAM)", 1, 1, FTUint8, BaseHex, 0},
	{".subtype", "Subsystem Type (SUBTYPE)", 2, 1, FTUint8, BaseHex, 0},
	{".treq", "Transport Requirements (TREQ)", 3, 1, FTUint8, BaseHex, 0},
	{".treq.secch", "Secure Channel Connection Requirement", 3, 1, FTBool, BaseNone, 0x1},
	{".treq.sqfc", "Disable SQ Flow Control Support", 3, 1, FTBool, BaseNone, 0x2},
	{".treq.rsvd", "Reserved", 3, 1, FTUint8, BaseHex, 0xf8},
	{".portid", "Port ID (PORTID)", 4, 2, FTUint16, BaseHex, 0},
	{".cntlid", "Controller ID (CNTLID)", 6, 2, FTUint16, BaseHex, 0},
	{".asqsz", "Admin Max SQ Size (ASQSZ)", 8, 2, FTUint16, BaseDec, 0},
	{".rsvd0", "Reserved", 10, 22, FTBytes, BaseNone, 0},
	{".trsvcid", "Transport Service Identifier (TRSVCID)", 32, 32, FTString, BaseNone, 0},
	{".rsvd1", "Reserved", 64, 192, FTBytes, BaseNone, 0},
	{".subnqn", "NVM Subsystem Qualified Name (SUBNQN)", 256, 256, FTString, BaseNone, 0},
	{".traddr", "Transport Address (TRADDR)", 512, 256, FTString, BaseNone, 0},
	{".tsas", "Transport Specific Address Subtype (TSAS)", 768, 256, FTBytes, BaseNone, 0},
}

// A discovery record's transport specific address by its transport type
// (TRTYPE, byte 0: 1 RDMA, 3 TCP; NVMe-oF 1.1 Figure 33).
var nvmeDiscoveryTSASRDMA = []nvmeDF{
	{".tsas.rdma_qptype", "RDMA QP Service Type (RDMA_QPTYPE)", 768, 1, FTUint8, BaseHex, 0},
	{".tsas.rdma_prtype", "RDMA Provider Type (RDMA_PRTYPE)", 769, 1, FTUint8, BaseHex, 0},
	{".tsas.rdma_cms", "RDMA Connection Management Service (RDMA_CMS)", 770, 1, FTUint8, BaseHex, 0},
	{".tsas.rdma_rsvd0", "Reserved", 771, 5, FTBytes, BaseNone, 0},
	{".tsas.rdma_pkey", "RDMA Partition Key (RDMA_PKEY)", 776, 2, FTUint16, BaseHex, 0},
	{".tsas.rdma_rsvd1", "Reserved", 778, 246, FTBytes, BaseNone, 0},
}

var nvmeDiscoveryTSASTCP = []nvmeDF{
	{".tsas.tcp_sectype", "Security Type (SECTYPE)", 768, 1, FTUint8, BaseHex, 0},
	{".tsas.tcp_rsvd", "Reserved", 769, 255, FTBytes, BaseNone, 0},
}

// nvmeTransport picks the discovery records of transport type t.
func nvmeTransport(t byte) func(entry []byte) bool {
	return func(entry []byte) bool { return entry[0] == t }
}

// An Error Information log entry (NVMe Base 1.4 Figure 193), 64 bytes
// each. The spec's sizes and bits where tshark 4.0 registers others (the
// NSID is 4 bytes, the parameter error location's bit is bits 10:8).
var nvmeErrorInfo = []nvmeDF{
	{"errcnt", "Error Count", 0, 8, FTUint64, BaseDec, 0},
	{"sqid", "Submission Queue ID", 8, 2, FTUint16, BaseDec, 0},
	{"cid", "Command ID", 10, 2, FTUint16, BaseHex, 0},
	{"sf", "Status Field", 12, 2, FTUint16, BaseHex, 0},
	{"sf.val", "Status Field Value", 12, 2, FTUint16, BaseHex, 0x7fff},
	{"sf.ptag", "Status Field Phase Tag", 12, 2, FTUint16, BaseHex, 0x8000},
	{"pel", "Parameter Error Location", 14, 2, FTUint16, BaseHex, 0},
	{"pel.bytee", "Byte in command that contained the error", 14, 2, FTUint16, BaseDec, 0xff},
	{"pel.bite", "Bit in command that contained the error", 14, 2, FTUint16, BaseDec, 0x700},
	{"pel.rsvd", "Reserved", 14, 2, FTUint16, BaseDec, 0xf800},
	{"lba", "LBA", 16, 8, FTUint64, BaseHex, 0},
	{"nsid", "Namespace ID", 24, 4, FTUint32, BaseHex, 0},
	{"vsi", "Vendor Specific Information Available", 28, 1, FTUint8, BaseHex, 0},
	{"trype", "Transport Type", 29, 1, FTUint8, BaseHex, 0},
	{"rsvd0", "Reserved", 30, 2, FTUint16, BaseHex, 0},
	{"csi", "Command Specific Information", 32, 8, FTUint64, BaseHex, 0},
	{"tsi", "Transport Type Specific Information", 40, 2, FTUint16, BaseHex, 0},
	{"rsvd1", "Reserved", 42, 22, FTBytes, BaseNone, 0},
}

// Firmware Slot Information (NVMe Base 1.4 Figure 195).
var nvmeFirmwareSlots = []nvmeDF{
	{"afi", "Active Firmware Info (AFI)", 0, 1, FTUint8, BaseHex, 0},
	{"afi.afs", "Active Firmware Slot", 0, 1, FTUint8, BaseHex, 0x7},
	{"afi.rsvd0", "Reserved", 0, 1, FTUint8, BaseHex, 0x8},
	{"afi.nfs", "Next Reset Firmware Slot", 0, 1, FTUint8, BaseHex, 0x70},
	{"afi.rsvd1", "Reserved", 0, 1, FTUint8, BaseHex, 0x80},
	{"rsvd0", "Reserved", 1, 7, FTUint64, BaseHex, 0},
	{"frs", "Firmware Slot Revisions", 8, 56, FTBytes, BaseNone, 0},
	{"frs.s1", "Firmware Revision for Slot 1", 8, 8, FTUint64, BaseHex, 0},
	{"frs.s2", "Firmware Revision for Slot 2", 16, 8, FTUint64, BaseHex, 0},
	{"frs.s3", "Firmware Revision for Slot 3", 24, 8, FTUint64, BaseHex, 0},
	{"frs.s4", "Firmware Revision for Slot 4", 32, 8, FTUint64, BaseHex, 0},
	{"frs.s5", "Firmware Revision for Slot 5", 40, 8, FTUint64, BaseHex, 0},
	{"frs.s6", "Firmware Revision for Slot 6", 48, 8, FTUint64, BaseHex, 0},
	{"frs.s7", "Firmware Revision for Slot 7", 56, 8, FTUint64, BaseHex, 0},
	{"rsvd1", "Reserved", 64, 448, FTBytes, BaseNone, 0},
}

// SMART / Health Information (NVMe Base 1.4 Figure 194).
var nvmeSMART = []nvmeDF{
	{"cw", "Critical Warning", 0, 1, FTUint8, BaseHex, 0},
	{"cw.sc", "Spare Capacity Below Threshold", 0, 1, FTBool, BaseNone, 0x1},
	{"cw.temp", "Temperature Crossed Threshold", 0, 1, FTBool, BaseNone, 0x2},
	{"cw.sme", "Reliability Degraded due to Significant Media Errors", 0, 1, FTBool, BaseNone, 0x4},
	{"cw.ro", "Media Placed in RO State", 0, 1, FTBool, BaseNone, 0x8},
	{"cw.bdf", "Volatile Memory Backup Device Has Failed", 0, 1, FTBool, BaseNone, 0x10},
	{"cw.mrro", "Persistent Memory Region Placed in RO State", 0, 1, FTBool, BaseNone, 0x20},
	{"cw.rsvd", "Reserved", 0, 1, FTUint8, BaseHex, 0xe0},
	{"ct", "Composite Temperature (degrees K)", 1, 2, FTUint16, BaseDec, 0},
	{"asc", "Available Spare Capacity (%)", 3, 1, FTUint8, BaseDec, 0},
	{"ast", "Available Spare Capacity Threshold (%)", 4, 1, FTUint8, BaseDec, 0},
	{"lae", "Life Age Estimate (%)", 5, 1, FTUint8, BaseDec, 0},
	{"egcws", "Endurance Group Critical Warning Summary", 6, 1, FTUint8, BaseHex, 0},
	{"egcws.sc", "Spare Capacity of Endurance Group Below Threshold", 6, 1, FTBool, BaseNone, 0x1},
	{"egcws.rsvd0", "Reserved", 6, 1, FTBool, BaseNone, 0x2},
	{"egcws.me", "Reliability of Endurance Group Degraded due to Media Errors", 6, 1, FTBool, BaseNone, 0x4},
	{"egcws.ro", "A Namespace in Endurance Group Placed in RO State", 6, 1, FTBool, BaseNone, 0x8},
	{"egcws.rsvd1", "Reserved", 6, 1, FTUint8, BaseHex, 0xf0},
	{"rsvd0", "Reserved", 7, 25, FTBytes, BaseNone, 0},
	{"dur", "Data Units Read", 32, 16, FTBytes, BaseNone, 0},
	{"duw", "Data Units Written", 48, 16, FTBytes, BaseNone, 0},
	{"hrc", "Host Read Commands", 64, 16, FTBytes, BaseNone, 0},
	{"hwc", "Host Write Commands", 80, 16, FTBytes, BaseNone, 0},
	{"cbt", "Controller Busy Time (minutes)", 96, 16, FTBytes, BaseNone, 0},
	{"pc", "Power Cycles", 112, 16, FTBytes, BaseNone, 0},
	{"poh", "Power On Hours", 128, 16, FTBytes, BaseNone, 0},
	{"us", "Unsafe Shutdowns", 144, 16, FTBytes, BaseNone, 0},
	{"mie", "Media Integrity Errors", 160, 16, FTBytes, BaseNone, 0},
	{"ele", "Number of Error Information Log Entries", 176, 16, FTBytes, BaseNone, 0},
	{"wctt", "Warning Composite Temperature Time (minutes)", 192, 4, FTUint32, BaseDec, 0},
	{"cctt", "Critical Composite Temperature Time (minutes)", 196, 4, FTUint32, BaseDec, 0},
	{"ts", "Temperature Sensors", 200, 16, FTBytes, BaseNone, 0},
	{"ts.s1", "Temperature Sensor 1 (degrees K)", 200, 2, FTUint16, BaseDec, 0},
	{"ts.s2", "Temperature Sensor 2 (degrees K)", 202, 2, FTUint16, BaseDec, 0},
	{"ts.s3", "Temperature Sensor 3 (degrees K)", 204, 2, FTUint16, BaseDec, 0},
	{"ts.s4", "Temperature Sensor 4 (degrees K)", 206, 2, FTUint16, BaseDec, 0},
	{"ts.s5", "Temperature Sensor 5 (degrees K)", 208, 2, FTUint16, BaseDec, 0},
	{"ts.s6", "Temperature Sensor 6 (degrees K)", 210, 2, FTUint16, BaseDec, 0},
	{"ts.s7", "Temperature Sensor 7 (degrees K)", 212, 2, FTUint16, BaseDec, 0},
	{"ts.s8", "Temperature Sensor 8 (degrees K)", 214, 2, FTUint16, BaseDec, 0},
	{"tmt1c", "Thermal Management Temperature 1 Transition Count", 216, 4, FTUint32, BaseDec, 0},
	{"tmt2c", "Thermal Management Temperature 2 Transition Count", 220, 4, FTUint32, BaseDec, 0},
	{"tmt1t", "Total Time For Thermal Management Temperature 1 (seconds)", 224, 4, FTUint32, BaseDec, 0},
	{"tmt2t", "Total Time For Thermal Management Temperature 2 (seconds)", 228, 4, FTUint32, BaseDec, 0},
	{"rsvd1", "Reserved", 232, 280, FTBytes, BaseNone, 0},
}

// A Commands Supported and Effects entry (NVMe Base 1.4 Figure 198).
var nvmeCommandEffects = []nvmeDF{
	{"cs", "Command Supported Entry", 0, 4, FTBytes, BaseNone, 0},
	{"cseds", "Commands Supported and Effects Data Structure", 0, 4, FTUint32, BaseHex, 0},
	{"cseds.csupp", "Command Supported (CSUPP)", 0, 4, FTBool, BaseNone, 0x1},
	{"cseds.lbcc", "Logical Block Content Change (LBCC)", 0, 4, FTBool, BaseNone, 0x2},
	{"cseds.ncc", "Namespace Capability Change (NCC)", 0, 4, FTBool, BaseNone, 0x4},
	{"cseds.nic", "Namespace Inventory Change (NIC)", 0, 4, FTBool, BaseNone, 0x8},
	{"cseds.ccc", "Controller Capability Change (CCC)", 0, 4, FTBool, BaseNone, 0x10},
	{"cseds.rsvd0", "Reserved", 0, 4, FTUint32, BaseHex, 0xffe0},
	{"cseds.cse", "Command Submission and Execution (CSE)", 0, 4, FTUint32, BaseHex, 0x70000},
	{"cseds.uss", "UUID Selection Supported", 0, 4, FTBool, BaseNone, 0x80000},
	{"cseds.rsvd1", "Reserved", 0, 4, FTUint32, BaseHex, 0xfff00000},
}

// The Asymmetric Namespace Access log header (NVMe Base 1.4 Figure 200) and a group descriptor (Figure 201), from byte 16.
var nvmeANAHeader = []nvmeDF{
	{"chcnt", "Change Count", 0, 8, FTUint64, BaseDec, 0},
	{"ngd", "Number of ANA Group Descriptors", 8, 2, FTUint16, BaseDec, 0},
	{"rsvd", "Reserved", 10, 6, FTUint64, BaseHex, 0},
}

var nvmeANAGroup = []nvmeDF{
	{"grp", "ANA Group Descriptor", 0, nvmeToEnd, FTBytes, BaseNone, 0},
	{"grp.id", "ANA Group ID", 0, 4, FTUint32, BaseHex, 0},
	{"grp.nns", "Number of NSID Values", 4, 4, FTUint32, BaseDec, 0},
	{"grp.chcnt", "Change Count", 8, 8, FTUint64, BaseDec, 0},
	{"grp.anas", "ANA State", 16, 1, FTUint8, BaseHex, 0xf},
	{"grp.anas.state", "Asymmetric Namespace Access State", 16, 1, FTUint8, BaseHex, 0xf},
	{"grp.anas.rsvd", "Reserved", 16, 1, FTUint8, BaseHex, 0xf0},
	{"grp.rsvd", "Reserved", 17, 15, FTBytes, BaseNone, 0},
}

// nvmeHeaderCount reads the entry count the header of a structure's first
// packet gives: NLBAF + 1 LBA formats, NUMREC discovery records; -1 when
// the packet does not hold it.
func nvmeHeaderCount(d *nvmeData) int {
	le := binary.LittleEndian
	switch {
	case d.off != 0:
	case d.kind == nvmeDataIdentifyNS && len(d.payload) > 25:
		return int(d.payload[25]) + 1
	case d.kind == nvmeDataLogDiscovery && len(d.payload) >= 16:
		return int(min(le.Uint64(d.payload[8:]), nvmeDataMaxRecords))
	}
	return -1
}

// nvmeDataMaxRecords bounds the discovery records a header's count is taken for.
const nvmeDataMaxRecords = 1 << 20

// span returns the bytes of [start, start+size) of the structure when the
// packet holds them all; a size of nvmeToEnd is the part of the rest of
// the structure (to limit) the packet holds.
func (d *nvmeData) span(start uint64, size int, limit uint64) ([]byte, bool) {
	end := d.off + uint64(len(d.payload))
	if size == nvmeToEnd {
		lo, hi := max(start, d.off), min(limit, end)
		if lo >= hi {
			return nil, false
		}
		return d.payload[lo-d.off : hi-d.off], true
	}
	if start < d.off || start+uint64(size) > end {
		return nil, false
	}
	return d.payload[start-d.off : start-d.off+uint64(size)], true
}

// at returns occurrence i of field f of layout l in the packet: the bytes
// of the i-th entry whose field the packet holds whole.
func (d *nvmeData) at(l *nvmeLayout, f *nvmeDF, i int) ([]byte, bool) {
	if d.kind != l.kind {
		return nil, false
	}
	switch l.counted {
	case nvmeCountANA, nvmeCountANANSID:
		return d.anaAt(l, f, i)
	}
	if l.stride == 0 {
		if i != 0 {
			return nil, false
		}
		return d.span(uint64(l.base+f.off), f.size, nvmeDataSize)
	}
	first, stride := uint64(l.base+f.off), uint64(l.stride)
	j0 := 0
	if d.off > first {
		j0 = int((d.off - first + stride - 1) / stride)
	}
	j := j0 + i
	count := l.count
	if l.counted == nvmeCountHeader && d.count >= 0 {
		count = d.count
	} else if l.counted == nvmeCountHeader {
		count = nvmeDataMaxRecords
	}
	if l.when != nil {
		// Occurrence i is the i-th entry from j0 that has the fields.
		// An entry whose first byte an earlier packet held is not known.
		for j = j0; j < count; j++ {
			e, in := d.span(uint64(l.base)+uint64(j)*stride, 1, 0)
			if !in && uint64(l.base)+uint64(j)*stride < d.off {
				continue
			}
			if !in {
				return nil, false
			}
			if l.when(e) {
				if i == 0 {
					break
				}
				i--
			}
		}
	}
	if j >= count {
		return nil, false
	}
	b, ok := d.span(first+uint64(j)*stride, f.size, uint64(l.base)+uint64(count)*stride)
	if ok && l.counted == nvmeCountUntilZero && j >= d.untilZeroEnd(l, j0, count) {
		return nil, false
	}
	return b, ok
}

// untilZeroEnd is the index of the first entry from j0 on that is zero
// (the list ends there) or that the packet does not hold whole (what
// follows it is not known to belong to the list).
func (d *nvmeData) untilZeroEnd(l *nvmeLayout, j0, count int) int {
	if d.listEndKnown && d.listFrom == j0 {
		return d.listEnd
	}
	k := j0
	for ; k < count; k++ {
		e, in := d.span(uint64(l.base)+uint64(k)*uint64(l.stride), l.stride, 0)
		if !in || binary.LittleEndian.Uint32(e) == 0 {
			break
		}
	}
	d.listEndKnown, d.listFrom, d.listEnd = true, j0, k
	return k
}

// anaAt finds occurrence i of an ANA group descriptor's field: the
// descriptors follow the 16-byte header, each 32 bytes and 4 per NSID,
// NGD of them; they are read from the packet that holds the header.
func (d *nvmeData) anaAt(l *nvmeLayout, f *nvmeDF, i int) ([]byte, bool) {
	pl := d.payload
	if d.off != 0 || len(pl) < 16 {
		return nil, false
	}
	le := binary.LittleEndian
	p := 16
	for g := 0; g < int(le.Uint16(pl[8:])) && p+8 <= len(pl); g++ {
		nns := int(le.Uint32(pl[p+4:]))
		size := 32 + 4*min(nns, len(pl)/4)
		if l.counted == nvmeCountANANSID {
			if i < nns {
				at := p + f.off + 4*i
				if at+4 > len(pl) {
					return nil, false
				}
				return pl[at : at+4], true
			}
			i -= nns
		} else if i == 0 {
			if f.size == nvmeToEnd { // the descriptor itself
				return pl[p:min(p+size, len(pl))], true
			}
			at := p + f.off
			if at+f.size > len(pl) {
				return nil, false
			}
			return pl[at : at+f.size], true
		} else {
			i--
		}
		p += size
	}
	return nil, false
}

// nvmeDFValue reads field f's value from its bytes b. Strings are the
// interned copies the analysis made of the packet's (strs), so reading a
// field allocates nothing.
func nvmeDFValue(f *nvmeDF, b []byte, strs map[string]string, v *Value) bool {
	switch f.t {
	case FTBytes:
		v.B = b
	case FTString:
		s, ok := strs[string(nvmeCString(b))]
		if !ok {
			return false
		}
		v.S = s
	case FTNone, FTProtocol:
	default:
		var u uint64
		for k := len(b) - 1; k >= 0; k-- {
			u = u<<8 | uint64(b[k])
		}
		if f.mask != 0 {
			u = u & f.mask >> bits.TrailingZeros64(f.mask)
		}
		if f.t == FTBool && u != 0 {
			u = 1
		}
		v.U = u
	}
	return true
}

// nvmeCString is b up to its first NUL.
func nvmeCString(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// maxNVMeStrings bounds the interned strings (serial and model numbers,
// NQNs, addresses): past it they are forgotten and interned again.
const maxNVMeStrings = 4096

// intern keeps a copy of every string field packet data d holds, for the
// field getters to read without allocating.
func (st *nvmeState) intern(d *nvmeData) {
	if st.strs == nil || len(st.strs) >= maxNVMeStrings {
		// Emptied before a packet, never while it is read: every string
		// the packet keeps stays for its fields. A packet adds a few at
		// most (its bytes bound them), so the bound holds near enough.
		st.strs = make(map[string]string)
	}
	for li := range nvmeLayouts {
		l := &nvmeLayouts[li]
		if l.kind != d.kind {
			continue
		}
		for fi := range l.fields {
			f := &l.fields[fi]
			if f.t != FTString {
				continue
			}
			for i := 0; ; i++ {
				b, ok := d.at(l, f, i)
				if !ok {
					break
				}
				b = nvmeCString(b)
				if _, ok := st.strs[string(b)]; ok {
					continue
				}
				st.strs[string(b)] = string(b)
			}
		}
	}
}

// nvmeDataFields are the fields of every structure's table.
func nvmeDataFields(N func(*Packet) *NVMePacket) []*Field {
	var out []*Field
	parents := map[string]bool{}
	for li := range nvmeLayouts {
		for _, f := range nvmeLayouts[li].fields {
			name := nvmeLayouts[li].prefix + f.name
			for k := len(name) - 1; k > 0; k-- {
				if name[k] == '.' {
					parents[name[:k]] = true
				}
			}
		}
	}
	for li := range nvmeLayouts {
		l := &nvmeLayouts[li]
		for fi := range l.fields {
			f := &l.fields[fi]
			get := func(p *Packet, i int, v *Value) bool {
				n := N(p)
				if n == nil || n.data.kind != l.kind {
					return false
				}
				b, ok := n.data.at(l, f, i)
				return ok && nvmeDFValue(f, b, n.strs, v)
			}
			fl := &Field{Name: l.prefix + f.name, Title: f.title, Type: f.t, Base: f.base,
				get: func(p *Packet, v *Value) bool { return get(p, 0, v) }}
			if f.t == FTNone {
				fl.Type, fl.none = FTProtocol, true
			}
			entries := l.stride != 0 || l.counted != nvmeCountFixed
			if entries {
				// The -V tree shows an entry's fields entry by entry, its
				// item first, each a table row (not a subtree of its own).
				fl.nth = get
				fl.shapeOf().row = nvmeRowBase + uint8(li)
			}
			if f.mask != 0 {
				withMask(fl, f.mask)
			}
			if parents[fl.Name] && f.t != FTNone && !entries {
				opens(fl)
			}
			out = append(out, fl)
		}
	}
	return out
}

// nvmeRowBase numbers the -V tree's table rows of the structures' entries
// (Field.row), one per layout, clear of the other protocols' rows.
const nvmeRowBase = 100

// The fields of the capsules' own bytes that the command decoders leave to
// tables (NVMe-oF 1.1 Figures 20, 21; NVMe Base 1.4 §5.21): a Connect's
// reserved bytes and attributes, its data's reserved areas, Set Features'
// dwords by feature, and the Number of Queues result of its completion.
var (
	nvmeConnectSQE = []nvmeDF{
		{"rsvd1", "Reserved", 5, 19, FTBytes, BaseNone, 0},
		{"sgl1", "SGL1", 24, 16, FTNone, BaseNone, 0},
		{"cattr.pc", "Priority Class", 46, 1, FTUint8, BaseHex, 0x3},
		{"cattr.dfc", "Disable SQ Flow Control", 46, 1, FTUint8, BaseHex, 0x4},
		{"cattr.dioq", "Support Deletion of IO Queues", 46, 1, FTUint8, BaseHex, 0x8},
		{"cattr.rsvd", "Reserved", 46, 1, FTUint8, BaseHex, 0xf0},
		{"rsvd2", "Reserved", 47, 1, FTBytes, BaseNone, 0},
		{"rsvd3", "Reserved", 52, 12, FTBytes, BaseNone, 0},
	}
	nvmeConnectData = []nvmeDF{
		{"rsvd0", "Reserved", 18, 238, FTBytes, BaseNone, 0},
		{"rsvd1", "Reserved", 768, 256, FTBytes, BaseNone, 0},
	}
	nvmeSetFeaturesSQE = []nvmeDF{
		{"set_features.dword10", "DWORD 10", 40, 4, FTUint32, BaseHex, 0},
		{"set_features.dword10.fid", "Feature Identifier", 40, 4, FTUint32, BaseHex, 0xff},
		{"set_features.dword10.rsvd", "Reserved", 40, 4, FTUint32, BaseHex, 0x7fffff00},
		{"set_features.dword10.sv", "Save", 40, 4, FTUint32, BaseHex, 0x80000000},
		{"set_features.dword14", "DWORD 14", 56, 4, FTUint32, BaseHex, 0},
		{"set_features.dword14.uuid", "UUID Index", 56, 4, FTUint32, BaseHex, 0x7f},
		{"set_features.dword14.rsvd", "Reserved", 56, 4, FTUint32, BaseHex, 0xffffff80},
	}
	nvmeSetFeaturesNQResult = []nvmeDF{
		{"dword0.set_features.nq", "DWORD0: Set Feature Number of Queues Result", 0, 4, FTUint32, BaseHex, 0},
		{"dword0.set_features.nq.nsqa", "Number of IO Submission Queues Allocated", 0, 4, FTUint32, BaseDec, 0xffff},
		{"dword0.set_features.ncqa", "Number of IO Completion Queues Allocated", 0, 4, FTUint32, BaseDec, 0xffff0000},
	}
)

// nvmeSetFeatures are Set Features' CDW11 (and, for three features, CDW12)
// by feature identifier (NVMe Base 1.4 §5.21.1), as tshark 4.0 names them
// under nvme.cmd.set_features.; the spec's bits where tshark registers
// others (Interrupt Vector Configuration's IV and CD, Host Controlled
// Thermal Management's TMT1 and TMT2, Power Management's and Reservation
// Notification Mask's reserved bits).
var nvmeSetFeatures = []struct {
	fid  layers.NVMeFeature
	rows []nvmeDF
}{
	{0x01, []nvmeDF{ // arb
		{"dword11.arb", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.arb.ab", "Arbitration Burst", 44, 4, FTUint32, BaseHex, 0x7},
		{"dword11.arb.lpw", "Low Priority Weight", 44, 4, FTUint32, BaseHex, 0xff00},
		{"dword11.arb.mpw", "Medium Priority Weight", 44, 4, FTUint32, BaseHex, 0xff0000},
		{"dword11.arb.hpw", "High Priority Weight", 44, 4, FTUint32, BaseHex, 0xff000000},
	}},
	{0x02, []nvmeDF{ // pm
		{"dword11.pm", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.pm.ps", "Power State", 44, 4, FTUint32, BaseHex, 0x1f},
		{"dword11.pm.wh", "Work Hint", 44, 4, FTUint32, BaseHex, 0xe0},
		{"dword11.pm.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xffffff00},
	}},
	{0x03, []nvmeDF{ // lbart
		{"dword11.lbart", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.lbart.lbarn", "Number of LBA Ranges", 44, 4, FTUint32, BaseHex, 0x3f},
		{"dword11.lbart.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xffffffc0},
	}},
	{0x04, []nvmeDF{ // tt
		{"dword11.tt", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.tt.tmpth", "Temperature Threshold", 44, 4, FTUint32, BaseHex, 0xffff},
		{"dword11.tt.tmpsel", "Threshold Temperature Select", 44, 4, FTUint32, BaseHex, 0xf0000},
		{"dword11.tt.thpsel", "Threshold Type Select", 44, 4, FTUint32, BaseHex, 0x300000},
		{"dword11.tt.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xc00000},
	}},
	{0x05, []nvmeDF{ // erec
		{"dword11.erec", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.erec.tler", "Time Limited Error Recovery (100 ms units)", 44, 4, FTUint32, BaseHex, 0xffff},
		{"dword11.erec.dulbe", "Deallocated or Unwritten Logical Block Error Enable", 44, 4, FTBool, BaseNone, 0x10000},
		{"dword11.erec.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xfe0000},
	}},
	{0x06, []nvmeDF{ // vwce
		{"dword11.vwce", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.vwce.wce", "Volatile Write Cache Enable", 44, 4, FTBool, BaseNone, 0x1},
		{"dword11.vwce.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x07, []nvmeDF{ // nq
		{"dword11.nq", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.nq.nsqr", "Number of IO Submission Queues Requested", 44, 4, FTUint32, BaseDec, 0xffff},
		{"dword11.nq.ncqr", "Number of IO Completion Queues Requested", 44, 4, FTUint32, BaseDec, 0xffff0000},
	}},
	{0x08, []nvmeDF{ // irqc
		{"dword11.irqc", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.irqc.thr", "Aggregation Threshold", 44, 4, FTUint32, BaseHex, 0xffff},
		{"dword11.irqc.time", "Aggregation Time (100 us units)", 44, 4, FTUint32, BaseHex, 0xffff0000},
	}},
	{0x09, []nvmeDF{ // irqv
		{"dword11.irqv", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.irqv.iv", "IRQ Vector", 44, 4, FTUint32, BaseHex, 0xffff},
		{"dword11.irqv.cd", "Coalescing Disable", 44, 4, FTBool, BaseNone, 0x10000},
		{"dword11.irqv.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xfffe0000},
	}},
	{0x0a, []nvmeDF{ // wan
		{"dword11.wan", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.wan.dn", "Disable Normal", 44, 4, FTBool, BaseNone, 0x1},
		{"dword11.wan.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x0b, []nvmeDF{ // aec
		{"dword11.aec", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.aec.smart", "SMART and Health Critical Warnings Bitmask", 44, 4, FTUint32, BaseHex, 0xff},
		{"dword11.aec.ns", "Namespace Attribute Notices", 44, 4, FTBool, BaseNone, 0x100},
		{"dword11.aec.fwa", "Firmware Activation Notices", 44, 4, FTBool, BaseNone, 0x200},
		{"dword11.aec.tel", "Telemetry Log Notices", 44, 4, FTBool, BaseNone, 0x400},
		{"dword11.aec.ana", "ANA Change Notices", 44, 4, FTBool, BaseNone, 0x800},
		{"dword11.aec.plat", "Predictable Latency Event Aggregate Log Change Notices", 44, 4, FTBool, BaseNone, 0x1000},
		{"dword11.aec.lba", "LBA Status Information Notices", 44, 4, FTBool, BaseNone, 0x2000},
		{"dword11.aec.eg", "Endurance Group Event Aggregate Log Change Notices", 44, 4, FTBool, BaseNone, 0x4000},
		{"dword11.aec.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0x7fff8000},
		{"dword11.aec.disc", "Discovery Log Page Change Notification", 44, 4, FTBool, BaseNone, 0x80000000},
	}},
	{0x0c, []nvmeDF{ // apst
		{"dword11.apst", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.apst.apste", "Autonomous Power State Transition Enable", 44, 4, FTBool, BaseNone, 0x1},
		{"dword11.apst.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x0f, []nvmeDF{ // kat
		{"dword11.kat", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.kat.kato", "Keep Alive Timeout", 44, 4, FTUint32, BaseDec, 0},
	}},
	{0x10, []nvmeDF{ // hctm
		{"dword11.hctm", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.hctm.tmt2", "Thermal Management Temperature 2 (K)", 44, 4, FTUint32, BaseHex, 0xffff},
		{"dword11.hctm.tmt1", "Thermal Management Temperature 1 (K)", 44, 4, FTUint32, BaseHex, 0xffff0000},
	}},
	{0x11, []nvmeDF{ // nops
		{"dword11.nops", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.nops.noppme", "Non-Operational Power State Permissive Mode Enable", 44, 4, FTUint32, BaseHex, 0x1},
		{"dword11.nops.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x12, []nvmeDF{ // rrl
		{"dword11.rrl", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.rrl.nvmsetid", "NVM Set Identifier", 44, 4, FTUint32, BaseHex, 0xffff},
		{"dword11.rrl.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xffff0000},
		{"dword12.rrl", "DWORD12", 48, 4, FTUint32, BaseHex, 0},
		{"dword12.rrl.rrl", "Read Recovery Level", 48, 4, FTUint32, BaseHex, 0xf},
		{"dword12.rrl.rsvd", "Reserved", 48, 4, FTUint32, BaseHex, 0xfffffff0},
	}},
	{0x13, []nvmeDF{ // plmc
		{"dword11.plmc", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.plmc.nvmsetid", "NVM Set Identifier", 44, 4, FTUint32, BaseHex, 0xffff},
		{"dword11.plmc.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xffff0000},
		{"dword12.plmc", "DWORD12", 48, 4, FTUint32, BaseHex, 0},
		{"dword12.plmc.ple", "Predictable Latency Enable", 48, 4, FTBool, BaseNone, 0x1},
		{"dword12.plmc.rsvd", "Reserved", 48, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x14, []nvmeDF{ // plmw
		{"dword11.plmw", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.plmw.nvmsetid", "NVM Set Identifier", 44, 4, FTUint32, BaseHex, 0xffff},
		{"dword11.plmw.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xffff0000},
		{"dword12.plmw", "DWORD12", 48, 4, FTUint32, BaseHex, 0},
		{"dword12.plmw.ws", "Window Select", 48, 4, FTUint32, BaseHex, 0x7},
		{"dword12.plmw.rsvd", "Reserved", 48, 4, FTUint32, BaseHex, 0xfffffff8},
	}},
	{0x15, []nvmeDF{ // lbasi
		{"dword11.lbasi", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.lbasi.lsiri", "LBA Status Information Report Interval (100 ms)", 44, 4, FTUint32, BaseHex, 0xffff},
		{"dword11.lbasi.lsipi", "LBA Status Information Poll Interval (100 ms)", 44, 4, FTUint32, BaseHex, 0xffff0000},
	}},
	{0x17, []nvmeDF{ // san
		{"dword11.san", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.san.nodrm", "No-Deallocate Response Mode", 44, 4, FTBool, BaseNone, 0x1},
		{"dword11.san.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x18, []nvmeDF{ // eg
		{"dword11.eg", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.eg.endgid", "Endurance Group Identifier", 44, 4, FTUint32, BaseHex, 0xffff},
		{"dword11.eg.egcw", "Endurance Group Critical Warnings Bitmask", 44, 4, FTUint32, BaseHex, 0xff0000},
		{"dword11.eg.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xff000000},
	}},
	{0x80, []nvmeDF{ // swp
		{"dword11.swp", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.swp.pbslc", "Pre-boot Software Load Count", 44, 4, FTUint32, BaseHex, 0xff},
		{"dword11.swp.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xffffff00},
	}},
	{0x81, []nvmeDF{ // hid
		{"dword11.hid", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.hid.exhid", "Enable Extended Host Identifier", 44, 4, FTBool, BaseNone, 0x1},
		{"dword11.hid.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x82, []nvmeDF{ // rsrvn
		{"dword11.rsrvn", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.rsrvn.rsvd0", "Reserved", 44, 4, FTUint32, BaseHex, 0x1},
		{"dword11.rsrvn.regpre", "Mask Registration Preempted Notification", 44, 4, FTBool, BaseNone, 0x2},
		{"dword11.rsrvn.resrel", "Mask Reservation Released Notification", 44, 4, FTBool, BaseNone, 0x4},
		{"dword11.rsrvn.resrpe", "Mask Reservation Preempted Notification", 44, 4, FTBool, BaseNone, 0x8},
		{"dword11.rsrvn.rsvd1", "Reserved", 44, 4, FTUint32, BaseHex, 0xfffffff0},
	}},
	{0x83, []nvmeDF{ // rsrvp
		{"dword11.rsrvp", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.rsrvp.ptpl", "Persist Through Power Loss", 44, 4, FTBool, BaseNone, 0x1},
		{"dword11.rsrvp.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x84, []nvmeDF{ // nswp
		{"dword11.nswp", "DWORD11", 44, 4, FTUint32, BaseHex, 0},
		{"dword11.nswp.wps", "Write Protection State", 44, 4, FTUint32, BaseHex, 0x7},
		{"dword11.nswp.rsvd", "Reserved", 44, 4, FTUint32, BaseHex, 0xfffffff8},
	}},
}

// nvmeGetFeaturesResult are a Get Features completion's DW0 by the feature
// its command asked for (NVMe Base 1.4 §5.15.1), as tshark 4.0 names them
// under nvme.cqe.dword0.get_features., with the bits of nvmeSetFeatures.
var nvmeGetFeaturesResult = []struct {
	fid  layers.NVMeFeature
	rows []nvmeDF
}{
	{0x01, []nvmeDF{ // arb
		{"arb", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"arb.ab", "Arbitration Burst", 0, 4, FTUint32, BaseHex, 0x7},
		{"arb.lpw", "Low Priority Weight", 0, 4, FTUint32, BaseHex, 0xff00},
		{"arb.mpw", "Medium Priority Weight", 0, 4, FTUint32, BaseHex, 0xff0000},
		{"arb.hpw", "High Priority Weight", 0, 4, FTUint32, BaseHex, 0xff000000},
	}},
	{0x02, []nvmeDF{ // pm
		{"pm", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"pm.ps", "Power State", 0, 4, FTUint32, BaseHex, 0x1f},
		{"pm.wh", "Work Hint", 0, 4, FTUint32, BaseHex, 0xe0},
		{"pm.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xffffff00},
	}},
	{0x03, []nvmeDF{ // lbart
		{"lbart", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"lbart.lbarn", "Number of LBA Ranges", 0, 4, FTUint32, BaseHex, 0x3f},
		{"lbart.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xffffffc0},
	}},
	{0x04, []nvmeDF{ // tt
		{"tt", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"tt.tmpth", "Temperature Threshold", 0, 4, FTUint32, BaseHex, 0xffff},
		{"tt.tmpsel", "Threshold Temperature Select", 0, 4, FTUint32, BaseHex, 0xf0000},
		{"tt.thpsel", "Threshold Type Select", 0, 4, FTUint32, BaseHex, 0x300000},
		{"tt.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xc00000},
	}},
	{0x05, []nvmeDF{ // erec
		{"erec", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"erec.tler", "Time Limited Error Recovery (100 ms units)", 0, 4, FTUint32, BaseHex, 0xffff},
		{"erec.dulbe", "Deallocated or Unwritten Logical Block Error Enable", 0, 4, FTBool, BaseNone, 0x10000},
		{"erec.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xfe0000},
	}},
	{0x06, []nvmeDF{ // vwce
		{"vwce", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"vwce.wce", "Volatile Write Cache Enable", 0, 4, FTBool, BaseNone, 0x1},
		{"vwce.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x07, []nvmeDF{ // nq
		{"nq", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"nq.nsqa", "Number of IO Submission Queues Allocated", 0, 4, FTUint32, BaseDec, 0xffff},
		{"nq.ncqa", "Number of IO Completion Queues Allocated", 0, 4, FTUint32, BaseDec, 0xffff0000},
	}},
	{0x08, []nvmeDF{ // irqc
		{"irqc", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"irqc.thr", "Aggregation Threshold", 0, 4, FTUint32, BaseHex, 0xffff},
		{"irqc.time", "Aggregation Time (100 us units)", 0, 4, FTUint32, BaseHex, 0xffff0000},
	}},
	{0x09, []nvmeDF{ // irqv
		{"irqv", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"irqv.iv", "IRQ Vector", 0, 4, FTUint32, BaseHex, 0xffff},
		{"irqv.cd", "Coalescing Disable", 0, 4, FTBool, BaseNone, 0x10000},
		{"irqv.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xfffe0000},
	}},
	{0x0a, []nvmeDF{ // wan
		{"wan", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"wan.dn", "Disable Normal", 0, 4, FTBool, BaseNone, 0x1},
		{"wan.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x0b, []nvmeDF{ // aec
		{"aec", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"aec.smart", "SMART and Health Critical Warnings Bitmask", 0, 4, FTUint32, BaseHex, 0xff},
		{"aec.ns", "Namespace Attribute Notices", 0, 4, FTBool, BaseNone, 0x100},
		{"aec.fwa", "Firmware Activation Notices", 0, 4, FTBool, BaseNone, 0x200},
		{"aec.tel", "Telemetry Log Notices", 0, 4, FTBool, BaseNone, 0x400},
		{"aec.ana", "ANA Change Notices", 0, 4, FTBool, BaseNone, 0x800},
		{"aec.plat", "Predictable Latency Event Aggregate Log Change Notices", 0, 4, FTBool, BaseNone, 0x1000},
		{"aec.lba", "LBA Status Information Notices", 0, 4, FTBool, BaseNone, 0x2000},
		{"aec.eg", "Endurance Group Event Aggregate Log Change Notices", 0, 4, FTBool, BaseNone, 0x4000},
		{"aec.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0x7fff8000},
		{"aec.disc", "Discovery Log Page Change Notification", 0, 4, FTBool, BaseNone, 0x80000000},
	}},
	{0x0c, []nvmeDF{ // apst
		{"apst", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"apst.apste", "Autonomous Power State Transition Enable", 0, 4, FTBool, BaseNone, 0x1},
		{"apst.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x0f, []nvmeDF{ // kat
		{"kat", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"kat.kato", "Keep Alive Timeout", 0, 4, FTUint32, BaseDec, 0},
	}},
	{0x10, []nvmeDF{ // hctm
		{"hctm", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"hctm.tmt2", "Thermal Management Temperature 2 (K)", 0, 4, FTUint32, BaseHex, 0xffff},
		{"hctm.tmt1", "Thermal Management Temperature 1 (K)", 0, 4, FTUint32, BaseHex, 0xffff0000},
	}},
	{0x11, []nvmeDF{ // nops
		{"nops", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"nops.noppme", "Non-Operational Power State Permissive Mode Enable", 0, 4, FTUint32, BaseHex, 0x1},
		{"nops.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x15, []nvmeDF{ // lbasi
		{"lbasi", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"lbasi.lsiri", "LBA Status Information Report Interval (100 ms)", 0, 4, FTUint32, BaseHex, 0xffff},
		{"lbasi.lsipi", "LBA Status Information Poll Interval (100 ms)", 0, 4, FTUint32, BaseHex, 0xffff0000},
	}},
	{0x17, []nvmeDF{ // san
		{"san", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"san.nodrm", "No-Deallocate Response Mode", 0, 4, FTBool, BaseNone, 0x1},
		{"san.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x18, []nvmeDF{ // eg
		{"eg", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"eg.endgid", "Endurance Group Identifier", 0, 4, FTUint32, BaseHex, 0xffff},
		{"eg.egcw", "Endurance Group Critical Warnings Bitmask", 0, 4, FTUint32, BaseHex, 0xff0000},
		{"eg.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xff000000},
	}},
	{0x80, []nvmeDF{ // swp
		{"swp", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"swp.pbslc", "Pre-boot Software Load Count", 0, 4, FTUint32, BaseHex, 0xff},
		{"swp.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xffffff00},
	}},
	{0x81, []nvmeDF{ // hid
		{"hid", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"hid.exhid", "Enable Extended Host Identifier", 0, 4, FTBool, BaseNone, 0x1},
		{"hid.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x82, []nvmeDF{ // rsrvn
		{"rsrvn", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"rsrvn.rsvd0", "Reserved", 0, 4, FTUint32, BaseHex, 0x1},
		{"rsrvn.regpre", "Mask Registration Preempted Notification", 0, 4, FTBool, BaseNone, 0x2},
		{"rsrvn.resrel", "Mask Reservation Released Notification", 0, 4, FTBool, BaseNone, 0x4},
		{"rsrvn.resrpe", "Mask Reservation Preempted Notification", 0, 4, FTBool, BaseNone, 0x8},
		{"rsrvn.rsvd1", "Reserved", 0, 4, FTUint32, BaseHex, 0xfffffff0},
	}},
	{0x83, []nvmeDF{ // rsrvp
		{"rsrvp", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"rsrvp.ptpl", "Persist Through Power Loss", 0, 4, FTBool, BaseNone, 0x1},
		{"rsrvp.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xfffffffe},
	}},
	{0x84, []nvmeDF{ // nswp
		{"nswp", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
		{"nswp.wps", "Write Protection State", 0, 4, FTUint32, BaseHex, 0x7},
		{"nswp.rsvd", "Reserved", 0, 4, FTUint32, BaseHex, 0xfffffff8},
	}},
}

// nvmeAsyncEventResult is an Asynchronous Event Request completion's DW0
// (NVMe Base 1.4 Figure 146).
var nvmeAsyncEventResult = []nvmeDF{
	{"aev", "DWORD0", 0, 4, FTUint32, BaseHex, 0},
	{"aev.aet", "Asynchronous Event Type", 0, 4, FTUint32, BaseHex, 0x7},
	{"aev.rsvd0", "Reserved", 0, 4, FTUint32, BaseHex, 0xf8},
	{"aev.aei", "Asynchronous Event Information", 0, 4, FTUint32, BaseHex, 0xff00},
	{"aev.lpi", "Log Page Identifier", 0, 4, FTUint32, BaseDec, 0xff0000},
	{"aev.rsvd1", "Reserved", 0, 4, FTUint32, BaseHex, 0xff000000},
}

// nvmeSetFeaturesDword12 reports a feature whose CDW12 nvmeSetFeatures
// shows, which the plain nvme.cmd.dword12 then does not.
func nvmeSetFeaturesDword12(fid layers.NVMeFeature) bool {
	for _, f := range nvmeSetFeatures {
		if f.fid == fid {
			for _, r := range f.rows {
				if r.off == 48 {
					return true
				}
			}
		}
	}
	return false
}

// nvmeCapsuleFields are the fields of table rows read from the bytes src
// gives (an SQE, a CQE, Connect data), on the packets has selects.
func nvmeCapsuleFields(N func(*Packet) *NVMePacket, prefix string, rows []nvmeDF, has func(*Packet) bool, src func(*NVMePacket) []byte) []*Field {
	out := make([]*Field, 0, len(rows))
	for i := range rows {
		f := &rows[i]
		fl := &Field{Name: prefix + f.name, Title: f.title, Type: f.t, Base: f.base, get: func(p *Packet, v *Value) bool {
			if !has(p) {
				return false
			}
			b := src(N(p))
			if f.off+f.size > len(b) {
				return false
			}
			return nvmeDFValue(f, b[f.off:f.off+f.size], nil, v)
		}}
		if f.t == FTNone {
			fl.Type, fl.none = FTProtocol, true
		}
		if f.mask != 0 {
			withMask(fl, f.mask)
		} else if i+1 < len(rows) && under(prefix+rows[i+1].name, fl.Name) {
			opens(fl)
		}
		out = append(out, fl)
	}
	return out
}
