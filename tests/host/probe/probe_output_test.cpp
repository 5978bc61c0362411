// What a person reads of `sandbox-host probe` on this machine, with the default config: the
// first lines answer "which backend, why, and what does it not cover" within a screenful;
// --verbose holds the rest (every backend, the limits table, the Landlock audit); forced to
// Landlock, its gaps come one per line, and --json carries the same gaps as objects beside
// the one warning string.
#include "coverage_warning.hpp"
#include "landlock_abi.hpp"
#include "process.hpp"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace sandbox_host {
namespace {

using test::ProcessResult;
using test::run_process;

constexpr std::size_t kScreenLines = 24;
constexpr std::size_t kLineWidth = 120;

std::vector<std::string> env_with(const std::vector<std::string> &extra) {
  std::vector<std::string> env{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

ProcessResult probe(const std::vector<std::string> &flags,
                    const std::vector<std::string> &extra_env = {}) {
  std::vector<std::string> argv{SANDBOX_HOST_EXE, "probe"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return run_process(argv, test::with_env(env_with(extra_env)));
}

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Characters, not bytes: an em dash is one.
std::size_t width_of(const std::string &line) {
  std::size_t width = 0;
  for (unsigned char c : line) width += (c & 0xC0) != 0x80;
  return width;
}

::testing::AssertionResult FitsAScreen(const std::string &text) {
  const auto lines = lines_of(text);
  if (lines.size() > kScreenLines) {
    return ::testing::AssertionFailure() << lines.size() << " lines:\n" << text;
  }
  for (const std::string &line : lines) {
    if (width_of(line) > kLineWidth) {
      return ::testing::AssertionFailure() << width_of(line) << " characters: " << line;
    }
  }
  return ::testing::AssertionSuccess();
}

Poco::JSON::Object::Ptr parsed(const ProcessResult &result) {
  return Poco::JSON::Parser().parse(result.out).extract<Poco::JSON::Object::Ptr>();
}

struct Gap {
  std::string what, close;
};
std::vector<Gap> gaps_in(const Poco::JSON::Array::Ptr &array) {
  std::vector<Gap> gaps;
  for (std::size_t i = 0; array && i < array->size(); ++i) {
    const auto gap = array->getObject(static_cast<unsigned>(i));
    gaps.push_back({gap->getValue<std::string>("what"), gap->getValue<std::string>("close")});
  }
  return gaps;
}

bool has_line(const std::vector<std::string> &lines, const std::string &line) {
  for (const auto &l : lines) {
    if (l == line) return true;
  }
  return false;
}

TEST(ProbeOutput, TheDefaultSummaryAnswersFirstAndFitsAScreen) {
  const ProcessResult json = probe({"--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto out = parsed(json);
  const std::string chosen = out->getValue<std::string>("chosen");

  const ProcessResult text = probe({});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(FitsAScreen(text.out));
  const auto lines = lines_of(text.out);
  ASSERT_GE(lines.size(), 3u) << text.out;
  EXPECT_EQ(lines[0], "chosen: " + chosen) << text.out;
  EXPECT_TRUE(lines[1].starts_with("why: first of backends.priority (")) << text.out;
  // What it does not cover comes next (after the reasons of the backends passed over).
  std::size_t not_covered = 2;
  while (not_covered < lines.size() && lines[not_covered].starts_with(" ")) ++not_covered;
  ASSERT_LT(not_covered, lines.size()) << text.out;
  EXPECT_TRUE(lines[not_covered].starts_with("not covered")) << text.out;
  for (const Gap &gap : gaps_in(out->getArray("gaps"))) {
    EXPECT_TRUE(has_line(lines, "  - " + gap.what) ||
                has_line(lines, "  - " + gap.what + " — close: " + gap.close))
        << gap.what << "\n"
        << text.out;
  }
  // Every backend has its one line; the details are left to --verbose.
  auto backends = out->getArray("backends");
  for (std::size_t i = 0; i < backends->size(); ++i) {
    const std::string name =
        backends->getObject(static_cast<unsigned>(i))->getValue<std::string>("name");
    EXPECT_NE(text.out.find("\n  " + name + " "), std::string::npos) << name << "\n" << text.out;
  }
  EXPECT_EQ(text.out.find("limits ([limits]"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("landlock audit:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("sandbox-host probe --verbose"), std::string::npos) << text.out;
}

TEST(ProbeOutput, VerboseHoldsTheLimitsTableAndEveryBackend) {
  const ProcessResult json = probe({"--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto out = parsed(json);
  const ProcessResult summary = probe({});
  const ProcessResult verbose = probe({"--verbose"});
  ASSERT_EQ(verbose.code, 0) << verbose.err;
  // The same summary first, then the details.
  const std::string first = summary.out.substr(0, summary.out.find("more: "));
  EXPECT_EQ(verbose.out.rfind(first, 0), 0u) << verbose.out;
  const std::size_t details = verbose.out.find("\ndetails:\n");
  ASSERT_NE(details, std::string::npos) << verbose.out;
  const std::string rest = verbose.out.substr(details);
  const auto lines = lines_of(rest);

  auto backends = out->getArray("backends");
  for (std::size_t i = 0; i < backends->size(); ++i) {
    const auto backend = backends->getObject(static_cast<unsigned>(i));
    const std::string name = backend->getValue<std::string>("name");
    EXPECT_NE(rest.find("\n  " + name + " "), std::string::npos) << name << "\n" << rest;
    if (!backend->getValue<std::string>("hint").empty()) {
      EXPECT_NE(rest.find("hint: "), std::string::npos) << name;
    }
    for (const Gap &gap : gaps_in(backend->getArray("gaps"))) {
      EXPECT_TRUE(has_line(lines, "    - " + gap.what) ||
                  has_line(lines, "    - " + gap.what + " — close: " + gap.close))
          << name << ": " << gap.what << "\n"
          << rest;
    }
  }
  // Each available backend's limits, every row of them.
  auto per_backend = out->getObject("limits")->getObject("backends");
  ASSERT_GT(per_backend->size(), 0u) << json.out;
  EXPECT_NE(rest.find("\nlimits ([limits]; a plugin's own table may change the values):\n"),
            std::string::npos)
      << rest;
  for (const auto &[name, rows] : *per_backend) {
    EXPECT_NE(rest.find("\n  " + name + ":\n"), std::string::npos) << name;
    const auto array = rows.extract<Poco::JSON::Array::Ptr>();
    for (std::size_t i = 0; i < array->size(); ++i) {
      const std::string limit =
          array->getObject(static_cast<unsigned>(i))->getValue<std::string>("limit");
      EXPECT_NE(rest.find("\n    " + limit + " "), std::string::npos) << name << " " << limit;
    }
  }
  EXPECT_NE(
      rest.find("\nlandlock ABI: " + std::to_string(out->getValue<int>("landlock_abi")) + "\n"),
      std::string::npos)
      << rest;
  // The Landlock audit line says what --json says.
  const std::string audit = out->getObject("landlock_audit")->getValue<std::string>("summary");
  std::string audit_text;
  for (std::size_t at = rest.find("\nlandlock audit: "); at != std::string::npos;) {
    std::istringstream in(rest.substr(at + 1));
    std::string line;
    std::getline(in, line);
    audit_text = line.substr(std::string("landlock audit: ").size());
    while (std::getline(in, line) && line.starts_with("  ")) audit_text += " " + line.substr(2);
    break;
  }
  EXPECT_EQ(audit_text, audit) << rest;
}

class ForcedLandlock : public ::testing::Test {
 protected:
  void SetUp() override {
    if (landlock::kernel_abi() < 1) GTEST_SKIP() << "no Landlock on this kernel";
  }
  const std::vector<std::string> forced_{"CLAWPATROL_SANDBOX_BACKEND=landlock"};
};

TEST_F(ForcedLandlock, ItsGapsComeOnePerLineAmongTheFirstLines) {
  const int abi = landlock::kernel_abi();
  const std::vector<CoverageGap> expected = landlock::coverage_gaps(abi);
  ASSERT_FALSE(expected.empty());
  const ProcessResult text = probe({}, forced_);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(FitsAScreen(text.out));
  const auto lines = lines_of(text.out);
  ASSERT_GT(lines.size(), 3 + expected.size()) << text.out;
  EXPECT_EQ(lines[0], "chosen: landlock");
  EXPECT_EQ(lines[1],
            "why: forced: CLAWPATROL_SANDBOX_BACKEND=landlock (a forced backend never falls "
            "through)");
  EXPECT_EQ(lines[2],
            "not covered (degraded: Landlock ABI " + std::to_string(abi) + " without namespaces):");
  // One line each, in order, starting at the fourth; each one's close is said on its line (or
  // the next, where both do not fit) or once under the run of gaps that share it.
  std::size_t line = 3;
  for (std::size_t i = 0; i < expected.size(); ++i, ++line) {
    ASSERT_LT(line, lines.size()) << text.out;
    const std::string inline_close = "  - " + expected[i].what + " — close: " + expected[i].close;
    if (lines[line] == inline_close) continue;
    EXPECT_EQ(lines[line], "  - " + expected[i].what) << text.out;
    if (line + 1 < lines.size() && lines[line + 1] == "      close: " + expected[i].close) {
      ++line;  // too long for one line with its close
      continue;
    }
    const bool run_ends = i + 1 == expected.size() || expected[i + 1].close != expected[i].close;
    if (run_ends) {
      ++line;
      ASSERT_LT(line, lines.size()) << text.out;
      EXPECT_TRUE(lines[line].starts_with("    close (the ")) << lines[line];
      EXPECT_TRUE(lines[line].ends_with(" above): " + expected[i].close)) << lines[line];
    }
  }
}

TEST_F(ForcedLandlock, JsonHasTheGapsAsObjectsAndTheOneWarningStill) {
  const int abi = landlock::kernel_abi();
  const ProcessResult json = probe({"--json"}, forced_);
  ASSERT_EQ(json.code, 0) << json.err;
  const auto out = parsed(json);
  EXPECT_EQ(out->getValue<std::string>("chosen"), "landlock");
  const std::vector<CoverageGap> expected = landlock::coverage_gaps(abi);
  const std::vector<Gap> gaps = gaps_in(out->getArray("gaps"));
  ASSERT_EQ(gaps.size(), expected.size()) << json.out;
  for (std::size_t i = 0; i < gaps.size(); ++i) {
    EXPECT_EQ(gaps[i].what, expected[i].what);
    EXPECT_EQ(gaps[i].close, expected[i].close);
  }
  // Each object has exactly these two fields.
  auto first = out->getArray("gaps")->getObject(0);
  EXPECT_EQ(first->size(), 2u) << json.out;
  // The single string is still there and says the same things.
  const std::string warning = out->getValue<std::string>("warning");
  EXPECT_EQ(warning, landlock::coverage_warning(abi));
  EXPECT_TRUE(warning.starts_with("degraded: Landlock ABI " + std::to_string(abi) +
                                  " without namespaces; not covered: "))
      << warning;
  for (const Gap &gap : gaps) {
    EXPECT_NE(warning.find(gap.what + " (close: " + gap.close + ")"), std::string::npos)
        << gap.what;
  }
  for (const char *item : {"no pid namespace", "no mount namespace", "stat(2)",
                           "connect(2) to the launching user's unix sockets by path",
                           "no uts namespace", "no network namespace"}) {
    EXPECT_NE(warning.find(item), std::string::npos) << item;
  }
  // The landlock backend's own entry carries them too.
  auto backends = out->getArray("backends");
  for (std::size_t i = 0; i < backends->size(); ++i) {
    const auto backend = backends->getObject(static_cast<unsigned>(i));
    if (backend->getValue<std::string>("name") != "landlock") continue;
    EXPECT_EQ(gaps_in(backend->getArray("gaps")).size(), expected.size());
    EXPECT_EQ(backend->getValue<std::string>("warning"), warning);
  }
  EXPECT_EQ(out->getObject("why")->getValue<std::string>("text"),
            "forced: CLAWPATROL_SANDBOX_BACKEND=landlock (a forced backend never falls through)");
}

}  // namespace
}  // namespace sandbox_host
