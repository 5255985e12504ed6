package interop

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runHarness runs run.sh with args (and the table at table, when not empty) and returns its
// combined output and exit status. Results go to a temporary directory so nothing is left behind.
func runHarness(t *testing.T, table string, args ...string) (string, int) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	cmd := exec.Command("bash", append([]string{"run.sh"}, args...)...)
	cmd.Env = append(os.Environ(), "IBWIRE_INTEROP_OUT="+t.TempDir(), "IBWIRE_INTEROP_CACHE="+t.TempDir(), "NO_BUILD=1")
	if table != "" {
		cmd.Env = append(cmd.Env, "INTEROP_SCENARIOS="+table)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if err != nil {
		var exitErr *exec.ExitError
		require.ErrorAs(t, err, &exitErr, "run.sh did not run: %s", out.String())
		code = exitErr.ExitCode()
	}
	return out.String(), code
}

// scenario is one line of `run.sh list`.
type scenario struct{ name, role string }

func listScenarios(t *testing.T) map[string]scenario {
	t.Helper()
	out, code := runHarness(t, "", "list")
	require.Equal(t, 0, code, out)
	all := map[string]scenario{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 3, "list line %q", line)
		all[f[0]] = scenario{f[0], f[1]}
	}
	return all
}

func TestTableIsConsistent(t *testing.T) {
	out, code := runHarness(t, "", "check")
	require.Equal(t, 0, code, out)
	assert.Regexp(t, `^\d+ scenarios ok\n$`, out)
}

// The samples table (keep-samples.sh) parses, and every sample it adds is an
// ibpeer scenario whose capture will be kept.
func TestSamplesTableIsConsistent(t *testing.T) {
	abs, err := filepath.Abs("samples.sh")
	require.NoError(t, err)
	out, code := runHarness(t, abs, "check")
	require.Equal(t, 0, code, out)
	out, code = runHarness(t, abs, "list")
	require.Equal(t, 0, code, out)
	samples := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "sample_") {
			continue
		}
		samples++
		assert.Contains(t, []string{"guest-client", "guest-server"}, f[1], "%s runs ibpeer against rxe", f[0])
	}
	assert.GreaterOrEqual(t, samples, 3, out)
}

// Issue 8's "done when" list: each tool against ibpeer, with the guest as client (_gc) and as
// server (_gs). The table must carry every one, so none can be dropped quietly.
func TestIssue8ScenariosInBothRoles(t *testing.T) {
	all := listScenarios(t)
	for _, tool := range []string{
		"rc_pingpong", "rc_pingpong_8k", "uc_pingpong", "ud_pingpong",
		"write_bw", "read_bw", "send_bw", "atomic_fadd", "atomic_cas",
		"rping", "ucmatose", "write_bw_cm",
		"write_bw_loss", "read_bw_loss", "rping_loss",
	} {
		t.Run(tool, func(t *testing.T) {
			gc, ok := all["peer_"+tool+"_gc"]
			require.True(t, ok, "no scenario peer_%s_gc", tool)
			assert.Equal(t, "guest-client", gc.role)
			gs, ok := all["peer_"+tool+"_gs"]
			require.True(t, ok, "no scenario peer_%s_gs", tool)
			assert.Equal(t, "guest-server", gs.role)
		})
	}
}

// stopAfter is timeout(1) in front of a host command: "timeout --preserve-status -s INT 50 ".
var stopAfter = regexp.MustCompile(`^timeout( --?\S+( [A-Z]+)?)* \d+ `)

// The host side of every guest-client/guest-server scenario is ibpeer, and the loss scenarios do
// inject loss: read the table itself for what `list` does not show.
func TestPeerScenariosRunIbpeer(t *testing.T) {
	table, err := os.ReadFile("scenarios.sh")
	require.NoError(t, err)
	def := regexp.MustCompile(`(?m)^def (peer_\S+) (guest-client|guest-server) "([^"]*)" "([^"]*)"(.*(?:\n\t.*)*)`)
	matches := def.FindAllStringSubmatch(string(table), -1)
	require.NotEmpty(t, matches)
	for _, m := range matches {
		name, role, client, server, rest := m[1], m[2], m[3], m[4], m[5]
		host := server
		if role == "guest-server" {
			host = client
		}
		// A daemon the scenario stops after a while runs under timeout(1).
		host = stopAfter.ReplaceAllString(host, "")
		assert.True(t, strings.HasPrefix(host, "ibpeer "), "%s: host side %q is not ibpeer", name, host)
		assert.Contains(t, host, "--bind $HOST", "%s: ibpeer must be told its address", name)
		if strings.Contains(name, "_loss_") {
			assert.Regexp(t, `loss=[0-9]+%`, rest, "%s: no loss injected", name)
		}
		// issue 8: WRITE and READ, with loss too, complete byte-exact: the verdict compares
		// ibpeer's buffer with the bytes the capture shows
		if regexp.MustCompile(`^peer_(write|read)_bw(_loss|_100)?_g[cs]$`).MatchString(name) {
			assert.Contains(t, rest, "check_data=1", "%s: the data that moved is not checked", name)
		}
	}
}

