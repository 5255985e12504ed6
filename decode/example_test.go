package decode_test

import (
	"errors"
	"fmt"
	"io"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// Decode every frame of a capture, analyse them in order, and read the
// model: the connections with their counts, and the expert's findings
// grouped as ibdump -z expert shows them.
func ExampleAnalyzer() {
	r, err := capture.Open("../pcaps/rxe/write_bw_loss.pcap")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	dec := decode.NewDecoder(decode.Options{})
	a := decode.NewAnalyzer(decode.AnalyzerOptions{})
	var rec capture.Packet
	for {
		if err := r.NextInto(&rec); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			panic(err)
		}
		a.Analyze(dec.Decode(rec))
	}
	a.Finish()
	for _, c := range a.Conversations() {
		fmt.Printf("conv %d %v QPN %#x <-> %#x, paired by %v: %d messages, %d retransmissions, %d PSN gaps\n",
			c.ID, c.Service, c.QPNAB, c.QPNBA, c.PairedBy, c.Messages(), c.Dir[0].Retransmissions, c.Dir[0].PSNGaps)
	}
	for _, row := range a.Expert().Rows() {
		fmt.Printf("%-7v %-8s %-44s %d\n", row.Severity, row.Group, row.Summary, row.Count)
	}
	// Output:
	// conv 1 RC QPN 0x11 <-> 0x11, paired by oob: 200 messages, 1204 retransmissions, 12 PSN gaps
	// Warning Sequence PSN gap: packets lost before the capture point 12
	// Warning Sequence Local ACK timeout (implied): resent with no NAK 1
	// Warning Response NAK PSN Sequence Error                       13
	// Note    Sequence Retransmission                               1204
	// Chat    Sequence Out-of-band QP exchange (TCP)                1
}
