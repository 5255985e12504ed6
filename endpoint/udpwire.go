package endpoint

// DefaultUDPBatchSize is how many datagrams one recvmmsg/sendmmsg call of a
// UDPWire moves unless WithUDPBatchSize says otherwise: wireguard-go's
// conn.IdealBatchSize (ENDPOINT.md §3.1).
const DefaultUDPBatchSize = 128

// defaultUDPSocketBuffer is wireguard-go's socket buffer size: 7 MiB, so a
// burst of a few thousand MTU-sized packets fits while the reader is busy.
const defaultUDPSocketBuffer = 7 << 20

// UDPOption configures ListenUDP.
type UDPOption func(*udpConfig)

type udpConfig struct {
	batch   int
	sockBuf int
	offload bool
}

// WithUDPBatchSize sets how many datagrams one system call moves at most
// (1 turns batching off; values below 1 count as 1).
func WithUDPBatchSize(n int) UDPOption {
	return func(c *udpConfig) { c.batch = max(n, 1) }
}

// WithUDPSocketBuffer sets SO_RCVBUF and SO_SNDBUF (and tries the FORCE
// variants, which need CAP_NET_ADMIN, to go past net.core.rmem_max).
func WithUDPSocketBuffer(bytes int) UDPOption {
	return func(c *udpConfig) { c.sockBuf = bytes }
}

// WithUDPOffload turns UDP segmentation offload on or off (on by default):
// on a wire bound to a loopback address, runs of equal datagrams leave as
// one UDP_SEGMENT message that the kernel cuts back into the datagrams
// (WriteBatch). Every datagram stays its own on the wire, with its own
// ICRC; a packet capture on lo sees a run as one large datagram, though,
// because it taps the loopback device before the receiving socket cuts it.
// Turn it off to capture on lo, or when an AF_PACKET peer listens there.
func WithUDPOffload(on bool) UDPOption {
	return func(c *udpConfig) { c.offload = on }
}

func newUDPConfig(opts []UDPOption) udpConfig {
	c := udpConfig{batch: DefaultUDPBatchSize, sockBuf: defaultUDPSocketBuffer, offload: true}
	for _, o := range opts {
		o(&c)
	}
	return c
}
