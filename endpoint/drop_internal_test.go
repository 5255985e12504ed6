package endpoint

import (
	"net/netip"
	"testing"
)

// Reporting a drop allocates nothing: a flood of bad packets costs the
// handler's own work and no garbage.
func TestDropHandlerAllocs(t *testing.T) {
	var last Drop
	d := &Device{onDrop: func(dr Drop) { last = dr }}
	p := &rxPacket{n: 40, src: netip.MustParseAddrPort("192.0.2.1:49152"), dst: netip.MustParseAddrPort("192.0.2.2:4791")}
	p.buf[0], p.buf[5], p.buf[6], p.buf[7] = 0x04, 0x00, 0x01, 0x23
	allocs := testing.AllocsPerRun(1000, func() {
		d.dropped(p, Drop{Reason: DropUnknownQPN})
		d.dropped(p, Drop{Reason: DropResponder, Detail: "no receive WR posted"})
	})
	if allocs != 0 {
		t.Errorf("dropped allocates %v times per call pair", allocs)
	}
	if last.QPN != 0x123 || last.Src != p.src || last.Detail == "" {
		t.Errorf("last drop %+v", last)
	}
	// Without a handler nothing is looked at.
	d.onDrop = nil
	d.dropped(nil, Drop{Reason: DropBadICRC})
}
