package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// Availability is the result of probing this host for a backend.
type Availability struct {
	// Mode is the best working backend. Never ModeOff unless EnvBackend
	// forces it: when nothing works Probe returns an error instead.
	Mode Mode
	// Warning is non-empty when Mode is a degraded fallback; it
	// spells out exactly what the fallback does not cover.
	Warning string
	// LandlockABI is the kernel's Landlock ABI version on linux
	// (0 when unsupported). ABI >= 4 adds TCP bind/connect rules.
	LandlockABI int
}

// The verdicts of sandbox-host probe, per executable and EnvBackend value.
// Only verdicts are kept: a probe that could not run is tried again.
var probes = struct {
	sync.Mutex
	verdicts map[probeKey]probeVerdict
}{verdicts: map[probeKey]probeVerdict{}}

type probeKey struct{ executable, forced string }

type probeVerdict struct {
	availability Availability
	err          error
}

// Probe detects the best available sandbox backend on this host by running
// sandbox-host probe --json. The result is cached per EnvBackend value. A
// forced backend that fails its own probe is an error (it does not fall
// through to another backend).
func Probe() (Availability, error) {
	executable, err := Executable()
	if err != nil {
		return Availability{}, err
	}
	key := probeKey{executable, os.Getenv(EnvBackend)}
	probes.Lock()
	defer probes.Unlock()
	if verdict, ok := probes.verdicts[key]; ok {
		return verdict.availability, verdict.err
	}
	verdict, err := runProbe(executable)
	if err != nil {
		return Availability{}, err
	}
	probes.verdicts[key] = verdict
	return verdict.availability, verdict.err
}

// The fields of sandbox-host probe --json that Availability holds.
type probeReport struct {
	Chosen      *string `json:"chosen"`
	Warning     string  `json:"warning"`
	LandlockABI int     `json:"landlock_abi"`
	Error       string  `json:"error"`
}

// runProbe returns sandbox-host's verdict, or an error when there was none.
func runProbe(executable string) (probeVerdict, error) {
	cmd := exec.Command(executable, "probe", "--json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var exit *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &exit) && exit.ExitCode() == 1) {
		return probeVerdict{}, fmt.Errorf("%s probe --json: %v%s", executable, runErr, stderrTail(stderr.String()))
	}
	var report probeReport
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		return probeVerdict{}, fmt.Errorf("%s probe --json printed no probe report (%v): %q%s", executable, err, stdout.String(), stderrTail(stderr.String()))
	}
	if report.Chosen == nil || *report.Chosen == "" {
		why := report.Error
		if why == "" {
			why = "no backend chosen and no reason given" + stderrTail(stderr.String())
		}
		return probeVerdict{err: fmt.Errorf("sandbox-host probe: %s", why)}, nil
	}
	return probeVerdict{availability: Availability{
		Mode:        Mode(*report.Chosen),
		Warning:     report.Warning,
		LandlockABI: report.LandlockABI,
	}}, nil
}

func stderrTail(stderr string) string {
	if stderr = strings.TrimSpace(stderr); stderr == "" {
		return ""
	}
	return "; stderr: " + stderr
}
