#include "metrics_scrapers.hpp"

#include "toml_type_name.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

namespace sandbox_host {
namespace {

constexpr const char *allowed = "user names, or uids 0 to 4294967294";
// (uid_t)-1 means "no change" to setresuid(2) and chown(2): no process runs as it.
constexpr std::int64_t max_uid = std::numeric_limits<uid_t>::max() - 1;

// The uid of user name, or nullopt when the password database has no such user; throws
// on a lookup that failed (an unreachable NSS source), naming the key.
std::optional<uid_t> uid_of_user(const ConfigReader &r, const toml::node &entry,
                                 const std::string &key, const std::string &name) {
  long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(size > 0 ? static_cast<std::size_t>(size) : 16384);
  passwd entry_buffer{};
  passwd *found = nullptr;
  int error = 0;
  while ((error = ::getpwnam_r(name.c_str(), &entry_buffer, buffer.data(), buffer.size(),
                               &found)) == ERANGE) {
    buffer.resize(buffer.size() * 2);
  }
  if (error != 0) {
    r.fail(entry.source(), key,
           "cannot look up user \"" + name + "\" (getpwnam_r: " + std::strerror(error) + ")");
  }
  if (found == nullptr) return std::nullopt;
  return found->pw_uid;
}

uid_t scraper_uid(const ConfigReader &r, const toml::node &entry, const std::string &key) {
  if (const auto *number = entry.as_integer()) {
    const std::int64_t uid = number->get();
    if (uid < 0 || uid > max_uid) {
      r.fail(entry.source(), key,
             std::to_string(uid) + " is not a uid; allowed: " + std::string(allowed));
    }
    return static_cast<uid_t>(uid);
  }
  const auto *text = entry.as_string();
  if (text == nullptr) {
    r.fail(entry.source(), key,
           std::string("must be a user name (a string) or a uid (an integer), not ") +
               toml_type_name(entry));
  }
  const std::string name = text->get();
  if (!name.empty() &&
      std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (name.size() > 10 || std::stoll(name) > max_uid) {
      r.fail(entry.source(), key, "\"" + name + "\" is not a uid; allowed: " + allowed);
    }
    return static_cast<uid_t>(std::stoll(name));
  }
  const auto uid = name.empty() ? std::nullopt : uid_of_user(r, entry, key, name);
  if (!uid) {
    r.fail(entry.source(), key,
           "\"" + name +
               "\" is no user in the password database (getpwnam_r); name an existing user "
               "or give its uid");
  }
  return *uid;
}

}  // namespace

std::vector<uid_t> read_scrapers(const ConfigReader &r, const toml::node &node,
                                 const std::string &key, uid_t serve_uid) {
  const auto *array = node.as_array();
  if (array == nullptr) {
    r.fail(node.source(), key,
           std::string("must be an array of ") + allowed + ", not " + toml_type_name(node));
  }
  std::vector<uid_t> uids;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::node &entry = *array->get(i);
    const std::string element = key + "[" + std::to_string(i) + "]";
    const uid_t uid = scraper_uid(r, entry, element);
    const std::string named = "uid " + std::to_string(uid);
    if (uid == serve_uid) {
      r.fail(entry.source(), element,
             named + " is serve's own user, which is served without listing it");
    }
    if (uid == 0) {
      r.fail(entry.source(), element,
             "uid 0 (root) may scrape only a serve that runs as root: this serve, as uid " +
                 std::to_string(serve_uid) +
                 ", cannot read a root process's sandbox mark, and root's processes include "
                 "the sandboxes of any host that runs as root");
    }
    const auto earlier = std::find(uids.begin(), uids.end(), uid);
    if (earlier != uids.end()) {
      r.fail(entry.source(), element,
             named + " is listed already, as " + key + "[" +
                 std::to_string(earlier - uids.begin()) + "]");
    }
    uids.push_back(uid);
  }
  return uids;
}

}  // namespace sandbox_host
