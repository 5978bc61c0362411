// The operator's token command read the way the broker runs a host command: apart from
// the token keeper, so that only what composes the proxy with the broker (serve, and
// `sandbox-host egress`) links the broker.
#pragma once

#include <sandbox_host/egress/proxy/token_keeper.hpp>

#include <string>
#include <vector>

namespace sandbox_host::egress {

// The operator's token command: argv[0] an absolute path, run with the rest as arguments,
// no shell, this process's environment, in its own session, killed with its descendants
// when cut. Its stdout, trimmed, is the token. A non-zero exit, a cut at the bound, output
// of more than 64 KiB, no output ("no token in the output of the token command ...") or
// more than one line are read errors naming the cause; its stderr is dropped, since it may
// echo the token. subject names what is read in those errors ("token", "parent proxy
// credential"). Throws std::invalid_argument for an empty argv or a relative path.
TokenReader command_token_reader(std::vector<std::string> argv, std::string subject = "token");

}  // namespace sandbox_host::egress
