package reporter

// Findings is what the test gateway prints, as one JSON line, once its
// plugin answered: what the plugin and the gateway itself each saw.
type Findings struct {
	// Error is why the gateway could not get that far; the rest is empty then.
	Error string
	// GatewayUID is the gateway's effective uid.
	GatewayUID int
	// Wrapper is the command the gateway started: sandbox-host or sandbox-host-launch.
	Wrapper string
	// Mode is the backend Probe chose.
	Mode string
	// Reads are the plugin's reads of the files the gateway asked about.
	Reads map[string]Read
	// Env is the plugin's view of the variables the gateway asked about.
	Env map[string]Variable
	// GatewayReads are the gateway's own reads of the same files.
	GatewayReads map[string]Read
	// GatewayEnv is the gateway's own view of the same variables.
	GatewayEnv map[string]Variable
}

// Read is one read of a file: its contents or why not.
type Read struct {
	Contents string
	Error    string
}

// Variable is one look at an environment variable.
type Variable struct {
	Value string
	Set   bool
}
