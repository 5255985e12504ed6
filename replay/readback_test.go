package replay

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// memoryPeer answers RDMA READ requests from mem (at va) with READ
// responses of mtu bytes, or with nak when it is set, carrying the READ's
// PSN plus nakAt. With stray, a READ response carrying stray and the PSN
// after the READ's last goes out first.
type memoryPeer struct {
	mem   []byte
	va    uint64
	mtu   int
	nak   layers.AETHSyndrome
	nakAt int
	stray []byte
	out   [][]byte
}

func (m *memoryPeer) Send(req []byte) error {
	var b layers.BTH
	if err := b.DecodeFromBytes(req, nil); err != nil {
		return err
	}
	resp := func(op layers.Opcode, psn layers.PSN, syn layers.AETHSyndrome, data []byte) {
		p := make([]byte, layers.BTHLength, layers.BTHLength+4+len(data)+4)
		p[0] = byte(op)
		put24(p[9:12], uint32(psn))
		if op.Info().Has(layers.HdrAETH) {
			p = append(p, byte(syn), 0, 0, 1)
		}
		p = append(p, data...)
		m.out = append(m.out, append(p, 0, 0, 0, 0))
	}
	if m.nak != 0 {
		ack, ok := layers.OpcodeFor(layers.ServiceRC, layers.OpAcknowledge, layers.PosNone, false, false)
		if !ok {
			panic("no RC ACKNOWLEDGE")
		}
		resp(ack, b.PSN.Add(m.nakAt), m.nak, nil)
		return nil
	}
	data := m.mem[b.RETH.VA-m.va:][:b.RETH.DMALength]
	n := layers.Segments(len(data), m.mtu)
	if m.stray != nil {
		op, _ := layers.OpcodeFor(layers.ServiceRC, layers.OpRDMAReadResponse, layers.PosOnly, false, false)
		resp(op, b.PSN.Add(n), layers.MakeAckSyndrome(31), m.stray)
	}
	for i := range n {
		pos := layers.SegmentPosition(i, n)
		op, ok := layers.OpcodeFor(layers.ServiceRC, layers.OpRDMAReadResponse, pos, false, false)
		if !ok {
			panic(pos)
		}
		resp(op, b.PSN.Add(i), layers.MakeAckSyndrome(31), data[i*m.mtu:min(len(data), (i+1)*m.mtu)])
	}
	return nil
}

func (m *memoryPeer) Receive(buf []byte, _ time.Duration) (int, error) {
	if len(m.out) == 0 {
		return 0, os.ErrDeadlineExceeded
	}
	n := copy(buf, m.out[0])
	m.out = m.out[1:]
	return n, nil
}

