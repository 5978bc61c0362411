package sandbox_test

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
	"github.com/clawpatrol/sandbox-host/go/sandboxtest"
)

// fullSpec sets every field of a Spec.
func fullSpec(t *testing.T) sandbox.Spec {
	spec := sandboxtest.Spec(t, "probe plugin", "/bin/true")
	spec.Network = sandbox.NetworkOutbound
	spec.ReadPaths = []string{"/etc", "/usr/share"}
	spec.Args = []string{"--flag=1", "", "two words"}
	spec.Env = []string{"GREETING=hello world", "FROM_GATEWAY"}
	spec.Handshake = "TEST_PLUGIN_COOKIE"
	return spec
}

func launchArgs(spec sandbox.Spec, mode sandbox.Mode) []string {
	return append([]string{"--backend", string(mode), "--name", spec.PluginName,
		"--network", string(spec.Network), "--socket-dir", spec.SocketDir, "--tmp-dir", spec.TmpDir,
		"--read", "/etc", "--read", "/usr/share",
		"--env", "GREETING=hello world", "--env", "FROM_GATEWAY",
		"--handshake", "TEST_PLUGIN_COOKIE", "--", spec.BinaryPath}, spec.Args...)
}

func checkWrapper(t *testing.T, spec sandbox.Spec, mode sandbox.Mode, path string, args []string) {
	t.Helper()
	cmd, err := sandbox.Command(spec, mode)
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	if cmd.Path != path {
		t.Errorf("the wrapper is %s, want %s", cmd.Path, path)
	}
	if want := append([]string{path}, args...); !reflect.DeepEqual(cmd.Args, want) {
		t.Errorf("the wrapper's argv is\n  %q\nwant\n  %q", cmd.Args, want)
	}
	if want := sandbox.BaseEnv(spec.TmpDir); !reflect.DeepEqual(cmd.Env, want) {
		t.Errorf("cmd.Env is %q, want BaseEnv %q: controls go in arguments", cmd.Env, want)
	}
	if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil {
		t.Error("Command set the wrapper's stdio, which go-plugin owns")
	}
}

func TestCommandIsSandboxHostRunWhenNoLaunchServiceAnswers(t *testing.T) {
	noLauncher(t)
	sandboxHost, _ := fakeInstall(t, true)
	useSandboxHost(t, sandboxHost)
	spec := fullSpec(t)
	checkWrapper(t, spec, sandbox.ModeLandlock, sandboxHost,
		append([]string{"run"}, launchArgs(spec, sandbox.ModeLandlock)...))
}

func TestCommandIsTheLaunchClientWhenTheLaunchServiceAnswers(t *testing.T) {
	sandboxHost, launchClient := fakeInstall(t, true)
	useSandboxHost(t, sandboxHost)
	socket := listen(t)
	t.Setenv(sandbox.EnvLauncher, socket)
	spec := fullSpec(t)
	checkWrapper(t, spec, sandbox.ModeNamespaces, launchClient,
		append([]string{"--via", socket}, launchArgs(spec, sandbox.ModeNamespaces)...))
}

func TestCommandOfAMinimalSpecPassesNetworkNone(t *testing.T) {
	noLauncher(t)
	sandboxHost, _ := fakeInstall(t, true)
	useSandboxHost(t, sandboxHost)
	spec := sandboxtest.Spec(t, "", "/bin/true")
	spec.Network = ""
	checkWrapper(t, spec, sandbox.ModeOff, sandboxHost, []string{"run", "--backend", "off",
		"--network", "none", "--socket-dir", spec.SocketDir, "--tmp-dir", spec.TmpDir, "--", "/usr/bin/true"})
}

func TestCommandRefusesALauncherVariableWithNoServiceBehindIt(t *testing.T) {
	sandboxHost, _ := fakeInstall(t, true)
	useSandboxHost(t, sandboxHost)
	dir, _ := sandboxtest.Dirs(t)
	silent := filepath.Join(dir, "nobody-listens.sock")
	t.Setenv(sandbox.EnvLauncher, silent)
	_, err := sandbox.Command(sandboxtest.Spec(t, "p", "/bin/true"), sandbox.ModeNamespaces)
	if err == nil || !strings.Contains(err.Error(), sandbox.EnvLauncher+"="+silent) ||
		!strings.Contains(err.Error(), "no launch service answers") {
		t.Errorf("Command with %s=%s and nothing listening: error %v, want one naming the variable and its socket", sandbox.EnvLauncher, silent, err)
	}
}

