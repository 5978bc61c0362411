// Fuzzes load_config, what sandbox-host makes of an operator's config file: a Config that
// keeps the rules docs/config.md gives, or a ConfigError that names the file and a line of it
// (and the key, when one is at fault), nothing else; and the same answer every time.
#include "fuzz_check.hpp"

#include <sandbox_host/host/config.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>

namespace sandbox_host::fuzz {
namespace {

using sandbox_host::egress::fuzz::check;

// Past the size of any real config: bigger inputs only slow the run down.
constexpr std::size_t kMaxInput = 64 * 1024;

// load_config reads a file by its path: the input goes into one memfd, rewritten each run.
class ConfigFile {
 public:
  ConfigFile() : fd_(::memfd_create("config.toml", MFD_CLOEXEC)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~ConfigFile() { ::close(fd_); }
  ConfigFile(const ConfigFile &) = delete;
  ConfigFile &operator=(const ConfigFile &) = delete;

  void write(std::string_view text) const {
    check(::ftruncate(fd_, 0) == 0, "the memfd empties");
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n =
          ::pwrite(fd_, text.data() + done, text.size() - done, static_cast<off_t>(done));
      check(n > 0, "the memfd takes the input");
      done += static_cast<std::size_t>(n);
    }
  }
  const std::string &path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

bool contains(const std::vector<std::string> &names, const std::string &name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string joined(const std::vector<std::string> &items) {
  std::string out;
  for (const auto &item : items) out += item + '\x1f';
  return out + '\x1e';
}

// Every field of a Config as text, to compare two loads.
std::string describe(const Config &c) {
  std::string out = c.source + '\n';
  for (const auto &dir : c.module_dirs) out += dir.string() + '\x1f';
  out += joined(c.backends_enabled) + joined(c.backend_priority) + joined(c.ops_enabled);
  out += std::to_string(static_cast<int>(c.audit_format)) + c.audit_path + '\n';
  for (const auto &[name, p] : c.plugins) {
    out += name + ':' + p.sandbox + ':' +
           (p.network ? std::to_string(static_cast<int>(*p.network)) : "-") + joined(p.read);
  }
  const BrokerConfig &b = c.broker;
  out += b.state_dir.string() + ' ' + std::to_string(b.tick.count()) + ' ' +
         std::to_string(b.max_request_bytes) + ' ' + std::to_string(b.max_reply_bytes) + ' ' +
         std::to_string(b.max_concurrent) + ' ' + std::to_string(static_cast<int>(b.identity)) +
         '\n';
  if (c.egress) {
    const EgressConfig &e = *c.egress;
    out += e.listen ? e.listen->to_string() : "-";
    out += e.socket.string() + joined(e.allow) + joined(e.allow_addresses) + joined(e.inject);
    for (const auto &[host, addresses] : e.resolve) out += host + '=' + joined(addresses);
    out += joined(e.token_command);
    for (const auto wait : e.renew_backoff) out += std::to_string(wait.count()) + ',';
    for (const auto count :
         {e.renew_every.count(), e.renew_bound.count(), e.renew_cold_bound.count(),
          e.connect_timeout.count(), e.head_timeout.count(), e.idle_timeout.count(),
          static_cast<std::int64_t>(e.ca_validity.count()),
          static_cast<std::int64_t>(e.leaf_validity.count()),
          static_cast<std::int64_t>(e.max_tunnels)}) {
      out += std::to_string(count) + ' ';
    }
    out += e.upstream_ca_bundle.string() + '|' + e.runtime_dir.string() + '|' +
           (e.same_user ? "same" : "any") + (e.log_connections ? "log" : "quiet") + '\n';
  }
  for (const auto &[op, settings] : c.op_settings) {
    out += op + joined(settings.requester_env);
    for (const auto &[key, values] : settings.entries) out += key + '=' + joined(values);
  }
  return out;
}

// What docs/config.md promises of a file it takes.
void check_config(const Config &c, const std::string &path) {
  check(c.source == path, "a config names its file");
  for (const auto &dir : c.module_dirs) {
    check(dir.is_absolute(), "module directories are absolute");
  }
  for (const auto &name : c.backend_priority) {
    check(contains(c.backends_enabled, name), "a backend in priority is enabled");
    check(name != "off", "off is never in priority");
  }
  for (const auto &[op, settings] : c.op_settings) {
    check(contains(c.ops_enabled, op), "an operation's table is for an enabled operation");
  }
  for (const auto &[name, plugin] : c.plugins) {
    check(plugin.sandbox == "auto" || contains(c.backends_enabled, plugin.sandbox),
          "a plugin's sandbox is auto or an enabled backend");
    check(plugin.network != Network::proxied || c.egress.has_value(),
          "a proxied plugin has an egress proxy");
  }
  const BrokerConfig &b = c.broker;
  check(b.tick.count() >= 10 && b.tick.count() <= 10000 && b.max_request_bytes >= 256 &&
            b.max_request_bytes <= 16777216 && b.max_reply_bytes >= 4096 &&
            b.max_reply_bytes <= 268435456 && b.max_concurrent >= 1 && b.max_concurrent <= 4096,
        "broker settings are in their ranges");
  if (c.egress) {
    check(c.egress->socket.is_absolute(), "the egress socket is an absolute path");
    check(c.egress->leaf_validity <= c.egress->ca_validity, "a leaf never outlives its CA");
  }
  if (c.metrics) {
    check(c.metrics->listen.has_value() || !c.metrics->socket.empty(),
          "a metrics endpoint serves somewhere");
    check(c.metrics->socket.empty() || c.metrics->socket.is_absolute(),
          "the metrics socket is an absolute path");
    check(c.metrics->max_connections >= 1 && c.metrics->max_connections <= 256 &&
              c.metrics->request_timeout.count() >= 100 &&
              c.metrics->request_timeout.count() <= 60000,
          "metrics settings are in their ranges");
    const auto &scrapers = c.metrics->scrapers;
    for (std::size_t i = 0; i < scrapers.size(); ++i) {
      check(scrapers[i] != ::geteuid() && scrapers[i] != 0 &&
                std::find(scrapers.begin(), scrapers.begin() + i, scrapers[i]) ==
                    scrapers.begin() + i,
            "metrics scrapers are users other than serve's and root, each listed once");
    }
  }
}

// What docs/config.md promises of a refusal: "<file>:<line>: <key>: <what was wrong>", the
// line one of the file's, the key left out only when no key is at fault.
void check_refusal(const ConfigError &e, const std::string &path, std::string_view text) {
  check(e.file() == path, "a refusal names the file");
  const auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  if (e.line() < 1 || e.line() > lines) {
    std::fprintf(stderr, "line %d of %d: %s\n", e.line(), lines, e.what());
  }
  check(e.line() >= 1 && e.line() <= lines, "a refusal names a line of the file");
  const std::string prefix = path + ":" + std::to_string(e.line()) + ": " +
                             (e.key().empty() ? std::string() : e.key() + ": ");
  const std::string_view message = e.what();
  check(message.starts_with(prefix) && message.size() > prefix.size(),
        "a refusal reads <file>:<line>: <key>: <what was wrong>");
}

struct Outcome {
  std::string description;  // of the Config, or the refusal's message
  bool refused = false;
};

// Any exception but ConfigError is a broken property: the command would fail without
// naming where the file is wrong.
Outcome load(const ConfigFile &file, std::string_view text) {
  try {
    const Config config = load_config(file.path());
    check_config(config, file.path());
    return {describe(config), false};
  } catch (const ConfigError &e) {
    check_refusal(e, file.path(), text);
    return {e.what(), true};
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: %s\n", typeid(e).name(), e.what());
    check(false, "load_config throws ConfigError and nothing else");
  } catch (...) {
    check(false, "load_config throws ConfigError and nothing else");
  }
  return {};
}

}  // namespace
}  // namespace sandbox_host::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  using namespace sandbox_host::fuzz;
  if (size > kMaxInput) return 0;
  static const ConfigFile file;
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  file.write(text);
  const Outcome first = load(file, text);
  const Outcome second = load(file, text);
  check(first.refused == second.refused && first.description == second.description,
        "the same file loads the same way twice");
  return 0;
}
