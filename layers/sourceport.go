package layers

// RoCEv2 puts no transport meaning in the UDP source port: senders use it as
// flow entropy for ECMP. Linux derives it from the flow label (IBTA Annex A17
// recommends a hash of the flow), and when the address vector carries no flow
// label, rxe makes one from the QP pair so both ends of a connection use the
// same port. Captures of rxe show exactly these ports, so crafting and the
// endpoint reproduce them from here.

// FlowLabelSourcePort is the UDP source port for a flow label
// (rdma_flow_label_to_udp_sport): 0xC000 with the flow label's low 14 bits
// XOR its high 6.
func FlowLabelSourcePort(flowLabel uint32) uint16 {
	fl := flowLabel & 0xFFFFF
	return uint16(fl&0x3FFF^fl>>14) | 0xC000
}

// QPPairFlowLabel is the flow label Linux computes for a connected QP pair
// whose address vector has none (rdma_calc_flow_label): the product of the
// two QPNs folded to 20 bits. It is symmetric, so both ends agree.
func QPPairFlowLabel(lqpn, rqpn uint32) uint32 {
	v := uint64(lqpn) * uint64(rqpn)
	v ^= v >> 20
	v ^= v >> 40
	return uint32(v) & 0xFFFFF
}

// RXESourcePort is the UDP source port Linux rxe uses for an RC or UC QP
// pair whose address vector has flow label 0.
func RXESourcePort(lqpn, rqpn uint32) uint16 {
	return FlowLabelSourcePort(QPPairFlowLabel(lqpn, rqpn))
}

// RXEUDSourcePort is the UDP source port Linux rxe gives UD QPs and QP1:
// 0xC000 plus a 14-bit hash of the QPN (hash_32 with the golden ratio).
func RXEUDSourcePort(qpn uint32) uint16 {
	return 0xC000 + uint16((qpn*0x61C88647)>>(32-14))&0x3FFF
}
