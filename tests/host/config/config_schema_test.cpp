// The config's schema (config_schema.hpp) against docs/config.md and against the structs it
// fills: each table's keys are documented in a key table under the table's heading, row for
// row as the schema has them, no heading names a key the schema lacks, the prose of a key
// states its bounds, and each default the schema states is what the reader's struct holds.
// [limits]' bounds (limit_keys) likewise: its own table shows each bound's default and what it
// counts, and a default written out loads to the same bounds as none.
#include "fixtures.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/config_schema.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sandbox_host {
namespace {

using test::TempFile;

constexpr const char *kKeyTableHeader = "| key | type | default | bounds | what |";
// [limits]' own table: its last column, what holds each bound, only the doc says.
constexpr const char *kLimitTableHeader = "| key | default | bounds | enforced by |";

// docs/config.md's lines, each marked as a heading or not: "#" inside a fenced code block
// is a comment of the example, not a heading.
struct DocLine {
  std::string text;
  int heading_level;  // 0: not a heading
};

std::vector<DocLine> doc_lines(const std::string &text) {
  std::vector<DocLine> lines;
  std::istringstream in(text);
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("```")) fenced = !fenced;
    int level = 0;
    if (!fenced) {
      while (level < static_cast<int>(line.size()) && line[level] == '#') ++level;
      if (level == static_cast<int>(line.size()) || line[level] != ' ') level = 0;
    }
    lines.push_back({line, level});
  }
  return lines;
}

std::string read_doc(const std::string &name) {
  std::ifstream in(std::string(PROJECT_SOURCE_DIR) + "/docs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "## Keys" for the file's top level, else the heading that names `[<table>]`.
std::optional<std::size_t> table_heading(const std::vector<DocLine> &lines,
                                         std::string_view table) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].heading_level == 0) continue;
    if (table.empty() ? lines[i].text == "## Keys"
                      : lines[i].text.find("`[" + std::string(table) + "]`") != std::string::npos) {
      return i;
    }
  }
  return std::nullopt;
}

std::vector<std::string> cells(const std::string &row) {
  std::vector<std::string> out;
  std::size_t start = row.find('|') + 1;
  for (std::size_t bar; (bar = row.find('|', start)) != std::string::npos; start = bar + 1) {
    std::string cell = row.substr(start, bar - start);
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    out.push_back(cell);
  }
  return out;
}

// The rows of the first table headed header between the heading at index and the next
// heading.
std::optional<std::vector<std::vector<std::string>>> key_table(const std::vector<DocLine> &lines,
                                                               std::size_t heading,
                                                               std::string_view header) {
  for (std::size_t i = heading + 1; i < lines.size() && lines[i].heading_level == 0; ++i) {
    if (lines[i].text != header) continue;
    std::vector<std::vector<std::string>> rows;
    for (std::size_t j = i + 2; j < lines.size() && lines[j].text.starts_with("|"); ++j) {
      rows.push_back(cells(lines[j].text));
    }
    return rows;
  }
  return std::nullopt;
}

std::vector<std::string> row_of(const ConfigKeyDoc &key) {
  return {"`" + std::string(key.name) + "`", std::string(key.type),
          key.default_value.empty() ? "" : "`" + std::string(key.default_value) + "`",
          key.bounds
              ? std::to_string(key.bounds->first) + " to " + std::to_string(key.bounds->second)
              : "",
          std::string(key.what)};
}

std::vector<std::string> row_of(const LimitKeyDoc &key) {
  return {"`" + std::string(key.name) + "`",
          key.default_value.empty() ? std::string(key.default_rule)
                                    : "`" + std::string(key.default_value) + "`",
          std::string(key.bounds)};
}

std::string row_text(const std::vector<std::string> &row) {
  std::string out = "|";
  for (const auto &cell : row) out += " " + cell + " |";
  return out;
}

