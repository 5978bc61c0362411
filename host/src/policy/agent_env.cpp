#include <sandbox_host/egress_client.hpp>
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
  std::map<std::string, std::string> vars;
  for (auto &[name, value] : egress_client_env(egress_dir)) vars[name] = std::move(value);
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
