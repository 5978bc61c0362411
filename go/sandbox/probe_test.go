package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
	"github.com/clawpatrol/sandbox-host/go/sandboxtest"
)

// countingSandboxHost wraps the real sandbox-host in a script that logs the
// EnvBackend value of each run, and returns the script and its log.
func countingSandboxHost(t *testing.T) (script, log string) {
	real := sandboxtest.SkipWithoutSandboxHost(t)
	dir := t.TempDir()
	log = filepath.Join(dir, "runs")
	script = writeExecutable(t, filepath.Join(dir, "sandbox-host"),
		`echo "run:$`+sandbox.EnvBackend+`" >> '`+log+`'; exec '`+real+`' "$@"`)
	return script, log
}

func runs(t *testing.T, log string) []string {
	data, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

func TestProbeRunsSandboxHostOncePerBackendValue(t *testing.T) {
	script, log := countingSandboxHost(t)
	useSandboxHost(t, script)
	t.Setenv(sandbox.EnvBackend, "")
	os.Unsetenv(sandbox.EnvBackend)
	best, err := sandbox.Probe()
	if err != nil {
		t.Skipf("no sandbox backend here: %v", err)
	}
	if best.Mode == "" || best.Mode == sandbox.ModeOff {
		t.Errorf("Probe chose %q, want a confining backend", best.Mode)
	}
	if again, err := sandbox.Probe(); err != nil || again != best {
		t.Errorf("the second Probe gave %+v, %v; the first %+v", again, err, best)
	}
	t.Setenv(sandbox.EnvBackend, string(sandbox.ModeLandlock))
	landlock, err := sandbox.Probe()
	if err != nil {
		t.Skipf("landlock does not work here: %v", err)
	}
	if landlock.Mode != sandbox.ModeLandlock || landlock.Warning == "" || landlock.LandlockABI < 1 {
		t.Errorf("Probe with %s=landlock gave %+v, want landlock, its warning and ABI", sandbox.EnvBackend, landlock)
	}
	// The real Landlock warning reads as its gaps, each said in the one string.
	if gaps := landlock.Gaps(); len(gaps) == 0 {
		t.Errorf("Landlock's warning %q gave no gaps", landlock.Warning)
	} else {
		for _, gap := range gaps {
			if gap.What == "" || gap.Close == "" || !strings.Contains(landlock.Warning, gap.What) {
				t.Errorf("gap %+v of warning %q", gap, landlock.Warning)
			}
		}
	}
	sandbox.Probe()
	os.Unsetenv(sandbox.EnvBackend)
	if again, _ := sandbox.Probe(); again != best {
		t.Errorf("Probe without %s after landlock gave %+v, want the first verdict %+v", sandbox.EnvBackend, again, best)
	}
	if got, want := strings.Join(runs(t, log), " "), "run: run:landlock"; got != want {
		t.Errorf("sandbox-host ran as %q, want once per backend value: %q", got, want)
	}
}

func TestProbeOfAForcedBackendThatFailsIsAnError(t *testing.T) {
	script, log := countingSandboxHost(t)
	useSandboxHost(t, script)
	for _, forced := range []string{string(sandbox.ModeSeatbelt), "nosuchbackend"} {
		t.Setenv(sandbox.EnvBackend, forced)
		for i := 0; i < 2; i++ {
			availability, err := sandbox.Probe()
			if err == nil || !strings.Contains(err.Error(), sandbox.EnvBackend+"="+forced) {
				t.Errorf("Probe with %s=%s gave %+v, %v; want an error naming the forced backend", sandbox.EnvBackend, forced, availability, err)
			}
		}
	}
	if got, want := strings.Join(runs(t, log), " "), "run:seatbelt run:nosuchbackend"; got != want {
		t.Errorf("sandbox-host ran as %q, want once per backend value, errors cached too: %q", got, want)
	}
}

func TestProbeThatCouldNotRunIsNotCached(t *testing.T) {
	dir := t.TempDir()
	script := writeExecutable(t, filepath.Join(dir, "sandbox-host"), `echo "it broke" >&2; exit 3`)
	useSandboxHost(t, script)
	for i := 0; i < 2; i++ {
		if _, err := sandbox.Probe(); err == nil || !strings.Contains(err.Error(), "it broke") {
			t.Errorf("Probe of a sandbox-host that exits 3: error %v, want one with its stderr", err)
		}
	}
	writeExecutable(t, script, `echo '{"chosen":"namespaces","warning":"","landlock_abi":7}'`)
	if availability, err := sandbox.Probe(); err != nil || availability.Mode != sandbox.ModeNamespaces {
		t.Errorf("Probe once sandbox-host answers: %+v, %v; a failure to run must not be cached", availability, err)
	}
}

func TestProbeOfAMissingSandboxHostSaysWhereItLooked(t *testing.T) {
	useSandboxHost(t, "")
	t.Setenv(sandbox.EnvSandboxHost, "/nonexistent/sandbox-host")
	if _, err := sandbox.Probe(); err == nil || !strings.Contains(err.Error(), "/nonexistent/sandbox-host") ||
		!strings.Contains(err.Error(), sandbox.EnvSandboxHost) {
		t.Errorf("Probe with a missing sandbox-host: error %v, want one naming the path and %s", err, sandbox.EnvSandboxHost)
	}
}
