//go:build linux

package endpoint

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/ibwire/ibwire/layers"
)

// vethLab is two network namespaces joined by a veth pair, made for one
// test and deleted after it: nothing it sends leaves the machine.
type vethLab struct {
	nsA, nsB string // namespace names; va lives in nsA, vb in nsB
}

// newVethLab creates the namespaces with `ip`, or skips the test when that
// is impossible (not root, no ip command, no netns support).
func newVethLab(t *testing.T) *vethLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the veth test needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the veth test needs the ip command (iproute2)")
	}
	id := fmt.Sprintf("ibwire-e2-%d", os.Getpid())
	lab := &vethLab{nsA: id + "-a", nsB: id + "-b"}
	run := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("netns", "add", lab.nsA); err != nil {
		t.Skipf("no network namespaces here: %v", err)
	}
	t.Cleanup(func() { _ = run("netns", "del", lab.nsA) })
	require.NoError(t, run("netns", "add", lab.nsB))
	t.Cleanup(func() { _ = run("netns", "del", lab.nsB) })
	for _, args := range [][]string{
		{"-n", lab.nsA, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", lab.nsB},
		{"-n", lab.nsA, "addr", "add", "10.201.0.1/24", "dev", "va"},
		{"-n", lab.nsA, "addr", "add", "fd00:201::1/64", "dev", "va", "nodad"},
		{"-n", lab.nsB, "addr", "add", "10.201.0.2/24", "dev", "vb"},
		{"-n", lab.nsB, "addr", "add", "fd00:201::2/64", "dev", "vb", "nodad"},
		{"-n", lab.nsA, "link", "set", "va", "up"},
		{"-n", lab.nsB, "link", "set", "vb", "up"},
	} {
		require.NoError(t, run(args...))
	}
	return lab
}

// in runs f with the calling goroutine's thread inside namespace ns. A
// socket keeps the namespace it was created in, so wires opened in f keep
// working afterwards.
func (l *vethLab) in(t *testing.T, ns string, f func()) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	require.NoError(t, err)
	defer self.Close()
	target, err := os.Open("/run/netns/" + ns)
	require.NoError(t, err)
	defer target.Close()
	require.NoError(t, unix.Setns(int(target.Fd()), unix.CLONE_NEWNET))
	defer func() { require.NoError(t, unix.Setns(int(self.Fd()), unix.CLONE_NEWNET)) }()
	f()
}

// TestPacketWireVeth runs the packet wire on one end of a veth pair against
// the UDP wire, that is the kernel's UDP stack, on the other, over IPv4 and
// IPv6: the kernel accepts the packet wire's frames (and the UDP wire finds
// their ICRC exact), and the packet wire finds the kernel-built frames'
// ICRC exact with the real IP header; it also learns the peer's MAC from
// the first frame and answers without being told it.
func TestPacketWireVeth(t *testing.T) {
	defer goleak.VerifyNone(t)
	lab := newVethLab(t)
	for _, tt := range []struct{ a, b string }{
		{"10.201.0.1", "10.201.0.2"},
		{"fd00:201::1", "fd00:201::2"},
	} {
		t.Run(tt.a, func(t *testing.T) {
			var pw *PacketWire
			var uw *UDPWire
			var macB net.HardwareAddr
			lab.in(t, lab.nsA, func() {
				var err error
				pw, err = OpenPacketWire("va", netip.MustParseAddr(tt.a))
				require.NoError(t, err)
			})
			defer pw.Close()
			lab.in(t, lab.nsB, func() {
				var err error
				uw, err = ListenUDP(netip.AddrPortFrom(netip.MustParseAddr(tt.b), layers.RoCEv2Port))
				require.NoError(t, err)
				vb, err := net.InterfaceByName("vb")
				require.NoError(t, err)
				macB = vb.HardwareAddr
			})
			defer uw.Close()

			// The packet wire knows nobody yet.
			_, err := pw.WriteBatch([]Datagram{{Dst: uw.LocalAddr(), Payload: testRoCEPayload(64, 1, 1, 1)}})
			require.ErrorContains(t, err, "no MAC address for "+tt.b)

			// The kernel in B resolves A's address (configured on va) and
			// sends; the packet wire checks the whole header and learns.
			sent := []Datagram{
				{Dst: pw.LocalAddr(), TrafficClass: 0x02, HopLimit: 1, Payload: testRoCEPayload(1024+16, 0x11, 1, 1)},
				{Dst: pw.LocalAddr(), TrafficClass: 0x03, HopLimit: 255, Payload: testRoCEPayload(20, 0x11, 2, 2)},
			}
			_, err = uw.WriteBatch(sent)
			require.NoError(t, err)
			got := wireReadN(t, pw, len(sent))
			for i, dg := range got {
				assert.Equal(t, sent[i].Payload, dg.Payload)
				assert.Equal(t, ICRCGood, dg.ICRC, "datagram %d: the kernel's header hashes to our ICRC", i)
				assert.Equal(t, uw.LocalAddr(), dg.Src)
				assert.Equal(t, sent[i].TrafficClass, dg.TrafficClass)
				assert.Equal(t, sent[i].HopLimit, dg.HopLimit)
			}
			mac, err := pw.neighbor(uw.LocalAddr().Addr())
			require.NoError(t, err)
			assert.Equal(t, macB.String(), net.HardwareAddr(mac[:]).String(), "learnt from the frames")

			// Answer: the kernel's UDP in B accepts checksum-0 frames.
			replies := make([]Datagram, 20)
			for i := range replies {
				replies[i] = Datagram{Src: netip.AddrPortFrom(netip.Addr{}, 0xC000+uint16(i)), Dst: uw.LocalAddr(), TrafficClass: 1,
					Payload: testRoCEPayload(64+i*4, 0x12, uint32(i), byte(i))}
			}
			_, err = pw.WriteBatch(replies)
			require.NoError(t, err)
			in := wireReadN(t, uw, len(replies))
			for i, dg := range in {
				assert.Equal(t, replies[i].Payload, dg.Payload)
				assert.Equal(t, ICRCGood, dg.ICRC, "reply %d: IP ID 0 makes the UDP wire's check exact", i)
				assert.Equal(t, netip.AddrPortFrom(pw.LocalAddr().Addr(), 0xC000+uint16(i)), dg.Src)
				assert.Equal(t, uint8(1), dg.TrafficClass)
			}
		})
	}
}
