//go:build !linux

package sandboxtest

import "syscall"

func serveAttributes(settings launcherSettings) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: settings.credential}
}