// What a doc table's rows get wrong against the rows the code makes (each "`key`" first), one
// line each, named by the table's name.
void add_row_mismatches(const std::string &name, const std::vector<std::vector<std::string>> &rows,
                        const std::vector<std::vector<std::string>> &expected,
                        std::vector<std::string> &out) {
  auto row_named = [](const std::string &key) {
    return [key](const std::vector<std::string> &row) { return !row.empty() && row[0] == key; };
  };
  for (const auto &row : rows) {
    const std::string key = row.empty() ? "" : row[0];
    if (std::none_of(expected.begin(), expected.end(), row_named(key))) {
      out.push_back(name + ": documents " + key + ", which the schema lacks");
    }
  }
  for (const auto &row : expected) {
    const std::string key = row[0].substr(1, row[0].size() - 2);
    const auto found = std::find_if(rows.begin(), rows.end(), row_named(row[0]));
    if (found == rows.end()) {
      out.push_back(name + ": " + key + " is not documented; its row is " + row_text(row));
    } else if (*found != row) {
      out.push_back(name + ": " + key + "'s row is " + row_text(*found) + ", the schema's " +
                    row_text(row));
    }
  }
}

std::string expected_table(const ConfigTableDoc &table) {
  std::string out = std::string(kKeyTableHeader) + "\n|---|---|---|---|---|\n";
  for (const auto &key : table.keys) out += row_text(row_of(key)) + "\n";
  return out;
}

const ConfigKeyDoc *find_key(const ConfigTableDoc &table, std::string_view name) {
  for (const auto &key : table.keys) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

// What docs/config.md gets wrong about the schema, one line each; empty when it agrees.
std::vector<std::string> doc_mismatches(const std::string &text,
                                        const std::vector<ConfigTableDoc> &schema) {
  std::vector<std::string> out;
  const std::vector<DocLine> lines = doc_lines(text);
  for (const auto &table : schema) {
    const std::string name =
        table.table.empty() ? "the top level" : "[" + std::string(table.table) + "]";
    const auto heading = table_heading(lines, table.table);
    if (!heading) {
      out.push_back(name + ": no heading");
      continue;
    }
    const auto rows = key_table(lines, *heading, kKeyTableHeader);
    if (!rows) {
      out.push_back(name + ": no key table under its heading; it is:\n" + expected_table(table));
      continue;
    }
    std::vector<std::vector<std::string>> expected;
    for (const auto &key : table.keys) expected.push_back(row_of(key));
    add_row_mismatches(name, *rows, expected, out);
  }
  // A heading that names <table>.<key> names a key of that table, and the prose below it
  // (to the next heading) states the key's bounds as the schema has them.
  const std::regex token("`([a-z_<>.]+)`");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].heading_level == 0) continue;
    std::string prose;
    for (std::size_t j = i + 1; j < lines.size() && lines[j].heading_level == 0; ++j) {
      prose += lines[j].text + " ";  // a range may break across lines
    }
    for (std::sregex_iterator it(lines[i].text.begin(), lines[i].text.end(), token), end; it != end;
         ++it) {
      const std::string dotted = (*it)[1];
      for (const auto &table : schema) {
        const std::string prefix = std::string(table.table) + ".";
        if (table.table.empty() || !dotted.starts_with(prefix)) continue;
        const std::string key = dotted.substr(prefix.size());
        if (key.find('.') != std::string::npos) continue;
        const ConfigKeyDoc *doc = find_key(table, key);
        if (doc == nullptr) {
          out.push_back("heading \"" + lines[i].text + "\" names " + dotted +
                        ", which the schema lacks");
        } else if (doc->bounds) {
          const std::string bounds =
              std::to_string(doc->bounds->first) + " to " + std::to_string(doc->bounds->second);
          if (prose.find(bounds) == std::string::npos) {
            out.push_back(dotted + ": the prose under \"" + lines[i].text +
                          "\" does not state its bounds, " + bounds);
          }
        }
      }
    }
  }
  return out;
}

std::string joined(const std::vector<std::string> &lines) {
  std::string out;
  for (const auto &line : lines) out += line + "\n";
  return out;
}

// What docs/config.md's [limits] table gets wrong about limit_keys(), one line each.
std::vector<std::string> limit_doc_mismatches(const std::string &text) {
  const std::vector<DocLine> lines = doc_lines(text);
  const auto heading = table_heading(lines, "limits");
  if (!heading) return {"[limits]: no heading"};
  auto rows = key_table(lines, *heading, kLimitTableHeader);
  if (!rows) return {"[limits]: no table " + std::string(kLimitTableHeader) + " under its heading"};
  for (auto &row : *rows) {
    if (!row.empty()) row.pop_back();  // enforced by
  }
  std::vector<std::vector<std::string>> expected;
  for (const auto &key : limit_keys()) expected.push_back(row_of(key));
  std::vector<std::string> out;
  add_row_mismatches("[limits]", *rows, expected, out);
  return out;
}

