package decode

import (
	"math"
	"time"
)

// SRTSamples are the service response times of one row of a -z ...,srt
// table (an NVMe-oF command, an RPC procedure): request to response,
// sorted by the table's Rows.
type SRTSamples struct {
	Samples []time.Duration
}

// Count is the number of samples.
func (r *SRTSamples) Count() int { return len(r.Samples) }

// Min is the shortest response time (Samples sorted, as Rows returns them).
func (r *SRTSamples) Min() time.Duration { return r.Quantile(0) }

// Max is the longest response time.
func (r *SRTSamples) Max() time.Duration { return r.Quantile(1) }

// Mean is the average response time.
func (r *SRTSamples) Mean() time.Duration {
	if len(r.Samples) == 0 {
		return 0
	}
	var sum time.Duration
	for _, s := range r.Samples {
		sum += s
	}
	return sum / time.Duration(len(r.Samples))
}

// Quantile is the q-quantile by the nearest-rank method: the smallest
// sample with at least q of the samples at or below it.
func (r *SRTSamples) Quantile(q float64) time.Duration {
	n := len(r.Samples)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(n))) - 1
	return r.Samples[min(max(i, 0), n-1)]
}
