#include <sandbox_host/host/base_env.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/launch_client/plugin_env.hpp>

#include <boost/algorithm/string/join.hpp>
#include <boost/range/adaptor/transformed.hpp>

#include <algorithm>
#include <stdexcept>

namespace sandbox_host {
namespace {

std::string_view name_of(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

bool portable_name(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

const std::string *caller_value(const std::vector<std::string> &caller_env, std::string_view name) {
  // The last definition is the one getenv(3) of a shell's child would see.
  for (auto it = caller_env.rbegin(); it != caller_env.rend(); ++it) {
    if (it->size() > name.size() && it->compare(0, name.size(), name) == 0 &&
        (*it)[name.size()] == '=') {
      return &*it;
    }
  }
  return nullptr;
}

}  // namespace

void check_env_entry(const std::string &entry, const std::string &where) {
  const std::string_view name = name_of(entry);
  if (entry.find('\0') != std::string::npos) {
    throw std::invalid_argument(where + ": the entry holds a NUL byte");
  }
  if (!portable_name(name)) {
    throw std::invalid_argument(where + " \"" + std::string(name) +
                                "\": not a variable name (letters, digits and _, not starting "
                                "with a digit; NAME or NAME=VALUE)");
  }
  if (name.starts_with(kControlPrefix)) {
    throw std::invalid_argument(where + " " + std::string(name) + ": " +
                                std::string(kControlPrefix) +
                                "* variables are the gateway's and never reach a plugin");
  }
  // Refused whether or not the caller has a value for it: what passes must not depend on it.
  if (std::find(std::begin(kBaseEnvNames), std::end(kBaseEnvNames), name) !=
      std::end(kBaseEnvNames)) {
    throw std::invalid_argument(where + " " + std::string(name) +
                                ": BaseEnv sets this variable for the plugin; it cannot be passed");
  }
}

std::vector<std::string> plugin_env(const PluginEnvRequest &request,
                                    const std::vector<std::string> &caller_env) {
  std::vector<std::string> named = request.entries;
  if (request.handshake) {
    check_env_entry(*request.handshake, "handshake");
    if (request.handshake->find('=') != std::string::npos) {
      throw std::invalid_argument("handshake " + *request.handshake +
                                  ": the magic cookie's name, without a value");
    }
    named.push_back(*request.handshake);
    named.insert(named.end(), std::begin(kGoPluginVariables), std::end(kGoPluginVariables));
  }
  std::vector<std::string> env;
  for (const auto &entry : named) {
    check_env_entry(entry, "env");
    const std::string_view name = name_of(entry);
    std::string resolved;
    if (entry.size() > name.size()) {
      resolved = entry;
    } else if (const std::string *value = caller_value(caller_env, name)) {
      resolved = *value;
    } else {
      continue;
    }
    auto same = std::find_if(env.begin(), env.end(),
                             [&](const std::string &e) { return name_of(e) == name; });
    if (same != env.end()) {
      *same = std::move(resolved);
    } else {
      env.push_back(std::move(resolved));
    }
  }
  return env;
}

std::string env_names(const std::vector<std::string> &entries) {
  return boost::algorithm::join(
      entries | boost::adaptors::transformed(
                    [](const std::string &entry) { return std::string(name_of(entry)); }),
      ", ");
}

}  // namespace sandbox_host
