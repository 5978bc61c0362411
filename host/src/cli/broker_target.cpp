#include "broker_target.hpp"

#include <sandbox_host/host/broker/spool.hpp>
#include <sandbox_host/host/config.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace sandbox_host::cli {

void add_broker_options(CLI::App &command, BrokerTarget &target) {
  auto *spool = command.add_option(
      "--spool", target.spool,
      std::string("Spool directory (default: --config's state_dir/spool, "
                  "else $") +
          kBrokerVariable + " (a spool or a broker socket), else the default config's)");
  command.add_option("--socket", target.socket, "Ask over this broker socket instead")
      ->excludes(spool);
  command.add_option("--config", target.config, "Config file (for the default spool)");
}

broker::Answer ask_broker(const BrokerTarget &target, const Request &request,
                          const broker::AskOptions &options) {
  if (target.socket) return broker::ask_socket(*target.socket, request, options);
  if (target.spool) return broker::ask(*target.spool, request, options);
  const char *named = target.config ? nullptr : std::getenv(kBrokerVariable);
  if (named != nullptr && *named != '\0') {
    struct stat st {};
    if (::stat(named, &st) != 0) {
      throw broker::NoBroker(std::string(kBrokerVariable) + "=" + named + ": " +
                             std::generic_category().message(errno));
    }
    if (S_ISSOCK(st.st_mode)) return broker::ask_socket(named, request, options);
    return broker::ask(named, request, options);
  }
  return broker::ask(broker::spool_dir(load_config_or_defaults(target.config).broker.state_dir),
                     request, options);
}

}  // namespace sandbox_host::cli
