#include <sandbox_host/host/egress/egress_dir.hpp>
#include <sandbox_host/host/policy/agent_env.hpp>
#include <sandbox_host/host/shell_quote.hpp>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <utility>

namespace sandbox_host::policy {
namespace {

bool set(const std::function<const char *(const char *)> &getenv, std::string_view name) {
  const char *value = getenv(std::string(name).c_str());
  return value != nullptr && value[0] != '\0';
}

}  // namespace

std::map<std::string, std::string> egress_vars(const std::string &egress_dir) {
  if (egress_dir.empty()) return {};
  auto in_dir = [&](std::string_view name) { return egress_dir + "/" + std::string(name); };
  const std::string bundle = in_dir(egress::kEgressBundle);
  std::map<std::string, std::string> vars{
      {"SSL_CERT_FILE", bundle},
      {"GIT_SSL_CAINFO", bundle},
      {"CURL_CA_BUNDLE", bundle},
      {"REQUESTS_CA_BUNDLE", bundle},
      // Node adds this to its own roots rather than replacing them.
      {"NODE_EXTRA_CA_CERTS", in_dir(egress::kEgressCa)},
      {"GH_CONFIG_DIR", in_dir(egress::kEgressGh)},
  };
  // git's settings through its environment, above every config file: GitHub's ssh remotes
  // over https (the proxy's one way to GitHub), no credential helper handing out a token the
  // proxy sets anyway, and commits signed out of the sandbox's reach.
  const std::pair<std::string, std::string> git[] = {
      {"url.https://github.com/.insteadOf", "git@github.com:"},
      {"url.https://github.com/.insteadOf", "ssh://git@github.com/"},
      {"credential.https://github.com.helper", ""},
      {"gpg.program", in_dir(egress::kEgressGpg)},
  };
  for (size_t i = 0; i < std::size(git); ++i) {
    vars["GIT_CONFIG_KEY_" + std::to_string(i)] = git[i].first;
    vars["GIT_CONFIG_VALUE_" + std::to_string(i)] = git[i].second;
  }
  vars["GIT_CONFIG_COUNT"] = std::to_string(std::size(git));
  return vars;
}

bool unheld(const std::function<const char *(const char *)> &getenv) {
  return set(getenv, kEnvSandbox) && !set(getenv, kEnvRuntime) && !set(getenv, kEnvBrokered);
}

std::vector<std::string> unset_names(const Policy &policy) {
  std::vector<std::string> names;
  for (const auto &[name, value] : egress_vars(policy.egress)) names.push_back(name);
  for (const auto &[name, value] : policy.vars) names.push_back(name);
  names.emplace_back(kEnvSandbox);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string unset_shell(const Policy &policy) {
  // unset -v: a function of the same name stays.
  std::string line = "unset -v";
  for (const auto &name : unset_names(policy)) line += " " + shell_quoted(name);
  return line + "\n";
}

void unconfine(const Policy &policy) {
  for (const auto &name : unset_names(policy)) ::unsetenv(name.c_str());
}

}  // namespace sandbox_host::policy
