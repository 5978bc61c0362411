package sandbox_test

import (
	"syscall"
	"testing"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
	"github.com/clawpatrol/sandbox-host/go/sandboxtest"
)

func TestTheWrapperDiesWithTheGateway(t *testing.T) {
	sandboxHost, _ := fakeInstall(t, true)
	useSandboxHost(t, sandboxHost)
	for _, withLauncher := range []bool{false, true} {
		if withLauncher {
			t.Setenv(sandbox.EnvLauncher, listen(t))
		} else {
			noLauncher(t)
		}
		cmd, err := sandbox.Command(sandboxtest.Spec(t, "p", "/bin/true"), sandbox.ModeNamespaces)
		if err != nil {
			t.Fatalf("Command: %v", err)
		}
		if cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
			t.Errorf("%s does not die with the gateway: SysProcAttr %+v", cmd.Path, cmd.SysProcAttr)
		}
	}
}
