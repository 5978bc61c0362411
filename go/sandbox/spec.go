package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Spec describes one plugin launch. All paths must be absolute and
// symlink-resolved by the caller.
type Spec struct {
	// PluginName is the HCL block label, used in error text only, and
	// the name of the plugin's [plugins.<name>] table in sandbox-host's
	// config. Empty: sandbox-host uses the binary's file name.
	PluginName string
	// BinaryPath is the resolved plugin executable.
	BinaryPath string
	// SocketDir is the short-pathed directory holding the go-plugin
	// unix socket. It is read-write inside the sandbox at the SAME
	// absolute path, so the socket address the plugin prints on
	// stdout resolves identically for the gateway.
	SocketDir string
	// TmpDir is the plugin's private writable scratch space (HOME and
	// TMPDIR point here). Conventionally SocketDir/tmp. go-plugin 1.0.1
	// makes its unix socket here.
	TmpDir string
	// Network is the granted network capability. Empty is NetworkNone.
	Network Network
	// ReadPaths are extra recursive read-only grants. There is no
	// write-grant equivalent: host writes require sandbox = "off".
	ReadPaths []string
	// Args are the plugin's arguments after its binary path.
	Args []string
	// Env names what the plugin gets on top of BaseEnv, each NAME or
	// NAME=VALUE. NAME alone passes the wrapper's value of NAME, left out
	// when it has none; under go-plugin that is the gateway's own
	// os.Environ(). A later entry for the same name wins. CLAWPATROL_*
	// names and BaseEnv's names are refused. A VALUE written here is on
	// the wrapper's command line, which other local users can read in
	// /proc; pass secrets by NAME.
	Env []string
	// Handshake is go-plugin's MagicCookieKey. When set, that variable
	// and the rest of go-plugin's handshake (PLUGIN_MIN_PORT,
	// PLUGIN_MAX_PORT, PLUGIN_PROTOCOL_VERSIONS, PLUGIN_CLIENT_CERT,
	// PLUGIN_UNIX_SOCKET_DIR), whichever the wrapper's environment holds,
	// pass to the plugin. Empty for a plugin that is not a go-plugin one.
	Handshake string
}

// A unix socket address holds 107 bytes and its NUL; go-plugin 1.0.1 names
// its socket TmpDir/plugin<up to 10 digits>.
const (
	maxSocketPath     = 107
	goPluginSocketTag = len("/plugin") + 10
)

func (s Spec) fail(field, format string, args ...interface{}) error {
	return fmt.Errorf("plugin %q: spec %s: %s", s.PluginName, field, fmt.Sprintf(format, args...))
}

// check refuses what sandbox-host would refuse, so that the gateway hears
// why here rather than as a handshake that never came.
func (s Spec) check() error {
	if strings.ContainsAny(s.PluginName, "\x00\n") {
		return s.fail("PluginName", "contains NUL or newline")
	}
	if strings.HasPrefix(s.PluginName, "-") {
		return s.fail("PluginName", "%q starts with '-', which a command line takes for an option", s.PluginName)
	}
	if err := s.checkResolved("BinaryPath", s.BinaryPath); err != nil {
		return err
	}
	if info, err := os.Stat(s.BinaryPath); err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
		return s.fail("BinaryPath", "%q is not an executable regular file", s.BinaryPath)
	}
	if err := s.checkDirectory("SocketDir", s.SocketDir); err != nil {
		return err
	}
	if err := s.checkDirectory("TmpDir", s.TmpDir); err != nil {
		return err
	}
	switch s.Network {
	case "", NetworkNone, NetworkOutbound, NetworkProxied:
	default:
		return s.fail("Network", "%q is not %q, %q or %q", s.Network, NetworkNone, NetworkOutbound, NetworkProxied)
	}
	for i, path := range s.ReadPaths {
		if err := s.checkResolved(fmt.Sprintf("ReadPaths[%d]", i), path); err != nil {
			return err
		}
	}
	for i, arg := range s.Args {
		if strings.ContainsRune(arg, 0) {
			return s.fail(fmt.Sprintf("Args[%d]", i), "contains NUL")
		}
	}
	for i, entry := range s.Env {
		if err := s.checkEnvEntry(fmt.Sprintf("Env[%d]", i), entry); err != nil {
			return err
		}
	}
	return s.checkHandshake()
}

func (s Spec) checkResolved(field, path string) error {
	if path == "" {
		return s.fail(field, "is empty")
	}
	if strings.ContainsAny(path, "\x00\n") {
		return s.fail(field, "contains NUL or newline")
	}
	if !filepath.IsAbs(path) {
		return s.fail(field, "%q is not an absolute path", path)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return s.fail(field, "%q does not exist or is unreadable: %v", path, err)
	}
	if resolved != path {
		return s.fail(field, "%q is not symlink-resolved (it resolves to %q)", path, resolved)
	}
	return nil
}

func (s Spec) checkDirectory(field, path string) error {
	if err := s.checkResolved(field, path); err != nil {
		return err
	}
	if info, err := os.Stat(path); err != nil || !info.IsDir() {
		return s.fail(field, "%q is not a directory", path)
	}
	return nil
}

func (s Spec) checkEnvEntry(field, entry string) error {
	name, _, _ := strings.Cut(entry, "=")
	if strings.ContainsRune(entry, 0) {
		return s.fail(field, "%q holds a NUL byte", name)
	}
	if !portableName(name) {
		return s.fail(field, "%q is not a variable name (letters, digits and _, not starting with a digit; NAME or NAME=VALUE)", name)
	}
	if strings.HasPrefix(name, "CLAWPATROL_") {
		return s.fail(field, "%s: CLAWPATROL_* variables are the gateway's and never reach a plugin", name)
	}
	for _, base := range BaseEnv("") {
		if baseName, _, _ := strings.Cut(base, "="); name == baseName {
			return s.fail(field, "%s is BaseEnv's: sandbox-host sets it for every plugin", name)
		}
	}
	return nil
}

func (s Spec) checkHandshake() error {
	if s.Handshake == "" {
		return nil
	}
	if !portableName(s.Handshake) {
		return s.fail("Handshake", "%q is not a variable name: go-plugin's MagicCookieKey, without a value", s.Handshake)
	}
	if strings.HasPrefix(s.Handshake, "CLAWPATROL_") {
		return s.fail("Handshake", "%s: CLAWPATROL_* variables are the gateway's and never reach a plugin", s.Handshake)
	}
	if longest := len(s.TmpDir) + goPluginSocketTag; longest > maxSocketPath {
		return s.fail("TmpDir", "%q is %d bytes: go-plugin makes its unix socket there, up to %d bytes longer, and a unix socket path holds %d; use a TmpDir of at most %d bytes",
			s.TmpDir, len(s.TmpDir), goPluginSocketTag, maxSocketPath, maxSocketPath-goPluginSocketTag)
	}
	return nil
}

func portableName(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
