package sandbox

import "sync/atomic"

var stage1Called atomic.Bool

// Stage1 is the re-exec entry point of the Go API gateways were written
// against, kept so that such a gateway builds unchanged
// (docs/design.md#the-go-package); a Go gateway needs no re-exec hook of its
// own. The linux backends set the sandbox up in a re-executed child of
// sandbox-host, never of the gateway: the gateway only starts the wrapper
// that Command returns, and sandbox-host re-executes itself. So there is
// nothing for the gateway's main() to run in a sandboxed child, and Stage1
// only records that it was called and returns at once. Command and Probe
// work whether or not it was.
func Stage1() {
	stage1Called.Store(true)
}