func TestCIScenariosExist(t *testing.T) {
	all := listScenarios(t)
	ci, err := os.ReadFile("ci.sh")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^exec \./run\.sh (.+)$`).FindStringSubmatch(string(ci))
	require.NotNil(t, m, "ci.sh has no exec ./run.sh line")
	names := strings.Fields(m[1])
	assert.Equal(t, []string{"rxe_rc_pingpong", "peer_rc_pingpong_gc", "peer_rc_pingpong_gs"}, names)
	for _, n := range names {
		assert.Contains(t, all, n)
	}
}

// The runner refuses a table it cannot run, naming the scenario, before it needs root or QEMU.
func TestRunnerRejects(t *testing.T) {
	const good = `def x rxe-rxe "c" "s" desc=d`
	for _, tc := range []struct {
		name, table string
		args        []string
		want        string
	}{
		{"unknown scenario", good, []string{"nosuch"}, "no scenario matches 'nosuch'"},
		{"unknown role", `def x guest-peer "c" "s" desc=d`, []string{"list"}, "scenario x: unknown role guest-peer"},
		{"duplicate", good + "\n" + good, []string{"list"}, "scenario x defined twice"},
		{"unknown key", `def x rxe-rxe "c" "s" expect=y desc=d`, []string{"list"}, "scenario x: unknown key expect"},
		{"bad regexp", `def x rxe-rxe "c" "s" expect_client='a(' desc=d`, []string{"check"}, "scenario x: expect_client is not an extended regexp"},
		{"bad tolerate", `def x rxe-rxe "c" "s" tolerate="[" desc=d`, []string{"check"}, "scenario x: tolerate is not an extended regexp"},
		{"bad listen", `def x rxe-rxe "c" "s" listen=udp desc=d`, []string{"check"}, "scenario x: listen must be tcp or sleep"},
		{"bad loss", `def x rxe-rxe "c" "s" loss=2 desc=d`, []string{"check"}, "scenario x: loss must look like 2%"},
		{"host in peer role", `def x guest-client "c" "s" host=h desc=d`, []string{"check"}, "scenario x: host= is for rxe-rxe"},
		{"check_data on rxe-rxe", `def x rxe-rxe "c" "s" check_data=1 desc=d`, []string{"check"}, "scenario x: check_data=1 is for a scenario whose host side is ibpeer perftest"},
		{"check_data not 1", `def x guest-client "c" "s" check_data=yes desc=d`, []string{"check"}, "scenario x: check_data=1 is for"},
		{"refused on rxe-rxe", `def x rxe-rxe "c" "s" refused=no forbid=r desc=d`, []string{"check"}, "scenario x: refused= is for a scenario whose host side is ibpeer"},
		{"refused with loss", `def x guest-client "c" "s" refused=no forbid=r loss=2% desc=d`, []string{"check"}, "scenario x: a refused test moves no data"},
		{"refused without forbid", `def x guest-client "c" "s" refused=no desc=d`, []string{"check"}, "scenario x: refused= needs forbid="},
		{"bad refused", `def x guest-client "c" "s" refused='a(' forbid=r desc=d`, []string{"check"}, "scenario x: refused is not an extended regexp"},
		{"bad table before running", `def x rxe-rxe "c" "s" mtu=big desc=d`, []string{"x"}, "scenario x: mtu must be a number"},
		{"bad guest_loss", `def x rxe-rxe "c" "s" guest_loss=2 desc=d`, []string{"check"}, "scenario x: guest_loss must look like 2%"},
		{"loss and guest_loss", `def x rxe-rxe "c" "s" loss=2% guest_loss=2% desc=d`, []string{"check"}, "scenario x: loss= and guest_loss= exclude each other"},
		{"points without guest_loss", `def x rxe-rxe "c" "s" points=guest desc=d`, []string{"check"}, "scenario x: points=guest needs guest_loss="},
		{"points elsewhere", `def x rxe-rxe "c" "s" points=host guest_loss=2% desc=d`, []string{"check"}, "scenario x: points must be guest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := filepath.Join(t.TempDir(), "scenarios.sh")
			require.NoError(t, os.WriteFile(table, []byte(tc.table+"\n"), 0o644))
			out, code := runHarness(t, table, tc.args...)
			assert.NotEqual(t, 0, code, out)
			assert.Contains(t, out, tc.want)
		})
	}
}

// Issue 24: what ibpeer perftest does not run is refused cleanly, in both roles, and the table says
// so (refused=, forbid= the result row); the small-size data checks and the latency tests run in
// both roles.
func TestIssue24ScenariosInBothRoles(t *testing.T) {
	all := listScenarios(t)
	table, err := os.ReadFile("scenarios.sh")
	require.NoError(t, err)
	for _, tool := range []string{"write_bw_q4", "write_bw_bidir", "write_bw_q4both", "write_bw_bidirboth", "write_bw_100", "read_bw_100",
		"write_lat", "read_lat", "send_lat", "atomic_lat"} {
		for suffix, role := range map[string]string{"_gc": "guest-client", "_gs": "guest-server"} {
			name := "peer_" + tool + suffix
			if name == "peer_write_bw_bidir_gs" {
				// ibpeer runs -b now: a guest server running -b is
				// peer_write_bw_bidirboth_gs, which passes
				continue
			}
			sc, ok := all[name]
			require.True(t, ok, "no scenario %s", name)
			assert.Equal(t, role, sc.role)
			def := regexp.MustCompile(`(?m)^def ` + name + ` .*(?:\n\t.*)*`).FindString(string(table))
			switch {
			case strings.HasSuffix(tool, "_100"):
				assert.Contains(t, def, "check_data=1", name)
			case strings.HasSuffix(tool, "_lat"):
				// the client prints the latency row; the WRITE and SEND servers too
				assert.Contains(t, def, `expect_client="$OK_LAT"`, name)
				if tool == "write_lat" || tool == "send_lat" {
					assert.Contains(t, def, `expect_server="$OK_LAT"`, name)
				}
			case strings.HasSuffix(tool, "both"):
				// both sides run the same -q or -b: both print the result row
				assert.Contains(t, def, `expect_client="$OK_BW"`, name)
				assert.Contains(t, def, `expect_server="$OK_BW"`, name)
			default:
				assert.Contains(t, def, "refused=", name)
				assert.Contains(t, def, `forbid="$OK_BW"`, name)
			}
		}
	}
}
