package sandboxtest

import (
	"bufio"
	"fmt"
	"io"
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
)

// How long the launch service gets to listen, and to stop once asked.
const launcherBound = 10 * time.Second

// LauncherOption configures StartLauncher.
type LauncherOption func(*launcherSettings)

type launcherSettings struct {
	credential *syscall.Credential
}

// AsUser runs the launch service as uid:gid, without supplementary groups,
// for a gateway that runs as that user: the service serves its own uid only.
// The test must run as root.
func AsUser(uid, gid int) LauncherOption {
	return func(s *launcherSettings) {
		s.credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
}

// StartLauncher runs sandbox-host serve with a config of its own, whose
// [launcher] socket and [broker] state_dir are in a private directory,
// waits until it listens (10 s at most), sets EnvLauncher to its socket for
// the rest of the test and returns the socket. The service is stopped when
// the test ends, and the test fails if it stopped by itself before. It
// inherits the test's environment: a backend forced with ForceBackend before
// is the service's too, which launches under no weaker backend than its own.
func StartLauncher(t *testing.T, options ...LauncherOption) string {
	t.Helper()
	var settings launcherSettings
	for _, option := range options {
		option(&settings)
	}
	executable := SkipWithoutSandboxHost(t)
	dir := launcherDir(t, settings)
	socket := filepath.Join(dir, "launcher", "launch.sock")
	config := filepath.Join(dir, "config.toml")
	text := fmt.Sprintf("[launcher]\nsocket = %s\n\n[broker]\nstate_dir = %s\n",
		strconv.Quote(socket), strconv.Quote(filepath.Join(dir, "state")))
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatalf("sandboxtest: launcher config: %v", err)
	}

	cmd := exec.Command(executable, "serve", "--config", config)
	cmd.SysProcAttr = serveAttributes(settings)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("sandboxtest: %s serve: %v", executable, err)
	}
	service := &launchService{cmd: cmd, listening: make(chan string, 1), exited: make(chan struct{})}
	go service.read(stderr)
	go service.wait()
	t.Cleanup(func() { service.stop(t) })

	select {
	case listening := <-service.listening:
		if listening != socket {
			t.Fatalf("sandboxtest: sandbox-host serve listens on %s, not on its config's %s", listening, socket)
		}
	case <-service.exited:
		t.Fatalf("sandboxtest: sandbox-host serve exited before it listened (%v); stderr:\n%s", service.err, service.stderr())
	case <-time.After(launcherBound):
		t.Fatalf("sandboxtest: sandbox-host serve did not listen within %v; stderr:\n%s", launcherBound, service.stderr())
	}
	t.Setenv(sandbox.EnvLauncher, socket)
	return socket
}

func launcherDir(t *testing.T, settings launcherSettings) string {
	t.Helper()
	made, err := os.MkdirTemp("/tmp", "sbl")
	if err != nil {
		t.Fatalf("sandboxtest: launcher dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(made) })
	if settings.credential != nil {
		skipUnlessRoot(t, "a launch service as another user")
		if err := os.Chown(made, int(settings.credential.Uid), int(settings.credential.Gid)); err != nil {
			t.Fatalf("sandboxtest: launcher dir: %v", err)
		}
	}
	dir, err := filepath.EvalSymlinks(made)
	if err != nil {
		t.Fatalf("sandboxtest: launcher dir: %v", err)
	}
	return dir
}

// launchService is a running sandbox-host serve and what it said.
type launchService struct {
	cmd       *exec.Cmd
	listening chan string
	exited    chan struct{}
	err       error // of Wait, once exited is closed

	mu   sync.Mutex
	text strings.Builder
}

const listeningPrefix = "sandbox-host serve: launcher on "

func (s *launchService) read(stderr io.Reader) {
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		line := lines.Text()
		s.mu.Lock()
		s.text.WriteString(line + "\n")
		s.mu.Unlock()
		if socket := strings.TrimPrefix(line, listeningPrefix); socket != line {
			select {
			case s.listening <- socket:
			default:
			}
		}
	}
}

func (s *launchService) wait() {
	s.err = s.cmd.Wait()
	close(s.exited)
}

func (s *launchService) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

func (s *launchService) stop(t *testing.T) {
	select {
	case <-s.exited:
		t.Errorf("sandboxtest: the launch service stopped during the test (%v); stderr:\n%s", s.err, s.stderr())
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(launcherBound):
		s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("sandboxtest: the launch service did not stop within %v of SIGTERM; stderr:\n%s", launcherBound, s.stderr())
	}
}
