// The observer on real programs no one here wrote, stopped by a filter of their own (no
// sandbox around them: what they do succeeds), judged as if launched under a plugin's
// default Spec: what they need beyond it is named, the rest of what they touch is not.
#include "traced_child.hpp"

#include <sandbox_host/backends/learn_traced_calls.hpp>
#include <sandbox_host/host/learn/learn_observer.hpp>
#include <sandbox_host/host/learn/learn_report.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sandbox_host::learn {
namespace {

namespace fs = std::filesystem;

struct Workspace {
  Workspace() {
    char pattern[] = "/var/tmp/learn-real-XXXXXX";
    dir = ::mkdtemp(pattern);
    fs::create_directory(dir / "sock");
    fs::create_directory(dir / "tmp");
  }
  ~Workspace() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  fs::path dir;
};

// Runs argv as a plugin with BaseEnv's variables, under the learn filter's calls, and
// returns the report a launch of it under backend's default Spec would print.
LearnReport learn_from(const std::vector<std::string> &argv, const Workspace &workspace,
                       const std::string &backend = "namespaces",
                       std::vector<std::string> read_paths = {}, int *exit_code = nullptr) {
  Spec spec;
  spec.plugin_name = fs::path(argv[0]).filename().string();
  spec.binary_path = fs::canonical(argv[0]).string();
  spec.socket_dir = (workspace.dir / "sock").string();
  spec.tmp_dir = (workspace.dir / "tmp").string();
  spec.read_paths = read_paths;
  LearnObserver observer(SpecGrants(spec, backend), 0);
  const std::vector<const char *> calls(backends::kLearnTracedCalls.begin(),
                                        backends::kLearnTracedCalls.end());
  const std::string home = "HOME=" + spec.tmp_dir, tmp = "TMPDIR=" + spec.tmp_dir;
  const auto run = test::run_traced(
      calls,
      [&] {
        if (::chdir(spec.tmp_dir.c_str()) != 0) return 99;
        std::vector<char *> args, env;
        for (const auto &arg : argv) args.push_back(const_cast<char *>(arg.c_str()));
        args.push_back(nullptr);
        for (const std::string *var : {&home, &tmp})
          env.push_back(const_cast<char *>(var->c_str()));
        env.push_back(const_cast<char *>("PATH=/usr/local/bin:/usr/bin:/bin"));
        env.push_back(const_cast<char *>("LANG=C.UTF-8"));
        env.push_back(nullptr);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::execve(args[0], args.data(), env.data());
        return 98;
      },
      [&](const TracedCall &call) {
        observer.traced(call);
        return true;
      });
  if (exit_code != nullptr) {
    *exit_code = run.exit_code;
  } else {
    EXPECT_EQ(run.exit_code, 0) << argv[0];
  }
  EXPECT_GT(run.calls, 0);
  ReportContext context;
  context.plugin = spec.plugin_name;
  context.backend = backend;
  context.read_paths = spec.read_paths;
  return make_report(observer.findings(), context, observer.grants(), GrantAdvice());
}

bool installed(const char *program) {
  return ::access(program, X_OK) == 0;
}

// git reads the system's /etc/gitconfig where there is one, which is no system grant: the one
// thing these need beyond a plugin's default Spec (and they work without it).
TEST(LearnOnRealPrograms, WhatTheDefaultSpecGivesIsNotReported) {
  Workspace workspace;
  for (const std::vector<std::string> &argv :
       {std::vector<std::string>{"/usr/bin/python3", "-c", "import ssl"},
        std::vector<std::string>{"/usr/bin/git", "--version"},
        std::vector<std::string>{"/usr/bin/openssl", "version", "-a"}}) {
    const bool git = argv[0] == "/usr/bin/git";
    if (!installed(argv[0].c_str())) {
      std::cout << argv[0] << " is not installed here: left out\n";
      continue;
    }
    for (const char *backend : {"namespaces", "landlock"}) {
      const LearnReport report = learn_from(argv, workspace, backend);
      std::cout << render_text(report);
      for (const auto &grant : report.read) {
        EXPECT_TRUE(git && grant.path == "/etc/gitconfig") << grant.path << " for " << argv[0];
      }
      EXPECT_TRUE(report.writes.empty()) << argv[0] << " under " << backend;
      EXPECT_TRUE(report.not_suggested.empty()) << argv[0] << " under " << backend;
      EXPECT_TRUE(report.endpoints.empty()) << argv[0] << " under " << backend;
    }
  }
}

TEST(LearnOnRealPrograms, PythonsModulesOutsideTheGrantsAreNamedAsOneDirectory) {
  if (!installed("/usr/bin/python3")) GTEST_SKIP() << "python3 is not installed here";
  Workspace workspace;
  const fs::path lib = workspace.dir / "lib";
  fs::create_directory(lib);
  for (const char *name : {"alpha", "beta", "gamma"}) {
    std::ofstream(lib / (std::string(name) + ".py")) << "VALUE = 1\n";
  }
  const std::string script = "import sys; sys.path.insert(0, '" + lib.string() +
                             "'); import alpha, beta, gamma\n"
                             "try:\n  import notthere_learn_module\nexcept ImportError:\n  pass\n";
  const LearnReport report = learn_from({"/usr/bin/python3", "-B", "-c", script}, workspace);
  std::cout << render_text(report) << render_json(report);
  ASSERT_EQ(report.read.size(), 1u) << render_text(report);
  EXPECT_EQ(report.read[0].path, lib.string());
  EXPECT_EQ(report.plugin_lines, std::vector<std::string>{"read = [\"" + lib.string() + "\"]"});
  // Python probed many more names in it (__pycache__, .so suffixes ...): probes, not listed.
  EXPECT_GT(report.probes, 3u);

  // The learned grant: nothing more is reported.
  const LearnReport after =
      learn_from({"/usr/bin/python3", "-B", "-c", script}, workspace, "namespaces", {lib.string()});
  EXPECT_TRUE(after.read.empty()) << render_text(after);
}

// curl's resolver is glibc's: its A and AAAA questions go out together with sendmmsg on a
// connected UDP socket, and the name is read from them before they leave.
TEST(LearnOnRealPrograms, CurlsHostNameIsReadFromItsDnsQuery) {
  if (!installed("/usr/bin/curl")) GTEST_SKIP() << "curl is not installed here";
  std::ifstream resolv("/etc/resolv.conf");
  std::string line;
  bool nameserver = false;
  while (std::getline(resolv, line)) nameserver = nameserver || line.starts_with("nameserver");
  if (!nameserver) GTEST_SKIP() << "/etc/resolv.conf names no resolver";
  Workspace workspace;
  int exit_code = 0;
  const LearnReport report = learn_from(
      {"/usr/bin/curl", "-sS", "--max-time", "3", "https://learn-test.example.com:8443/"},
      workspace, "namespaces", {}, &exit_code);
  std::cout << render_text(report) << render_json(report);
  ASSERT_FALSE(report.names.empty()) << render_text(report);
  EXPECT_EQ(report.names[0].name, "learn-test.example.com");
  EXPECT_EQ(report.names[0].sources, std::vector<std::string>{"dns"});
  EXPECT_EQ(report.plugin_lines, std::vector<std::string>{"network = \"proxied\""});
  for (const auto &endpoint : report.endpoints) {
    // glibc's try of nscd's socket, where the host has none, is a probe.
    EXPECT_TRUE(endpoint.endpoint != "/var/run/nscd/socket" || fs::exists("/var/run/nscd/socket"));
  }
  ASSERT_FALSE(report.egress_lines.empty());
  EXPECT_NE(report.egress_lines[0].find("\"learn-test.example.com\""), std::string::npos)
      << report.egress_lines[0];
}

}  // namespace
}  // namespace sandbox_host::learn
