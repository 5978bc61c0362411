// Where the client commands (ask, sandbox scope, sandbox gpg) find the broker, in one
// place, so that a process inside a sandbox finds it the same way whatever it runs.
#pragma once

#include <sandbox_host/host/broker/client.hpp>

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace sandbox_host::cli {

// The variable that names the broker inside a sandbox: a spool directory or a broker
// socket. git runs its gpg.program with gpg's arguments alone, and a sandbox sees no host
// config, so an option would not reach `sandbox gpg`. Not CLAWPATROL_-prefixed: those are
// taken out of every plugin's environment.
inline constexpr const char *kBrokerVariable = "SANDBOX_HOST_BROKER";

struct BrokerTarget {
  std::optional<std::string> config;  // for the default spool
  std::optional<std::string> spool;   // --spool
  std::optional<std::string> socket;  // --socket
};

// --spool and --socket (one of them) and --config, into target.
void add_broker_options(CLI::App &command, BrokerTarget &target);

// Asks the broker at --socket, else at --spool, else the spool of the --config named, else
// the one $SANDBOX_HOST_BROKER names, else the default config's spool: what the command
// line says wins over the environment. Throws broker::NoBroker (naming the variable when it points
// nowhere) or broker::Refused.
broker::Answer ask_broker(const BrokerTarget &target, const Request &request,
                          const broker::AskOptions &options = {});

}  // namespace sandbox_host::cli
