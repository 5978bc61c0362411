// The escape corpus of the backend probe chooses, run inside the container: the same gtest
// binary as tests/backends/namespaces or tests/backends/landlock (the overlaid root shows the build
// tree), so that every wall it checks on the host is checked under the container's settings too.
//
// Only with the container's user root: the corpus launches as root and as nobody itself, and
// needs root to hand nobody its workspace. Only its cold launches (a prepared sandbox is the
// same sandbox made earlier), to keep the suite short.
#include "podman.hpp"
#include "probe_view.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>

namespace sandbox_host {
namespace {

using namespace test::container;
using namespace std::chrono_literals;

// The corpus' test that reads the plugin's /proc/<pid>/fd from the launcher's side: for a
// plugin of nobody's, the container's root needs CAP_SYS_PTRACE for that, which no container
// gets by default, so the test itself cannot look (it is no wall of the sandbox's).
constexpr const char *kLandlockFilter =
    "AsUser/LandlockEscape.*/*_cold"
    ":-AsUser/LandlockEscape.AHostDescriptorWithoutCloexecDoesNotReachThePlugin/nobody_cold";
constexpr const char *kNamespacesFilter = "AsUser/NamespacesEscape.*/*_cold";

class EscapeInContainer : public ::testing::TestWithParam<Case> {};

TEST_P(EscapeInContainer, TheChosenBackendsCorpusHolds) {
  // The corpus' binary for the backend probe names, picked inside the same container.
  const std::string choose =
      "case \"$(" + shell_words({SANDBOX_HOST_EXE, "probe"}) +
      " | sed -n 's/^chosen: //p')\" in\n"
      "namespaces) exec " +
      shell_words({NAMESPACES_ESCAPE_TESTS, std::string("--gtest_filter=") + kNamespacesFilter}) +
      " ;;\n"
      "landlock) exec " +
      shell_words({LANDLOCK_ESCAPE_TESTS, std::string("--gtest_filter=") + kLandlockFilter}) +
      " ;;\n"
      "*) echo 'probe chose no Linux backend'; exit 99 ;;\n"
      "esac";
  const ContainerRun r =
      run_in_container(GetParam(), {shell_words({SANDBOX_HOST_EXE, "probe", "--json"}), choose},
                       {PROJECT_BINARY_DIR}, 120s);
  if (r.unavailable) GTEST_SKIP() << *r.unavailable;
  ASSERT_EQ(r.steps.size(), 2u) << r.podman.err;
  const auto view = read_probe(r.steps[0].out);
  ASSERT_TRUE(view) << r.steps[0];
  const StepResult &corpus = r.steps[1];
  RecordProperty("chosen", view->chosen);

  const std::string suite = view->chosen == "namespaces" ? "NamespacesEscape" : "LandlockEscape";
  EXPECT_EQ(corpus.code, 0) << corpus;
  EXPECT_NE(corpus.out.find("tests from AsUser/" + suite), std::string::npos) << corpus;
  // Every test of the filter ran and passed: none skipped, none failed.
  std::smatch ran, passed;
  ASSERT_TRUE(std::regex_search(corpus.out, ran, std::regex(R"(\[==========\] (\d+) tests? )")))
      << corpus;
  ASSERT_TRUE(std::regex_search(corpus.out, passed, std::regex(R"(\[  PASSED  \] (\d+) tests?)")))
      << corpus;
  EXPECT_GT(std::stoi(ran[1]), 0) << corpus;
  EXPECT_EQ(ran[1], passed[1]) << corpus;
  EXPECT_EQ(corpus.out.find("[  SKIPPED ]"), std::string::npos) << corpus;
}

INSTANTIATE_TEST_SUITE_P(Matrix, EscapeInContainer, ::testing::ValuesIn(root_cases()), case_name);

}  // namespace
}  // namespace sandbox_host
