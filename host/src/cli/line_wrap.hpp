// Words filled into lines of a terminal's width, for the CLI's text output: a long reason or
// hint reads as a paragraph under its label instead of one line a terminal cuts or wraps at
// column 0.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace sandbox_host::cli {

inline constexpr std::size_t kTextWidth = 100;

// text as lines of at most width characters (a longer word keeps a line of its own): the
// first starts with first, the rest with next (a hanging indent).
inline std::vector<std::string> wrap_words(const std::string &text, const std::string &first,
                                           const std::string &next,
                                           std::size_t width = kTextWidth) {
  std::vector<std::string> lines{first};
  bool line_has_words = false;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (line_has_words && lines.back().size() + 1 + word.size() > width) {
      lines.push_back(next);
      line_has_words = false;
    }
    lines.back() += (line_has_words ? " " : "") + word;
    line_has_words = true;
  }
  return lines;
}

inline std::string wrapped(const std::string &text, const std::string &first,
                           const std::string &next, std::size_t width = kTextWidth) {
  std::string out;
  for (const std::string &line : wrap_words(text, first, next, width)) out += line + "\n";
  return out;
}

}  // namespace sandbox_host::cli
