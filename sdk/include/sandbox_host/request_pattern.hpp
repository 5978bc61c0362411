// A regular expression for text a requester sends (an op's arg_pattern, a wait or resource
// field): RE2, whose matching time is linear in the text whatever the pattern, so that no
// request can make a broker thread backtrack or recurse through its stack. Its syntax is
// RE2's: ECMAScript's without back-references and look-around.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sandbox_host {

class RequestPattern {
 public:
  // Throws std::invalid_argument with RE2's reason ("missing ]: [a-z") for a pattern it
  // does not take.
  explicit RequestPattern(const std::string &pattern)
      : text_(pattern), re2_(std::make_unique<RE2>(pattern, quiet())) {
    if (!re2_->ok()) {
      throw std::invalid_argument(re2_->error());
    }
  }

  // Whether the whole of text matches.
  bool matches(std::string_view text) const { return RE2::FullMatch(text, *re2_); }
  const std::string &text() const noexcept { return text_; }

 private:
  // RE2 logs a bad pattern to stderr by default; the error is the caller's to report.
  static RE2::Options quiet() {
    RE2::Options options;
    options.set_log_errors(false);
    return options;
  }

  std::string text_;
  std::unique_ptr<RE2> re2_;  // RE2 is neither copyable nor movable
};

}  // namespace sandbox_host
