package sandbox_test

import (
	"testing"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
)

func TestDefaultLauncherSocketFollowsSandboxHostsStateDir(t *testing.T) {
	cases := []struct {
		name      string
		euid      int
		xdg, home string
		want      string
	}{
		{"root", 0, "/x", "/h", "/var/lib/sandbox-host/launcher/launch.sock"},
		{"XDG_STATE_HOME", 1000, "/x", "/h", "/x/sandbox-host/launcher/launch.sock"},
		{"relative XDG_STATE_HOME", 1000, "x", "/h", "/h/.local/state/sandbox-host/launcher/launch.sock"},
		{"HOME", 1000, "", "/h", "/h/.local/state/sandbox-host/launcher/launch.sock"},
		{"relative HOME", 1000, "", "h", "/tmp/sandbox-host-1000/launcher/launch.sock"},
		{"neither", 65534, "", "", "/tmp/sandbox-host-65534/launcher/launch.sock"},
	}
	for _, c := range cases {
		env := map[string]string{"XDG_STATE_HOME": c.xdg, "HOME": c.home}
		got := sandbox.DefaultLauncherSocket(c.euid, func(name string) string { return env[name] })
		if got != c.want {
			t.Errorf("%s: default launcher socket is %s, want %s", c.name, got, c.want)
		}
	}
}
