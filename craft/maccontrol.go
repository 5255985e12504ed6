package craft

import (
	"fmt"
	"net"
	"time"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/layers"
)

// MACControlFrame builds an Ethernet MAC Control frame from src to the
// reserved address 01:80:c2:00:00:01 at time t, padded to the 60-byte
// minimum: a PAUSE or PFC frame, as a NIC or switch port sends it to stop
// its link partner. It is the one non-RoCE frame craft writes.
func MACControlFrame(src net.HardwareAddr, m layers.MACControl, t time.Time) (Frame, error) {
	buf := gopacket.NewSerializeBuffer()
	eth := &gplayers.Ethernet{SrcMAC: src, DstMAC: layers.MACControlDst[:], EthernetType: layers.EthernetTypeMACControl}
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, &m); err != nil {
		return Frame{}, fmt.Errorf("craft: MAC Control frame: %w", err)
	}
	return Frame{Data: buf.Bytes(), Time: t, LinkType: layers.LinkTypeEthernet,
		Info: FrameInfo{Note: macControlNote(&m), Raw: true}}, nil
}

// PFCFrame builds a Priority Flow Control frame from src at t asking for
// quanta[prio] for each priority prio in the map (0 resumes it); the
// class-enable vector names exactly those priorities.
func PFCFrame(src net.HardwareAddr, quanta map[int]uint16, t time.Time) (Frame, error) {
	m := layers.MACControl{Opcode: layers.MACControlPFC}
	for prio, q := range quanta {
		if prio < 0 || prio >= layers.PFCPriorities {
			return Frame{}, fmt.Errorf("craft: PFC priority %d out of 0-7", prio)
		}
		m.ClassEnableVector |= 1 << prio
		m.PauseTimes[prio] = q
	}
	return MACControlFrame(src, m, t)
}

// PauseFrame builds an 802.3x PAUSE frame from src at t for quanta (0 resumes).
func PauseFrame(src net.HardwareAddr, quanta uint16, t time.Time) (Frame, error) {
	return MACControlFrame(src, layers.MACControl{Opcode: layers.MACControlPause, PauseTime: quanta}, t)
}

func macControlNote(m *layers.MACControl) string {
	switch m.Opcode {
	case layers.MACControlPause:
		return fmt.Sprintf("PAUSE %d quanta", m.PauseTime)
	case layers.MACControlPFC:
		s := "PFC"
		for prio := range layers.PFCPriorities {
			if m.Enabled(prio) {
				s += fmt.Sprintf(" p%d=%d", prio, m.PauseTimes[prio])
			}
		}
		return s
	}
	return "MAC Control " + m.Opcode.String()
}
