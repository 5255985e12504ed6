package main

// ibpeer ucmatose: librdmacm's ucmatose in either role; the program is
// internal/peer/ucmatose.

import (
	"context"
	"flag"
	"io"

	"github.com/ibwire/ibwire/internal/peer/ucmatose"
)

var ucmatoseUsage = `usage: ibpeer ucmatose [-s server_address] [-b bind_address] [-c connections]
                       [-C message_count] [-S message_size] [-p port_number] [-t tos] [--bind IP]

Plays librdmacm's ucmatose against ucmatose on any RDMA CM device (rdma_rxe, a NIC) or another
ibpeer: without -s it is the server, with -s the client. Each of -c connections is an RC QP
connected by RDMA CM over QP1 (TCP port space); the server SENDs -C messages of -S bytes on
each, the client receives them and sends as many back, then the server disconnects (DREQ).

  -s server_address   the server's address (client mode)
  -b bind_address     the local address: UDP 4791 binds here (--bind is the same flag)
  -c connections      number of connections (default 1)
  -C message_count    messages each way per connection (default 10)
  -S message_size     bytes per message (default 100)
  -p port_number      port (default 7471)
  -t tos              type of service (accepted, not used)
  -m                  migrate to a new event channel (prints ucmatose's line, nothing to move)
  -f address_format   name or ip (accepted; addresses are IP literals)
  -P port_space       tcp (the only one)
` + udpOffloadHelp + `
Output (stdout), ucmatose's lines ending in "test complete" and "return status 0".
`

func ucmatoseFlags() *flag.FlagSet {
	fs := cmExampleFlags("ibpeer ucmatose", ucmatose.DefaultPort, "tcp")
	fs.Bool("m", false, "migrate")
	return fs
}

func ucmatoseParse(args []string) (ucmatose.Config, error) {
	c, err := parseCMExample(ucmatoseFlags(), args, "tcp", 1<<24)
	if err != nil {
		return ucmatose.Config{}, err
	}
	// -t is accepted and not used: ucmatose sets the TOS of its CM ID.
	return ucmatose.Config{Server: c.server, Local: c.local, Port: c.port, Connections: c.connections, Count: c.count, Size: c.size,
		UDPOffload: c.offload, Migrate: c.flags.Lookup("m").Value.(flag.Getter).Get().(bool)}, nil
}

func runUcmatose(args []string, stdout, stderr io.Writer) int {
	return runCMExample("ucmatose", ucmatoseUsage, args, stdout, stderr, ucmatoseParse,
		func(ctx context.Context, cfg ucmatose.Config, out io.Writer) error {
			cfg.Stderr = stderr
			return ucmatose.Run(ctx, cfg, out)
		}, ucmatose.ErrFailed)
}

// ucmatoseExit runs ucmatose and returns the exit status: ucmatose's
// return status, 0 or 1.
func ucmatoseExit(ctx context.Context, cfg ucmatose.Config, stdout, stderr io.Writer) int {
	cfg.Stderr = stderr
	return cmExampleStatus("ucmatose", ucmatose.Run(ctx, cfg, stdout), ucmatose.ErrFailed, stderr)
}
