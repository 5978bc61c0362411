package sandboxtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
)

// Dirs makes a socket dir with tmp/ inside, the plugin's TmpDir, both
// removed when the test ends. They are under /tmp rather than $TMPDIR or
// t.TempDir(), whose paths can be too long for the unix socket that
// go-plugin makes in TmpDir; the paths are symlink-resolved, as a Spec's
// must be.
func Dirs(t testing.TB) (socketDir, tmpDir string) {
	t.Helper()
	made, err := os.MkdirTemp("/tmp", "sbx")
	if err != nil {
		t.Fatalf("sandboxtest: socket dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(made) })
	socketDir, err = filepath.EvalSymlinks(made)
	if err != nil {
		t.Fatalf("sandboxtest: socket dir %s: %v", made, err)
	}
	tmpDir = filepath.Join(socketDir, "tmp")
	if err := os.Mkdir(tmpDir, 0o700); err != nil {
		t.Fatalf("sandboxtest: tmp dir: %v", err)
	}
	return socketDir, tmpDir
}

// Spec returns a Spec named name for binary (symlinks resolved) over fresh
// Dirs, with network none.
func Spec(t testing.TB, name, binary string) sandbox.Spec {
	t.Helper()
	resolved, err := filepath.EvalSymlinks(binary)
	if err != nil {
		t.Fatalf("sandboxtest: plugin binary: %v", err)
	}
	socketDir, tmpDir := Dirs(t)
	return sandbox.Spec{
		PluginName: name,
		BinaryPath: resolved,
		SocketDir:  socketDir,
		TmpDir:     tmpDir,
		Network:    sandbox.NetworkNone,
	}
}

// Chown hands spec's SocketDir and TmpDir to uid:gid, for a plugin that
// runs as that user.
func Chown(t testing.TB, spec sandbox.Spec, uid, gid int) {
	t.Helper()
	for _, dir := range []string{spec.SocketDir, spec.TmpDir} {
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatalf("sandboxtest: %v", err)
		}
	}
}
