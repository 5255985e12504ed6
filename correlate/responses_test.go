package correlate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/correlate"
	"github.com/ibwire/ibwire/craft"
)

// TestResponseLosses: READ responses and ACKs lost between points are
// attributed to their segments on the responder's flow, and what they make
// the requester do (ask for the rest of a READ again, resend after a
// timeout) is not counted as a loss of its requests: the responder's
// responses said it had received them.
func TestResponseLosses(t *testing.T) {
	tests := []struct {
		name string
		loss craft.Loss
		seed uint64
	}{
		{"responses", craft.Loss{Responses: []int{3, 10, 17, 30, 45, 60}}, 9},
		{"responses and requests", craft.Loss{Responses: []int{5, 22, 41}, Every: 29}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := conversation(t, craft.Config{Delay: 14 * time.Microsecond, Step: 10 * time.Microsecond}, craft.Faults{Loss: tt.loss})
			mp := craft.MultiPoint{Points: []craft.CapturePoint{{}, {Offset: time.Millisecond}, {Offset: -time.Millisecond}},
				Hops: []time.Duration{2000, 3000, 4000, 5000}, Seed: tt.seed}
			mt, err := mp.Capture(tr)
			require.NoError(t, err)
			rep, err := correlate.Run(context.Background(), correlate.Config{Points: writePoints(t, mt, []string{"A", "B", "C"})})
			require.NoError(t, err)
			require.Len(t, rep.Flows, 2)
			for _, fl := range rep.Flows {
				side := craft.Requester
				if fl.Src != craft.DefaultRequester.IPv4.String() {
					side = craft.Responder
				}
				var losses []int
				for _, s := range fl.Segments {
					losses = append(losses, s.Losses)
				}
				assert.Equal(t, mt.Losses[side], losses, "%v losses by segment %v", side, fl.Segments)
			}
		})
	}
}
