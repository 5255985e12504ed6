package craft_test

import (
	"fmt"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// An RDMA WRITE of three packets whose second packet is lost: the responder
// NAKs the gap and the requester goes back to the lost packet.
func Example() {
	c, err := craft.New(craft.Config{MTU: 256})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = c.Run([]craft.Op{{Kind: craft.OpWrite, Data: craft.Pattern(600, 0), VA: 0x1000, RKey: 7}},
		craft.Faults{Loss: craft.Loss{Packets: []int{2}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	tr := c.Trace()
	for i, f := range tr.Frames {
		fmt.Printf("%d %s %v\n", i+1, f.Time.Format("05.000000"), f.Info)
	}
	for _, f := range tr.Findings {
		fmt.Println(f)
	}
	// Output:
	// 1 00.000000 RC_RDMA_WRITE_FIRST psn 256: op 1 write, packet 1
	// 2 00.000002 RC_RDMA_WRITE_LAST psn 258: op 1 write, packet 3
	// 3 00.000005 RC_ACKNOWLEDGE psn 257: NAK PSN Sequence Error, MSN 0
	// 4 00.000008 RC_RDMA_WRITE_MIDDLE psn 257: op 1 write, packet 2
	// 5 00.000009 RC_RDMA_WRITE_LAST psn 258: op 1 write, packet 3
	// 6 00.000012 RC_ACKNOWLEDGE psn 258: ACK credits=unlimited, MSN 1
	// #2 psn_gap: 1 PSNs missing before PSN 258
	// #3 nak (ref #2): NAK PSN Sequence Error, PSN 257
	// #4 retransmission: PSN 257 again, after a NAK PSN sequence error; its first transmission was lost
	// #5 retransmission (ref #2): PSN 258 again, after a NAK PSN sequence error
}

// Any packet, right or wrong, from its field values.
func ExampleBuilder_Build() {
	b, err := craft.NewBuilder(craft.Config{Encap: craft.IBGRH})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := craft.Packet{BTH: layers.BTH{Opcode: 0x0A, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 0xFFFFFF,
		RETH: layers.RETH{VA: 0x2000, RKey: 0x99, DMALength: 5}}, Payload: []byte("hello")}
	f, err := b.Build(p, craft.DefaultStart)
	if err != nil {
		fmt.Println(err)
		return
	}
	dec := layers.NewParser(craft.IBGRH.FirstLayer(), layers.ParserOptions{})
	if err := dec.Decode(f.Data); err != nil {
		fmt.Println(err)
		return
	}
	icrc, _ := dec.CheckICRC()
	vcrc, _ := dec.CheckVCRC()
	fmt.Println(f.LinkType, dec.Decoded, dec.BTH.PadCount, icrc, vcrc)
	// Output:
	// INFINIBAND [LRH GRH BTH RETH Payload] 3 good good
}
