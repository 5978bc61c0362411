package reporter

import (
	"net/rpc"

	plugin "github.com/hashicorp/go-plugin"
)

// NetRPCPlugin serves and dispenses a Reporter over go-plugin's net/rpc protocol.
type NetRPCPlugin struct{ Impl Reporter }

func (p *NetRPCPlugin) Server(*plugin.MuxBroker) (interface{}, error) {
	return &rpcServer{p.Impl}, nil
}

func (*NetRPCPlugin) Client(_ *plugin.MuxBroker, client *rpc.Client) (interface{}, error) {
	return &rpcClient{client}, nil
}

// EnvReply is Getenv's answer over net/rpc.
type EnvReply struct {
	Value string
	Set   bool
}

type rpcServer struct{ impl Reporter }

func (s *rpcServer) Read(path string, contents *string) (err error) {
	*contents, err = s.impl.Read(path)
	return err
}

func (s *rpcServer) Getenv(name string, reply *EnvReply) (err error) {
	reply.Value, reply.Set, err = s.impl.Getenv(name)
	return err
}

type rpcClient struct{ client *rpc.Client }

func (c *rpcClient) Read(path string) (string, error) {
	var contents string
	err := c.client.Call("Plugin.Read", path, &contents)
	return contents, err
}

func (c *rpcClient) Getenv(name string) (string, bool, error) {
	var reply EnvReply
	err := c.client.Call("Plugin.Getenv", name, &reply)
	return reply.Value, reply.Set, err
}
