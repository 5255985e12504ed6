package output_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
	"github.com/ibwire/ibwire/layers"
)

func TestUseColor(t *testing.T) {
	tests := []struct {
		mode, noColor, term string
		tty, want, err      bool
	}{
		{mode: "always", noColor: "1", term: "dumb", want: true},
		{mode: "never", tty: true, term: "xterm"},
		{mode: "auto", tty: true, term: "xterm", want: true},
		{mode: "auto", tty: false, term: "xterm"},
		{mode: "auto", tty: true, noColor: "1", term: "xterm"},
		{mode: "auto", tty: true, term: "dumb"},
		{mode: "auto", tty: true, term: "", want: true}, // no TERM is not dumb
		{mode: "Never", err: true},
		{mode: "", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.mode+"/"+tc.noColor+"/"+tc.term, func(t *testing.T) {
			env := map[string]string{"NO_COLOR": tc.noColor, "TERM": tc.term}
			got, err := output.UseColor(tc.mode, tc.tty, func(k string) string { return env[k] })
			if tc.err {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "want auto, always or never")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// decoded crafts bth's frame over RoCEv2 and decodes it.
func decoded(t *testing.T, bth layers.BTH) *decode.Packet {
	t.Helper()
	b, err := craft.NewBuilder(craft.Config{})
	require.NoError(t, err)
	f, err := b.Build(craft.Packet{BTH: bth}, craft.DefaultStart)
	require.NoError(t, err)
	p := decode.NewDecoder(decode.Options{}).Decode(decode.Input{Number: 1, Time: f.Time, Length: len(f.Data), LinkType: f.LinkType, Data: f.Data})
	require.NoError(t, p.Err)
	return p
}

func TestClassOf(t *testing.T) {
	send := layers.BTH{Opcode: 0x04, PKey: 0xFFFF, DestQP: 0x11, PSN: 7}
	ack := layers.BTH{Opcode: 0x11, PKey: 0xFFFF, DestQP: 0x11, PSN: 7}
	tests := []struct {
		name  string
		bth   layers.BTH
		edit  func(p *decode.Packet)
		class output.PacketClass
	}{
		{name: "send", bth: send, class: output.ClassNormal},
		{name: "ack", bth: ack, edit: func(p *decode.Packet) { p.BTH().AETH.Syndrome = 0x1F }, class: output.ClassNormal},
		{name: "NAK", bth: ack, edit: func(p *decode.Packet) { p.BTH().AETH.Syndrome = 0x60 }, class: output.ClassWarn},
		{name: "RNR NAK", bth: ack, edit: func(p *decode.Packet) { p.BTH().AETH.Syndrome = 0x20 }, class: output.ClassWarn},
		{name: "CNP", bth: layers.BTH{Opcode: 0x81, PKey: 0xFFFF, DestQP: 0x11}, class: output.ClassCongestion},
		{name: "FECN", bth: send, edit: func(p *decode.Packet) { p.BTH().FECN = true }, class: output.ClassCongestion},
		{name: "BECN", bth: send, edit: func(p *decode.Packet) { p.BTH().BECN = true }, class: output.ClassCongestion},
		{name: "bad ICRC", bth: send, edit: func(p *decode.Packet) { p.ICRC = layers.CRCBad }, class: output.ClassBad},
		{name: "bad VCRC", bth: send, edit: func(p *decode.Packet) { p.VCRC = layers.CRCBad }, class: output.ClassBad},
		{name: "malformed", bth: send, edit: func(p *decode.Packet) { p.Err = errors.New("cut") }, class: output.ClassBad},
		{name: "error finding", bth: send, edit: func(p *decode.Packet) { p.Analysis.Severity = decode.SevError }, class: output.ClassBad},
		{name: "warning finding", bth: send, edit: func(p *decode.Packet) { p.Analysis.Severity = decode.SevWarn }, class: output.ClassWarn},
		{name: "note finding", bth: send, edit: func(p *decode.Packet) { p.Analysis.Severity = decode.SevNote }, class: output.ClassNormal},
		{name: "error beats NAK", bth: ack, edit: func(p *decode.Packet) {
			p.BTH().AETH.Syndrome = 0x60
			p.Analysis.Severity = decode.SevError
		}, class: output.ClassBad},
		{name: "NAK beats congestion", bth: ack, edit: func(p *decode.Packet) {
			p.BTH().AETH.Syndrome = 0x60
			p.BTH().BECN = true
		}, class: output.ClassWarn},
		{name: "warning beats congestion", bth: send, edit: func(p *decode.Packet) {
			p.BTH().FECN = true
			p.Analysis.Severity = decode.SevWarn
		}, class: output.ClassWarn},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := decoded(t, tc.bth)
			if tc.edit != nil {
				tc.edit(p)
			}
			assert.Equal(t, tc.class, output.ClassOf(p))
		})
	}
}

func TestClassOfNonInfiniBand(t *testing.T) {
	p := &decode.Packet{}
	assert.Equal(t, output.ClassNormal, output.ClassOf(p))
	p.Analysis.Severity = decode.SevWarn
	assert.Equal(t, output.ClassWarn, output.ClassOf(p))
}
