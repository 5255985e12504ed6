package main

// ibpeer udaddy: librdmacm's udaddy in either role; the program is
// internal/peer/udaddy.

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/ibwire/ibwire/internal/peer/udaddy"
)

var udaddyUsage = `usage: ibpeer udaddy [-s server_address] [-b bind_address] [-c connections]
                     [-C message_count] [-S message_size] [-p port_number] [--bind IP]

Plays librdmacm's udaddy against udaddy on any RDMA CM device (rdma_rxe, a NIC) or another
ibpeer: without -s it is the server, with -s the client. UD over RDMA CM: the client resolves
the server's UD QP with a SIDR_REQ on QP1 (UDP port space; the SIDR_REP names the QPN and the
Q_Key 0x01234567), SENDs -C datagrams of -S bytes with immediate data (its QPN) on each of -c
connections, and waits for as many back; the server answers each client at the address and QPN
its first datagram names. The server serves all its clients from one UD QP.

  -s server_address   the server's address (client mode)
  -b bind_address     the local address: UDP 4791 binds here (--bind is the same flag)
  -c connections      number of connections (default 1)
  -C message_count    datagrams each way per connection (default 10)
  -S message_size     bytes per datagram, at most the port's active MTU (default 100)
  -p port_number      port (default 7174)
  -f address_format   name or ip (accepted; addresses are IP literals)
  -P port_space       udp (the only one)
` + udpOffloadHelp + `
Output (stdout), udaddy's lines ending in "test complete" and "return status 0"; the exit
status is 0 when the return status is, 1 otherwise. -t (type of service) is refused: the
datagrams are sent with traffic class 0.
`

func udaddyFlags() *flag.FlagSet { return cmExampleFlags("ibpeer udaddy", udaddy.DefaultPort, "udp") }

func udaddyParse(args []string) (udaddy.Config, error) {
	// a datagram fits one packet: at most the largest MTU
	c, err := parseCMExample(udaddyFlags(), args, "udp", 4096)
	if err != nil {
		return udaddy.Config{}, err
	}
	if c.flags.Lookup("t").Value.String() != "" {
		return udaddy.Config{}, errors.New("-t: type of service is not supported (datagrams go with traffic class 0)")
	}
	return udaddy.Config{Server: c.server, Local: c.local, Port: c.port, Connections: c.connections, Count: c.count, Size: c.size, UDPOffload: c.offload}, nil
}

func runUdaddy(args []string, stdout, stderr io.Writer) int {
	return runCMExample("udaddy", udaddyUsage, args, stdout, stderr, udaddyParse,
		func(ctx context.Context, cfg udaddy.Config, out io.Writer) error {
			cfg.Stderr = stderr
			return udaddy.Run(ctx, cfg, out)
		}, udaddy.ErrFailed)
}
