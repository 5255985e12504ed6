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

func newUDPConfig(opts []UDPOption) udpConfig {
	c := udpConfig{batch: DefaultUDPBatchSize, sockBuf: defaultUDPSocketBuffer}
	for _, o := range opts {
		o(&c)
	}
	return c
}
