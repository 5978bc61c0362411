// Command grpcplugin is the reporter plugin over go-plugin's gRPC protocol.
package main

import (
	plugin "github.com/hashicorp/go-plugin"

	"gopluginsandbox/reporter"
)

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: reporter.Handshake,
		Plugins:         plugin.PluginSet{reporter.Name: &reporter.GRPCPlugin{Impl: reporter.Local{}}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}
