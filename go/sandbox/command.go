package sandbox

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// Command builds the wrapper *exec.Cmd that launches spec's plugin under
// mode: sandbox-host-launch --via SOCKET when the launch service answers
// (see EnvLauncher), else sandbox-host run. Every control of the launch is
// an argument of the wrapper, never a variable of cmd.Env, because go-plugin
// appends the gateway's os.Environ() after cmd.Env and the last duplicate
// wins. cmd.Env is BaseEnv(spec.TmpDir); go-plugin appends its handshake
// variables to it, and sandbox-host passes those on when spec.Handshake
// names the cookie.
//
// Command never touches Stdin/Stdout/Stderr: go-plugin owns those pipes.
// On linux it sets cmd.SysProcAttr to have the kernel kill the wrapper, and
// with it the plugin, when the gateway dies, even by SIGKILL; a caller that
// sets SysProcAttr itself should keep Pdeathsig. The parent-death signal
// follows the thread that started the wrapper, so do not start plugins from
// a goroutine that calls runtime.LockOSThread and returns without unlocking.
//
// Command does not need Stage1.
func Command(spec Spec, mode Mode) (*exec.Cmd, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	if err := checkMode(mode); err != nil {
		return nil, fmt.Errorf("plugin %q: %v", spec.PluginName, err)
	}
	executable, err := Executable()
	if err != nil {
		return nil, err
	}
	wrapper, args := executable, []string{"run"}
	socket, err := answeringLauncher()
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %v", spec.PluginName, err)
	}
	if socket != "" {
		wrapper = filepath.Join(filepath.Dir(executable), launchClientName)
		if err := checkExecutable(wrapper); err != nil {
			return nil, fmt.Errorf("plugin %q: the launch service answers at %s, but its client %s is not usable: %v", spec.PluginName, socket, wrapper, err)
		}
		args = []string{"--via", socket}
	}
	cmd := exec.Command(wrapper, append(args, launchArgs(spec, mode)...)...)
	cmd.Env = BaseEnv(spec.TmpDir)
	dieWithGateway(cmd)
	return cmd, nil
}

// launchArgs are the options run and the launch client share, then the plugin.
func launchArgs(spec Spec, mode Mode) []string {
	network := spec.Network
	if network == "" {
		network = NetworkNone
	}
	args := []string{"--backend", string(mode)}
	if spec.PluginName != "" {
		args = append(args, "--name", spec.PluginName)
	}
	args = append(args, "--network", string(network), "--socket-dir", spec.SocketDir, "--tmp-dir", spec.TmpDir)
	for _, path := range spec.ReadPaths {
		args = append(args, "--read", path)
	}
	for _, entry := range spec.Env {
		args = append(args, "--env", entry)
	}
	if spec.Handshake != "" {
		args = append(args, "--handshake", spec.Handshake)
	}
	args = append(args, "--", spec.BinaryPath)
	return append(args, spec.Args...)
}

// checkMode refuses what cannot be a backend's name; which backends exist
// is sandbox-host's to say, since they are modules.
func checkMode(mode Mode) error {
	if mode == "" {
		return fmt.Errorf("mode is empty: pass Probe's Mode, or ModeOff to run the plugin unsandboxed on purpose")
	}
	valid := len(mode) <= 64 && mode[0] != '-'
	for _, c := range mode {
		valid = valid && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-')
	}
	if !valid {
		return fmt.Errorf("mode %q is not a backend name (up to 64 of a-z, 0-9 and -, not first), such as %q or %q", mode, ModeNamespaces, ModeLandlock)
	}
	return nil
}
