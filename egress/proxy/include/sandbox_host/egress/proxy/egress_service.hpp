// The egress proxy as the operator's [egress] table describes it: the allow list and
// destination rules parsed, the CA made, the token kept, the egress directory written and
// the proxy listening. `sandbox-host egress` runs one alone, `sandbox-host serve` beside
// the broker.
#pragma once

#include <sandbox_host/egress/proxy/proxy_server.hpp>
#include <sandbox_host/egress/proxy/token_keeper.hpp>
#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/egress.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace sandbox_host::egress {

// EgressOptions from the config; throws std::invalid_argument naming the [egress] key that
// is wrong (an allow entry, an address, an inject host the allow list does not allow on
// 443). say goes to the audit sink.
EgressOptions egress_options(const EgressConfig &config, AuditSink &audit);

class EgressService {
 public:
  // exe is sandbox-host itself, which the egress directory's gpg script runs. Refusals go
  // to audit; the token keeper's events, which are no refusals, and with [egress]
  // log_connections each allowed connection, to log. command_readers reads token_command
  // and the parent's credential_command.
  EgressService(const EgressConfig &config, AuditSink &audit, const std::filesystem::path &exe,
                std::function<void(const std::string &)> log,
                const CommandTokenReaders &command_readers);
  ~EgressService();

  EgressProxy &proxy() { return *proxy_; }
  const EgressProxy &proxy() const { return *proxy_; }
  // The egress directory written, empty when there is none (no runtime directory, or no
  // inject host and so no CA).
  const std::filesystem::path &directory() const { return directory_; }

 private:
  std::shared_ptr<Token> token_;
  std::shared_ptr<Token> parent_credential_;  // null without a credential for the parent
  std::unique_ptr<TokenKeeper> keeper_;
  std::unique_ptr<TokenKeeper> parent_keeper_;
  std::unique_ptr<EgressProxy> proxy_;
  std::filesystem::path directory_;
};

// The built-in proxy as an egress serving (EgressServing::builtin_proxy): an EgressService
// described by where it listens and its egress directory.
std::unique_ptr<RunningEgress> start_builtin_proxy(const EgressConfig &config,
                                                   const EgressServing &serving,
                                                   const CommandTokenReaders &command_readers);

}  // namespace sandbox_host::egress