// TestCheckWrites reads write_bw's span back from a peer whose memory
// holds the WRITEs' data, one wrong byte, nothing it will let be read,
// or nothing at all (no answer).
func TestCheckWrites(t *testing.T) {
	p := loadPlan(t, "write_bw.pcap")
	data, known, lo, hi, ok := p.Written()
	require.True(t, ok)
	require.Equal(t, [2]uint64{0, 4096}, [2]uint64{lo, hi})
	for _, k := range known {
		require.True(t, k)
	}
	assert.Equal(t, p.Image(), data, "every WRITE of ib_write_bw carries the same buffer")
	assert.Equal(t, 800, p.nextPSN())
	remote := Dest{QPN: 0x99, RKey: 0x1234, VA: 0x10000}
	local := Dest{QPN: 0x11, PSN: 0xFFFF00} // the read-back's PSNs wrap
	wrong := append([]byte(nil), data...)
	wrong[1000] ^= 0xFF
	tests := []struct {
		name   string
		peer   Peer
		failed bool
		want   Readback
		err    string
	}{
		{"as written", &memoryPeer{mem: data, va: remote.VA, mtu: 1024}, false,
			Readback{VA: 0x10000, Len: 4096, Checked: 4096, FirstWrong: -1}, ""},
		{"one byte wrong", &memoryPeer{mem: wrong, va: remote.VA, mtu: 4096}, true,
			Readback{VA: 0x10000, Len: 4096, Checked: 4096, Wrong: 1, FirstWrong: 1000}, ""},
		{"NAK", &memoryPeer{nak: layers.MakeNakSyndrome(layers.NAKRemoteAccessError)}, true,
			Readback{VA: 0x10000, Len: 4096, FirstWrong: -1}, "the peer answered the READ of va 0x10000 with NAK"},
		// Behind a played stream with gaps the peer expects an earlier
		// PSN and says so with a sequence-error NAK carrying it.
		{"sequence NAK", &memoryPeer{nak: layers.MakeNakSyndrome(layers.NAKPSNSequenceError), nakAt: -5}, true,
			Readback{VA: 0x10000, Len: 4096, FirstWrong: -1},
			fmt.Sprintf("the peer answered the READ of va 0x10000 with NAK %v at PSN %d (the READ's is %d)",
				layers.NAKPSNSequenceError, local.PSN.Add(795), local.PSN.Add(800))},
		// A READ response past the READ's PSNs is not part of its data.
		{"stray after", &memoryPeer{mem: data, va: remote.VA, mtu: 1024, stray: make([]byte, 1024)}, false,
			Readback{VA: 0x10000, Len: 4096, Checked: 4096, FirstWrong: -1}, ""},
		{"silent", silentPeer{}, true, Readback{VA: 0x10000, Len: 4096, FirstWrong: -1}, "0 of the 4096 bytes at va 0x10000 came back"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rb := checkWrites(p, tt.peer, local, remote, 10*time.Millisecond)
			require.NotNil(t, rb)
			assert.Equal(t, tt.failed, rb.Failed())
			if tt.err != "" {
				require.Error(t, rb.Err)
				assert.Contains(t, rb.Err.Error(), tt.err)
				rb.Err = nil
			}
			assert.Equal(t, tt.want, *rb)
		})
	}
	// The first READ goes to the PSN after the played requests, to the
	// peer's QPN, R_Key and VA.
	rec := &recordingPeer{}
	checkWrites(p, rec, local, remote, time.Millisecond)
	require.NotEmpty(t, rec.sent)
	var b layers.BTH
	require.NoError(t, b.DecodeFromBytes(rec.sent[0], nil))
	assert.Equal(t, "RC_RDMA_READ_REQUEST", b.Opcode.String())
	assert.Equal(t, local.PSN.Add(800), b.PSN)
	assert.Equal(t, uint32(0x99), b.DestQP)
	assert.Equal(t, layers.RETH{VA: 0x10000, RKey: 0x1234, DMALength: 4096}, layers.RETH{VA: b.RETH.VA, RKey: b.RETH.RKey, DMALength: b.RETH.DMALength})
	assert.Equal(t, uint16(0xFFFF), binary.BigEndian.Uint16(rec.sent[0][2:4]))
	assert.Equal(t, uint16(0xFFFF), b.PKey)
	assert.True(t, b.AckReq)
	assert.Len(t, rec.sent[0], layers.BTHLength+layers.RETHLength+layers.ICRCLength)

	// The READ goes in the partition of the played requests.
	var first layers.BTH
	require.True(t, p.Steps[0].Request)
	f := *p.Steps[0].Frame
	f.Data = append([]byte(nil), f.Data...)
	require.NoError(t, first.DecodeFromBytes(f.Datagram(), nil))
	first.PKey = 0x8001
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, first.SerializeTo(buf, gopacket.SerializeOptions{}))
	copy(f.Datagram(), buf.Bytes())
	part := *p
	part.Steps = append([]Step{{Frame: &f, Request: true}}, p.Steps[1:]...)
	rec = &recordingPeer{}
	checkWrites(&part, rec, local, remote, time.Millisecond)
	require.NotEmpty(t, rec.sent)
	require.NoError(t, b.DecodeFromBytes(rec.sent[0], nil))
	assert.Equal(t, uint16(0x8001), b.PKey)

	// A plan without WRITEs has nothing to read back.
	assert.Nil(t, checkWrites(loadPlan(t, "read_bw.pcap"), rec, local, remote, time.Millisecond))
}

// silentPeer never answers.
type silentPeer struct{}

func (silentPeer) Send([]byte) error { return nil }
func (silentPeer) Receive([]byte, time.Duration) (int, error) {
	return 0, os.ErrDeadlineExceeded
}

// recordingPeer keeps what is sent and never answers.
type recordingPeer struct{ sent [][]byte }

func (r *recordingPeer) Send(req []byte) error {
	r.sent = append(r.sent, append([]byte(nil), req...))
	return nil
}

func (r *recordingPeer) Receive([]byte, time.Duration) (int, error) {
	return 0, os.ErrDeadlineExceeded
}

