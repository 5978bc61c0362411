package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// SandboxHostPath is the sandbox-host executable that Probe and Command run.
// Empty: $SANDBOX_HOST (EnvSandboxHost), else sandbox-host in PATH.
var SandboxHostPath string

// launchClientName is the launch service's client, installed beside sandbox-host.
const launchClientName = "sandbox-host-launch"

// Executable returns the absolute path of the sandbox-host executable that
// Probe and Command run, found as SandboxHostPath says.
func Executable() (string, error) {
	path, source := SandboxHostPath, "sandbox.SandboxHostPath"
	if path == "" {
		path, source = os.Getenv(EnvSandboxHost), EnvSandboxHost
	}
	if path == "" {
		found, err := exec.LookPath("sandbox-host")
		if err != nil {
			return "", fmt.Errorf("sandbox-host is not in PATH (%v); install it, or name it in %s or sandbox.SandboxHostPath", err, EnvSandboxHost)
		}
		path, source = found, "PATH"
	}
	absolute, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("sandbox-host %q (from %s): %v", path, source, err)
	}
	if err := checkExecutable(absolute); err != nil {
		return "", fmt.Errorf("sandbox-host %q (from %s): %v", path, source, err)
	}
	return absolute, nil
}

func checkExecutable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("not an executable regular file")
	}
	return nil
}
