package sandbox

// Version is the sandbox-host release this package belongs to and speaks to. The Go module
// is tagged go/v<Version> beside the release, whose Debian package carries the same version.
const Version = "0.1.0"
