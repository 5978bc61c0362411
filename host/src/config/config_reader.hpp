// Reading one config file's TOML values: every error names the file, the line, the dotted
// key and what is allowed there, so each table's schema states only its own rules.
#pragma once

#include <sandbox_host/host/config.hpp>

#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

// A key as a dotted key names it: bare when TOML allows that, else quoted.
std::string key_part(std::string_view key);

class ConfigReader {
 public:
  // How an error leaves, given the line (0 where unknown), the dotted key and what was
  // wrong: by default as a ConfigError; a file of another kind (an agent policy) throws its
  // own error from the same parts. It must throw.
  using Failure = std::function<void(int line, const std::string &key, const std::string &what)>;

  explicit ConfigReader(std::string file, Failure failure = {})
      : file_(std::move(file)), failure_(std::move(failure)) {}

  // Throws ConfigError at where's line.
  [[noreturn]] void fail(const toml::source_region &where, const std::string &key,
                         const std::string &what) const;
  [[noreturn]] void unknown(const toml::key &key, const std::string &dotted,
                            const std::string &allowed) const;

  const toml::table &table(const toml::node &node, const std::string &key) const;
  std::string string(const toml::node &node, const std::string &key,
                     const std::string &allowed) const;
  // Each element named by its index when it is not a string.
  std::vector<std::string> strings(const toml::node &node, const std::string &key,
                                   const std::string &allowed) const;
  // Strings none of which is empty; an empty one is named by its index.
  std::vector<std::string> non_empty_strings(const toml::node &node, const std::string &key,
                                             const std::string &allowed) const;
  std::vector<std::string> absolute_paths(const toml::node &node, const std::string &key) const;
  // "" or an absolute path.
  std::filesystem::path optional_path(const toml::node &node, const std::string &key,
                                      const std::string &empty_means) const;
  // An absolute path a unix socket is bound at: no longer than a socket address holds.
  std::filesystem::path socket_path(const toml::node &node, const std::string &key) const;
  // An integer in [min, max]; note says more of the range ("0 for none").
  std::int64_t integer(const toml::node &node, const std::string &key, std::int64_t min,
                       std::int64_t max, std::string_view note = {}) const;
  // Integers in [min, max], each named by its index.
  std::vector<std::int64_t> integers(const toml::node &node, const std::string &key,
                                     std::int64_t min, std::int64_t max) const;
  bool boolean(const toml::node &node, const std::string &key) const;

  // Element i of the array at node, for an error at its own line.
  static const toml::source_region &element_source(const toml::node &node, std::size_t i);

 private:
  std::string file_;
  Failure failure_;
};

}  // namespace sandbox_host
