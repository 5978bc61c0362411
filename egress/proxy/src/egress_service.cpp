#include <sandbox_host/egress/proxy/egress_dir.hpp>
#include <sandbox_host/egress/proxy/egress_service.hpp>

#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace sandbox_host::egress {

EgressOptions egress_options(const EgressConfig &config, AuditSink &audit) {
  EgressOptions options;
  options.listen = config.listen;
  options.socket = config.socket;
  try {
    options.allow = HostAllowList::parse(config.allow);
  } catch (const std::invalid_argument &e) {
    throw std::invalid_argument(std::string("[egress] allow: ") + e.what());
  }
  try {
    options.addresses = AddressPolicy::parse(config.allow_addresses);
  } catch (const std::invalid_argument &e) {
    throw std::invalid_argument(std::string("[egress] allow_addresses: ") + e.what());
  }
  for (const auto &[name, addresses] : config.resolve) {
    std::string host;
    try {
      host = normalize_host_name(name);
    } catch (const std::invalid_argument &e) {
      throw std::invalid_argument(std::string("[egress] resolve: ") + e.what());
    }
    for (const auto &text : addresses) {
      const auto address = parse_ip_literal(text);
      if (!address) {
        throw std::invalid_argument("[egress] resolve." + name + ": \"" + text +
                                    "\" is not an IP address");
      }
      options.resolve[host].push_back(*address);
    }
  }
  for (const auto &host : config.inject) {
    std::string name;
    try {
      name = normalize_host_name(host);
    } catch (const std::invalid_argument &e) {
      throw std::invalid_argument(std::string("[egress] inject: ") + e.what());
    }
    if (!options.allow.decide(name, 443).allowed) {
      throw std::invalid_argument("[egress] inject: " + host +
                                  " is not allowed on port 443 by [egress] allow; a host gets "
                                  "the token only when it may be reached at all");
    }
    options.inject.push_back(name);
  }
  options.upstream_ca_bundle = config.upstream_ca_bundle;
  if (config.same_user) options.same_user = ::geteuid();
  options.connect_timeout = config.connect_timeout;
  options.head_timeout = config.head_timeout;
  options.idle_timeout = config.idle_timeout;
  options.max_tunnels = config.max_tunnels;
  options.say = [&audit](const std::string &line) {
    // The sink names the component already; the hint only where the allow list decided.
    constexpr std::string_view prefix = "egress: ";
    const std::string what = line.starts_with(prefix) ? line.substr(prefix.size()) : line;
    const bool by_allow_list = what.find("not allowed: ") != std::string::npos;
    audit.record(
        {"egress", "", "egress", what, by_allow_list ? "the allow list is [egress] allow" : ""});
  };
  return options;
}

namespace {

TokenRenewal renewal(const EgressConfig &config) {
  TokenRenewal renewal;
  renewal.every = config.renew_every;
  renewal.bound = config.renew_bound;
  renewal.cold_bound = config.renew_cold_bound;
  renewal.backoff.assign(config.renew_backoff.begin(), config.renew_backoff.end());
  return renewal;
}

}  // namespace

EgressService::EgressService(const EgressConfig &config, AuditSink &audit,
                             const std::filesystem::path &exe,
                             std::function<void(const std::string &)> log,
                             const CommandTokenReaders &command_readers)
    : token_(std::make_shared<Token>()) {
  // The CA's key and the token live in this process's memory alone: no core dump writes
  // them out, and no process of the same user reads them through ptrace or /proc/<pid>/mem.
  const rlimit no_core{0, 0};
  if (::setrlimit(RLIMIT_CORE, &no_core) != 0 || ::prctl(PR_SET_DUMPABLE, 0) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "cannot keep the egress proxy's memory out of core dumps");
  }
  EgressOptions options = egress_options(config, audit);
  if (config.log_connections) options.log = log;
  if (!options.inject.empty()) {
    options.ca = std::make_shared<CertificateAuthority>(options.inject, config.ca_validity,
                                                        config.leaf_validity);
    directory_ = sandbox_host::egress_dir(config);
    if (!directory_.empty()) write_egress(directory_, options.ca->certificate_pem(), exe);
  }
  if (!config.token_command.empty()) {
    keeper_ = std::make_unique<TokenKeeper>(*token_, renewal(config),
                                            command_readers(config.token_command, "token"), log);
  }
  options.token = token_;
  if (config.parent) {
    ParentProxy &parent = options.parent.emplace();
    parent.host = config.parent->host;
    parent.port = config.parent->port;
    const std::string subject = "parent proxy credential";
    TokenReader read;
    if (!config.parent->credential_file.empty()) {
      read = file_token_reader(config.parent->credential_file, subject);
    } else if (!config.parent->credential_command.empty()) {
      read = command_readers(config.parent->credential_command, subject);
    }
    if (read) {
      parent_credential_ = std::make_shared<Token>();
      parent.credential = parent_credential_;
      parent_keeper_ = std::make_unique<TokenKeeper>(*parent_credential_, renewal(config),
                                                     std::move(read), log, subject);
    }
  }
  proxy_ = std::make_unique<EgressProxy>(std::move(options));
}

EgressService::~EgressService() = default;

namespace {

class RunningBuiltinProxy final : public RunningEgress {
 public:
  RunningBuiltinProxy(const EgressConfig &config, AuditSink &audit,
                      const std::filesystem::path &exe,
                      std::function<void(const std::string &)> log,
                      const CommandTokenReaders &command_readers)
      : service_(config, audit, exe, std::move(log), command_readers) {}

  std::string description() const override {
    const EgressProxy &proxy = service_.proxy();
    std::string out = "proxy on ";
    if (proxy.port() != 0) out += "127.0.0.1:" + std::to_string(proxy.port());
    if (proxy.port() != 0 && !proxy.socket().empty()) out += " and ";
    if (!proxy.socket().empty()) out += proxy.socket().string();
    if (!service_.directory().empty()) out += "; egress directory " + service_.directory().string();
    return out;
  }

 private:
  EgressService service_;
};

}  // namespace

std::unique_ptr<RunningEgress> start_builtin_proxy(const EgressConfig &config,
                                                   const EgressServing &serving,
                                                   const CommandTokenReaders &command_readers) {
  return std::make_unique<RunningBuiltinProxy>(config, serving.audit, serving.exe, serving.log,
                                               command_readers);
}

}  // namespace sandbox_host::egress
