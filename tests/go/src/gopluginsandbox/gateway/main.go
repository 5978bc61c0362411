// Command gateway is a go-plugin host that launches the reporter plugin
// through package sandbox, asks it what it sees, prints reporter.Findings as
// one JSON line on stdout and then waits for a signal: on SIGTERM it closes
// its go-plugin client and exits.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	hclog "github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
	"gopluginsandbox/reporter"
)

// Greeting is what the gateway gives the plugin in its Spec.Env.
const Greeting = "GREETING=hello from the gateway"

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var (
		binary    = flag.String("plugin", "", "the plugin binary")
		protocol  = flag.String("protocol", "netrpc", "netrpc or grpc")
		socketDir = flag.String("socket-dir", "", "the plugin's socket dir, with tmp/ inside")
		grant     = flag.String("read", "", "a directory the plugin may read")
		token     = flag.String("token", "", "the plugin's argument, to find it by")
		files     list
		variables list
	)
	flag.Var(&files, "file", "a file to ask the plugin and the gateway to read (repeatable)")
	flag.Var(&variables, "env", "a variable to ask the plugin and the gateway about (repeatable)")
	flag.Parse()

	terminate := make(chan os.Signal, 1)
	signal.Notify(terminate, syscall.SIGTERM)
	findings, client, err := run(*binary, *protocol, *socketDir, *grant, *token, files, variables)
	if err != nil {
		findings.Error = err.Error()
	}
	if err := json.NewEncoder(os.Stdout).Encode(findings); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
	if findings.Error == "" {
		<-terminate
	}
	if client != nil {
		client.Kill()
	}
	if findings.Error != "" {
		os.Exit(1)
	}
}

func run(binary, protocol, socketDir, grant, token string, files, variables []string) (reporter.Findings, *plugin.Client, error) {
	findings := reporter.Findings{
		Reads: map[string]reporter.Read{}, Env: map[string]reporter.Variable{},
		GatewayReads: map[string]reporter.Read{}, GatewayEnv: map[string]reporter.Variable{},
		GatewayUID: os.Geteuid(),
	}
	availability, err := sandbox.Probe()
	if err != nil {
		return findings, nil, err
	}
	findings.Mode = string(availability.Mode)
	spec := sandbox.Spec{
		PluginName: "reporter",
		BinaryPath: binary,
		SocketDir:  socketDir,
		TmpDir:     filepath.Join(socketDir, "tmp"),
		Network:    sandbox.NetworkNone,
		ReadPaths:  []string{grant},
		Args:       []string{token},
		Env:        []string{Greeting},
		Handshake:  reporter.Handshake.MagicCookieKey,
	}
	cmd, err := sandbox.Command(spec, availability.Mode)
	if err != nil {
		return findings, nil, err
	}
	findings.Wrapper = cmd.Path
	plugins := plugin.PluginSet{reporter.Name: &reporter.NetRPCPlugin{}}
	if protocol == "grpc" {
		plugins = plugin.PluginSet{reporter.Name: &reporter.GRPCPlugin{}}
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  reporter.Handshake,
		Plugins:          plugins,
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC, plugin.ProtocolGRPC},
		Logger:           hclog.New(&hclog.LoggerOptions{Name: "gateway", Output: os.Stderr, Level: hclog.Debug}),
	})
	protocolClient, err := client.Client()
	if err != nil {
		return findings, client, fmt.Errorf("go-plugin handshake through %q: %w", cmd.Args, err)
	}
	raw, err := protocolClient.Dispense(reporter.Name)
	if err != nil {
		return findings, client, fmt.Errorf("dispense %s: %w", reporter.Name, err)
	}
	if client.NegotiatedVersion() != int(reporter.Handshake.ProtocolVersion) {
		return findings, client, fmt.Errorf("negotiated protocol version %d", client.NegotiatedVersion())
	}
	if (protocol == "grpc") != (client.Protocol() == plugin.ProtocolGRPC) {
		return findings, client, fmt.Errorf("asked for %s, go-plugin speaks %s", protocol, client.Protocol())
	}
	plugged := raw.(reporter.Reporter)
	for _, file := range files {
		contents, err := plugged.Read(file)
		findings.Reads[file] = read(contents, err)
		own, err := os.ReadFile(file)
		findings.GatewayReads[file] = read(string(own), err)
	}
	for _, name := range variables {
		value, set, err := plugged.Getenv(name)
		if err != nil {
			return findings, client, fmt.Errorf("Getenv %s: %w", name, err)
		}
		findings.Env[name] = reporter.Variable{Value: value, Set: set}
		own, ownSet := os.LookupEnv(name)
		findings.GatewayEnv[name] = reporter.Variable{Value: own, Set: ownSet}
	}
	return findings, client, nil
}

func read(contents string, err error) reporter.Read {
	if err != nil {
		return reporter.Read{Error: err.Error()}
	}
	return reporter.Read{Contents: contents}
}
