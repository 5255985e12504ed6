package capture

import (
	"errors"
	"fmt"
	"github.com/ibwire/ibwire/layers"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// inNetns runs fn on a thread moved into the named network namespace.
// Sockets fn opens stay in that namespace when used from anywhere.
func inNetns(t *testing.T, name string, fn func() error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread dies with the goroutine rather than
		// going back to the scheduler inside another namespace.
		runtime.LockOSThread()
		f, err := os.Open("/run/netns/" + name)
		if err == nil {
			err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
			f.Close()
		}
		if err == nil {
			err = fn()
		}
		errc <- err
	}()
	require.NoError(t, <-errc)
}

// TestOpenLive builds two private network namespaces joined by a veth pair
// (nothing leaves them), sends RoCEv2-port datagrams, other datagrams and a
// VLAN-tagged frame from one side, and captures with RoCEFilter on the
// other; then it does the same on the second namespace's loopback.
// vethNamespaces makes two private network namespaces joined by a veth pair,
// ibwcap0 (10.253.0.1/30) in the first and ibwcap1 (10.253.0.2/30) in the
// second, both up; it returns ip(8)'s path and the namespaces' names. It
// skips without root or ip(8).
func vethNamespaces(t *testing.T) (ip, a, b string) {
	ip, err := exec.LookPath("ip")
	if os.Geteuid() != 0 || err != nil {
		t.Skip("needs root and ip(8) for network namespaces and AF_PACKET")
	}
	run := func(args ...string) error {
		if out, err := exec.Command(ip, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %v: %v: %s", args, err, out)
		}
		return nil
	}
	a, b = fmt.Sprintf("ibwcap-a-%d", os.Getpid()), fmt.Sprintf("ibwcap-b-%d", os.Getpid())
	for _, ns := range []string{a, b} {
		if err := run("netns", "add", ns); err != nil {
			t.Skipf("cannot create a network namespace: %v", err)
		}
		t.Cleanup(func() { _ = run("netns", "del", ns) })
	}
	for _, args := range [][]string{
		{"link", "add", "ibwcap0", "netns", a, "type", "veth", "peer", "name", "ibwcap1", "netns", b},
		{"-n", a, "addr", "add", "10.253.0.1/30", "dev", "ibwcap0"},
		{"-n", b, "addr", "add", "10.253.0.2/30", "dev", "ibwcap1"},
		{"-n", a, "link", "set", "ibwcap0", "up"},
		{"-n", b, "link", "set", "ibwcap1", "up"},
	} {
		require.NoError(t, run(args...))
	}
	// A veth end transmits through the noop qdisc, which drops everything,
	// until the kernel's link watcher has seen the carrier and attached the
	// real one; it marks the operational state UP in the same step. Frames
	// sent before that vanish (1 run in 15 under load lost one), so wait for
	// both ends to say UP before sending anything.
	for _, end := range [][2]string{{a, "ibwcap0"}, {b, "ibwcap1"}} {
		require.Eventually(t, func() bool {
			out, err := exec.Command(ip, "-n", end[0], "-o", "link", "show", end[1]).Output()
			return err == nil && strings.Contains(string(out), " state UP ")
		}, 10*time.Second, 10*time.Millisecond, "%s in %s never came up", end[1], end[0])
	}
	return ip, a, b
}

