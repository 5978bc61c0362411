package sandboxtest

import "syscall"

// serveAttributes also has the kernel kill the service if the test binary
// dies without its cleanup.
func serveAttributes(settings launcherSettings) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: settings.credential, Pdeathsig: syscall.SIGKILL}
}
