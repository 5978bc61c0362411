// The kubeconfig op loaded from its module file the way the host loads it: the settings it
// refuses, the file it writes for a lease (where, with what in it, how), and every request
// it refuses, each with the reason a requester or operator reads.
#include "../op_harness.hpp"

#include <sandbox_host/command_op.hpp>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ops_test {
namespace {

namespace fs = std::filesystem;

constexpr const char *kSandboxProxy = "ALL_PROXY=socks5h://127.0.0.1:41080";

std::string lab_kubeconfig(const std::string &server) {
  return "apiVersion: v1\n"
         "clusters:\n"
         "- cluster:\n"
         "    certificate-authority-data: Q0EgZGF0YQ==\n"
         "    server: " +
         server +
         "\n"
         "  name: kind-lab-3\n"
         "contexts:\n"
         "- context: {cluster: kind-lab-3, user: kind-lab-3}\n"
         "  name: kind-lab-3\n"
         "current-context: kind-lab-3\n"
         "kind: Config\n"
         "preferences: {}\n"
         "users:\n"
         "- name: kind-lab-3\n"
         "  user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}\n";
}

std::string read_file(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

unsigned mode_of(const fs::path &path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

std::vector<std::string> names_in(const fs::path &dir) {
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

class KubeconfigOp : public ::testing::Test {
 protected:
  KubeconfigOp() {
    fs::create_directory(leases);
    fs::create_directory(output);
    fs::permissions(output, fs::perms(0755));
    write_lease("lab-3", lab_kubeconfig("https://127.0.0.1:39821"));
  }

  sandbox_host::ModuleSettings settings() const {
    return {{"leases_dir", {leases.string()}}, {"output_dir", {output.string()}}};
  }

  void write_lease(const std::string &lease, const std::string &text) const {
    std::ofstream(leases / (lease + ".yaml"), std::ios::binary) << text;
  }

  static Call ask_for(std::string lease, std::vector<std::string> env = {kSandboxProxy}) {
    Call call;
    call.request.op = "kubeconfig";
    call.request.resource = std::move(lease);
    call.requester_env = std::move(env);
    return call;
  }

  std::string refusal(const Call &call) const {
    const Outcome outcome = Op("kubeconfig", settings()).handle(call);
    EXPECT_EQ(outcome.status, SH_ERROR) << outcome.out;
    EXPECT_EQ(outcome.out, "");
    EXPECT_TRUE(outcome.runs.empty());
    return outcome.error;
  }

  TempDir dir;
  const fs::path leases = dir.path() / "leases";
  const fs::path output = dir.path() / "kubeconfigs";
};

TEST_F(KubeconfigOp, WritesTheLeasesKubeconfigPointedAtTheRequestersProxy) {
  const Outcome outcome = Op("kubeconfig", settings()).handle(ask_for("lab-3"));
  ASSERT_EQ(outcome.status, SH_OK) << outcome.error;
  const fs::path written = output / "lab-3.kubeconfig";
  EXPECT_EQ(outcome.out, written.string() + "\n");
  EXPECT_EQ(outcome.code, 0);
  EXPECT_TRUE(outcome.runs.empty());
  const YAML::Node document = YAML::Load(read_file(written));
  EXPECT_EQ(document["clusters"][0]["cluster"]["proxy-url"].Scalar(), "socks5://127.0.0.1:41080");
  EXPECT_EQ(document["clusters"][0]["cluster"]["server"].Scalar(), "https://127.0.0.1:39821");
  EXPECT_EQ(document["users"][0]["user"]["client-key-data"].Scalar(), "S0VZ");
  EXPECT_EQ(mode_of(written), 0600u) << "it holds the lease's client key";
  EXPECT_EQ(names_in(output), std::vector<std::string>{"lab-3.kubeconfig"})
      << "no temporary file is left behind";
  // The lease's own file is the lab tooling's and stays as it was.
  EXPECT_EQ(read_file(leases / "lab-3.yaml"), lab_kubeconfig("https://127.0.0.1:39821"));
}

TEST_F(KubeconfigOp, ReplacesAnEarlierKubeconfigOfTheLease) {
  std::ofstream(output / "lab-3.kubeconfig") << "stale\n";
  const Outcome outcome = Op("kubeconfig", settings())
                              .handle(ask_for("lab-3", {"ALL_PROXY=socks5h://127.0.0.1:50000"}));
  ASSERT_EQ(outcome.status, SH_OK) << outcome.error;
  EXPECT_EQ(
      YAML::Load(read_file(output / "lab-3.kubeconfig"))["clusters"][0]["cluster"]["proxy-url"]
          .Scalar(),
      "socks5://127.0.0.1:50000");
  EXPECT_EQ(mode_of(output / "lab-3.kubeconfig"), 0600u);
}

TEST_F(KubeconfigOp, WritesARemoteLeaseAsItIs) {
  write_lease("remote", lab_kubeconfig("https://203.0.113.7:6443"));
  const Outcome outcome = Op("kubeconfig", settings()).handle(ask_for("remote"));
  ASSERT_EQ(outcome.status, SH_OK) << outcome.error;
  EXPECT_EQ(read_file(output / "remote.kubeconfig"), lab_kubeconfig("https://203.0.113.7:6443"));
}

TEST_F(KubeconfigOp, MakesItsOutputDirectoryWhenMissing) {
  fs::remove(output);
  Op op("kubeconfig", settings());
  EXPECT_TRUE(fs::is_directory(output));
  EXPECT_EQ(mode_of(output) & 0022, 0u);
  EXPECT_EQ(op.handle(ask_for("lab-3")).status, SH_OK);
}

TEST_F(KubeconfigOp, RefusesAnUnknownLease) {
  EXPECT_EQ(refusal(ask_for("lab-9")), "kubeconfig: no lease \"lab-9\": " +
                                           (leases / "lab-9.yaml").string() + " does not exist");
  EXPECT_FALSE(fs::exists(output / "lab-9.kubeconfig"));
}

TEST_F(KubeconfigOp, RefusesARequestWithoutALeaseOrWithAMalformedOne) {
  EXPECT_EQ(refusal(ask_for("")), "kubeconfig: a resource is required: the lab lease's name");
  for (const std::string &lease :
       std::vector<std::string>{"../lab-3", "lab-3/..", "-lab", "Lab-3", "lab_3", "lab 3",
                                ".hidden", "lab-3\n", std::string(64, 'a')}) {
    EXPECT_EQ(refusal(ask_for(lease)), "kubeconfig: resource " + sandbox_host::in_quotes(lease) +
                                           " does not match ^[a-z0-9][a-z0-9.-]{0,62}$");
  }
  EXPECT_EQ(names_in(output), std::vector<std::string>{});
}

TEST_F(KubeconfigOp, RefusesArgumentsAndInput) {
  Call with_args = ask_for("lab-3");
  with_args.request.args = {"--raw"};
  EXPECT_EQ(refusal(with_args),
            "kubeconfig: takes no arguments; the lease is the request's resource");
  Call with_input = ask_for("lab-3");
  with_input.request.input = "apiVersion: v1\n";
  EXPECT_EQ(refusal(with_input), "kubeconfig: takes no input");
}

TEST_F(KubeconfigOp, RefusesARequesterWithoutASocksProxy) {
  EXPECT_EQ(refusal(ask_for("lab-3", {})),
            "kubeconfig: the requester's SOCKS5 proxy: no SOCKS5 proxy: neither ALL_PROXY nor "
            "all_proxy is set, as a sandbox of network \"proxied\" sets them "
            "(socks5h://127.0.0.1:<port>); the broker hands over only the variables "
            "ops.kubeconfig.requester_env names");
  EXPECT_EQ(refusal(ask_for("lab-3", {"ALL_PROXY=http://127.0.0.1:3128"})),
            "kubeconfig: the requester's SOCKS5 proxy: ALL_PROXY (\"http://127.0.0.1:3128\") is no "
            "SOCKS5 proxy URL (socks5h://host:port or socks5://); the broker hands over only the "
            "variables ops.kubeconfig.requester_env names");
  EXPECT_EQ(names_in(output), std::vector<std::string>{});
}

TEST_F(KubeconfigOp, RefusesALeaseThatIsNoKubeconfigNamingIt) {
  write_lease("broken", "clusters: [\n");
  EXPECT_EQ(refusal(ask_for("broken")),
            "kubeconfig: lease \"broken\": the kubeconfig is not YAML: end of sequence flow not "
            "found (line 2, column 1)");
  write_lease("serverless", "clusters:\n- cluster: {}\n  name: kind-serverless\n");
  EXPECT_EQ(refusal(ask_for("serverless")),
            "kubeconfig: lease \"serverless\": cluster \"kind-serverless\" has no server");
  EXPECT_EQ(names_in(output), std::vector<std::string>{});
}

TEST_F(KubeconfigOp, RefusesALeaseFileThatIsNoPlainFile) {
  fs::create_symlink(leases / "lab-3.yaml", leases / "linked.yaml");
  EXPECT_EQ(refusal(ask_for("linked")),
            "kubeconfig: lease file " + (leases / "linked.yaml").string() + " is a symbolic link");
  fs::create_directory(leases / "dir.yaml");
  EXPECT_EQ(refusal(ask_for("dir")),
            "kubeconfig: lease file " + (leases / "dir.yaml").string() + " is not a regular file");
  write_lease("huge", std::string((1 << 20) + 1, '#'));
  EXPECT_EQ(refusal(ask_for("huge")), "kubeconfig: lease file " + (leases / "huge.yaml").string() +
                                          " is 1048577 bytes, more than 1048576");
}

TEST_F(KubeconfigOp, NeverWritesThroughASymbolicLink) {
  const fs::path elsewhere = dir.path() / "elsewhere";
  std::ofstream(elsewhere) << "not the kubeconfig op's\n";
  fs::create_symlink(elsewhere, output / "lab-3.kubeconfig");
  EXPECT_EQ(refusal(ask_for("lab-3")), "kubeconfig: " + (output / "lab-3.kubeconfig").string() +
                                           " exists and is a symbolic link; it is not replaced");
  EXPECT_EQ(read_file(elsewhere), "not the kubeconfig op's\n");
  EXPECT_TRUE(fs::is_symlink(output / "lab-3.kubeconfig"));
  fs::remove(output / "lab-3.kubeconfig");
  fs::create_directory(output / "lab-3.kubeconfig");
  EXPECT_EQ(refusal(ask_for("lab-3")), "kubeconfig: " + (output / "lab-3.kubeconfig").string() +
                                           " exists and is no regular file; it is not replaced");
  EXPECT_EQ(names_in(output), std::vector<std::string>{"lab-3.kubeconfig"});
}

TEST_F(KubeconfigOp, RefusesAnOutputDirectoryThatChangedUnderIt) {
  Op op("kubeconfig", settings());
  fs::permissions(output, fs::perms(0775));
  EXPECT_EQ(op.handle(ask_for("lab-3")).error,
            "kubeconfig: output_dir " + output.string() +
                " is writable by its group or others (mode 0775)");
  fs::remove(output);
  EXPECT_EQ(op.handle(ask_for("lab-3")).error,
            "kubeconfig: output_dir " + output.string() + " does not exist");
  const fs::path real = dir.path() / "real";
  fs::create_directory(real);
  fs::create_symlink(real, output);
  EXPECT_EQ(op.handle(ask_for("lab-3")).error,
            "kubeconfig: output_dir " + output.string() + " is a symbolic link");
  EXPECT_EQ(names_in(real), std::vector<std::string>{});
}

TEST_F(KubeconfigOp, RefusesToLoadWithoutItsDirectories) {
  EXPECT_EQ(load_error("kubeconfig", {{"output_dir", {output.string()}}}),
            "ops.kubeconfig.leases_dir: required: the directory of the leases' kubeconfigs, "
            "<lease>.yaml");
  EXPECT_EQ(load_error("kubeconfig", {{"leases_dir", {leases.string()}}}),
            "ops.kubeconfig.output_dir: required: the directory the sandboxes read the "
            "kubeconfigs from");
  EXPECT_EQ(
      load_error("kubeconfig", {{"leases_dir", {"leases"}}, {"output_dir", {output.string()}}}),
      "ops.kubeconfig.leases_dir: must be an absolute path, not \"leases\"");
  EXPECT_EQ(load_error("kubeconfig", {{"leases_dir", {leases.string()}}, {"output_dir", {"out"}}}),
            "ops.kubeconfig.output_dir: must be an absolute path, not \"out\"");
  EXPECT_EQ(load_error("kubeconfig", {{"leases_dir", {(dir.path() / "none").string()}},
                                      {"output_dir", {output.string()}}}),
            "ops.kubeconfig.leases_dir: " + (dir.path() / "none").string() + " does not exist");
  auto with_command = settings();
  with_command.push_back({"command", {"/usr/bin/kind"}});
  EXPECT_EQ(load_error("kubeconfig", with_command),
            "ops.kubeconfig.command: unknown key; allowed: leases_dir, output_dir");
}

TEST_F(KubeconfigOp, RefusesToLoadWithAnOutputDirectoryOthersCouldChange) {
  fs::permissions(output, fs::perms(0777));
  EXPECT_EQ(load_error("kubeconfig", settings()),
            "ops.kubeconfig.output_dir: " + output.string() +
                " is writable by its group or others (mode 0777)");
  fs::permissions(output, fs::perms(0755));
  fs::permissions(leases, fs::perms(0757));
  EXPECT_EQ(load_error("kubeconfig", settings()),
            "ops.kubeconfig.leases_dir: " + leases.string() +
                " is writable by its group or others (mode 0757)");
  fs::permissions(leases, fs::perms(0755));
  const fs::path file = dir.path() / "file";
  std::ofstream(file) << "x";
  EXPECT_EQ(load_error("kubeconfig",
                       {{"leases_dir", {leases.string()}}, {"output_dir", {file.string()}}}),
            "ops.kubeconfig.output_dir: " + file.string() + " is not a directory");
  EXPECT_EQ(load_error("kubeconfig", {{"leases_dir", {leases.string()}},
                                      {"output_dir", {(dir.path() / "no/such").string()}}}),
            "ops.kubeconfig.output_dir: cannot create " + (dir.path() / "no/such").string() +
                ": No such file or directory");
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(output.c_str(), 65534, 65534), 0);
    EXPECT_EQ(load_error("kubeconfig", settings()),
              "ops.kubeconfig.output_dir: " + output.string() +
                  " is owned by uid 65534, not the broker's uid 0");
  }
}

}  // namespace
}  // namespace ops_test
