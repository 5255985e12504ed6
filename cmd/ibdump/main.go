// Command ibdump reads RoCE and InfiniBand captures (or captures live) and
// prints them the way tcpdump and tshark users expect, with Wireshark's
// field names and RDMA-aware summaries. The command lives in
// internal/ibdumpcli, which ibtui shares when its output is not a terminal.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ibwire/ibwire/internal/ibdumpcli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := ibdumpcli.Run(ctx, "ibdump", os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
