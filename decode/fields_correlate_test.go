package decode_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ibwire/ibwire/decode"
)

func TestCorrelateFields(t *testing.T) {
	lost := &decode.Correlation{Point: "a", Seen: "a", Dropped: "", LostOn: "a → b", Copy: 1}
	seen := &decode.Correlation{Point: "a", Seen: "a,c", Dropped: "b", Copy: 2, Delay: 7 * time.Microsecond, HasDelay: true}
	tests := []struct {
		field string
		c     *decode.Correlation
		want  decode.Value
		has   bool
	}{
		{"ibwire.correlate.point", lost, decode.Value{S: "a"}, true},
		{"ibwire.correlate.seen", seen, decode.Value{S: "a,c"}, true},
		{"ibwire.correlate.dropped", seen, decode.Value{S: "b"}, true},
		{"ibwire.correlate.dropped", lost, decode.Value{}, false},
		{"ibwire.correlate.lost_on", lost, decode.Value{S: "a → b"}, true},
		{"ibwire.correlate.lost_on", seen, decode.Value{}, false},
		{"ibwire.correlate.copy", seen, decode.Value{U: 2}, true},
		{"ibwire.correlate.delay", seen, decode.Value{D: 7 * time.Microsecond}, true},
		{"ibwire.correlate.delay", lost, decode.Value{}, false},
		{"ibwire.correlate.point", nil, decode.Value{}, false},
		{"ibwire.correlate.copy", nil, decode.Value{}, false},
	}
	for _, tt := range tests {
		p := &decode.Packet{Correlation: tt.c}
		var v decode.Value
		has := decode.MustLookup(tt.field).Get(p, &v)
		assert.Equal(t, tt.has, has, "%s on %+v", tt.field, tt.c)
		if tt.has {
			assert.Equal(t, tt.want, v, "%s on %+v", tt.field, tt.c)
		}
	}
}
