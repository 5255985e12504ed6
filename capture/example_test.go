package capture_test

import (
	"bytes"
	"fmt"
	"github.com/ibwire/ibwire/layers"
	"io"

	"github.com/ibwire/ibwire/capture"
)

// Write a pcapng with two link types, then read it back as ibdump -r does.
func ExampleNewReader() {
	var file bytes.Buffer
	w, _ := capture.NewWriter(&file, capture.FormatPcapNG, layers.LinkTypeEthernet, true)
	w.WritePacket(capture.Packet{Data: make([]byte, 60), LinkType: layers.LinkTypeEthernet})
	w.WritePacket(capture.Packet{Data: make([]byte, 30), LinkType: layers.LinkTypeInfiniBand})
	w.WritePacket(capture.Packet{Data: make([]byte, 62), LinkType: layers.LinkTypeEthernet})
	w.Close()

	r, err := capture.NewReader(&file, "example.pcapng")
	if err != nil {
		fmt.Println(err)
		return
	}
	var p capture.Packet // reused: NextInto allocates nothing once it has grown
	for {
		if err := r.NextInto(&p); err == io.EOF {
			break
		} else if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%d %v if%d %d bytes\n", p.Number, p.LinkType, p.Interface, len(p.Data))
	}
	// Output:
	// 1 ETHERNET if0 60 bytes
	// 2 INFINIBAND if1 30 bytes
	// 3 ETHERNET if0 62 bytes
}

// Filter Ethernet frames offline with the program a live capture attaches.
func ExampleMatchRoCE() {
	roceV1 := append(make([]byte, 12), 0x89, 0x15)
	arp := append(make([]byte, 12), 0x08, 0x06)
	fmt.Println(capture.MatchRoCE(roceV1), capture.MatchRoCE(arp))
	// Output: true false
}
