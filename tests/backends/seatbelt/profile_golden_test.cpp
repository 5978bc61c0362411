// The seatbelt profile and its -D arguments, pinned for each golden case by two files:
// golden/<case>.sb (the exact profile text) and golden/<case>.defines.json (the exact "-D",
// "NAME=VALUE" arguments, as a JSON array).
//
// After a deliberate change of the profile, regenerate them with
//   SANDBOX_HOST_UPDATE_GOLDEN=1 <build>/bin/seatbelt_tests --gtest_filter='*SeatbeltGolden*'
// and read the diff of tests/backends/seatbelt/golden/ before committing it: it is the change of
// what plugins may do on macOS.
#include "golden_cases.hpp"

#include "seatbelt_profile.hpp"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Parser.h>
#include <Poco/JSONString.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace sandbox_host::seatbelt::test {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenDir = SEATBELT_GOLDEN_DIR;

bool updating() {
  const char *update = std::getenv("SANDBOX_HOST_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

std::string read_file(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "<" + path.string() + " is missing; see this file's first comment>";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path &path, const std::string &contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

// One argument per line, so that a change shows as a change of lines.
std::string to_json_lines(const std::vector<std::string> &items) {
  std::string out = "[\n";
  for (size_t i = 0; i < items.size(); ++i) {
    out += "  " + Poco::toJSON(items[i], Poco::JSON_WRAP_STRINGS) +
           (i + 1 < items.size() ? ",\n" : "\n");
  }
  return out + "]\n";
}

// Read back with Poco's parser, so the file is checked as JSON, not only as bytes.
std::vector<std::string> from_json(const std::string &text) {
  auto array = Poco::JSON::Parser().parse(text).extract<Poco::JSON::Array::Ptr>();
  std::vector<std::string> out;
  for (size_t i = 0; i < array->size(); ++i) out.push_back(array->getElement<std::string>(i));
  return out;
}

// A view's rules, shortest path first (the order of its parameters and of its rules).
std::vector<PathRule> by_length(std::vector<PathRule> view) {
  std::stable_sort(view.begin(), view.end(), [](const PathRule &a, const PathRule &b) {
    return a.path.size() < b.path.size();
  });
  return view;
}

class SeatbeltGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(SeatbeltGolden, ProfileAndDefinesAreTheGoldenOnes) {
  const GoldenCase &golden = GetParam();
  const Profile profile = make_profile(golden.spec);
  const std::vector<std::string> defines = define_arguments(profile.parameters);
  const fs::path profile_file = kGoldenDir / (golden.name + ".sb");
  const fs::path defines_file = kGoldenDir / (golden.name + ".defines.json");
  if (updating()) {
    write_file(profile_file, profile.text);
    write_file(defines_file, to_json_lines(defines));
  }
  EXPECT_EQ(profile.text, read_file(profile_file)) << profile_file;
  const std::string defines_text = read_file(defines_file);
  EXPECT_EQ(to_json_lines(defines), defines_text) << defines_file;
  EXPECT_EQ(defines, from_json(defines_text)) << defines_file;
}

TEST_P(SeatbeltGolden, EveryPathIsAParameterInSpecOrder) {
  const Spec &spec = GetParam().spec;
  const Profile profile = make_profile(spec);
  std::vector<std::pair<std::string, std::string>> expected{
      {"BINARY", spec.binary_path}, {"SOCKET_DIR", spec.socket_dir}, {"TMP_DIR", spec.tmp_dir}};
  for (size_t i = 0; i < spec.read_paths.size(); ++i) {
    expected.emplace_back("READ_PATH_" + std::to_string(i), spec.read_paths[i]);
  }
  for (size_t i = 0; i < spec.view.size(); ++i) {
    expected.emplace_back("VIEW_" + std::to_string(i), by_length(spec.view)[i].path);
  }
  std::vector<std::pair<std::string, std::string>> actual;
  for (const auto &parameter : profile.parameters) {
    actual.emplace_back(parameter.name, parameter.value);
  }
  EXPECT_EQ(actual, expected);
}

TEST_P(SeatbeltGolden, NoPathValueOccursInTheProfileText) {
  const Profile profile = make_profile(GetParam().spec);
  for (const auto &parameter : profile.parameters) {
    EXPECT_EQ(profile.text.find(parameter.value), std::string::npos)
        << parameter.name << "'s value was spliced into the profile";
  }
}

// What proves that nothing is spliced: other paths, same text. A view's rules keep their
// accesses in the order of their paths' lengths.
TEST_P(SeatbeltGolden, TheTextDependsOnlyOnTheNetworkTheNumberOfReadPathsAndTheViewsAccesses) {
  const Spec &spec = GetParam().spec;
  Spec other = spec;
  other.binary_path = "/b";
  other.socket_dir = "/s";
  other.tmp_dir = "/t";
  for (auto &path : other.read_paths) path = "/r";
  other.view = by_length(spec.view);
  for (size_t i = 0; i < other.view.size(); ++i) other.view[i].path = "/" + std::string(i + 1, 'v');
  other.args.clear();
  EXPECT_EQ(make_profile(other).text, make_profile(spec).text);
}

INSTANTIATE_TEST_SUITE_P(Cases, SeatbeltGolden, ::testing::ValuesIn(golden_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase> &info) {
                           std::string name = info.param.name;
                           for (char &c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(SeatbeltGoldenFiles, EachBelongsToACase) {
  std::set<std::string> expected;
  for (const auto &golden : golden_cases()) {
    expected.insert(golden.name + ".sb");
    expected.insert(golden.name + ".defines.json");
  }
  std::set<std::string> present;
  for (const auto &entry : fs::directory_iterator(kGoldenDir)) {
    present.insert(entry.path().filename().string());
  }
  EXPECT_EQ(present, expected);
}

TEST(SeatbeltProfile, NetworkNoneReachesNothingButUnixSocketsUnderSocketDir) {
  const std::string none = make_profile(golden_cases()[0].spec).text;
  ASSERT_EQ(golden_cases()[0].spec.network, Network::none);
  EXPECT_EQ(none.find("(remote ip"), std::string::npos);
  EXPECT_EQ(none.find("AF_INET"), std::string::npos);
  EXPECT_EQ(none.find("mDNSResponder"), std::string::npos);
  EXPECT_NE(none.find("(allow network-outbound\n  (remote unix-socket (subpath (param "
                      "\"SOCKET_DIR\"))))\n"),
            std::string::npos);

  Spec outbound_spec = golden_cases()[0].spec;
  outbound_spec.network = Network::outbound;
  const std::string outbound = make_profile(outbound_spec).text;
  EXPECT_NE(outbound.find("(remote ip \"*:*\")"), std::string::npos);
  // Outbound adds to the profile for none; it takes nothing away.
  EXPECT_EQ(outbound.rfind(none, 0), 0u);
}

// The case of an agent's command: which forms the view adds, in which order. Checked as text
// only: sandbox-exec does not run on Linux, and this profile was never run on macOS.
TEST(SeatbeltProfile, AViewReadsTheHostThenEachRuleLongestLastBeforeThePluginsGrants) {
  const GoldenCase agent = golden_cases()[5];
  ASSERT_EQ(agent.name, "none-agent-view");
  const Profile profile = make_profile(agent.spec);
  const std::string &text = profile.text;
  // VIEW_<i> follow the paths' lengths: /Users/alice first, the deny in the project last.
  std::vector<std::string> view_values;
  for (const auto &parameter : profile.parameters) {
    if (parameter.name.starts_with("VIEW_")) view_values.push_back(parameter.value);
  }
  EXPECT_EQ(view_values,
            (std::vector<std::string>{"/Users/alice", "/Users/alice/.zshrc", "/Users/alice/src/app",
                                      "/Users/alice/Documents", "/Users/alice/src/app/vendor",
                                      "/Users/alice/src/app/.state/scan"}));
  const std::string all = "file-read* file-write* process-exec file-map-executable";
  const std::string read = "file-read* process-exec file-map-executable";
  const auto subpath = [](const std::string &name) {
    return "\n  (subpath (param \"" + name + "\")))\n";
  };
  const std::vector<std::string> forms{
      "(allow " + read + "\n  (subpath \"/\"))\n",
      "(deny " + all + "\n  (subpath \"/dev\"))\n",
      "(deny " + all + subpath("VIEW_0"),
      "(allow " + read + subpath("VIEW_1"),
      "(deny file-write*" + subpath("VIEW_1"),
      "(allow " + all + subpath("VIEW_2"),
      "(allow " + read + subpath("VIEW_3"),
      "(deny file-write*" + subpath("VIEW_3"),
      "(allow " + read + subpath("VIEW_4"),
      "(deny file-write*" + subpath("VIEW_4"),
      "(deny " + all + subpath("VIEW_5"),
      // The plugin's grants after the view: exec of the binary, the system's devices,
      // SocketDir and TmpDir keep theirs whatever the view says of where they are.
      "(allow process-exec\n",
      "(allow file-read* file-write-data\n  (literal \"/dev/null\"))\n",
      "(allow file-read* file-write*\n  (subpath (param \"SOCKET_DIR\"))",
  };
  size_t at = 0;
  for (const auto &form : forms) {
    const size_t found = text.find(form, at);
    ASSERT_NE(found, std::string::npos) << "missing, or out of order: " << form << "\n" << text;
    at = found + form.size();
  }
  // Without a view, none of it.
  Spec plugin = agent.spec;
  plugin.view.clear();
  const std::string plugin_text = make_profile(plugin).text;
  EXPECT_EQ(plugin_text.find("(subpath \"/\")"), std::string::npos);
  EXPECT_EQ(plugin_text.find("(deny file"), std::string::npos);
  EXPECT_EQ(plugin_text.find("VIEW_"), std::string::npos);
}

std::string refusal(const Spec &spec) {
  try {
    make_profile(spec);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "accepted";
}

TEST(SeatbeltProfile, RefusesPathsThatCannotTravelAsTheyAre) {
  const Spec good = golden_cases()[0].spec;
  Spec nul = good;
  nul.read_paths = {"/ok", std::string("/opt/a\0b", 8)};
  EXPECT_EQ(refusal(nul),
            "ReadPaths[1] contains a NUL byte: sandbox-exec's argv would cut the path short there");
  Spec relative = good;
  relative.socket_dir = "sockets";
  EXPECT_EQ(refusal(relative), "SocketDir \"sockets\" is not an absolute path");
  Spec empty = good;
  empty.tmp_dir.clear();
  EXPECT_EQ(refusal(empty), "TmpDir \"\" is not an absolute path");
  Spec option_like = good;
  option_like.binary_path = "-p";
  EXPECT_EQ(refusal(option_like), "BinaryPath \"-p\" is not an absolute path");
  Spec view = good;
  view.view = {{"/Users/alice", PathAccess::none}, {"~/src", PathAccess::write}};
  EXPECT_EQ(refusal(view), "View[1] \"~/src\" is not an absolute path");
}

}  // namespace
}  // namespace sandbox_host::seatbelt::test
