// The config file's tables as data: each key with its type, default, bounds and one line of
// what it is. load_config reads every table listed here by walking these same keys, so the
// listing is what the reader accepts; docs/config.md's key tables show it (a test compares).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace sandbox_host {

struct ConfigKeyDoc {
  std::string_view name;  // as written in its table
  std::string_view type;  // "integer", "string", "array of strings", "table", ...
  // The default as TOML writes it; "" when the key has none or its default is made when
  // the file is loaded (what says from what).
  std::string_view default_value;
  // An integer's least and greatest value (each element's, for an array of integers).
  std::optional<std::pair<std::int64_t, std::int64_t>> bounds;
  std::string_view what;
};

struct ConfigTableDoc {
  // The table's dotted name as docs/config.md heads it ("broker", "egress.parent",
  // "plugins.<name>"); "" for the file's top level.
  std::string_view table;
  std::vector<ConfigKeyDoc> keys;  // in the order unknown-key errors list them
};

// Every table the schema describes. [limits] (whose bounds limit_keys lists) and [ops] (whose
// tables' keys are the modules') are read by their own tables and are not listed.
std::vector<ConfigTableDoc> config_schema();

// One bound of [limits] and [plugins.<name>.limits] as docs/config.md's table of them shows
// it; what enforces it is the backends' and the host's business, so only the doc says that.
struct LimitKeyDoc {
  std::string_view name;
  // The default as TOML writes it; "" when the host works it out when the file is loaded
  // (default_rule says how).
  std::string_view default_value;
  std::string_view default_rule;
  std::string_view bounds;  // what the bound counts, as the table's "bounds" column says it
};

// The bounds, as their table in limits_config.cpp has them and unknown-key errors list them
// (not [limits]' cgroup, which is where the bounds' cgroups go).
std::vector<LimitKeyDoc> limit_keys();

}  // namespace sandbox_host
