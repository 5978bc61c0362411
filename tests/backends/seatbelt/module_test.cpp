// The built backend_seatbelt.so, loaded as the host loads it: its probe on Linux, and the
// sandbox-exec command it makes, against the golden files.
#include "golden_cases.hpp"
#include "linux_reason.hpp"
#include "sbpl_check.hpp"

#include "fixtures.hpp"

#include <sandbox_host/host/backend.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/module.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sandbox_host::seatbelt::test {
namespace {

namespace fs = std::filesystem;

const fs::path kModule = fs::path(BUILD_MODULE_DIR) / "backend_seatbelt.so";

std::shared_ptr<LoadedModule> load() {
  return std::make_shared<LoadedModule>(kModule, ModuleKind::backend);
}

std::string golden_text(const std::string &file) {
  std::ifstream in(fs::path(SEATBELT_GOLDEN_DIR) / file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> golden_defines(const std::string &name) {
  auto array = Poco::JSON::Parser()
                   .parse(golden_text(name + ".defines.json"))
                   .extract<Poco::JSON::Array::Ptr>();
  std::vector<std::string> out;
  for (size_t i = 0; i < array->size(); ++i) out.push_back(array->getElement<std::string>(i));
  return out;
}

TEST(SeatbeltModule, LoadsAsTheSeatbeltBackend) {
  auto module = load();
  EXPECT_EQ(module->name(), "seatbelt");
  EXPECT_EQ(module->version(), "0.1.0");
  EXPECT_NE(module->summary().find("sandbox-exec"), std::string::npos);
  EXPECT_FALSE(BackendModule(module).prepares());
}

TEST(SeatbeltModule, ProbesUnavailableOnLinux) {
  const ProbeReport report = BackendModule(load()).probe();
  EXPECT_FALSE(report.available);
  EXPECT_EQ(report.reason, expected_linux_reason());
  EXPECT_FALSE(report.hint.empty());
  EXPECT_EQ(report.landlock_abi, 0);
}

// Through the C boundary and back: every case's command is sandbox-exec with the golden
// defines and profile, "--", then the plugin and its arguments untouched.
TEST(SeatbeltModule, BuildsTheGoldenSandboxExecCommand) {
  const BackendModule backend(load());
  for (const auto &golden : golden_cases()) {
    const BackendCommand command = backend.build_command(golden.spec);
    EXPECT_FALSE(command.reexec_stage1);
    EXPECT_EQ(command.program, "/usr/bin/sandbox-exec");
    EXPECT_TRUE(command.env.empty());
    std::vector<std::string> expected = golden_defines(golden.name);
    expected.insert(expected.end(),
                    {"-p", golden_text(golden.name + ".sb"), "--", golden.spec.binary_path});
    expected.insert(expected.end(), golden.spec.args.begin(), golden.spec.args.end());
    EXPECT_EQ(command.args, expected) << golden.name;

    const SandboxExecInvocation invocation = parse_sandbox_exec_args(command.args);
    std::vector<std::string> command_line{golden.spec.binary_path};
    command_line.insert(command_line.end(), golden.spec.args.begin(), golden.spec.args.end());
    EXPECT_EQ(invocation.command, command_line) << golden.name;
  }
}

TEST(SeatbeltModule, ARefusedSpecIsAnErrorNamingTheField) {
  Spec spec = golden_cases()[0].spec;
  spec.read_paths = {std::string("/a\0/b", 5)};
  try {
    BackendModule(load()).build_command(spec);
    FAIL() << "a path with a NUL byte was accepted";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(),
                 "backend seatbelt: cannot build the command for plugin \"echo\": ReadPaths[0] "
                 "contains a NUL byte: sandbox-exec's argv would cut the path short there");
  }
}

TEST(SeatbeltModule, DoesNotReexec) {
  EXPECT_EQ(BackendModule(load()).stage1(golden_cases()[0].spec),
            "stage1: backend does not re-exec");
}

// Host::command, as an embedder calls it, on real directories whose names SBPL would choke on
// were they spliced: BaseEnv alone, sandbox-exec as the program, paths only in -D arguments.
TEST(SeatbeltHost, CommandIsSandboxExecWithTheSpecsPathsAsDefines) {
  sandbox_host::test::TempFile root("", "unused");
  const fs::path socket_dir = root.dir() / "sock \"dir\" (1);é";
  const fs::path read_dir = root.dir() / "data\\x";
  fs::create_directories(socket_dir / "tmp");
  fs::create_directories(read_dir);
  Spec spec;
  spec.plugin_name = "true";
  spec.binary_path = fs::canonical("/bin/true").string();
  spec.socket_dir = fs::canonical(socket_dir).string();
  spec.tmp_dir = fs::canonical(socket_dir / "tmp").string();
  spec.read_paths = {fs::canonical(read_dir).string()};
  spec.network = Network::outbound;
  spec.args = {"--flag"};

  Host host(sandbox_host::test::test_config({"seatbelt"}, {}));
  const LaunchCommand command = host.command(spec, "seatbelt");
  EXPECT_EQ(command.program, "/usr/bin/sandbox-exec");
  const SandboxExecInvocation invocation = parse_sandbox_exec_args(command.args);
  EXPECT_EQ(invocation.defines, (std::vector<std::pair<std::string, std::string>>{
                                    {"BINARY", spec.binary_path},
                                    {"SOCKET_DIR", spec.socket_dir},
                                    {"TMP_DIR", spec.tmp_dir},
                                    {"READ_PATH_0", spec.read_paths[0]}}));
  EXPECT_EQ(invocation.profile, golden_text("outbound-one-read-path.sb"));
  EXPECT_EQ(invocation.command, (std::vector<std::string>{spec.binary_path, "--flag"}));
  EXPECT_NE(std::find(command.env.begin(), command.env.end(), "HOME=" + spec.tmp_dir),
            command.env.end());
  for (const auto &variable : command.env) {
    EXPECT_NE(variable.rfind("CLAWPATROL_", 0), 0u) << variable;
  }
}

}  // namespace
}  // namespace sandbox_host::seatbelt::test
