package sandbox

import (
	"os/exec"
	"syscall"
)

// dieWithGateway has the kernel SIGKILL the wrapper when the gateway dies;
// the wrapper's plugin dies with the wrapper.
func dieWithGateway(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
