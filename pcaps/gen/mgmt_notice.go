package main

import (
	"fmt"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// trapsInCorpus are the trap numbers whose DataDetails tshark 4.0 dissects,
// each sent once as a SubnTrap.
var trapsInCorpus = []layers.TrapNumber{
	layers.TrapGIDInService, layers.TrapGIDOutOfService, layers.TrapMcastGroupCreated, layers.TrapMcastGroupDeleted,
	layers.TrapPathsInvalid, layers.TrapPathsRecomputed, layers.TrapLinkStateChange, layers.TrapLinkIntegrity,
	layers.TrapBufferOverrun, layers.TrapFlowControlWatchdog, layers.TrapLocalChanges, layers.TrapSystemImageGUIDChange,
	layers.TrapBadMKey, layers.TrapBadPKey, layers.TrapBadQKey, layers.TrapBadPKeyAtSwitch,
}

// mgmtNotice is native IB trap and ClassPortInfo traffic: a LID-routed
// SubnTrap(Notice) to the SM's QP0 for every trap number tshark details
// (64-69, 128-131, 144, 145, 256-259), the SM's SubnTrapRepress of the
// last, an SA SubnAdmReport(Notice) forwarding trap 64 to a subscriber and
// its SubnAdmReportResp, and a Get and GetResp of ClassPortInfo in both
// classes tshark dissects it in, PerfMgt and SA. Each Notice's
// DataDetails, and each ClassPortInfo, is a byte sequence starting at a
// different value, so a field read at the wrong offset shows.
func mgmtNotice() (craft.Encap, craft.Trace, []string, error) {
	mt := newMADTrace()
	send, seq := mt.send, seqBytes
	// A generic notice from the SMA of LID 2 (a switch: producer type 2),
	// its DataDetails a sequence that starts anew for each trap.
	notice := func(trap layers.TrapNumber, i int) []byte {
		typ := uint8(4) // informational
		switch {
		case trap >= 128 && trap <= 131:
			typ = 1 // urgent
		case trap >= 256:
			typ = 2 // security
		}
		n := layers.Notice{IsGeneric: true, Type: typ, ProducerTypeVendorID: 2, TrapNumberDeviceID: uint16(trap),
			IssuerLID: 2, NoticeToggle: i%2 == 1, NoticeCount: uint16(i + 1), DataDetails: seq(layers.NoticeDataDetailsLength, byte(0x10+3*i))}
		d := make([]byte, layers.NoticeLength)
		if mt.err == nil {
			mt.err = n.MarshalTo(d)
		}
		return d
	}
	trapMAD := func(method layers.MADMethod, data []byte, tid uint64) *layers.MAD {
		m := layers.NewMAD(layers.MgmtClassSubnLID, method, uint16(layers.SMPAttrNotice), tid)
		m.SMP.MKey = 0x0102030405060708
		m.SMP.Data = data
		return m
	}
	for i, trap := range trapsInCorpus {
		send(craft.Responder, 0, trapMAD(layers.MethodTrap, notice(trap, i), 0x5000+uint64(i)), "SubnTrap(Notice) trap "+trap.String())
	}
	last := len(trapsInCorpus) - 1
	send(craft.Requester, 0, trapMAD(layers.MethodTrapRepress, notice(trapsInCorpus[last], last), 0x5000+uint64(last)),
		"SubnTrapRepress(Notice): the SM has the last trap")
	for i, from := range []craft.Side{craft.Requester, craft.Responder} {
		method := []layers.MADMethod{layers.MethodReport, layers.MethodReportResp}[i]
		m := layers.NewMAD(layers.MgmtClassSubnAdm, method, uint16(layers.SAAttrNotice), 0x6000)
		m.SA.Data = make([]byte, layers.SADataLength)
		copy(m.SA.Data, notice(layers.TrapGIDInService, len(trapsInCorpus)))
		send(from, 1, m, "SA "+[]string{"SubnAdmReport", "SubnAdmReportResp"}[i]+"(Notice) trap 64")
	}
	for i, from := range []craft.Side{craft.Requester, craft.Responder} {
		method := []layers.MADMethod{layers.MethodGet, layers.MethodGetResp}[i]
		m := layers.NewMAD(layers.MgmtClassPerf, method, uint16(layers.PerfAttrClassPortInfo), 0x7000)
		m.PerfMgt.Data = make([]byte, layers.PerfMgtDataLength)
		if i == 1 {
			copy(m.PerfMgt.Data, seq(layers.ClassPortInfoLength, 0x21))
		}
		send(from, 1, m, "PerfMgt "+[]string{"PerfGet", "PerfGetResp"}[i]+"(ClassPortInfo)")
	}
	for i, from := range []craft.Side{craft.Requester, craft.Responder} {
		method := []layers.MADMethod{layers.MethodGet, layers.MethodGetResp}[i]
		m := layers.NewMAD(layers.MgmtClassSubnAdm, method, uint16(layers.SAAttrClassPortInfo), 0x7001)
		m.SA.Data = make([]byte, layers.SADataLength)
		if i == 1 {
			copy(m.SA.Data, seq(layers.ClassPortInfoLength, 0x71))
		}
		send(from, 1, m, "SA "+[]string{"SubnAdmGet", "SubnAdmGetResp"}[i]+"(ClassPortInfo)")
	}
	// Vendor notices (IsGeneric 0: a VendorID and a DeviceID where a
	// generic one has its producer type and trap number), after the rest
	// so that the frames before keep their numbers: one whose DeviceID is
	// no trap number, one whose DeviceID is a trap number's (128), which
	// tshark 4.0 reads as that trap whatever IsGeneric says.
	for i, dev := range []uint16{0x1003, uint16(layers.TrapLinkStateChange)} {
		n := layers.Notice{IsGeneric: false, Type: 4, ProducerTypeVendorID: 0x0002c9, TrapNumberDeviceID: dev,
			IssuerLID: 2, NoticeCount: uint16(0x30 + i), DataDetails: seq(layers.NoticeDataDetailsLength, byte(0xa0+0x10*i))}
		d := make([]byte, layers.NoticeLength)
		if mt.err == nil {
			mt.err = n.MarshalTo(d)
		}
		send(craft.Responder, 0, trapMAD(layers.MethodTrap, d, 0x5100+uint64(i)), "SubnTrap(Notice) vendor 0x0002c9 device "+hex16(dev))
	}
	return mt.result()
}

func hex16(v uint16) string { return fmt.Sprintf("0x%04x", v) }
