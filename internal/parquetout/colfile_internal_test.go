package parquetout

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A column that takes another's definition levels must have a value in
// every row the levels say defined: a row where the leader has one and it
// has none would make a page with fewer values than its levels claim,
// which no reader can make sense of. The row group is refused instead.
func TestSharedLevelsMustAgree(t *testing.T) {
	for _, tc := range []struct {
		name    string
		skipRow int // the row the follower misses, -1 for none
		wantErr bool
	}{{"every row", -1, false}, {"one row short", 1, true}} {
		t.Run(tc.name, func(t *testing.T) {
			leader, follower := newColumn("dscp", kindUint32, false), newColumn("src", kindUint32, false)
			follower.shareDefs(leader)
			f, err := os.Create(filepath.Join(t.TempDir(), "t.parquet"))
			require.NoError(t, err)
			defer f.Close()
			cf, err := newColFile(f, "packets", []*column{leader, follower}, 4, 4, 0)
			require.NoError(t, err)
			for row := range 3 {
				leader.putInt32(int32(row))
				if row != tc.skipRow {
					follower.putInt32(int32(row))
				}
				cf.endRow()
			}
			err = cf.flush()
			if tc.wantErr {
				assert.ErrorContains(t, err, "column src has 2 values for 3 defined rows")
				return
			}
			assert.NoError(t, err)
		})
	}
}
