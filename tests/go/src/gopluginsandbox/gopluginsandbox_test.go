// Gateways built on go-plugin, as Debian ships it, launch real go-plugin
// plugins through package sandbox, under each linux backend, as root and as
// nobody, with and without the launch service.
package gopluginsandbox_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
	"github.com/clawpatrol/sandbox-host/go/sandboxtest"
	"gopluginsandbox/reporter"
)

// install is a world-readable copy of sandbox-host and of the test's own
// binaries, since the checkout may be under a home directory nobody cannot
// enter, and the files the plugins are asked about.
var install struct {
	skip        string // why the tests cannot run, when they cannot
	dir         string
	sandboxHost string
	gateway     string
	plugins     map[string]string // by protocol
	grantedDir  string
	granted     string // a file in grantedDir, the plugins' ReadPaths
	secret      string // a file of the host the plugins must not read
	contents    map[string]string
	secretValue string // of secretVariable in the gateway's environment
}

const secretVariable = "GATEWAY_SECRET_TOKEN"

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gopluginsandbox:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "sandbox-host-go-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return 0, err
	}
	install.dir = dir
	install.gateway = filepath.Join(dir, "bin", "gateway")
	install.plugins = map[string]string{
		"netrpc": filepath.Join(dir, "bin", "netrpc-plugin"),
		"grpc":   filepath.Join(dir, "bin", "grpc-plugin"),
	}
	for binary, pkg := range map[string]string{
		install.gateway:           "gopluginsandbox/gateway",
		install.plugins["netrpc"]: "gopluginsandbox/netrpcplugin",
		install.plugins["grpc"]:   "gopluginsandbox/grpcplugin",
	} {
		if out, err := exec.Command("go", "build", "-o", binary, pkg).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	if err := writeFiles(dir); err != nil {
		return 0, err
	}
	built, err := sandbox.Executable()
	if err != nil {
		install.skip = err.Error()
		return m.Run(), nil
	}
	if install.sandboxHost, err = copyInstall(filepath.Dir(filepath.Dir(built)), dir); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

func writeFiles(dir string) error {
	install.grantedDir = filepath.Join(dir, "granted")
	install.granted = filepath.Join(install.grantedDir, "greeting.txt")
	install.secret = filepath.Join(dir, "secret", "token.txt")
	install.secretValue = "env-" + randomText()
	install.contents = map[string]string{
		install.granted: "granted " + randomText(),
		install.secret:  "secret " + randomText(),
	}
	for path, contents := range install.contents {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(contents), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyInstall copies what sandbox-host needs from the build tree root:
// bin/sandbox-host and its launch client, the broker in libexec, the
// modules in lib; it returns the copy of sandbox-host.
func copyInstall(root, dir string) (string, error) {
	for _, part := range []string{"bin/sandbox-host", "bin/sandbox-host-launch", "libexec/sandbox-host", "lib/sandbox-host/modules"} {
		err := filepath.Walk(filepath.Join(root, part), func(path string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			relative, _ := filepath.Rel(root, path)
			target := filepath.Join(dir, relative)
			if info.IsDir() {
				return os.MkdirAll(target, 0o755)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm()|0o444)
		})
		if err != nil && !(part == "bin/sandbox-host-launch" && os.IsNotExist(err)) {
			return "", fmt.Errorf("copying sandbox-host's %s: %v", part, err)
		}
	}
	return filepath.Join(dir, "bin", "sandbox-host"), nil
}

func randomText() string {
	bytes := make([]byte, 8)
	if _, err := rand.Read(bytes); err != nil {
		panic(err)
	}
	return hex.EncodeToString(bytes)
}

type user struct {
	name     string
	uid, gid int
	// defaultLauncher is where the launch service listens for this user by
	// default, given the environment the gateway gets (no HOME).
	defaultLauncher string
}

var users = []user{
	{"root", 0, 0, "/var/lib/sandbox-host/launcher/launch.sock"},
	{"nobody", 65534, 65534, "/tmp/sandbox-host-65534/launcher/launch.sock"},
}

func TestGoPluginGatewaysThroughThePackage(t *testing.T) {
	if install.skip != "" {
		t.Skipf("no sandbox-host here: %s", install.skip)
	}
	if os.Geteuid() != 0 {
		t.Skipf("the tests run gateways as root and as nobody, which needs root (euid is %d)", os.Geteuid())
	}
	for _, withLauncher := range []bool{false, true} {
		for _, u := range users {
			withLauncher, u := withLauncher, u
			name := "run/" + u.name
			if withLauncher {
				name = "launcher/" + u.name
			}
			t.Run(name, func(t *testing.T) {
				t.Setenv(sandbox.EnvSandboxHost, install.sandboxHost)
				if !withLauncher {
					if conn, err := net.Dial("unix", u.defaultLauncher); err == nil {
						conn.Close()
						t.Skipf("a launch service answers at %s, %s's default socket", u.defaultLauncher, u.name)
					}
				}
				for _, mode := range []sandbox.Mode{sandbox.ModeNamespaces, sandbox.ModeLandlock} {
					mode := mode
					t.Run(string(mode), func(t *testing.T) {
						// Forced for the service too, as CI forces it: a launch service
						// never confines a plugin less than it would itself.
						sandboxtest.ForceBackend(t, mode)
						env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", sandbox.EnvSandboxHost + "=" + install.sandboxHost}
						if withLauncher {
							if _, err := os.Stat(filepath.Join(filepath.Dir(install.sandboxHost), "sandbox-host-launch")); err != nil {
								t.Fatalf("the launch client is not beside sandbox-host: %v", err)
							}
							var options []sandboxtest.LauncherOption
							if u.uid != 0 {
								options = append(options, sandboxtest.AsUser(u.uid, u.gid))
							}
							env = append(env, sandbox.EnvLauncher+"="+sandboxtest.StartLauncher(t, options...))
						}
						for _, protocol := range []string{"netrpc", "grpc"} {
							protocol := protocol
							t.Run(protocol, func(t *testing.T) {
								checkGateway(t, u, mode, protocol, withLauncher,
									append(env, sandbox.EnvBackend+"="+string(mode), secretVariable+"="+install.secretValue),
									syscall.SIGKILL)
							})
						}
					})
				}
			})
		}
	}
}

// A gateway that closes its client before it exits, as a gateway does when
// it stops, ends the plugin too, whichever wrapper stood between them.
func TestAGatewayThatClosesItsClientEndsThePlugin(t *testing.T) {
	if install.skip != "" {
		t.Skipf("no sandbox-host here: %s", install.skip)
	}
	root := user{"root", 0, 0, ""}
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", sandbox.EnvSandboxHost + "=" + install.sandboxHost,
		sandbox.EnvBackend + "=" + string(sandbox.ModeNamespaces), secretVariable + "=" + install.secretValue}
	t.Setenv(sandbox.EnvSandboxHost, install.sandboxHost)
	sandboxtest.ForceBackend(t, sandbox.ModeNamespaces)
	for _, protocol := range []string{"netrpc", "grpc"} {
		protocol := protocol
		t.Run(protocol, func(t *testing.T) {
			checkGateway(t, root, sandbox.ModeNamespaces, protocol, true,
				append(env, sandbox.EnvLauncher+"="+sandboxtest.StartLauncher(t)), syscall.SIGTERM)
		})
	}
}

// How long a gateway gets to report (go-plugin's own start timeout is a
// minute), and its plugin to die once the gateway was killed.
const (
	reportBound = 60 * time.Second
	deathBound  = 10 * time.Second
)

// checkGateway runs the gateway as u with env, checks what it and its
// plugin report, sends the gateway stop and checks that the plugin ended
// with it: SIGKILL leaves that to the kernel and sandbox-host, SIGTERM has
// the gateway close its go-plugin client and exit 0.
func checkGateway(t *testing.T, u user, mode sandbox.Mode, protocol string, withLauncher bool, env []string, stop syscall.Signal) {
	spec := sandboxtest.Spec(t, "reporter", install.plugins[protocol])
	sandboxtest.Chown(t, spec, u.uid, u.gid)
	token := "reporter-token-" + randomText()
	cmd := exec.Command(install.gateway, "-plugin", spec.BinaryPath, "-protocol", protocol,
		"-socket-dir", spec.SocketDir, "-read", install.grantedDir, "-token", token,
		"-file", install.granted, "-file", install.secret,
		"-env", "GREETING", "-env", reporter.Handshake.MagicCookieKey, "-env", secretVariable,
		"-env", sandbox.EnvBackend, "-env", sandbox.EnvSandboxHost, "-env", sandbox.EnvLauncher)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if u.uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.gid)}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the gateway: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()

	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
	}()
	var findings reporter.Findings
	select {
	case line := <-lines:
		if err := json.Unmarshal([]byte(line), &findings); err != nil {
			t.Fatalf("the gateway printed %q, not its findings (%v); stderr:\n%s", line, err, stderr.String())
		}
	case <-time.After(reportBound):
		t.Fatalf("the gateway did not report within %v; stderr:\n%s", reportBound, stderr.String())
	}
	if findings.Error != "" {
		t.Fatalf("the gateway failed: %s; stderr:\n%s", findings.Error, stderr.String())
	}
	if findings.GatewayUID != u.uid {
		t.Errorf("the gateway ran as uid %d, want %s's %d", findings.GatewayUID, u.name, u.uid)
	}
	checkFindings(t, findings, mode, withLauncher)
	if t.Failed() {
		t.Logf("the gateway's stderr:\n%s", stderr.String())
	}

	processes := withToken(token)
	defer killAll(t, token)
	plugins := 0
	for _, process := range processes {
		if filepath.Base(process.argv[0]) == filepath.Base(spec.BinaryPath) {
			plugins++
		}
	}
	if plugins != 1 {
		t.Fatalf("%d processes of the plugin hold its token, want 1: %v", plugins, processes)
	}
	if err := cmd.Process.Signal(stop); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(deathBound):
		t.Fatalf("the gateway did not exit within %v of %v; stderr:\n%s", deathBound, stop, stderr.String())
	}
	if stop == syscall.SIGTERM && !cmd.ProcessState.Success() {
		t.Errorf("the gateway exited with %v after closing its client; stderr:\n%s", cmd.ProcessState, stderr.String())
	}
	deadline := time.Now().Add(deathBound)
	for len(withToken(token)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := withToken(token); len(left) > 0 {
		t.Errorf("%v after the gateway got %v, these still run: %v", deathBound, stop, left)
	}
}

