// Package reporter is a go-plugin plugin that tells its gateway what it
// sees from inside its sandbox, over net/rpc and over gRPC.
package reporter

import (
	"os"

	plugin "github.com/hashicorp/go-plugin"
)

// Handshake is the plugins' and the gateway's go-plugin handshake.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "SANDBOX_HOST_TEST_PLUGIN",
	MagicCookieValue: "reporter",
}

// Name is the plugin's name in go-plugin's plugin sets.
const Name = "reporter"

// Reporter is what the plugin answers.
type Reporter interface {
	// Read returns a file's contents, or why the plugin could not read it.
	Read(path string) (string, error)
	// Getenv returns a variable of the plugin's environment and whether it is set.
	Getenv(name string) (value string, set bool, err error)
}

// Local is the plugin's side: what its own process sees.
type Local struct{}

func (Local) Read(path string) (string, error) {
	contents, err := os.ReadFile(path)
	return string(contents), err
}

func (Local) Getenv(name string) (string, bool, error) {
	value, set := os.LookupEnv(name)
	return value, set, nil
}