// TestOpenLiveBurst sends a burst of full-size RoCEv2 frames faster than
// anyone reads and requires the capture to keep every one: the kernel's
// default socket buffer (about 200 KiB) holds fewer than a hundred such
// frames, which is how ibdump -i lost packets beside tcpdump on a busy
// machine.
func TestOpenLiveBurst(t *testing.T) {
	_, a, b := vethNamespaces(t)
	const burst, size = 2000, 1400
	send := func(n int) {
		inNetns(t, a, func() error {
			c, err := net.ListenPacket("udp4", "10.253.0.1:0")
			if err != nil {
				return err
			}
			defer c.Close()
			payload := make([]byte, size)
			for i := range n {
				payload[0], payload[1] = byte(i>>8), byte(i)
				if _, err := c.WriteTo(payload, &net.UDPAddr{IP: net.IP{10, 253, 0, 2}, Port: layers.RoCEv2Port}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for _, tt := range []struct {
		name   string
		buffer int // 0: OpenLive's default
		lossy  bool
	}{
		{"default buffer keeps the burst", 0, false},
		{"a 128 KiB buffer overflows, and counts it", 128 << 10, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var src *LiveSource
			inNetns(t, b, func() (err error) {
				src, err = OpenLive("ibwcap1", 0, RoCEFilter())
				return err
			})
			defer src.Close()
			if tt.buffer > 0 {
				require.NoError(t, src.SetBufferSize(tt.buffer))
			}
			// One frame first, read back, so that ARP has resolved the
			// peer: the kernel queues only about a hundred datagrams behind
			// an unresolved neighbour, and that loss is not the capture's.
			require.NoError(t, src.SetReadDeadline(time.Now().Add(5*time.Second)))
			var p Packet
			send(1)
			require.NoError(t, src.NextInto(&p))
			send(burst)
			got := 0
			if tt.lossy {
				require.NoError(t, src.SetReadDeadline(time.Now().Add(time.Second)))
			}
			for got < burst {
				err := src.NextInto(&p)
				if tt.lossy && errors.Is(err, os.ErrDeadlineExceeded) {
					break
				}
				require.NoError(t, err, "frame %d of %d", got+1, burst)
				got++
			}
			st, err := src.Stats()
			require.NoError(t, err)
			if tt.lossy {
				assert.Less(t, got, burst)
				assert.Equal(t, uint64(burst-got), st.Dropped, "every frame not read is counted dropped")
			} else {
				assert.Zero(t, st.Dropped, "the socket buffer overflowed")
			}
		})
	}
}

func TestOpenLive(t *testing.T) {
	ip, a, b := vethNamespaces(t)
	run := func(args ...string) error {
		if out, err := exec.Command(ip, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %v: %v: %s", args, err, out)
		}
		return nil
	}
	require.NoError(t, run("-n", b, "link", "set", "lo", "up"))

	var veth, lo *LiveSource
	var peerMAC net.HardwareAddr
	inNetns(t, b, func() (err error) {
		ifi, err := net.InterfaceByName("ibwcap1")
		if err != nil {
			return err
		}
		peerMAC = ifi.HardwareAddr
		if veth, err = OpenLive("ibwcap1", 0, RoCEFilter()); err != nil {
			return err
		}
		lo, err = OpenLive("lo", 0, RoCEFilter())
		return err
	})
	defer veth.Close()
	defer lo.Close()
	assert.Equal(t, layers.LinkTypeEthernet, veth.LinkType())
	assert.Equal(t, layers.LinkTypeEthernet, lo.LinkType())

	// A VLAN-tagged RoCEv2 frame; the receiving kernel strips the tag into
	// PACKET_AUXDATA and the capture must put it back.
	tagged := build(t, &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: peerMAC, EthernetType: gplayers.EthernetTypeDot1Q},
		&gplayers.Dot1Q{VLANIdentifier: 7, Type: gplayers.EthernetTypeIPv4},
		&gplayers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: net.IP{10, 253, 0, 1}, DstIP: net.IP{10, 253, 0, 2}},
		&gplayers.UDP{SrcPort: 49152, DstPort: layers.RoCEv2Port}, gopacket.Payload(make([]byte, 32)))

	inNetns(t, a, func() error {
		// Unconnected, so the peer's ICMP port-unreachable does not fail
		// the next write.
		c, err := net.ListenPacket("udp4", "10.253.0.1:0")
		if err != nil {
			return err
		}
		defer c.Close()
		for port, n := range map[int]int{layers.RoCEv2Port: 3, 9: 2} {
			for i := range n {
				if _, err := c.WriteTo([]byte{byte(i)}, &net.UDPAddr{IP: net.IP{10, 253, 0, 2}, Port: port}); err != nil {
					return err
				}
			}
		}
		ifi, err := net.InterfaceByName("ibwcap0")
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		to := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_8021Q), Ifindex: ifi.Index, Halen: 6}
		copy(to.Addr[:], peerMAC)
		return unix.Sendto(fd, tagged, 0, to)
	})
	inNetns(t, b, func() error {
		c, err := net.Dial("udp4", fmt.Sprintf("127.0.0.1:%d", layers.RoCEv2Port))
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte("lo"))
		return err
	})

	read := func(src *LiveSource, n int) []Packet {
		require.NoError(t, src.SetReadDeadline(time.Now().Add(5*time.Second)))
		var out []Packet
		for len(out) < n {
			p, err := src.Next()
			require.NoError(t, err)
			require.True(t, MatchRoCE(p.Data), "% x", p.Data)
			assert.Equal(t, len(p.Data), len(p.Data))
			assert.WithinDuration(t, time.Now(), p.Time, time.Minute)
			out = append(out, p)
		}
		// Nothing else passes the filter: the port 9 datagrams, ARP and
		// ICMP stay out, and loopback frames are not seen twice.
		require.NoError(t, src.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
		_, err := src.Next()
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		return out
	}
	got := read(veth, 4)
	var sawTag bool
	for i, p := range got {
		assert.Equal(t, i+1, p.Number)
		if p.Data[12] == 0x81 {
			sawTag = true
			assert.Equal(t, tagged, p.Data)
			assert.Equal(t, len(tagged), p.Length)
		}
	}
	assert.True(t, sawTag, "the VLAN-tagged frame came back without its tag")
	assert.Len(t, read(lo, 1), 1)

	st, err := veth.Stats()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, st.Received, uint64(4))

	// Close wakes a blocked reader.
	require.NoError(t, veth.SetReadDeadline(time.Time{}))
	done := make(chan error)
	go func() { _, err := veth.Next(); done <- err }()
	time.Sleep(50 * time.Millisecond) // let the reader block; correctness does not depend on it
	require.NoError(t, veth.Close())
	select {
	case err := <-done:
		assert.True(t, errors.Is(err, os.ErrClosed), "%v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake the reader")
	}
}

func TestOpenLiveErrors(t *testing.T) {
	_, err := OpenLive("no-such-if0", 0, nil)
	assert.Error(t, err)
}

func TestInterfaces(t *testing.T) {
	ifs, err := Interfaces()
	require.NoError(t, err)
	require.NotEmpty(t, ifs)
	assert.NotEmpty(t, ifs[0].Name)
}