// Both: the schema's tables and [limits]' bounds.
std::vector<std::string> all_doc_mismatches(const std::string &text) {
  std::vector<std::string> out = doc_mismatches(text, config_schema());
  for (auto &line : limit_doc_mismatches(text)) out.push_back(std::move(line));
  return out;
}

TEST(ConfigSchema, DocsConfigMdDocumentsEveryKeyAsTheSchemaHasIt) {
  const std::string text = read_doc("config.md");
  ASSERT_FALSE(text.empty()) << "docs/config.md is missing";
  const auto mismatches = all_doc_mismatches(text);
  EXPECT_TRUE(mismatches.empty()) << joined(mismatches);
}

// The comparison itself: a planted difference of each kind is found, by name.
TEST(ConfigSchema, APlantedMismatchIsFound) {
  const std::string text = read_doc("config.md");
  auto planted = [&](const std::string &from, const std::string &to) {
    std::string changed = text;
    const std::size_t at = changed.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) changed.replace(at, from.size(), to);
    return joined(all_doc_mismatches(changed));
  };
  EXPECT_NE(planted("| `tick_ms` | integer | `100` |", "| `tick_ms` | integer | `200` |")
                .find("[broker]: tick_ms's row is"),
            std::string::npos);
  EXPECT_NE(planted("| 10 to 10000 |", "| 10 to 20000 |").find("tick_ms's row is"),
            std::string::npos);
  EXPECT_NE(planted("| `max_queued` |", "| `max_queue` |").find("documents `max_queue`"),
            std::string::npos);
  EXPECT_NE(planted("#### `broker.max_queued`", "#### `broker.max_waiting`")
                .find("names broker.max_waiting, which the schema lacks"),
            std::string::npos);
  EXPECT_NE(
      planted("Integer, 10 to 10000.", "Integer, 10 to 1000.").find("broker.tick_ms: the prose"),
      std::string::npos);
  EXPECT_NE(planted("| `processes` | `1024` |", "| `processes` | `2048` |")
                .find("[limits]: processes's row is"),
            std::string::npos);
  EXPECT_NE(planted("| half of the CPUs", "| all of the CPUs").find("[limits]: cpu's row is"),
            std::string::npos);
  EXPECT_NE(planted("| descriptors |", "| files |").find("[limits]: open_files's row is"),
            std::string::npos);
  EXPECT_NE(planted("| `shm_size` |", "| `shm_bytes` |").find("documents `shm_bytes`"),
            std::string::npos);
}

// The header a table's keys are written under, and what the table needs besides.
std::string table_text(std::string_view table) {
  if (table == "egress.parent") return "[egress.parent]\nurl = \"http://proxy.example:3128\"\n";
  std::string name(table);
  if (const auto at = name.find("<name>"); at != std::string::npos) name.replace(at, 6, "demo");
  return "[" + name + "]\n";
}

Config loaded(const std::string &toml) {
  TempFile file(toml, "config.toml");
  Config config = load_config(file.path());
  config.source.clear();
  return config;
}

// A default the schema states, written in the file, changes nothing.
TEST(ConfigSchema, EveryStatedDefaultIsTheDefault) {
  for (const auto &table : config_schema()) {
    if (table.table.empty()) continue;
    for (const auto &key : table.keys) {
      if (key.default_value.empty()) continue;
      const std::string base = table_text(table.table);
      const std::string written =
          base + std::string(key.name) + " = " + std::string(key.default_value) + "\n";
      EXPECT_TRUE(loaded(written) == loaded(base)) << written;
    }
  }
}

// A bound's default, written in [limits] or in a plugin's limits, changes no launch's bounds.
TEST(ConfigSchema, EveryStatedLimitDefaultIsTheDefault) {
  const Config base = loaded("[plugins.demo]\n");
  for (const auto &key : limit_keys()) {
    if (key.default_value.empty()) continue;
    const std::string line = std::string(key.name) + " = " + std::string(key.default_value) + "\n";
    EXPECT_TRUE(loaded("[limits]\n" + line).limits == base.limits) << line;
    EXPECT_TRUE(loaded("[plugins.demo.limits]\n" + line).limits_for("demo") ==
                base.limits_for("demo"))
        << line;
  }
}

}  // namespace
}  // namespace sandbox_host