// TestWrittenWithLostSegments: write_bw's messages moved to distinct VAs
// (message k at k*4096 into the region), then the LAST of the first and
// the FIRST of the second dropped, as a capture behind loss lacks them.
// The second message's MIDDLEs and LAST must not land where the first
// stopped: their VA is unknown without their FIRST.
func TestWrittenWithLostSegments(t *testing.T) {
	p := loadPlan(t, "write_bw.pcap")
	spread := *p
	spread.Steps = nil
	msgs := 0
	var b layers.BTH
	lastOfFirst, firstOfSecond := -1, -1
	for _, s := range p.Steps {
		f := *s.Frame
		f.Data = append([]byte(nil), f.Data...)
		s.Frame = &f
		if s.Request {
			require.NoError(t, b.DecodeFromBytes(f.Datagram(), nil))
			if b.Opcode.Info().Has(layers.HdrRETH) {
				binary.BigEndian.PutUint64(f.Datagram()[layers.BTHLength:], p.Responder.VA+uint64(msgs)*4096)
				msgs++
			}
			switch {
			case lastOfFirst < 0 && b.Opcode == mustOpcode("RC_RDMA_WRITE_LAST"):
				lastOfFirst = len(spread.Steps)
			case lastOfFirst >= 0 && firstOfSecond < 0 && b.Opcode == mustOpcode("RC_RDMA_WRITE_FIRST"):
				firstOfSecond = len(spread.Steps)
			}
		}
		spread.Steps = append(spread.Steps, s)
	}
	require.Equal(t, 200, msgs)
	require.Positive(t, firstOfSecond)
	spread.RegionLen = uint64(msgs) * 4096
	full, fullKnown, lo, hi, ok := spread.Written()
	require.True(t, ok)
	assert.Equal(t, [2]uint64{0, spread.RegionLen}, [2]uint64{lo, hi})

	lossy := spread
	lossy.Steps = append(append(append([]Step(nil), spread.Steps[:lastOfFirst]...), spread.Steps[lastOfFirst+1:firstOfSecond]...), spread.Steps[firstOfSecond+1:]...)
	data, known, _, _, ok := lossy.Written()
	require.True(t, ok)
	for off := range known {
		switch {
		case off >= 3072 && off < 8192:
			// The first message's LAST and the whole second message.
			require.False(t, known[off], "offset %d", off)
		default:
			require.Equal(t, fullKnown[off], known[off], "offset %d", off)
			require.Equal(t, full[off], data[off], "offset %d", off)
		}
	}
	// The image places them the same way.
	img, fullImg := lossy.Image(), spread.Image()
	assert.Equal(t, fullImg[:3072], img[:3072])
	assert.Equal(t, make([]byte, 8192-3072), img[3072:8192])
	assert.Equal(t, fullImg[8192:], img[8192:])
}

// TestRegionTooLarge: a capture whose WRITEs name VAs 1 TiB apart (two
// registrations, or a malformed RETH) is not built in memory: Image and
// Written give nothing, the read-back is not made, and RegionErr names
// the span.
func TestRegionTooLarge(t *testing.T) {
	c, err := Load(filepath.Join("../pcaps/rxe", "write_bw.pcap"), LoadOptions{Decode: decodeOpts()})
	require.NoError(t, err)
	firsts := 0
	var b layers.BTH
	for i := range c.Frames {
		f := &c.Frames[i]
		if !f.IB || f.PayloadEnd == 0 || f.Opcode != mustOpcode("RC_RDMA_WRITE_FIRST") {
			continue
		}
		if firsts++; firsts == 3 {
			dg := f.Datagram()
			require.NoError(t, b.DecodeFromBytes(dg, nil))
			binary.BigEndian.PutUint64(dg[layers.BTHLength:], b.RETH.VA+1<<40)
		}
	}
	require.GreaterOrEqual(t, firsts, 3)
	p, err := NewPlan(c, 0, 0)
	require.NoError(t, err)
	require.Equal(t, uint64(1<<40+4096), p.RegionLen)
	require.Error(t, p.RegionErr())
	assert.Equal(t, fmt.Sprintf("the requests span %d bytes of the responder's region from va 0x%x, more than the 256 MiB replay builds in memory", uint64(1<<40+4096), p.Responder.VA),
		p.RegionErr().Error())

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	assert.Nil(t, p.Image())
	_, _, _, _, ok := p.Written()
	assert.False(t, ok)
	rec := &recordingPeer{}
	rb := checkWrites(p, rec, Dest{QPN: 0x11}, Dest{QPN: 0x99, RKey: 0x1234, VA: 0x10000}, time.Millisecond)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated")
	require.NotNil(t, rb)
	assert.True(t, rb.Failed())
	assert.Equal(t, p.RegionErr(), rb.Err)
	assert.Empty(t, rec.sent, "nothing read back")

	// The capture as it was is within bounds.
	assert.NoError(t, loadPlan(t, "write_bw.pcap").RegionErr())
}
