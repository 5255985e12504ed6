package layers_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// bthPair decodes the same data into two BTHs kept across packets, one by
// DecodeFromBytes and one by the reference walk over the header list, and
// requires the two to agree on everything: fields, slices, error,
// truncation.
type bthPair struct{ fast, ref layers.BTH }

func (p *bthPair) check(t testing.TB, data []byte, what string) {
	var tf, tr truncFeedback
	ef := p.fast.DecodeFromBytes(data, &tf)
	er := layers.DecodeBTHByList(&p.ref, data, &tr)
	require.Equal(t, er, ef, "%s: error", what)
	require.Equal(t, tr, tf, "%s: truncated", what)
	require.Empty(t, layers.SameBTH(&p.fast, &p.ref), what)
	require.Equal(t, p.ref.NextLayerType(), p.fast.NextLayerType(), what)
	require.Equal(t, p.ref.PayloadType(), p.fast.PayloadType(), what)
	for k := layers.HdrRDETH; k <= layers.HdrCNP; k++ {
		require.Equal(t, p.ref.HasETH(k), p.fast.HasETH(k), "%s: HasETH(%s)", what, k)
	}
}

// bthCases makes transport packets of every opcode, DC or not, every pad
// count, QPs that make a UD payload a MAD or not, and every length from
// nothing to a few bytes of payload past the headers: whole, cut inside
// each header or the ICRC, and with more pad than payload.
func bthCases(yield func(data []byte, dc bool) bool) {
	r := rand.New(rand.NewPCG(25, 1))
	qps := [][2]uint32{{0x12345, 0x54321}, {1, 0x54321}, {0x12345, 0}}
	for op := range 256 {
		for _, dc := range []bool{false, true} {
			longest := layers.BTHLength + layers.DCExtensionLength + layers.Opcode(op).Info().HeaderLength() + 12
			for n := 0; n <= longest; n++ {
				for pad := range 4 {
					qps := qps
					if layers.Opcode(op).Service() != layers.ServiceUD {
						qps = qps[:1] // the QPs matter to UD alone
					}
					for _, qp := range qps {
						buf := make([]byte, n+7) // room after the data, as in a frame
						for i := range buf {
							buf[i] = byte(r.Uint32())
						}
						data := buf[3 : 3+n]
						if n > 8 {
							data[0] = byte(op)
							data[1] = data[1]&0xCF | byte(pad)<<4
							data[5], data[6], data[7] = byte(qp[0]>>16), byte(qp[0]>>8), byte(qp[0])
						}
						if hdr := layers.BTHLength; n >= hdr+8 {
							if dc && op >= 0x40 && op <= 0x5F {
								hdr += layers.DCExtensionLength
							}
							if n >= hdr+8 {
								data[hdr+5], data[hdr+6], data[hdr+7] = byte(qp[1]>>16), byte(qp[1]>>8), byte(qp[1])
							}
						}
						if !yield(data, dc) {
							return
						}
					}
				}
			}
		}
	}
}

func TestBTHLayoutAgreesWithHeaderList(t *testing.T) {
	var p bthPair
	n := 0
	for data, dc := range bthCases {
		p.fast.DecodeDC, p.ref.DecodeDC = dc, dc
		p.check(t, data, "")
		n++
	}
	t.Logf("%d transport packets decoded both ways", n)
	require.Greater(t, n, 50000)
}

func FuzzBTHLayout(f *testing.F) {
	i := 0
	for data, dc := range bthCases {
		if i%97 == 0 {
			f.Add(data, dc)
		}
		i++
	}
	var p bthPair
	f.Fuzz(func(t *testing.T, data []byte, dc bool) {
		p.fast.DecodeDC, p.ref.DecodeDC = dc, dc
		p.check(t, data, "")
	})
}
