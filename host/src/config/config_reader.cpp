#include "config_reader.hpp"

#include "toml_type_name.hpp"

#include <sandbox_host/host/spec_check.hpp>

#include <algorithm>

namespace sandbox_host {

ConfigError::ConfigError(std::string file, int line, std::string key, const std::string &what)
    : std::runtime_error((file.empty() ? std::string("<defaults>") : file) +
                         (line > 0 ? ":" + std::to_string(line) : std::string()) +
                         (key.empty() ? std::string() : ": " + key) + ": " + what),
      file_(std::move(file)),
      line_(line),
      key_(std::move(key)) {}

std::string key_part(std::string_view key) {
  const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
  if (bare) return std::string(key);
  std::string out = "\"";
  for (char c : key) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void ConfigReader::fail(const toml::source_region &where, const std::string &key,
                        const std::string &what) const {
  const int line = static_cast<int>(where.begin.line);
  if (failure_) failure_(line, key, what);
  throw ConfigError(file_, line, key, what);
}

void ConfigReader::unknown(const toml::key &key, const std::string &dotted,
                           const std::string &allowed) const {
  fail(key.source(), dotted, "unknown key; allowed: " + allowed);
}

const toml::table &ConfigReader::table(const toml::node &node, const std::string &key) const {
  if (const auto *t = node.as_table()) return *t;
  fail(node.source(), key, std::string("must be a table, not ") + toml_type_name(node));
}

std::string ConfigReader::string(const toml::node &node, const std::string &key,
                                 const std::string &allowed) const {
  if (const auto *s = node.as_string()) return s->get();
  fail(node.source(), key,
       std::string("must be a string (") + allowed + "), not " + toml_type_name(node));
}

std::vector<std::string> ConfigReader::strings(const toml::node &node, const std::string &key,
                                               const std::string &allowed) const {
  const auto *array = node.as_array();
  if (array == nullptr) {
    fail(node.source(), key,
         std::string("must be an array of strings (") + allowed + "), not " + toml_type_name(node));
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < array->size(); ++i) {
    out.push_back(string(*array->get(i), key + "[" + std::to_string(i) + "]", allowed));
  }
  return out;
}

std::vector<std::string> ConfigReader::non_empty_strings(const toml::node &node,
                                                         const std::string &key,
                                                         const std::string &allowed) const {
  auto values = strings(node, key, allowed);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].empty()) {
      fail(element_source(node, i), key + "[" + std::to_string(i) + "]",
           "is empty; allowed: " + allowed);
    }
  }
  return values;
}

std::vector<std::string> ConfigReader::absolute_paths(const toml::node &node,
                                                      const std::string &key) const {
  auto paths = strings(node, key, "absolute paths");
  for (const auto &path : paths) {
    if (path.empty() || path.front() != '/') {
      fail(node.source(), key, "\"" + path + "\" is not an absolute path");
    }
  }
  return paths;
}

std::filesystem::path ConfigReader::optional_path(const toml::node &node, const std::string &key,
                                                  const std::string &empty_means) const {
  const std::string path = string(node, key, "an absolute path, or \"\" for " + empty_means);
  if (!path.empty() && path.front() != '/') {
    fail(node.source(), key,
         "\"" + path + "\" is not an absolute path; allowed: an absolute path, or \"\" for " +
             empty_means);
  }
  return path;
}

std::filesystem::path ConfigReader::socket_path(const toml::node &node,
                                                const std::string &key) const {
  const std::string path = string(node, key, "an absolute path");
  if (path.empty() || path.front() != '/') {
    fail(node.source(), key, "\"" + path + "\" is not an absolute path");
  }
  if (path.size() > kMaxSocketPath) {
    fail(node.source(), key,
         "\"" + path + "\" is longer than a unix socket address holds (" +
             std::to_string(kMaxSocketPath) + " bytes)");
  }
  return path;
}

std::int64_t ConfigReader::integer(const toml::node &node, const std::string &key, std::int64_t min,
                                   std::int64_t max, std::string_view note) const {
  const std::string range = std::to_string(min) + " to " + std::to_string(max) +
                            (note.empty() ? std::string() : ", " + std::string(note));
  const auto *value = node.as_integer();
  if (value == nullptr) {
    fail(node.source(), key,
         "must be an integer (" + range + "), not " + std::string(toml_type_name(node)));
  }
  if (value->get() < min || value->get() > max) {
    fail(node.source(), key, std::to_string(value->get()) + " is out of range; allowed: " + range);
  }
  return value->get();
}

std::vector<std::int64_t> ConfigReader::integers(const toml::node &node, const std::string &key,
                                                 std::int64_t min, std::int64_t max) const {
  const auto *array = node.as_array();
  if (array == nullptr) {
    fail(node.source(), key,
         "must be an array of integers (" + std::to_string(min) + " to " + std::to_string(max) +
             "), not " + toml_type_name(node));
  }
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < array->size(); ++i) {
    out.push_back(integer(*array->get(i), key + "[" + std::to_string(i) + "]", min, max));
  }
  return out;
}

bool ConfigReader::boolean(const toml::node &node, const std::string &key) const {
  if (const auto *b = node.as_boolean()) return b->get();
  fail(node.source(), key, std::string("must be a boolean, not ") + toml_type_name(node));
}

const toml::source_region &ConfigReader::element_source(const toml::node &node, std::size_t i) {
  return node.as_array()->get(i)->source();
}

}  // namespace sandbox_host
