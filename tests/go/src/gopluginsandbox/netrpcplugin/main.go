// Command netrpcplugin is the reporter plugin over go-plugin's net/rpc protocol.
package main

import (
	plugin "github.com/hashicorp/go-plugin"

	"gopluginsandbox/reporter"
)

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: reporter.Handshake,
		Plugins:         plugin.PluginSet{reporter.Name: &reporter.NetRPCPlugin{Impl: reporter.Local{}}},
	})
}
