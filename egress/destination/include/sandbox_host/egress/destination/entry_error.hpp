// A bad entry of a list the egress proxy parses (the allow list, allow_addresses), with its
// index and the problem alone, so the config can name the entry at its own line while the
// message stays the proxy's own.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace sandbox_host::egress {

class EntryError : public std::invalid_argument {
 public:
  // what(): "<list> entry <index + 1> <quoted_entry>: <problem>".
  EntryError(const std::string &list, std::size_t index, const std::string &quoted_entry,
             std::string problem)
      : std::invalid_argument(list + " entry " + std::to_string(index + 1) + " " + quoted_entry +
                              ": " + problem),
        index_(index),
        problem_(std::move(problem)) {}

  std::size_t index() const noexcept { return index_; }
  const std::string &problem() const noexcept { return problem_; }

 private:
  std::size_t index_;
  std::string problem_;
};

}  // namespace sandbox_host::egress
