package main

import (
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// saRecordMADs is native IB subnet administration traffic to QP1 carrying
// every SA record tshark 4.0 dissects: for each attribute a request
// (SubnAdmGet, GetTable, Set or Delete) and its response, then
// SubnAdmGetTableResps holding several records of one attribute, AttributeOffset
// apart. Each MAD's 200 data bytes are a byte sequence starting at a value
// of its own, so a field read at the wrong offset shows; only the bytes
// that must say something are set: NodeDescription and ServiceName
// strings, and the MultiPathRecord's GID counts.
func saRecordMADs() (craft.Encap, craft.Trace, []string, error) {
	mt := newMADTrace()
	tid := uint64(0x5000)
	// Every SA MAD goes to the SA's QP1.
	send := func(from craft.Side, m *layers.MAD, note string) { mt.send(from, 1, m, note) }
	first := byte(0x10)
	data := func(a layers.SAAttribute) []byte {
		d := make([]byte, layers.SADataLength)
		for i := range d {
			d[i] = first + byte(i)
		}
		first += 0x1D // the next MAD's sequence starts elsewhere
		switch a {
		case layers.SAAttrNodeRecord: // NodeDescription after the RID and NodeInfo
			clear(d[44:108])
			copy(d[44:], "ibwire-sw02 NodeRecord")
		case layers.SAAttrServiceAssociationRecord:
			clear(d[16:80])
			copy(d[16:], "ibwire.example/service")
		case layers.SAAttrMultiPathRecord: // 3 SGIDs and 2 DGIDs
			d[15], d[16] = 3, 2
		}
		return d
	}
	mad := func(method layers.MADMethod, a layers.SAAttribute) *layers.MAD {
		tid++
		m := layers.NewMAD(layers.MgmtClassSubnAdm, method, uint16(a), tid)
		m.SA.SMKey, m.SA.ComponentMask = 0x0102030405060708, 0x3F
		m.SA.Data = data(a)
		return m
	}
	for _, c := range []struct {
		attr        layers.SAAttribute
		req, resp   layers.MADMethod
		reqN, respN string
	}{
		{layers.SAAttrNodeRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrPortInfoRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrSLtoVLMappingTableRecord, layers.MethodGetTable, layers.MethodGetResp, "SubnAdmGetTable", "SubnAdmGetResp"},
		{layers.SAAttrSwitchInfoRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrLinearFDBRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrRandomFDBRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrMulticastFDBRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrVLArbitrationTableRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrSMInfoRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrPKeyTableRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrGUIDInfoRecord, layers.MethodSet, layers.MethodGetResp, "SubnAdmSet", "SubnAdmGetResp"},
		{layers.SAAttrLinkSpeedWidthPairsTableRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrInformInfo, layers.MethodSet, layers.MethodGetResp, "SubnAdmSet", "SubnAdmGetResp"},
		{layers.SAAttrInformInfoRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrLinkRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrServiceRecord, layers.MethodSet, layers.MethodGetResp, "SubnAdmSet", "SubnAdmGetResp"},
		{layers.SAAttrServiceRecord, layers.MethodDelete, layers.MethodDeleteResp, "SubnAdmDelete", "SubnAdmDeleteResp"},
		{layers.SAAttrPathRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
		{layers.SAAttrMCMemberRecord, layers.MethodDelete, layers.MethodDeleteResp, "SubnAdmDelete", "SubnAdmDeleteResp"},
		{layers.SAAttrTraceRecord, layers.MethodGetTraceTbl, layers.MethodGetTableResp, "SubnAdmGetTraceTable", "SubnAdmGetTableResp"},
		{layers.SAAttrMultiPathRecord, layers.MethodGetMulti, layers.MethodGetMultiResp, "SubnAdmGetMulti", "SubnAdmGetMultiResp"},
		{layers.SAAttrServiceAssociationRecord, layers.MethodGet, layers.MethodGetResp, "SubnAdmGet", "SubnAdmGetResp"},
	} {
		name := "(" + c.attr.String() + ")"
		send(craft.Requester, mad(c.req, c.attr), "SA "+c.reqN+name)
		send(craft.Responder, mad(c.resp, c.attr), "SA "+c.respN+name)
	}
	// GetTable responses with several records, each a sequence of its own,
	// AttributeOffset (the record size rounded up to 8 bytes) apart.
	for _, c := range []struct {
		attr layers.SAAttribute
		n    int
	}{{layers.SAAttrPortInfoRecord, 2}, {layers.SAAttrSMInfoRecord, 3}, {layers.SAAttrLinkRecord, 4}} {
		m := mad(layers.MethodGetTableResp, c.attr)
		stride := (c.attr.RecordLength() + 7) / 8 * 8
		m.SA.AttributeOffset = uint16(stride / 8)
		for i := 1; i < c.n; i++ {
			copy(m.SA.Data[i*stride:], data(c.attr)[:c.attr.RecordLength()])
		}
		clear(m.SA.Data[c.n*stride:])
		send(craft.Responder, m, "SA SubnAdmGetTableResp("+c.attr.String()+"), "+string(rune('0'+c.n))+" records")
	}
	return mt.result()
}