func TestCommandRefusesALaunchServiceWithoutItsClient(t *testing.T) {
	sandboxHost, launchClient := fakeInstall(t, false)
	useSandboxHost(t, sandboxHost)
	t.Setenv(sandbox.EnvLauncher, listen(t))
	_, err := sandbox.Command(sandboxtest.Spec(t, "p", "/bin/true"), sandbox.ModeNamespaces)
	if err == nil || !strings.Contains(err.Error(), launchClient) {
		t.Errorf("Command without %s: error %v, want one naming it", launchClient, err)
	}
}

func TestCommandOfAMissingSandboxHostSaysWhereItLooked(t *testing.T) {
	useSandboxHost(t, "/nonexistent/sandbox-host")
	_, err := sandbox.Command(sandboxtest.Spec(t, "p", "/bin/true"), sandbox.ModeNamespaces)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/sandbox-host") ||
		!strings.Contains(err.Error(), "sandbox.SandboxHostPath") {
		t.Errorf("Command with a missing sandbox-host: error %v, want one naming the path and where it came from", err)
	}
}

func TestCommandRefusesBadModes(t *testing.T) {
	sandboxHost, _ := fakeInstall(t, true)
	useSandboxHost(t, sandboxHost)
	spec := sandboxtest.Spec(t, "p", "/bin/true")
	for mode, want := range map[sandbox.Mode]string{
		"":            "mode is empty",
		"--help":      `mode "--help" is not a backend name`,
		"Namespaces":  `mode "Namespaces" is not a backend name`,
		"name spaces": `mode "name spaces" is not a backend name`,
	} {
		if _, err := sandbox.Command(spec, mode); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Command under mode %q: error %v, want one saying %q", mode, err, want)
		}
	}
}

func TestCommandRefusesBadSpecsNamingTheField(t *testing.T) {
	sandboxHost, _ := fakeInstall(t, true)
	useSandboxHost(t, sandboxHost)
	good := sandboxtest.Spec(t, "p", "/bin/true")
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good.SocketDir, link); err != nil {
		t.Fatal(err)
	}
	linkedBinary := filepath.Join(dir, "true")
	if err := os.Symlink(good.BinaryPath, linkedBinary); err != nil {
		t.Fatal(err)
	}
	notExecutable := filepath.Join(dir, "data")
	if err := os.WriteFile(notExecutable, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(good.TmpDir, strings.Repeat("d", 90))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		edit func(*sandbox.Spec)
		want string
	}{
		{func(s *sandbox.Spec) { s.BinaryPath = "" }, `plugin "p": spec BinaryPath: is empty`},
		{func(s *sandbox.Spec) { s.BinaryPath = "bin/true" }, `spec BinaryPath: "bin/true" is not an absolute path`},
		{func(s *sandbox.Spec) { s.BinaryPath = "/nonexistent/plugin" }, `spec BinaryPath: "/nonexistent/plugin" does not exist`},
		{func(s *sandbox.Spec) { s.BinaryPath = linkedBinary }, `spec BinaryPath: "` + linkedBinary + `" is not symlink-resolved (it resolves to "` + good.BinaryPath + `")`},
		{func(s *sandbox.Spec) { s.BinaryPath = notExecutable }, `spec BinaryPath: "` + notExecutable + `" is not an executable regular file`},
		{func(s *sandbox.Spec) { s.BinaryPath = "/usr/bin" }, `spec BinaryPath: "/usr/bin" is not an executable regular file`},
		{func(s *sandbox.Spec) { s.SocketDir = "" }, `spec SocketDir: is empty`},
		{func(s *sandbox.Spec) { s.SocketDir = "tmp/s" }, `spec SocketDir: "tmp/s" is not an absolute path`},
		{func(s *sandbox.Spec) { s.SocketDir = link }, `spec SocketDir: "` + link + `" is not symlink-resolved`},
		{func(s *sandbox.Spec) { s.SocketDir = "/usr/bin/true" }, `spec SocketDir: "/usr/bin/true" is not a directory`},
		{func(s *sandbox.Spec) { s.TmpDir = "relative" }, `spec TmpDir: "relative" is not an absolute path`},
		{func(s *sandbox.Spec) { s.TmpDir = good.TmpDir + "\n" }, `spec TmpDir: contains NUL or newline`},
		{func(s *sandbox.Spec) { s.Network = "outbund" }, `spec Network: "outbund" is not "none", "outbound" or "proxied"`},
		{func(s *sandbox.Spec) { s.ReadPaths = []string{"/etc", "etc"} }, `spec ReadPaths[1]: "etc" is not an absolute path`},
		{func(s *sandbox.Spec) { s.Args = []string{"a", "b\x00c"} }, `spec Args[1]: contains NUL`},
		{func(s *sandbox.Spec) { s.PluginName = "-x" }, `spec PluginName: "-x" starts with '-'`},
		{func(s *sandbox.Spec) { s.PluginName = "a\nb" }, `spec PluginName: contains NUL or newline`},
		{func(s *sandbox.Spec) { s.Env = []string{"OK=1", "1BAD=x"} }, `spec Env[1]: "1BAD" is not a variable name`},
		{func(s *sandbox.Spec) { s.Env = []string{"=x"} }, `spec Env[0]: "" is not a variable name`},
		{func(s *sandbox.Spec) { s.Env = []string{"A-B"} }, `spec Env[0]: "A-B" is not a variable name`},
		{func(s *sandbox.Spec) { s.Env = []string{"X=a\x00b"} }, `spec Env[0]: "X" holds a NUL byte`},
		{func(s *sandbox.Spec) { s.Env = []string{"CLAWPATROL_SANDBOX_SPEC=x"} }, `spec Env[0]: CLAWPATROL_SANDBOX_SPEC: CLAWPATROL_* variables are the gateway's`},
		{func(s *sandbox.Spec) { s.Env = []string{"HOME=/root"} }, `spec Env[0]: HOME is BaseEnv's`},
		{func(s *sandbox.Spec) { s.Handshake = "COOKIE=value" }, `spec Handshake: "COOKIE=value" is not a variable name`},
		{func(s *sandbox.Spec) { s.Handshake = "CLAWPATROL_X" }, `spec Handshake: CLAWPATROL_X: CLAWPATROL_* variables`},
		{func(s *sandbox.Spec) { s.Handshake = "C"; s.TmpDir = long }, `spec TmpDir: "` + long + `" is `},
	}
	for _, c := range cases {
		spec := good
		c.edit(&spec)
		if _, err := sandbox.Command(spec, sandbox.ModeNamespaces); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Command(%+v): error %v, want one saying %q", spec, err, c.want)
		}
	}
}

