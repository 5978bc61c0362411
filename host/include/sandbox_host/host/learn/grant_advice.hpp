// Which read grants `run --learn` may suggest: never a whole system tree the sandbox builds
// itself (/, /proc, /dev, /sys: the namespaces backend refuses read paths of /, /proc and
// /dev), never /etc, a home directory or what holds credentials (a home's dot-files,
// /etc/shadow, /etc/ssh, /etc/ssl/private ...), never sandbox-host's own state; and a
// directory instead of its files only when several of its files are needed and it is none
// of those and holds none of them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host::learn {

class GrantAdvice {
 public:
  // protected_paths: more paths never to suggest nor cover (the broker's state directory).
  explicit GrantAdvice(std::vector<std::string> protected_paths = {});

  // Why path is never suggested, or nullopt when it may be.
  std::optional<std::string> refusal(const std::string &path) const;
  // Whether dir may be suggested in place of several files below it.
  bool may_cover(const std::string &dir) const;

  // How many needed files of one directory make the directory the suggestion.
  static constexpr std::size_t kFilesForDirectory = 3;

 private:
  std::vector<std::string> homes_;
  std::vector<std::string> protected_;
};

}  // namespace sandbox_host::learn
