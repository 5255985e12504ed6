package output

import (
	"strconv"

	"github.com/ibwire/ibwire/layers"
)

// AppendMACControl appends ibdump's summary of a MAC Control frame: "PFC
// pause p3=65535 p4=0 quanta" (the priorities the class-enable vector
// names, 0 meaning resume), "PAUSE 65535 quanta", or the opcode's name.
func AppendMACControl(buf []byte, m *layers.MACControl) []byte {
	switch {
	case m.Opcode == layers.MACControlPFC:
		buf = append(buf, "PFC pause"...)
		if !m.HasClassEnableVector() {
			return buf
		}
		named := false
		for prio := range layers.PFCPriorities {
			if !m.Enabled(prio) {
				continue
			}
			buf = append(buf, " p"...)
			buf = strconv.AppendInt(buf, int64(prio), 10)
			buf = append(buf, '=')
			if m.HasPauseTimeOf(prio) {
				buf = strconv.AppendUint(buf, uint64(m.PauseTimes[prio]), 10)
			} else {
				buf = append(buf, '?') // the frame was cut before it
			}
			named = true
		}
		if !named {
			return append(buf, " (no priority enabled)"...)
		}
		return append(buf, " quanta"...)
	case m.Opcode == layers.MACControlPause:
		buf = append(buf, "PAUSE"...)
		if m.HasPauseTime() {
			buf = append(buf, ' ')
			buf = strconv.AppendUint(buf, uint64(m.PauseTime), 10)
			buf = append(buf, " quanta"...)
		}
		return buf
	}
	buf = append(buf, "MAC Control "...)
	return append(buf, m.Opcode.String()...)
}

// appendMACControlInfo appends tshark's Info column of a MAC Control frame
// (packet-maccontrol.c).
func appendMACControlInfo(buf []byte, m *layers.MACControl) []byte {
	name, ok := m.Opcode.Name()
	if !ok {
		return append(buf, "Unknown"...)
	}
	buf = append(buf, name...)
	if m.Opcode == layers.MACControlPause && m.HasPauseTime() {
		buf = append(buf, ": pause_time: "...)
		buf = strconv.AppendUint(buf, uint64(m.PauseTime), 10)
		buf = append(buf, " quanta"...)
	}
	return buf
}
