package main

import (
	"time"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// madTrace builds a native IB trace of management datagrams: each MAD a UD
// SEND ONLY to QP0 (Q_Key 0) or QP1 (the GSI Q_Key), each side with its own
// PSNs, 50 µs apart. The first error stops it and is kept for the end.
type madTrace struct {
	b      *craft.Builder
	udSend layers.Opcode
	t      time.Time
	psn    [2]layers.PSN
	tr     craft.Trace
	err    error
}

func newMADTrace() *madTrace {
	m := &madTrace{t: craft.DefaultStart}
	m.b, m.err = craft.NewBuilder(craft.Config{Encap: craft.IB, Service: layers.ServiceUD})
	m.udSend, _ = layers.OpcodeFor(layers.ServiceUD, layers.OpSend, layers.PosOnly, false, false)
	return m
}

// send adds MAD m from one side to QP qp with the note the manifest shows.
func (m *madTrace) send(from craft.Side, qp uint32, mad *layers.MAD, note string) {
	if m.err != nil {
		return
	}
	payload, err := mad.Bytes()
	if err != nil {
		m.err = err
		return
	}
	qkey := uint32(layers.GSIQKey)
	if qp == 0 {
		qkey = 0
	}
	f, err := m.b.Build(craft.Packet{From: from, Payload: payload, BTH: layers.BTH{Opcode: m.udSend, PKey: 0xFFFF, DestQP: qp,
		PSN: m.psn[from], DETH: layers.DETH{QKey: qkey, SrcQP: qp}}}, m.t)
	if err != nil {
		m.err = err
		return
	}
	m.psn[from] = m.psn[from].Add(1)
	m.t = m.t.Add(50 * time.Microsecond)
	f.Info.Note = note
	m.tr.Frames = append(m.tr.Frames, f)
}

// result is what a generator returns.
func (m *madTrace) result() (craft.Encap, craft.Trace, []string, error) {
	return craft.IB, m.tr, nil, m.err
}
