package decode

import (
	"encoding/binary"

	"github.com/ibwire/ibwire/layers"
)

// The private data NVMe-oF's RDMA transport puts in the CM messages that
// set up a queue (NVMe-oF 1.1 RDMA binding: RDMA_CM_REQUEST,
// RDMA_CM_ACCEPT, RDMA_CM_REJECT), with Wireshark 4.0's nvme-rdma.cm.*
// names: a REQ names the queue and the host's queue sizes, a REP the
// controller's receive queue size, a REJ its status. The analysis marks the
// messages of port 4420's connections (InfoNVMeCM); little-endian, as NVMe
// is.

// nvmeCMData returns the NVMe-oF private data of a CM message of attribute
// attr, at least n bytes of it.
func nvmeCMData(p *Packet, attr layers.CMAttribute, n int) ([]byte, bool) {
	if p.Analysis.Info&InfoNVMeCM == 0 || !p.HasMAD() || p.Headers.MAD.MgmtClass != layers.MgmtClassCM {
		return nil, false
	}
	cm := &p.Headers.MAD.CM
	if cm.AttributeID != attr {
		return nil, false
	}
	var d []byte
	switch attr {
	case layers.CMAttrREQ:
		d = cm.REQ.PrivateData
		if cm.REQ.IPCM.Valid {
			d = cm.REQ.IPCM.ConsumerPrivateData
		}
	case layers.CMAttrREP:
		d = cm.REP.PrivateData
	case layers.CMAttrREJ:
		d = cm.REJ.PrivateData
	}
	return d, len(d) >= n
}

func nvmeCMFields() []*Field {
	le16 := func(attr layers.CMAttribute, off int) func(p *Packet) (uint64, bool) {
		return func(p *Packet) (uint64, bool) {
			d, ok := nvmeCMData(p, attr, off+2)
			if !ok {
				return 0, false
			}
			return uint64(binary.LittleEndian.Uint16(d[off:])), true
		}
	}
	raw := func(name string, attr layers.CMAttribute, from, to int) *Field {
		return bytesField(name, "Reserved", FTBytes, func(p *Packet) ([]byte, bool) {
			d, ok := nvmeCMData(p, attr, to)
			if !ok {
				return nil, false
			}
			return d[from:to], true
		})
	}
	req, rep, rej := layers.CMAttrREQ, layers.CMAttrREP, layers.CMAttrREJ
	return []*Field{
		uintField("nvme-rdma.cm.req.recfmt", "Record Format", FTUint16, BaseDec, le16(req, 0)),
		uintField("nvme-rdma.cm.req.qid", "Queue Id", FTUint16, BaseDec, le16(req, 2)),
		uintField("nvme-rdma.cm.req.hrqsize", "RDMA QP Host Receive Queue Size", FTUint16, BaseDec, le16(req, 4)),
		uintField("nvme-rdma.cm.req.hsqsize", "RDMA QP Host Send Queue Size", FTUint16, BaseDec, le16(req, 6)),
		uintField("nvme-rdma.cm.req.cntlid", "Controller ID", FTUint16, BaseHex, le16(req, 8)),
		raw("nvme-rdma.cm.req.reserved", req, 10, 32),
		uintField("nvme-rdma.cm.rsp.recfmt", "Record Format", FTUint16, BaseDec, le16(rep, 0)),
		uintField("nvme-rdma.cm.rsp.crqsize", "RDMA QP Controller Receive Queue Size", FTUint16, BaseDec, le16(rep, 2)),
		raw("nvme-rdma.cm.rsp.reserved", rep, 4, 32),
		uintField("nvme-rdma.cm.rej.recfmt", "Record Format", FTUint16, BaseDec, le16(rej, 0)),
		uintField("nvme-rdma.cm.rej.status", "Status", FTUint16, BaseHex, le16(rej, 2)),
	}
}
