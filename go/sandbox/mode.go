package sandbox

// Mode identifies a sandbox backend: the name of one of sandbox-host's backend modules.
type Mode string

const (
	// ModeOff runs the plugin unsandboxed (explicit operator opt-out).
	// Environment scrubbing still applies.
	ModeOff Mode = "off"
	// ModeNamespaces is the linux namespace backend.
	ModeNamespaces Mode = "namespaces"
	// ModeLandlock is the degraded linux fallback for hosts where
	// unprivileged user namespaces are blocked.
	ModeLandlock Mode = "landlock"
	// ModeSeatbelt is the macOS sandbox-exec backend.
	ModeSeatbelt Mode = "seatbelt"
)

// Network is the network capability granted to a plugin.
type Network string

const (
	// NetworkNone confines the plugin to its socket dir: the only
	// channel is the gRPC unix socket shared with the gateway.
	NetworkNone Network = "none"
	// NetworkOutbound leaves the plugin in the host network (tunnel
	// plugins are the upstream transport and need to dial out).
	NetworkOutbound Network = "outbound"
	// NetworkProxied gives the plugin an empty network whose only way out
	// is sandbox-host's egress proxy (the [egress] table of its config),
	// which holds every connection to its allow list. Backends without a
	// network namespace (landlock) refuse it rather than run the plugin
	// with the host's network.
	NetworkProxied Network = "proxied"
)
