// Command handshakebench is what bench/goplugin_report.py times: one go-plugin
// handshake and one call, then the client's end, either through package
// sandbox (the plugin sandboxed by sandbox-host run, or by the launch service
// with -launcher) or with the plugin started bare, as a gateway without
// sandbox-host would. It exits 0 only when the call was answered.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	hclog "github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/clawpatrol/sandbox-host/go/sandbox"
	"gopluginsandbox/reporter"
)

func main() {
	binary := flag.String("plugin", "", "the plugin binary")
	protocol := flag.String("protocol", "grpc", "netrpc or grpc")
	bare := flag.Bool("bare", false, "start the plugin without sandbox-host")
	launcher := flag.String("launcher", "", "the launch service's socket (default: none, sandbox-host run)")
	mode := flag.String("mode", "", "the backend, as a gateway that probed once at its start passes it (default: Probe now)")
	flag.Parse()
	if err := once(*binary, *protocol, *bare, *launcher, sandbox.Mode(*mode)); err != nil {
		fmt.Fprintln(os.Stderr, "handshakebench:", err)
		os.Exit(1)
	}
}

func once(binary, protocol string, bare bool, launcher string, mode sandbox.Mode) error {
	socketDir, err := os.MkdirTemp("", "hs")
	if err != nil {
		return err
	}
	defer os.RemoveAll(socketDir)
	tmp := filepath.Join(socketDir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	var cmd *exec.Cmd
	if bare {
		cmd = exec.Command(binary)
		cmd.Env = sandbox.BaseEnv(tmp)
	} else {
		if err := os.Setenv(sandbox.EnvLauncher, launcher); err != nil {
			return err
		}
		if mode == "" {
			availability, err := sandbox.Probe()
			if err != nil {
				return err
			}
			mode = availability.Mode
		}
		cmd, err = sandbox.Command(sandbox.Spec{PluginName: "reporter", BinaryPath: binary,
			SocketDir: socketDir, TmpDir: tmp, Network: sandbox.NetworkNone,
			Env: []string{"GREETING=hello"}, Handshake: reporter.Handshake.MagicCookieKey},
			mode)
		if err != nil {
			return err
		}
	}
	plugins := plugin.PluginSet{reporter.Name: &reporter.NetRPCPlugin{}}
	if protocol == "grpc" {
		plugins = plugin.PluginSet{reporter.Name: &reporter.GRPCPlugin{}}
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  reporter.Handshake,
		Plugins:          plugins,
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC, plugin.ProtocolGRPC},
		Logger:           hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Error}),
	})
	defer client.Kill()
	protocolClient, err := client.Client()
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	raw, err := protocolClient.Dispense(reporter.Name)
	if err != nil {
		return err
	}
	if _, _, err := raw.(reporter.Reporter).Getenv("GREETING"); err != nil {
		return fmt.Errorf("the call: %w", err)
	}
	return nil
}
