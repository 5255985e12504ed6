package output

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// appendJSONValue writes what json.Marshal writes.
func TestAppendJSONValue(t *testing.T) {
	seven := uint32(7)
	values := []any{uint64(0), uint64(math.MaxUint64), uint32(17), 0, -3, 12,
		0.0, 1.0, 0.044261, 73424.31702478549, 1e-7, 1.5e-9, 1e21, 123456789e15, -2.5e-8, 1e20, math.Inf(1),
		"", "192.168.77.11", "fe80::1", `a"b`, `a\b`, "<kiwi>", "x&y", "tab\there", "é", "\x7f",
		(*uint32)(nil), &seven, map[string]uint64{"SEND": 5}, latencyJSON{P50: 1.5, Count: 2}}
	for _, v := range values {
		want, _ := json.Marshal(v)
		assert.Equal(t, string(want), string(appendJSONValue(nil, v)), "%#v", v)
	}
}
