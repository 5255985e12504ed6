package main

import (
	"github.com/ibwire/ibwire/craft"
)

// Upper-layer protocol conversations crafted by package craft: an NVMe-oF
// association and an NFSv3-over-RDMA exchange, each with its CM set-up, so
// that tshark finds the protocol by the service ID's port as ibdump does.

func ulpSpecs() []spec {
	return []spec{
		{"nvme_rdma_craft", "NVMe-oF, MTU 2048: admin and I/O queue CM to port 4420, in-capsule Connects, Identify, 1 KiB Read (RDMA WRITE) and Write (RDMA READ), in-capsule Write, an LBA Out of Range error", nvmeCraft},
		{"nfs_rdma_craft", "NFSv3 over RPC-over-RDMA, MTU 512: CM to port 20049, GETATTR, LOOKUP NFS3ERR_NOENT, READ with a write chunk, WRITE with a read chunk, READDIR answered RDMA_NOMSG by a reply chunk", nfsCraft},
	}
}

func nvmeCraft() (craft.Encap, craft.Trace, []string, error) {
	tr, err := craft.NVMeExample(craft.Config{})
	return craft.RoCEv2, tr, nil, err
}

func nfsCraft() (craft.Encap, craft.Trace, []string, error) {
	tr, err := craft.RPCRDMAExample(craft.Config{})
	return craft.RoCEv2, tr, nil, err
}
