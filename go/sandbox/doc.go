// Package sandbox confines external plugin subprocesses of a Go gateway with sandbox-host.
//
// The gateway treats plugins as untrusted (they will eventually be fetched from a
// registry), so every plugin runs inside an OS sandbox that hides the gateway's secrets
// (its state, keys, the user's home directory, its environment) and, unless granted, the
// network.
//
// This package does not set a sandbox up itself. Command returns the *exec.Cmd of a
// wrapper that does: sandbox-host-launch, the lean client of the launch service
// (sandbox-host serve with a [launcher] table), which launches the plugin from a sandbox
// prepared in advance, when that service answers; else sandbox-host run, which sets one
// up for this launch. Either way the wrapper's stdio is the plugin's, its exit status is
// the plugin's (128+signal when the plugin was killed, 125 when sandbox-host refused or
// failed, 87 when the sandbox could not be set up, with one "clawpatrol-sandbox: ..." line
// on stderr), and the plugin dies with the wrapper. That is what go-plugin's
// ClientConfig.Cmd wants.
//
// Backends (sandbox-host's modules):
//   - linux: user+mount+pid(+net) namespaces with a deny-by-default mount tree
//     (ModeNamespaces); Landlock when user namespaces are unavailable (ModeLandlock,
//     degraded: Probe's Warning says what it does not cover).
//   - darwin: seatbelt via sandbox-exec (ModeSeatbelt).
//   - anywhere: none, with ModeOff, an explicit operator opt-out.
//
// The package uses the standard library only.
package sandbox
