package duckdb_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ibdump is the command built from the parent module for the tests.
var ibdump string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ibwire-duckdb")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ibdump = filepath.Join(dir, "ibdump")
	build := exec.Command("go", "build", "-o", ibdump, "./cmd/ibdump")
	build.Dir, build.Stdout, build.Stderr = "../..", os.Stderr, os.Stderr
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building ibdump:", err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(ibdump, args...).Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "ibdump %s: %s", strings.Join(args, " "), stderr)
	return out
}

// captures are every capture of pcaps/rxe.
func captures(t *testing.T) []string {
	paths, err := filepath.Glob("../../pcaps/rxe/*.pcap")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	return paths
}

// convJSON is ibdump -q -z conv,qp -T json: one object per connection.
func convJSON(t *testing.T, path string) []map[string]any {
	var convs []map[string]any
	dec := json.NewDecoder(strings.NewReader(string(run(t, "-q", "-z", "conv,qp", "-T", "json", path))))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&convs))
	return convs
}

// connKey names a connection the same way in both outputs.
func connKey(c map[string]any) string {
	return fmt.Sprintf("%v %v %v %v %v", c["a"], c["b"], normalise(c["qpn_ab"]), normalise(c["qpn_ba"]), normalise(c["start"]))
}

func openDB(t *testing.T) *sql.DB {
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// queryJSON runs a query whose one column is a JSON object per row.
func queryJSON(t *testing.T, db *sql.DB, query string) []map[string]any {
	t.Helper()
	rows, err := db.Query(query)
	require.NoError(t, err, query)
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var m map[string]any
		require.NoError(t, dec.Decode(&m), s)
		out = append(out, m)
	}
	require.NoError(t, rows.Err())
	return out
}

// perConnectionSQL computes, from the packets table alone, what -z conv,qp
// counts per connection: packets and bytes each way, retransmissions, and
// NAKs by code. A packet read before the analysis merged two connection
// ids carries the merged one, so packets join connections on either.
const perConnectionSQL = `
WITH c AS (SELECT conv_id, a, b, qpn_ab, qpn_ba, start, aliases FROM read_parquet('%[1]s/connections/**/*.parquet')),
p AS (SELECT * FROM read_parquet('%[1]s/packets/**/*.parquet', hive_partitioning = false) WHERE conv_id IS NOT NULL AND conv_id > 0)
SELECT to_json({
  a: c.a, b: c.b, qpn_ab: c.qpn_ab, qpn_ba: c.qpn_ba, start: c.start,
  packets_ab: count(*) FILTER (WHERE p.direction = 1),
  packets_ba: count(*) FILTER (WHERE p.direction = 2),
  bytes_ab: coalesce(sum(p.frame_len) FILTER (WHERE p.direction = 1), 0),
  bytes_ba: coalesce(sum(p.frame_len) FILTER (WHERE p.direction = 2), 0),
  retransmissions: count(*) FILTER (WHERE p.retransmission),
  naks: {
    psn_seq_err: count(*) FILTER (WHERE p.nak = 0),
    invalid_req: count(*) FILTER (WHERE p.nak = 1),
    remote_access_err: count(*) FILTER (WHERE p.nak = 2),
    remote_op_err: count(*) FILTER (WHERE p.nak = 3),
    invalid_rd_req: count(*) FILTER (WHERE p.nak = 4)
  }
})::VARCHAR
FROM c JOIN p ON p.conv_id = c.conv_id OR list_contains(c.aliases, p.conv_id)
GROUP BY c.conv_id, c.a, c.b, c.qpn_ab, c.qpn_ba, c.start`

// TestPacketsAgreeWithConvQP: SQL over packets gives -z conv,qp's counts
// for every connection of every rxe capture.
func TestPacketsAgreeWithConvQP(t *testing.T) {
	db := openDB(t)
	for _, path := range captures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			dir := t.TempDir()
			run(t, "-T", "parquet", "-w", dir, "--label", "host=test", "--shard", "conv,3", path)
			want := map[string]map[string]any{}
			for _, c := range convJSON(t, path) {
				want[connKey(c)] = c
			}
			got := queryJSON(t, db, fmt.Sprintf(perConnectionSQL, dir))
			assert.Len(t, got, len(want))
			for _, g := range got {
				w, ok := want[connKey(g)]
				if !assert.True(t, ok, "SQL found connection %s, which -z conv,qp does not list", connKey(g)) {
					continue
				}
				for _, k := range []string{"packets_ab", "packets_ba", "bytes_ab", "bytes_ba", "retransmissions", "naks"} {
					assert.Equal(t, normalise(w[k]), normalise(g[k]), "%s: %s", connKey(g), k)
				}
			}
		})
	}
}

// TestConnectionsEqualConvQPJSON: the connections table, read by DuckDB
// and turned back into JSON, has every -z conv,qp -T json key with the
// same value.
func TestConnectionsEqualConvQPJSON(t *testing.T) {
	db := openDB(t)
	for _, path := range captures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			dir := t.TempDir()
			run(t, "-T", "parquet", "-w", dir, path)
			want := convJSON(t, path)
			got := queryJSON(t, db, fmt.Sprintf(`SELECT to_json(c)::VARCHAR FROM (SELECT * EXCLUDE (conv_id, aliases, spans, file_row_number)
				FROM read_parquet('%s/connections/*.parquet', file_row_number = true) ORDER BY file_row_number) c`, dir))
			require.Len(t, got, len(want))
			for i := range want {
				assert.Equal(t, keys(want[i]), keys(got[i]), "connection %d: the keys", i)
				for k, v := range want[i] {
					assert.Equal(t, normalise(v), normalise(got[i][k]), "connection %d (%s): %s", i, connKey(want[i]), k)
				}
			}
		})
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// normalise makes JSON numbers comparable whatever their spelling (DuckDB
// writes 1.0 where Go writes 1) and leaves the rest.
func normalise(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e)
		}
		return out
	}
	return v
}
