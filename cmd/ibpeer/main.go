// Command ibpeer takes part in RDMA conversations. Its subcommands:
//
//	ibpeer craft ...     write a crafted conversation to a capture file
//	ibpeer replay ...    send a capture again: selected, rewritten, paced, compared
//	ibpeer serve ...     serve RDMA: memory, RC QPs, a set-up exchange on TCP 18515
//	ibpeer write ...     RDMA WRITEs against ibpeer serve, perftest's report
//	ibpeer read ...      RDMA READs against ibpeer serve
//	ibpeer send ...      SENDs against ibpeer serve
//	ibpeer atomic ...    FETCH_ADD or CMP_SWAP against ibpeer serve
//	ibpeer perftest ...  ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw, either role
//	ibpeer pingpong ...  ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong, either role
//	ibpeer rping ...     librdmacm's rping, either role, connected by RDMA CM over QP1
//	ibpeer ucmatose ...  librdmacm's ucmatose, either role (serve --cm PORT is its server)
//	ibpeer udaddy ...    librdmacm's udaddy, either role: UD over RDMA CM (SIDR)
//
// Run `ibpeer craft -h` for the flags of a subcommand.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// exit statuses
const (
	exitOK    = 0
	exitError = 1 // the work failed (I/O)
	exitUsage = 2 // bad flags or arguments
)

// command is one subcommand.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands lists the subcommands.
var commands = map[string]command{
	"craft":    {"write a crafted RDMA conversation (any opcode, encapsulation and fault) to a pcap or pcapng file", runCraft},
	"replay":   {"send a capture again: select (-Y), rewrite addresses/QPNs/PSNs/keys with ICRCs fixed, pace, compare with a live peer", runReplay},
	"serve":    {"serve RDMA on an address: a region and an RC QP per set-up connection (TCP 18515, ibv_rc_pingpong's format)", runServe},
	"write":    {"RDMA WRITE against ibpeer serve, perftest's report; --verify, --loss/--reorder/--dup, --lat", runWrite},
	"read":     {"RDMA READ against ibpeer serve, perftest's report", runRead},
	"send":     {"SEND against ibpeer serve, perftest's report", runSend},
	"atomic":   {"FETCH_ADD or CMP_SWAP against ibpeer serve, perftest's report", runAtomic},
	"perftest": {"ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw in either role: perftest 6.06's TCP exchange, defaults and report", runPerftest},
	"rping":    {"librdmacm's rping in either role (-s, -c): RDMA CM over QP1, then its READ/WRITE ping loop; -v, -V, -C, -S, -p", runRping},
	"ucmatose": {"librdmacm's ucmatose in either role (-s SERVER for the client): RDMA CM connections, SENDs each way, DREQ", runUcmatose},
	"udaddy":   {"librdmacm's udaddy in either role (-s SERVER for the client): SIDR_REQ/SIDR_REP, UD SENDs with immediate each way", runUdaddy},
	"pingpong": {"ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong in either role (--rc, --uc, --ud): the tools' exchange, flags and report", runPingpong},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprint(w, "usage: ibpeer <command> [flags]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, "\nRun 'ibpeer <command> -h' for the flags of a command.\n")
}

// run dispatches to a subcommand and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"-h"}, stdout, stderr)
			}
		}
		usage(stdout)
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "ibpeer: unknown command %q\n\n", strings.TrimLeft(args[0], "-"))
		usage(stderr)
		return exitUsage
	}
	return c.run(args[1:], stdout, stderr)
}
