// A Glob pattern read the way ripgrep's globset reads it (see the header for what the hook
// relies on): braces expanded, bounded, and each alternative's components classified.
#include <sandbox_host/host/policy/glob_pattern.hpp>

#include <algorithm>
#include <string_view>
#include <utility>

namespace sandbox_host::policy {
namespace {

using Texts = std::vector<std::string>;

// Where the class opened by text[open] ("[") closes, as globset reads it: after an optional
// "!" or "^", the first character is a member even when it is "]"; npos when unclosed.
std::size_t class_end(std::string_view text, std::size_t open) {
  std::size_t at = open + 1;
  if (at < text.size() && (text[at] == '!' || text[at] == '^')) ++at;
  if (at < text.size() && text[at] == ']') ++at;
  return text.find(']', at);
}

// A pattern's brace-free alternatives, in order: a recursive descent over the pattern in
// which "\" keeps the next character and a class keeps its braces and commas, as in globset.
class BraceExpansion {
 public:
  BraceExpansion(const std::string &pattern, std::string &error)
      : pattern_(pattern), error_(error) {}

  std::optional<Texts> run() {
    auto texts = sequence(0);
    if (!texts) return std::nullopt;
    // Only a "}" stops the outermost sequence before the end.
    if (at_ < pattern_.size()) return fail("has a \"}\" that closes no \"{\"");
    return texts;
  }

 private:
  std::nullopt_t fail(const std::string &why) {
    error_ = "Glob pattern " + pattern_ + " " + why;
    return std::nullopt;
  }
  std::nullopt_t too_many() {
    return fail("has more than " + std::to_string(kMaxGlobAlternatives) +
                " alternatives once its braces are expanded, more than the hook holds");
  }

  // Text and groups up to the "," or "}" ending the group at depth (the end at depth 0).
  std::optional<Texts> sequence(std::size_t depth) {
    Texts texts{""};
    while (at_ < pattern_.size()) {
      const char c = pattern_[at_];
      if (c == '}' || (c == ',' && depth > 0)) break;
      if (c == '{') {
        ++at_;
        const auto group = alternatives(depth + 1);
        if (!group) return std::nullopt;
        if (texts.size() * group->size() > kMaxGlobAlternatives) return too_many();
        Texts product;
        product.reserve(texts.size() * group->size());
        for (const auto &head : texts) {
          for (const auto &tail : *group) product.push_back(head + tail);
        }
        texts = std::move(product);
        continue;
      }
      const auto text = literal(depth);
      if (!text) return std::nullopt;
      for (auto &each : texts) each += *text;
    }
    return texts;
  }

  // The alternatives of the group whose "{" was just read.
  std::optional<Texts> alternatives(std::size_t depth) {
    if (depth > kMaxGlobNesting) {
      return fail("nests braces deeper than " + std::to_string(kMaxGlobNesting) +
                  " levels, more than the hook holds");
    }
    Texts texts;
    while (true) {
      const auto branch = sequence(depth);
      if (!branch) return std::nullopt;
      if (texts.size() + branch->size() > kMaxGlobAlternatives) return too_many();
      texts.insert(texts.end(), branch->begin(), branch->end());
      if (at_ == pattern_.size()) return fail("has a \"{\" that is never closed");
      if (pattern_[at_++] == '}') return texts;
    }
  }

  // The text from here to the next brace, or to a "," inside a group.
  std::optional<std::string> literal(std::size_t depth) {
    const std::size_t start = at_;
    while (at_ < pattern_.size()) {
      const char c = pattern_[at_];
      if (c == '{' || c == '}' || (c == ',' && depth > 0)) break;
      if (c == '\\') {
        if (at_ + 1 == pattern_.size()) return fail("ends in a \"\\\" that escapes nothing");
        // globset reads "\/" as the separator; no pattern needs it, and refusing it keeps
        // the components the hook splits at "/" the engine's.
        if (pattern_[at_ + 1] == '/') return fail("escapes a \"/\"");
        at_ += 2;
      } else if (c == '[') {
        const std::size_t end = class_end(pattern_, at_);
        if (end == std::string::npos) return fail("has a \"[\" that is never closed");
        if (pattern_.find('/', at_) < end) return fail("has a character class holding \"/\"");
        at_ = end + 1;
      } else {
        ++at_;
      }
    }
    return pattern_.substr(start, at_ - start);
  }