// The wrapper's environment holds all of the gateway's, as go-plugin makes
// it; the plugin still gets BaseEnv and what the Spec names, and nothing more.
func TestThePluginGetsBaseEnvAndOnlyWhatTheSpecNames(t *testing.T) {
	sandboxtest.SkipWithoutBackend(t)
	availability, _ := sandbox.Probe()
	sandbox.ForgetStage1()
	spec := sandboxtest.Spec(t, "env", "/usr/bin/env")
	spec.Env = []string{"GREETING=hello world", "FROM_GATEWAY", "UNSET_IN_GATEWAY"}
	spec.Handshake = "TEST_PLUGIN_COOKIE"
	t.Setenv("FROM_GATEWAY", "passed by name")
	t.Setenv("GATEWAY_SECRET", "never in a plugin")
	t.Setenv("TEST_PLUGIN_COOKIE", "cookie value")
	t.Setenv("PLUGIN_MIN_PORT", "10000")
	t.Setenv("PLUGIN_PROTOCOL_VERSIONS", "1,2")
	os.Unsetenv("UNSET_IN_GATEWAY")
	cmd, err := sandbox.Command(spec, availability.Mode)
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	cmd.Env = append(cmd.Env, os.Environ()...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%q: %v; output %q, stderr %q", cmd.Args, err, out, stderr.String())
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := append(sandbox.BaseEnv(spec.TmpDir), "GREETING=hello world", "FROM_GATEWAY=passed by name",
		"TEST_PLUGIN_COOKIE=cookie value", "PLUGIN_MIN_PORT=10000", "PLUGIN_PROTOCOL_VERSIONS=1,2")
	sort.Strings(got)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("under %s the plugin's environment is\n  %q\nwant\n  %q", availability.Mode, got, want)
	}
	if sandbox.Stage1Called() {
		t.Error("Stage1 was called: this test checks that Command needs no Stage1")
	}
}
