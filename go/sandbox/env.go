package sandbox

const (
	// EnvBackend forces a specific backend (tests, CI) for Probe and for
	// sandbox-host itself; a forced backend that fails is an error.
	EnvBackend = "CLAWPATROL_SANDBOX_BACKEND"
	// EnvStage1 and EnvSpec drive sandbox-host's re-exec'd child and never
	// reach a plugin: sandbox-host strips them, and refuses every
	// CLAWPATROL_* name in Spec.Env.
	EnvStage1 = "CLAWPATROL_SANDBOX_STAGE1"
	EnvSpec   = "CLAWPATROL_SANDBOX_SPEC"
	// EnvLauncher names the launch service's socket. When it is set,
	// Command launches through that service and fails when it does not
	// answer; when it is unset, Command tries the service's default socket
	// and falls back to sandbox-host run.
	EnvLauncher = "SANDBOX_HOST_LAUNCHER"
	// EnvSandboxHost is the sandbox-host executable, when SandboxHostPath
	// is empty; without either, sandbox-host is looked up in PATH.
	EnvSandboxHost = "SANDBOX_HOST"
)

// BaseEnv is the minimal environment every plugin gets, sandboxed or not:
// PATH, LANG, and HOME and TMPDIR at tmpDir. Nothing from the gateway's own
// environment (secrets, CLAWPATROL_*, cloud credentials) is inherited:
// sandbox-host passes the plugin BaseEnv plus only what Spec.Env and
// Spec.Handshake name, whatever environment the wrapper itself was given.
// That is why go-plugin 1.0.1, which has no ClientConfig.SkipHostEnv and
// appends the gateway's whole os.Environ() to the command, leaks nothing.
func BaseEnv(tmpDir string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=C.UTF-8",
		"HOME=" + tmpDir,
		"TMPDIR=" + tmpDir,
	}
}
