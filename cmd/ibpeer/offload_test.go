package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/internal/peer/device"
)

// TestUDPOffloadFlag: every subcommand that opens a UDP wire takes
// --udp-offload auto or off, says so in its help, and refuses any other
// value with the flag named.
func TestUDPOffloadFlag(t *testing.T) {
	for _, cmd := range [][]string{{"serve"}, {"serve", "--cm", "0"}, {"write"}, {"read"}, {"send"}, {"atomic"},
		{"perftest", "write"}, {"perftest", "send_lat"}, {"pingpong"}, {"rping"}, {"ucmatose"}, {"udaddy"}, {"replay"}} {
		t.Run(cmd[0]+" "+cmd[len(cmd)-1], func(t *testing.T) {
			code, stdout, _ := ibpeer(append(append([]string{}, cmd...), "-h")...)
			assert.Equal(t, exitOK, code)
			assert.Contains(t, stdout, "udp-offload")
			assert.Contains(t, stdout, "packet by packet")
			code, _, stderr := ibpeer(append(append([]string{}, cmd...), "--udp-offload=on", "--addr", "127.0.0.1")...)
			assert.NotEqual(t, exitOK, code, "stderr: %s", stderr) // 2, or 1 where the tool exits 1 on bad flags (pingpong)
			assert.Contains(t, stderr, `invalid value "on" for flag -udp-offload: "on" is not auto or off`)
		})
	}
}

// TestUDPOffloadParsed: the value reaches each program's config.
func TestUDPOffloadParsed(t *testing.T) {
	type parsed = func(args []string) (device.UDPOffload, error)
	progs := map[string]parsed{
		"pingpong": func(a []string) (device.UDPOffload, error) {
			c, err := ppParse(pingpongFlags(nil), append(a, "--addr", "127.0.0.1"))
			return c.UDPOffload, err
		},
		"rping": func(a []string) (device.UDPOffload, error) {
			c, err := rpingParse(append(a, "-s", "-a", "127.0.0.1"))
			return c.UDPOffload, err
		},
		"ucmatose": func(a []string) (device.UDPOffload, error) {
			c, err := ucmatoseParse(append(a, "-b", "127.0.0.1"))
			return c.UDPOffload, err
		},
		"udaddy": func(a []string) (device.UDPOffload, error) {
			c, err := udaddyParse(append(a, "-b", "127.0.0.1"))
			return c.UDPOffload, err
		},
	}
	for name, parse := range progs {
		for _, tc := range []struct {
			args []string
			want device.UDPOffload
		}{
			{nil, false},
			{[]string{"--udp-offload=auto"}, false},
			{[]string{"--udp-offload=off"}, device.OffloadOff},
			{[]string{"--udp-offload", "off"}, device.OffloadOff},
		} {
			got, err := parse(tc.args)
			require.NoError(t, err, "%s %v", name, tc.args)
			assert.Equal(t, tc.want, got, "%s %v", name, tc.args)
		}
	}
}
