// A Glob pattern as the file-tool hook holds it to the policy: every alternative its braces
// can mean, each with the literal leading directory it searches, and the directory the
// harness hands its glob engine to walk.
//
// What this relies on (Claude Code 2.x as its bug reports show its command line, e.g.
// anthropics/claude-code#15248, and ripgrep's globset and ignore sources; docs/agent-policy.md
// "The file-tool hook"): the Glob tool runs ripgrep, `rg --files --glob PATTERN
// --sort=modified --no-ignore --hidden ROOT`, from the session's cwd. ROOT, the one tree rg
// walks, is the tool's path (the cwd by default), or for an absolute pattern the pattern cut
// at the last "/" before its first "*", "?", "[" or "{" (its dirname when it has none), the
// rest becoming the glob. The glob only filters the walk: it is ripgrep's gitignore-style
// override glob (globset, with "/" matched only by "/"): `**` spans directories, `{a,b}` are
// alternatives (nested only since ripgrep 15; 14.1 refuses them), `[...]`, `[!...]` and
// `[^...]` are classes taken verbatim up to the first "]" after the first character, and "\"
// escapes the next character. A walk never yields "." or "..", so a wildcard never climbs; a
// literal ".." climbs only in ROOT, where the kernel resolves it.
//
// The hook holds more than ripgrep reads, so that an engine that expands patterns against
// the filesystem (node-glob, a shell) is held too: each alternative's leading literal
// directory (its ".." resolved by the hook's resolve()), and no component after the first
// wildcard that could name "..".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host::policy {

// Bounds on what one pattern may expand to, past which it is refused rather than held.
inline constexpr std::size_t kMaxGlobAlternatives = 256;
inline constexpr std::size_t kMaxGlobNesting = 8;
// PATH_MAX: with kMaxGlobAlternatives it bounds the expansion to 1 MiB.
inline constexpr std::size_t kMaxGlobPatternLength = 4096;

// One meaning of a pattern with its braces expanded.
struct GlobAlternative {
  std::string text;  // brace-free, e.g. "src/**/*.ts" of "src/**/*.{ts,tsx}"
  // The components before the first one holding a wildcard, class or escape ("src"), the
  // last dropped when every one is literal (it names files): "" for the tool's path itself,
  // relative to it, absolute ("/..."), or from home ("~/...").
  std::string directory;
};

struct GlobPattern {
  std::vector<GlobAlternative> alternatives;  // in the pattern's order, without repeats
  // For an absolute pattern, the tree the harness has ripgrep walk (ROOT above, as
  // written); "" for a relative one, which walks the tool's path.
  std::string walk_root;
};

// pattern's alternatives and walk root; nullopt, with why (naming the pattern and, for a
// brace pattern, the alternative) in *error, for braces or classes the engine would not
// parse, a pattern past the bounds above, or an alternative with a component after its
// first wildcard that is or could match "..": literally, by escapes or classes ("\.\.",
// "[.][.]", ".[.]").
std::optional<GlobPattern> parse_glob_pattern(const std::string &pattern, std::string &error);

}  // namespace sandbox_host::policy
