package sandbox_test

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
	"github.com/clawpatrol/sandbox-host/go/sandboxtest"
)

// useSandboxHost points package sandbox at executable for the test.
func useSandboxHost(t *testing.T, executable string) {
	previous := sandbox.SandboxHostPath
	sandbox.SandboxHostPath = executable
	t.Cleanup(func() { sandbox.SandboxHostPath = previous })
}

// writeExecutable writes a shell script and returns its path.
func writeExecutable(t *testing.T, path, script string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeInstall is a directory with a sandbox-host and, if withClient, a
// sandbox-host-launch that must never run: Command only names them.
func fakeInstall(t *testing.T, withClient bool) (sandboxHost, launchClient string) {
	dir := t.TempDir()
	sandboxHost = writeExecutable(t, filepath.Join(dir, "sandbox-host"), "exit 99")
	launchClient = filepath.Join(dir, "sandbox-host-launch")
	if withClient {
		writeExecutable(t, launchClient, "exit 99")
	}
	return sandboxHost, launchClient
}

// listen makes a unix socket that answers dials, as the launch service's does.
func listen(t *testing.T) string {
	t.Helper()
	dir, _ := sandboxtest.Dirs(t)
	socket := filepath.Join(dir, "launch.sock")
	listener, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close() })
	return socket
}

// noLauncher unsets EnvLauncher for the test and skips it when a launch
// service answers at the default socket anyway.
func noLauncher(t *testing.T) {
	t.Helper()
	t.Setenv(sandbox.EnvLauncher, "")
	os.Unsetenv(sandbox.EnvLauncher)
	socket := sandbox.DefaultLauncherSocket(os.Geteuid(), os.Getenv)
	if conn, err := net.Dial("unix", socket); err == nil {
		conn.Close()
		t.Skipf("a launch service answers at the default socket %s", socket)
	}
}