func checkFindings(t *testing.T, f reporter.Findings, mode sandbox.Mode, withLauncher bool) {
	t.Helper()
	wrapper := "sandbox-host"
	if withLauncher {
		wrapper = "sandbox-host-launch"
	}
	if filepath.Base(f.Wrapper) != wrapper {
		t.Errorf("the gateway started %s, want %s", f.Wrapper, wrapper)
	}
	if f.Mode != string(mode) {
		t.Errorf("Probe chose %s, want the forced %s", f.Mode, mode)
	}
	if got, want := f.Reads[install.granted], install.contents[install.granted]; got.Contents != want {
		t.Errorf("the plugin's read of its granted %s: %+v, want %q", install.granted, got, want)
	}
	if got, want := f.GatewayReads[install.secret], install.contents[install.secret]; got.Contents != want {
		t.Errorf("the gateway's own read of %s: %+v, want %q: the test means a file its user can read", install.secret, got, want)
	}
	if got := f.Reads[install.secret]; got.Error == "" || got.Contents != "" {
		t.Errorf("the plugin read the host's secret %s: %+v", install.secret, got)
	}
	if got := f.GatewayEnv[secretVariable]; got.Value != install.secretValue {
		t.Errorf("the gateway's own %s is %+v, want %q", secretVariable, got, install.secretValue)
	}
	for name, want := range map[string]reporter.Variable{
		"GREETING":                        {Value: "hello from the gateway", Set: true},
		reporter.Handshake.MagicCookieKey: {Value: reporter.Handshake.MagicCookieValue, Set: true},
		secretVariable:                    {},
		sandbox.EnvBackend:                {},
		sandbox.EnvSandboxHost:            {},
		sandbox.EnvLauncher:               {},
	} {
		if got := f.Env[name]; got != want {
			t.Errorf("the plugin's %s is %+v, want %+v", name, got, want)
		}
	}
}

type process struct {
	pid  int
	argv []string
}

// withToken returns every live process that has token as an argument: the
// gateway's wrapper, sandbox-host's own processes, the plugin.
func withToken(token string) []process {
	var found []process
	entries, _ := os.ReadDir("/proc")
	for _, entry := range entries {
		pid := entry.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte("\x00"+token+"\x00")) {
			continue
		}
		if zombie(pid) {
			continue
		}
		number, _ := strconv.Atoi(pid)
		found = append(found, process{number, strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")})
	}
	return found
}

// killAll ends what a failed check left of the launch with token.
func killAll(t *testing.T, token string) {
	for _, left := range withToken(token) {
		t.Logf("killing %d %q", left.pid, left.argv)
		syscall.Kill(left.pid, syscall.SIGKILL)
	}
}

func zombie(pid string) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return true
	}
	// The state follows the command's name in parentheses, which may hold anything.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) == 0 || fields[0] == "Z" || fields[0] == "X"
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
