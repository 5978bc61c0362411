// git signs inside a namespaces sandbox, as root and as nobody, through the egress
// directory's gpg script and a real broker whose sign op holds the only key: the commit
// verifies on the host with the host's keyring and inside the sandbox through the broker;
// another key is refused; the sandbox cannot see the keyring or the agent; and a gpg that
// fails or hangs fails git cleanly.
#include "signing_setup.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace sandbox_host::test {
namespace {

// A well-formed fingerprint of no key the keyring holds.
constexpr const char *kForeignKey = "0123456789ABCDEF0123456789ABCDEF01234567";

std::string as_name(unsigned uid) {
  return uid == 0 ? "Root" : "Nobody";
}

class GitSigning : public testing::TestWithParam<unsigned> {
 protected:
  KeyRing keys_{GetParam()};
  SigningBroker signing_{GetParam(),
                         sign_table("/usr/bin/gpg", {keys_.fingerprint()},
                                    "gnupg_home = \"" + keys_.home().string() + "\"\n")};

  ProcessResult git_on_host(const std::vector<std::string> &args) const {
    // The host's own gpg, not the repository's gpg.program (the sandbox's script).
    std::vector<std::string> argv{"/usr/bin/git", "-C", signing_.repo().string(), "-c",
                                  "gpg.program=/usr/bin/gpg"};
    argv.insert(argv.end(), args.begin(), args.end());
    return keys_.run(argv);
  }
};

TEST_P(GitSigning, SignsACommitInTheSandboxThatVerifiesOnTheHost) {
  const ProcessResult inside =
      signing_.in_sandbox(signing_.make_repo(keys_.fingerprint()) +
                          "git commit -q --allow-empty -S -m signed || exit 10\n"
                          "git verify-commit --raw HEAD || exit 11\n");
  ASSERT_EQ(inside.code, 0) << inside.out << inside.err;
  // Verified inside, through the broker: git read gpg's status lines.
  EXPECT_NE(inside.err.find("[GNUPG:] GOODSIG"), std::string::npos) << inside.err;

  const ProcessResult verified = git_on_host({"verify-commit", "HEAD"});
  EXPECT_EQ(verified.code, 0) << verified.err;
  EXPECT_NE(verified.err.find("Good signature from \"Test <t@example.test>\""), std::string::npos)
      << verified.err;
  const ProcessResult signer = git_on_host({"log", "-1", "--format=%G?:%GF"});
  EXPECT_EQ(signer.out, "G:" + keys_.fingerprint() + "\n") << signer.err;
}

TEST_P(GitSigning, RefusesAnotherKey) {
  const ProcessResult commit =
      signing_.in_sandbox(signing_.make_repo(kForeignKey) +
                          "git commit -q --allow-empty -S -m signed; echo commit=$?\n"
                          "git rev-parse --verify -q HEAD >/dev/null; echo head=$?\n");
  ASSERT_EQ(commit.code, 0) << commit.err;
  EXPECT_NE(field(commit.out, "commit"), "0") << commit.out;
  EXPECT_NE(commit.err.find("gpg failed to sign the data"), std::string::npos) << commit.err;
  EXPECT_EQ(field(commit.out, "head"), "1") << "a commit was made: " << commit.out;

  // git 2.39 keeps what its gpg wrote on the status descriptor to itself; the same call
  // that git makes shows the refusal.
  const ProcessResult direct = signing_.gpg({"--status-fd=2", "-bsau", kForeignKey}, "payload");
  EXPECT_EQ(direct.code, 126);
  EXPECT_TRUE(direct.out.empty());
  EXPECT_NE(
      direct.err.find(std::string("refused: sign: key \"") + kForeignKey +
                      "\" is not one this broker signs with; allowed: " + keys_.fingerprint()),
      std::string::npos)
      << direct.err;
}

TEST_P(GitSigning, RefusesGitsDefaultOfTheCommitterName) {
  // Without user.signingkey, git names the key by the committer: no key id, refused.
  const ProcessResult direct =
      signing_.gpg({"--status-fd=2", "-bsau", "Test <t@example.test>"}, "payload");
  EXPECT_EQ(direct.code, 126);
  EXPECT_NE(direct.err.find("is not a long key id or fingerprint (set git's user.signingkey)"),
            std::string::npos)
      << direct.err;
}

TEST_P(GitSigning, TheSandboxSeesNeitherTheKeyringNorTheAgent) {
  const std::string probe = "for p in '" + keys_.home().string() + "' '" + keys_.home().string() +
                            "/pubring.kbx' '" + keys_.agent_socket() +
                            "'; do if test -e \"$p\"; then echo \"seen $p\"; fi; done\n"
                            "ls '" +
                            keys_.home().string() + "' && echo listed\n";
  // On the host the same lines see all three: the probe would notice them.
  const ProcessResult host = keys_.run({"/bin/sh", "-c", probe});
  ASSERT_NE(host.out.find("seen " + keys_.agent_socket()), std::string::npos) << host.out;
  ASSERT_NE(host.out.find("listed"), std::string::npos) << host.out;

  const ProcessResult inside = signing_.in_sandbox(probe);
  EXPECT_EQ(inside.out.find("seen"), std::string::npos) << inside.out;
  EXPECT_EQ(inside.out.find("listed"), std::string::npos) << inside.out;
  EXPECT_NE(inside.err.find("No such file or directory"), std::string::npos) << inside.err;
}

TEST_P(GitSigning, AKeyTheKeyringLacksFailsWithGpgsMessage) {
  // Allowed by the config, unknown to gpg: gpg's own failure reaches the caller.
  SigningBroker missing(GetParam(), sign_table("/usr/bin/gpg", {kForeignKey},
                                               "gnupg_home = \"" + keys_.home().string() + "\"\n"));
  const ProcessResult direct = missing.gpg({"--status-fd=2", "-bsau", kForeignKey}, "payload");
  EXPECT_EQ(direct.code, 2) << direct.err;
  EXPECT_TRUE(direct.out.empty()) << direct.out;
  EXPECT_NE(direct.err.find("No secret key"), std::string::npos) << direct.err;
  EXPECT_NE(direct.err.find("[GNUPG:] INV_SGNR"), std::string::npos) << direct.err;
}

INSTANTIATE_TEST_SUITE_P(Sign, GitSigning, testing::Values(0u, kNobody),
                         [](const testing::TestParamInfo<unsigned> &info) {
                           return as_name(info.param);
                         });

// The op's gpg replaced by a wrapper that fails or never ends.
class FailingGpg : public testing::TestWithParam<unsigned> {
 protected:
  static std::string table(const std::string &wrapper, const std::string &more = "") {
    return sign_table("{root}/" + wrapper, {kForeignKey}, more);
  }
  static std::string commit_lines() {
    return "git commit -q --allow-empty -S -m signed; echo commit=$?\n";
  }
};

TEST_P(FailingGpg, AFailingGpgFailsTheCommitWithItsMessage) {
  SigningBroker signing(
      GetParam(), table("failing-gpg"),
      {{"failing-gpg", "#!/bin/sh\necho 'gpg: signing failed: No agent running' >&2\nexit 2\n"}});
  const ProcessResult commit = signing.in_sandbox(signing.make_repo(kForeignKey) + commit_lines());
  ASSERT_EQ(commit.code, 0) << commit.err;
  EXPECT_NE(field(commit.out, "commit"), "0") << commit.out;
  EXPECT_NE(commit.err.find("gpg failed to sign the data"), std::string::npos) << commit.err;

  const ProcessResult direct = signing.gpg({"--status-fd=2", "-bsau", kForeignKey}, "payload");
  EXPECT_EQ(direct.code, 2);
  EXPECT_EQ(direct.err, "gpg: signing failed: No agent running\n");
}

TEST_P(FailingGpg, AHangingGpgIsKilledAtTheTimeout) {
  SigningBroker signing(
      GetParam(), table("hanging-gpg", "timeout_ms = 1000\n"),
      {{"hanging-gpg", "#!/bin/sh\necho $$ >> \"$(dirname \"$0\")/hung.pids\"\nexec sleep 600\n"}});
  const ProcessResult commit = signing.in_sandbox(signing.make_repo(kForeignKey) + commit_lines());
  ASSERT_FALSE(commit.timed_out) << "git hung on its gpg";
  ASSERT_EQ(commit.code, 0) << commit.err;
  EXPECT_NE(field(commit.out, "commit"), "0") << commit.out;

  const ProcessResult direct = signing.gpg({"--status-fd=2", "-bsau", kForeignKey}, "payload");
  ASSERT_FALSE(direct.timed_out);
  EXPECT_EQ(direct.code, 126);
  EXPECT_NE(direct.err.find("refused: sign: " + (signing.broker().root() / "hanging-gpg").string() +
                            ": timed out after 1000 ms"),
            std::string::npos)
      << direct.err;

  // Both gpg calls were made, and neither is left running.
  std::ifstream pids(signing.broker().root() / "hung.pids");
  int count = 0;
  for (pid_t pid; pids >> pid; ++count) {
    EXPECT_TRUE(gone_within(pid, std::chrono::seconds(5))) << "gpg " << pid << " still runs";
  }
  EXPECT_EQ(count, 2);
}

INSTANTIATE_TEST_SUITE_P(Sign, FailingGpg, testing::Values(0u, kNobody),
                         [](const testing::TestParamInfo<unsigned> &info) {
                           return as_name(info.param);
                         });

}  // namespace
}  // namespace sandbox_host::test
