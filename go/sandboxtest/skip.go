package sandboxtest

import (
	"os"
	"testing"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
)

// SkipWithoutSandboxHost skips the test, saying why, when sandbox.Executable
// finds no sandbox-host; else it returns its path.
func SkipWithoutSandboxHost(t testing.TB) string {
	t.Helper()
	executable, err := sandbox.Executable()
	if err != nil {
		t.Skipf("no sandbox-host here: %v", err)
	}
	return executable
}

// SkipWithoutBackend skips the test with the probe's reason when no
// backend works here (under the process's EnvBackend); else it returns
// what sandbox.Probe found.
func SkipWithoutBackend(t testing.TB) sandbox.Availability {
	t.Helper()
	SkipWithoutSandboxHost(t)
	availability, err := sandbox.Probe()
	if err != nil {
		t.Skipf("no sandbox backend here: %v", err)
	}
	return availability
}

// ForceBackend sets EnvBackend to mode for the rest of the test, so that
// sandbox.Probe and sandbox-host choose it and nothing else, and skips the
// test with the probe's reason when mode does not work here.
func ForceBackend(t *testing.T, mode sandbox.Mode) sandbox.Availability {
	t.Helper()
	SkipWithoutSandboxHost(t)
	t.Setenv(sandbox.EnvBackend, string(mode))
	availability, err := sandbox.Probe()
	if err != nil {
		t.Skipf("backend %s does not work here: %v", mode, err)
	}
	return availability
}

// skipUnlessRoot skips the test when it cannot hand files to another user.
func skipUnlessRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("%s needs root (euid is %d)", why, os.Geteuid())
	}
}
