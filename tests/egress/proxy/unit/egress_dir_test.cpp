// The egress directory (egress_dir.hpp), written into temporary directories: its files and
// their modes whatever the umask, the bundle's certificates counted by another reader than
// the writer's, gh's login, the gpg script really running `<exe> sandbox gpg ARGS` from a
// path no shell could take unquoted, an idempotent rewrite, and every directory and input
// it refuses.
#include <sandbox_host/egress/proxy/certificate_authority.hpp>
#include <sandbox_host/egress/proxy/egress_dir.hpp>

#include <fixtures.hpp>
#include <process.hpp>

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/pem.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host::egress {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using BioPtr = OpenSslPtr<BIO, BIO_free_all>;
using X509InfoStackPtr = std::unique_ptr<STACK_OF(X509_INFO), void (*)(STACK_OF(X509_INFO) *)>;

constexpr const char *kSystemRoots = "/etc/ssl/certs/ca-certificates.crt";

std::string read(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const fs::path &path, const std::string &contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

mode_t mode_of(const fs::path &path) {
  struct stat status {};
  EXPECT_EQ(::lstat(path.c_str(), &status), 0) << path;
  return status.st_mode & 07777;
}

// The certificates in text as OpenSSL's X509_INFO reader sees them (the writer uses
// PEM_read_bio_X509). Fails the test when the text holds anything it cannot parse.
std::vector<X509Ptr> certificates(const std::string &text) {
  BioPtr in(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  X509InfoStackPtr infos(
      PEM_X509_INFO_read_bio(in.get(), nullptr, nullptr, nullptr),
      [](STACK_OF(X509_INFO) * stack) { sk_X509_INFO_pop_free(stack, X509_INFO_free); });
  EXPECT_TRUE(infos) << "unreadable PEM";
  std::vector<X509Ptr> found;
  for (int i = 0; infos && i < sk_X509_INFO_num(infos.get()); ++i) {
    X509_INFO *info = sk_X509_INFO_value(infos.get(), i);
    EXPECT_EQ(info->x_pkey, nullptr) << "a private key";
    EXPECT_EQ(info->crl, nullptr) << "a CRL";
    if (info->x509 == nullptr) continue;
    X509_up_ref(info->x509);
    found.emplace_back(info->x509);
  }
  return found;
}

std::string private_key_pem() {
  EvpPkeyPtr key(EVP_EC_gen("P-256"));
  BioPtr out(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  char *data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

// Everything under dir: relative path -> (mode, contents; empty for a directory).
std::map<std::string, std::pair<mode_t, std::string>> snapshot(const fs::path &dir) {
  std::map<std::string, std::pair<mode_t, std::string>> files;
  for (const auto &entry : fs::recursive_directory_iterator(dir)) {
    const auto relative = fs::relative(entry.path(), dir).string();
    files[relative] = {mode_of(entry.path()),
                       entry.is_regular_file() ? read(entry.path()) : std::string()};
  }
  return files;
}

class EgressDir : public testing::Test {
 protected:
  EgressDir()
      : temp_("", "unused"),
        dir_(temp_.dir() / "runtime" / "clawpatrol-sandbox" / "egress"),
        roots_(temp_.dir() / "roots.pem"),
        ca_({"github.com", "api.github.com"}, 1h) {
    // Three roots, with what a roots file may also hold and the bundle must not.
    for (const char *host : {"one.example", "two.example", "three.example"}) {
      root_cas_.push_back(
          std::make_unique<CertificateAuthority>(std::vector<std::string>{host}, 1h));
    }
    write(roots_, "# a comment line\n" + root_cas_[0]->certificate_pem() + "\n" +
                      private_key_pem() + root_cas_[1]->certificate_pem() +
                      "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n"
                      "-----END CERTIFICATE-----\n" +
                      "stray text\n" + root_cas_[2]->certificate_pem());
  }

  void write_egress_dir() {
    write_egress(dir_, ca_.certificate_pem(), "/usr/bin/sandbox-host", roots_);
  }

  test::TempFile temp_;
  fs::path dir_, roots_;
  CertificateAuthority ca_;
  std::vector<std::unique_ptr<CertificateAuthority>> root_cas_;
};

TEST(EgressDirPath, IsUnderTheRuntimeDirectoryOrNowhere) {
  EXPECT_EQ(egress_dir_below("/run/user/1000"), "/run/user/1000/clawpatrol-sandbox/egress");
  EXPECT_EQ(egress_dir_below(""), "");
}

TEST_F(EgressDir, WritesEveryFileWithItsModeWhateverTheUmask) {
  const mode_t previous = ::umask(077);
  write_egress_dir();
  ::umask(previous);
  const auto files = snapshot(dir_);
  std::map<std::string, mode_t> modes;
  for (const auto &[name, file] : files) modes[name] = file.first;
  EXPECT_EQ(modes, (std::map<std::string, mode_t>{{"ca.pem", 0644},
                                                  {"bundle.pem", 0644},
                                                  {"gh", 0755},
                                                  {"gh/hosts.yml", 0644},
                                                  {"gh/config.yml", 0644},
                                                  {"gpg", 0755}}));
  EXPECT_EQ(mode_of(dir_), 0755u);
  EXPECT_TRUE(fs::is_directory(dir_.parent_path()));
}

TEST_F(EgressDir, ATrailingSlashNamesTheSameDirectory) {
  const mode_t previous = ::umask(002);
  write_egress(dir_.string() + "/", ca_.certificate_pem(), "/usr/bin/sandbox-host", roots_);
  ::umask(previous);
  EXPECT_EQ(mode_of(dir_), 0755u);
  EXPECT_TRUE(fs::is_regular_file(dir_ / kEgressBundle));
}

TEST_F(EgressDir, CaPemIsTheCa) {
  write_egress_dir();
  const auto found = certificates(read(dir_ / kEgressCa));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(X509_cmp(found[0].get(), ca_.certificate()), 0);
}

TEST_F(EgressDir, TheBundleIsTheCaThenEachRootCertificateAndNothingElse) {
  write_egress_dir();
  const std::string bundle = read(dir_ / kEgressBundle);
  EXPECT_EQ(bundle.find("PRIVATE"), std::string::npos);
  EXPECT_EQ(bundle.find("stray"), std::string::npos);
  EXPECT_EQ(bundle.find("comment"), std::string::npos);
  const auto found = certificates(bundle);
  ASSERT_EQ(found.size(), 1 + root_cas_.size());
  EXPECT_EQ(X509_cmp(found[0].get(), ca_.certificate()), 0);
  for (std::size_t i = 0; i < root_cas_.size(); ++i) {
    EXPECT_EQ(X509_cmp(found[i + 1].get(), root_cas_[i]->certificate()), 0) << i;
  }
}

TEST_F(EgressDir, TheBundleHoldsEverySystemRootAfterTheCa) {
  if (!fs::exists(kSystemRoots)) GTEST_SKIP() << kSystemRoots << " is missing";
  write_egress(dir_, ca_.certificate_pem(), "/usr/bin/sandbox-host");
  const auto system = certificates(read(kSystemRoots));
  ASSERT_GT(system.size(), 0u);
  const auto found = certificates(read(dir_ / kEgressBundle));
  ASSERT_EQ(found.size(), system.size() + 1);
  EXPECT_EQ(X509_cmp(found.front().get(), ca_.certificate()), 0);
  EXPECT_EQ(X509_cmp(found.back().get(), system.back().get()), 0);
}

TEST_F(EgressDir, AClientTakingTheBundleTrustsTheCasLeaves) {
  write_egress_dir();
  OpenSslPtr<X509_STORE, X509_STORE_free> store(X509_STORE_new());
  ASSERT_EQ(X509_STORE_load_file(store.get(), (dir_ / kEgressBundle).c_str()), 1);
  OpenSslPtr<X509_STORE_CTX, X509_STORE_CTX_free> context(X509_STORE_CTX_new());
  X509_STORE_CTX_init(context.get(), store.get(), ca_.leaf_for("github.com")->certificate(),
                      nullptr);
  X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(context.get()), "github.com", 0);
  EXPECT_EQ(X509_verify_cert(context.get()), 1)
      << X509_verify_cert_error_string(X509_STORE_CTX_get_error(context.get()));
}

TEST_F(EgressDir, GhIsLoggedInToGithubComWithTheFixedWord) {
  write_egress_dir();
  const std::string hosts = read(dir_ / kEgressGh / "hosts.yml");
  const std::string login(kGhLogin);
  EXPECT_EQ(hosts.rfind("github.com:\n", 0), 0u) << hosts;
  for (const std::string &line : std::vector<std::string>{
           "    user: " + login, "    oauth_token: " + login, "    git_protocol: https",
           "        " + login + ":", "            oauth_token: " + login}) {
    EXPECT_NE(hosts.find("\n" + line + "\n"), std::string::npos) << line << " in\n" << hosts;
  }
  const std::string config = read(dir_ / kEgressGh / "config.yml");
  EXPECT_NE(config.find("git_protocol: https\n"), std::string::npos) << config;
}

TEST(GpgProgram, IsAShellScriptExecingTheExecutable) {
  EXPECT_EQ(gpg_program("/usr/bin/sandbox-host"),
            "#!/bin/sh\nexec '/usr/bin/sandbox-host' sandbox gpg \"$@\"\n");
}

TEST_F(EgressDir, TheGpgScriptRunsTheExecutableWithSandboxGpgAndItsArguments) {
  // A path with a space, both quotes, a command substitution and a backtick.
  const fs::path exe_dir = temp_.dir() / "my bin's \"dir\" $(touch pwned) `touch pwned`";
  fs::create_directories(exe_dir);
  const fs::path exe = exe_dir / "sandbox host";
  write(exe,
        "#!/bin/sh\n"
        "printf '[%s]\\n' \"$0\" \"$@\"\n"
        "cat\n");
  fs::permissions(exe, fs::perms::owner_all);
  write_egress(dir_, ca_.certificate_pem(), exe, roots_);

  test::Pipe input = test::make_pipe();
  ASSERT_EQ(::write(input.write.get(), "payload", 7), 7);
  input.write.reset();
  test::ProcessOptions options;
  options.stdin_fd = input.read.get();
  options.timeout = 20s;
  const auto result = test::run_process(
      {(dir_ / kEgressGpg).string(), "--status-fd=2", "-bsau", "KEY ID", "'", "$HOME", ""},
      options);
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "[" + exe.string() +
                            "]\n[sandbox]\n[gpg]\n[--status-fd=2]\n[-bsau]\n[KEY ID]\n[']\n"
                            "[$HOME]\n[]\npayload");
  for (const fs::path &where : {fs::current_path(), temp_.dir(), dir_}) {
    EXPECT_FALSE(fs::exists(where / "pwned")) << "the path ran as shell code in " << where;
  }
}

TEST_F(EgressDir, RewritingGivesTheSameDirectory) {
  write_egress_dir();
  const auto first = snapshot(dir_);
  write_egress_dir();
  EXPECT_EQ(snapshot(dir_), first);
}

TEST_F(EgressDir, RewritingWithANewCaReplacesIt) {
  write_egress_dir();
  CertificateAuthority next({"github.com"}, 1h);
  write_egress(dir_, next.certificate_pem(), "/opt/other/sandbox-host", roots_);
  const auto ca = certificates(read(dir_ / kEgressCa));
  ASSERT_EQ(ca.size(), 1u);
  EXPECT_EQ(X509_cmp(ca[0].get(), next.certificate()), 0);
  EXPECT_EQ(X509_cmp(certificates(read(dir_ / kEgressBundle)).front().get(), next.certificate()),
            0);
  EXPECT_NE(read(dir_ / kEgressGpg).find("'/opt/other/sandbox-host'"), std::string::npos);
  EXPECT_EQ(snapshot(dir_).size(), 6u) << "a temporary file was left behind";
}

// ---- refusals -----------------------------------------------------------------------------

// write_egress's refusal of dir: its message, which must name shown.
std::string refusal(const fs::path &dir, const CertificateAuthority &ca, const fs::path &roots,
                    const fs::path &shown) {
  try {
    write_egress(dir, ca.certificate_pem(), "/usr/bin/sandbox-host", roots);
  } catch (const std::runtime_error &error) {
    EXPECT_NE(std::string(error.what()).find(shown.string()), std::string::npos) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "wrote " << dir;
  return "";
}

TEST_F(EgressDir, RefusesASymlinkedDirectory) {
  const fs::path real = temp_.dir() / "real";
  fs::create_directories(real);
  fs::create_directories(dir_.parent_path());
  fs::create_directory_symlink(real, dir_);
  EXPECT_NE(refusal(dir_, ca_, roots_, dir_).find("symbolic link"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(real));
}

TEST_F(EgressDir, RefusesASymlinkedGhDirectory) {
  const fs::path elsewhere = temp_.dir() / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms(0755));
  fs::create_directory_symlink(elsewhere, dir_ / kEgressGh);
  refusal(dir_, ca_, roots_, dir_ / kEgressGh);
  EXPECT_TRUE(fs::is_empty(elsewhere));
}

TEST_F(EgressDir, RefusesADirectoryGroupOrOthersMayWrite) {
  write_egress_dir();
  for (const mode_t mode : {0775, 0757, 0777}) {
    fs::permissions(dir_, fs::perms(mode));
    EXPECT_NE(refusal(dir_, ca_, roots_, dir_).find("group or others"), std::string::npos);
  }
  fs::permissions(dir_, fs::perms(0755));
  fs::permissions(dir_ / kEgressGh, fs::perms(0775));
  refusal(dir_, ca_, roots_, dir_ / kEgressGh);
}

TEST_F(EgressDir, RefusesADirectoryOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory to another user";
  write_egress_dir();
  ASSERT_EQ(::chown(dir_.c_str(), test::kNobody, test::kNobody), 0);
  EXPECT_NE(refusal(dir_, ca_, roots_, dir_).find("belongs to uid 65534"), std::string::npos);
}

TEST_F(EgressDir, RefusesAFileWhereTheDirectoryGoes) {
  fs::create_directories(dir_.parent_path());
  write(dir_, "a file");
  refusal(dir_, ca_, roots_, dir_);
}

TEST_F(EgressDir, RefusesWhatIsNotOneCertificateForTheCa) {
  const std::string two = ca_.certificate_pem() + root_cas_[0]->certificate_pem();
  for (const std::string &bad :
       {std::string("not a certificate"), private_key_pem(), two, std::string()}) {
    EXPECT_THROW(write_egress(dir_, bad, "/usr/bin/sandbox-host", roots_), std::invalid_argument);
  }
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(EgressDir, RefusesARelativeExecutable) {
  EXPECT_THROW(write_egress(dir_, ca_.certificate_pem(), "bin/sandbox-host", roots_),
               std::invalid_argument);
  EXPECT_THROW(write_egress(dir_, ca_.certificate_pem(), "", roots_), std::invalid_argument);
}

TEST_F(EgressDir, RefusesMissingOrEmptyRoots) {
  refusal(dir_, ca_, temp_.dir() / "no-such-roots.pem", temp_.dir() / "no-such-roots.pem");
  const fs::path keys_only = temp_.dir() / "keys.pem";
  write(keys_only, private_key_pem());
  EXPECT_NE(refusal(dir_, ca_, keys_only, keys_only).find("no certificate"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_));
}

TEST(EgressDirWrite, RefusesAnEmptyDirectory) {
  CertificateAuthority ca({"github.com"}, 1h);
  EXPECT_THROW(write_egress("", ca.certificate_pem(), "/usr/bin/sandbox-host"),
               std::invalid_argument);
}

}  // namespace
}  // namespace sandbox_host::egress
