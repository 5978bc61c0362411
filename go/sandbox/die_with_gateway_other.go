//go:build !linux

package sandbox

import "os/exec"

// dieWithGateway can do nothing here: only linux has a parent-death signal,
// so elsewhere a gateway killed by SIGKILL does not take its wrappers along.
func dieWithGateway(*exec.Cmd) {}