  const std::string &pattern_;
  std::string &error_;
  std::size_t at_ = 0;
};

// text's components between the "/"s, empty ones dropped ("." kept: resolve() drops it).
// Classes hold no "/" and no "/" is escaped (BraceExpansion refuses both).
Texts components(std::string_view text) {
  Texts out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('/', start), text.size());
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Whether component matches only itself: no wildcard, class or escape.
bool is_literal(std::string_view component) {
  return component.find_first_of("*?[\\") == std::string_view::npos;
}

// Whether the class between "[" and "]" (body) has "." as a member, read as globset does:
// "!" or "^" first negates, a leading or trailing "-" is a member, "a-z" a range.
bool class_has_dot(std::string_view body) {
  const bool negated = !body.empty() && (body.front() == '!' || body.front() == '^');
  if (negated) body.remove_prefix(1);
  // Bytes compared unsigned: a range ending in a multibyte character spans "." too.
  std::vector<std::pair<unsigned char, unsigned char>> ranges;
  bool in_range = false;
  for (std::size_t at = 0; at < body.size(); ++at) {
    const auto c = static_cast<unsigned char>(body[at]);
    if (c == '-' && at > 0 && !in_range) {
      in_range = true;
    } else if (in_range) {
      ranges.back().second = c;
      in_range = false;
    } else {
      ranges.emplace_back(c, c);
    }
  }
  if (in_range) ranges.emplace_back('-', '-');
  const bool listed = std::any_of(ranges.begin(), ranges.end(), [](const auto &range) {
    return range.first <= '.' && '.' <= range.second;
  });
  return listed != negated;
}

// Whether a component that is not the literal ".." still spells it with escapes and classes
// ("\.\.", "[.][.]", ".[.]", "[!a][!a]"). A "*" or "?" only ever matches a name the
// directory walk yields, and a walk never yields "..", so a component with one does not.
bool spells_dot_dot(std::string_view component) {
  std::size_t characters = 0;
  for (std::size_t at = 0; at < component.size(); ++characters) {
    const char c = component[at];
    bool dot = false;
    if (c == '*' || c == '?') return false;
    if (c == '\\') {
      dot = at + 1 < component.size() && component[at + 1] == '.';
      at += 2;
    } else if (c == '[') {
      const std::size_t end = std::min(class_end(component, at), component.size());
      dot = class_has_dot(component.substr(at + 1, end - at - 1));
      at = end + 1;
    } else {
      dot = c == '.';
      ++at;
    }
    if (!dot) return false;
  }
  return characters == 2;
}

// One alternative's directory, or why it is refused.
std::optional<GlobAlternative> alternative(const std::string &pattern, std::string text,
                                           std::string &error) {
  const std::string shown =
      "Glob pattern " + pattern + (text == pattern ? "" : " (alternative " + text + ")");
  const Texts parts = components(text);
  const auto first_wild = static_cast<std::size_t>(
      std::find_if_not(parts.begin(), parts.end(),
                       [](const std::string &part) { return is_literal(part); }) -
      parts.begin());
  for (std::size_t i = first_wild; i < parts.size(); ++i) {
    if (parts[i] == "..") {
      error = shown + " climbs with \"..\" after a wildcard";
      return std::nullopt;
    }
    if (spells_dot_dot(parts[i])) {
      error = shown + " has the component " + parts[i] +
              ", which can match \"..\" and climb out of the searched directory";
      return std::nullopt;
    }
  }
  // With no wildcard at all, the last component names files, not a directory to search.
  std::size_t literal_parts = first_wild;
  if (first_wild == parts.size() && !parts.empty()) --literal_parts;
  std::string directory = !text.empty() && text.front() == '/' ? "/" : "";
  for (std::size_t i = 0; i < literal_parts; ++i) {
    if (!directory.empty() && directory.back() != '/') directory += '/';
    directory += parts[i];
  }
  return GlobAlternative{std::move(text), std::move(directory)};
}

// The harness's split of an absolute pattern: what precedes the last "/" before its first
// "*", "?", "[" or "{", escapes and classes unread; with none, the pattern's dirname.
std::string walk_root(std::string_view pattern) {
  if (pattern.empty() || pattern.front() != '/') return "";
  std::string_view head = pattern.substr(0, pattern.find_first_of("*?[{"));
  if (head.size() == pattern.size()) {
    // dirname ignores trailing slashes.
    while (head.size() > 1 && head.back() == '/') head.remove_suffix(1);
  }
  const std::size_t cut = head.rfind('/');
  return cut == 0 ? "/" : std::string(head.substr(0, cut));
}

}  // namespace

std::optional<GlobPattern> parse_glob_pattern(const std::string &pattern, std::string &error) {
  if (pattern.size() > kMaxGlobPatternLength) {
    error = "Glob pattern " + pattern.substr(0, 64) + "... has " + std::to_string(pattern.size()) +
            " characters, more than the " + std::to_string(kMaxGlobPatternLength) +
            " the hook holds";
    return std::nullopt;
  }
  BraceExpansion expansion(pattern, error);
  auto texts = expansion.run();
  if (!texts) return std::nullopt;
  GlobPattern out;
  out.walk_root = walk_root(pattern);
  for (auto &text : *texts) {
    const bool repeat = std::any_of(out.alternatives.begin(), out.alternatives.end(),
                                    [&](const GlobAlternative &seen) { return seen.text == text; });
    if (repeat) continue;
    auto each = alternative(pattern, std::move(text), error);
    if (!each) return std::nullopt;
    out.alternatives.push_back(std::move(*each));
  }
  return out;
}

}  // namespace sandbox_host::policy
