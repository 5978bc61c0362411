package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// How long a launch service gets to accept the connection that tells
// Command it is there; a listening socket accepts at once.
const launcherDialTimeout = 2 * time.Second

// answeringLauncher returns the launch service's socket when one answers
// there, else "". The socket is EnvLauncher's, else the service's default;
// an EnvLauncher socket that does not answer is an error, since sandbox-host
// run would take that variable, which go-plugin passes it, and fail as well.
func answeringLauncher() (string, error) {
	if socket := os.Getenv(EnvLauncher); socket != "" {
		if err := dial(socket); err != nil {
			return "", fmt.Errorf("%s=%s, but no launch service answers there (%v); start sandbox-host serve with that [launcher] socket, or unset %s to launch with sandbox-host run", EnvLauncher, socket, err, EnvLauncher)
		}
		return socket, nil
	}
	socket := defaultLauncherSocket(os.Geteuid(), os.Getenv)
	if dial(socket) != nil {
		return "", nil
	}
	return socket, nil
}

func dial(socket string) error {
	conn, err := net.DialTimeout("unix", socket, launcherDialTimeout)
	if err != nil {
		return err
	}
	return conn.Close()
}

// defaultLauncherSocket is where sandbox-host serve listens when its
// [launcher] table names no socket: <state dir>/launcher/launch.sock.
func defaultLauncherSocket(euid int, getenv func(string) string) string {
	return filepath.Join(defaultStateDir(euid, getenv), "launcher", "launch.sock")
}

// defaultStateDir is sandbox-host's own rule for its state directory.
func defaultStateDir(euid int, getenv func(string) string) string {
	if euid == 0 {
		return "/var/lib/sandbox-host"
	}
	if xdg := getenv("XDG_STATE_HOME"); filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "sandbox-host")
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "state", "sandbox-host")
	}
	return fmt.Sprintf("/tmp/sandbox-host-%d", euid)
}
