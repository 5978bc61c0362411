// `sandbox-host sandbox gpg`'s reading of its command line, through the real binary: every
// spelling of git's two gpg calls that gpg takes gives a signature (or a verification)
// made by the broker, and everything else is refused, by name, before any broker is asked.
#include "signing_setup.hpp"

#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>

#include <cctype>
#include <fstream>
#include <iterator>

namespace sandbox_host::test {
namespace {

constexpr const char *kPayload = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nsigned\n";
constexpr const char *kArmourStart = "-----BEGIN PGP SIGNATURE-----\n";

class GpgArguments : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    keys_ = std::make_unique<KeyRing>(0);
    signing_ = std::make_unique<SigningBroker>(
        0, sign_table("/usr/bin/gpg", {keys_->fingerprint()},
                      "gnupg_home = \"" + keys_->home().string() + "\"\n"));
  }
  static void TearDownTestSuite() {
    signing_.reset();
    keys_.reset();
  }

  // The gpg script with args, its descriptor 3 going to a file whose text is status_3.
  static ProcessResult with_fd3(const std::vector<std::string> &args, std::string &status_3) {
    const auto file = signing_->broker().root() / "fd3";
    std::vector<std::string> wrapped{"/bin/sh", "-c", "exec \"$@\" 3>'" + file.string() + "'", "sh",
                                     signing_->gpg_script().string()};
    wrapped.insert(wrapped.end(), args.begin(), args.end());
    ProcessResult result = run_with_payload(wrapped);
    std::ifstream in(file);
    status_3.assign(std::istreambuf_iterator<char>(in), {});
    return result;
  }

  // argv with the payload on stdin and SANDBOX_HOST_BROKER naming broker (the spool).
  static ProcessResult run_with_payload(const std::vector<std::string> &argv,
                                        std::string broker = "") {
    const auto input = signing_->broker().root() / "payload";
    std::ofstream(input) << kPayload;
    if (broker.empty()) broker = signing_->broker().spool().string();
    ProcessOptions options = with_env({"PATH=/usr/bin:/bin", "SANDBOX_HOST_BROKER=" + broker});
    UniqueFd in(::open(input.c_str(), O_RDONLY | O_CLOEXEC));
    options.stdin_fd = in.get();
    return run_process(argv, options);
  }

  static std::string signature_file(const std::string &signature) {
    const auto file = signing_->broker().root() / "signature.asc";
    std::ofstream(file) << signature;
    return file.string();
  }

  static std::unique_ptr<KeyRing> keys_;
  static std::unique_ptr<SigningBroker> signing_;
};

std::unique_ptr<KeyRing> GpgArguments::keys_;
std::unique_ptr<SigningBroker> GpgArguments::signing_;

TEST_F(GpgArguments, EverySpellingOfGitsSignCallSigns) {
  const std::string key = keys_->fingerprint();
  std::string lower = "0x" + key;
  for (char &c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::vector<std::vector<std::string>> spellings{
      {"--status-fd=2", "-bsau", key},
      {"--status-fd", "2", "-bsau", key},
      {"-bsau", key, "--status-fd=2"},
      {"--status-fd=2", "--detach-sign", "--sign", "--armor", "--local-user", key},
      {"--status-fd=2", "--detach-sign", "--armour", "--local-user=" + key},
      {"--status-fd=2", "-b", "-s", "-a", "-u", key},
      {"--status-fd=2", "-ba", "-u", lower + "!"},
  };
  for (const auto &args : spellings) {
    const ProcessResult result = signing_->gpg(args, kPayload);
    EXPECT_EQ(result.code, 0) << testing::PrintToString(args) << result.err;
    EXPECT_EQ(result.out.rfind(kArmourStart, 0), 0u) << testing::PrintToString(args) << result.out;
    EXPECT_NE(result.err.find("\n[GNUPG:] SIG_CREATED D "), std::string::npos)
        << testing::PrintToString(args) << result.err;
    EXPECT_NE(result.err.find(key), std::string::npos) << result.err;
  }
}

TEST_F(GpgArguments, StatusLinesGoToTheStatusDescriptorAlone) {
  std::string status;
  const ProcessResult result = with_fd3({"--status-fd=3", "-bsau", keys_->fingerprint()}, status);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out.rfind(kArmourStart, 0), 0u);
  EXPECT_NE(status.find("[GNUPG:] SIG_CREATED D "), std::string::npos) << status;
  for (const auto &line : lines(status)) EXPECT_EQ(line.rfind("[GNUPG:] ", 0), 0u) << line;
  EXPECT_EQ(result.err.find("[GNUPG:]"), std::string::npos) << result.err;

  // Without --status-fd, as gpg: no status lines anywhere.
  const ProcessResult quiet = signing_->gpg({"-bsau", keys_->fingerprint()}, kPayload);
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("[GNUPG:]"), std::string::npos) << quiet.err;
}

TEST_F(GpgArguments, AsksTheBrokerSocketThatSandboxHostBrokerNames) {
  const ProcessResult result = run_with_payload(
      {signing_->gpg_script().string(), "--status-fd=2", "-bsau", keys_->fingerprint()},
      signing_->broker().socket().string());
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out.rfind(kArmourStart, 0), 0u) << result.out;
  EXPECT_NE(result.err.find("[GNUPG:] SIG_CREATED D "), std::string::npos) << result.err;
}

TEST_F(GpgArguments, GitsVerifyCallVerifiesThroughTheBroker) {
  const ProcessResult signed_ =
      signing_->gpg({"--status-fd=2", "-bsau", keys_->fingerprint()}, kPayload);
  ASSERT_EQ(signed_.code, 0) << signed_.err;
  const std::string file = signature_file(signed_.out);
  for (const auto &args : std::vector<std::vector<std::string>>{
           {"--keyid-format=long", "--status-fd=1", "--verify", file, "-"},
           {"--keyid-format", "long", "--status-fd", "1", "--verify", file, "-"}}) {
    const ProcessResult verified = signing_->gpg(args, kPayload);
    EXPECT_EQ(verified.code, 0) << verified.err;
    EXPECT_NE(verified.out.find("[GNUPG:] GOODSIG "), std::string::npos) << verified.out;
    EXPECT_NE(verified.out.find("[GNUPG:] VALIDSIG " + keys_->fingerprint()), std::string::npos);
    EXPECT_NE(verified.err.find("Good signature from \"Test <t@example.test>\""), std::string::npos)
        << verified.err;
  }
  // Other data under the same signature: a bad signature, and a failure.
  const ProcessResult bad =
      signing_->gpg({"--keyid-format=long", "--status-fd=1", "--verify", file, "-"}, "tampered\n");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("[GNUPG:] BADSIG "), std::string::npos) << bad.out;
  EXPECT_EQ(bad.out.find("GOODSIG"), std::string::npos) << bad.out;
}

TEST_F(GpgArguments, RefusesEverythingElseBeforeAskingTheBroker) {
  struct Refused {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Refused> refusals{
      {{}, "nothing to do"},
      {{"--status-fd=2"}, "nothing to do"},
      {{"--bogus"}, "unsupported gpg option \"--bogus\""},
      {{"--encrypt", "-r", "K"}, "unsupported gpg option \"--encrypt\""},
      {{"-bsax", "K"}, "unsupported gpg option -x in \"-bsax\""},
      {{"-bsua", "K"}, "-u must end its cluster and take the key as the next argument"},
      {{"-bsauK"}, "-u must end its cluster"},
      {{"-bsau"}, "-u needs a value"},
      {{"--local-user"}, "--local-user needs a value"},
      {{"-bsa", "--local-user="}, "-u: the key is empty"},
      {{"-bs", "-u", "K"}, "only armoured signatures (-a) are made"},
      {{"-sa", "-u", "K"}, "only detached signatures (-b) are made"},
      {{"--clearsign", "-u", "K"}, "unsupported gpg option \"--clearsign\""},
      {{"-bsa"}, "a key is required (-u KEY)"},
      {{"-bsau", "K", "-u", "L"}, "one key only (-u given twice)"},
      {{"--status-fd=1", "-bsau", "K"}, "--status-fd=1 would mix the status lines"},
      {{"--status-fd=x", "-bsau", "K"}, "--status-fd x: not a file descriptor number"},
      {{"--status-fd=-1", "-bsau", "K"}, "--status-fd -1: not a file descriptor number"},
      {{"--status-fd=9", "-bsau", "K"}, "--status-fd 9: descriptor 9 is not open"},
      {{"--status-fd", "2", "--status-fd=2", "-bsau", "K"}, "--status-fd given twice"},
      {{"--status-fd"}, "--status-fd needs a value"},
      {{"-bsau", "K", "payload.txt"}, "unexpected argument \"payload.txt\""},
      {{"--armor=yes", "-bsu", "K"}, "--armor takes no value"},
      {{"--verify", "sig"}, "--verify takes a signature file and - (the data on stdin)"},
      {{"--verify", "sig", "data"}, "--verify takes a signature file and -"},
      {{"--verify", "sig", "-", "more"}, "--verify takes a signature file and -"},
      {{"--verify", "-u", "K", "sig", "-"}, "--verify cannot be combined with signing options"},
      {{"--keyid-format=short", "--verify", "sig", "-"}, "--keyid-format short: only long"},
      {{"--keyid-format"}, "--keyid-format needs a value"},
      {{"--x\x1b[2J"}, "unsupported gpg option \"--x\\x1b[2J\""},
  };
  for (const auto &[args, message] : refusals) {
    // A broker that cannot be reached: a refusal must come first.
    std::vector<std::string> argv{"/usr/bin/env", "SANDBOX_HOST_BROKER=/nonexistent",
                                  signing_->broker().sandbox_host(), "sandbox", "gpg"};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProcessResult result = run_process(argv);
    EXPECT_EQ(result.code, 2) << testing::PrintToString(args) << result.err;
    EXPECT_TRUE(result.out.empty());
    EXPECT_EQ(result.err.rfind("sandbox-host sandbox gpg: " + message, 0), 0u)
        << testing::PrintToString(args) << " gave " << result.err;
    EXPECT_NE(result.err.find("; it takes what git gives gpg: --status-fd=2 -bsau KEY (sign)"),
              std::string::npos)
        << result.err;
  }
}

TEST_F(GpgArguments, AMissingSignatureFileIsNamed) {
  const ProcessResult result = signing_->gpg(
      {"--keyid-format=long", "--status-fd=1", "--verify", "/nonexistent.asc", "-"}, kPayload);
  EXPECT_EQ(result.code, 2);
  EXPECT_EQ(result.err,
            "sandbox-host sandbox gpg: open /nonexistent.asc: No such file or directory\n");
}

TEST_F(GpgArguments, NoBrokerIsSaid) {
  const ProcessResult result =
      run_process({"/usr/bin/env", "SANDBOX_HOST_BROKER=/nonexistent",
                   signing_->broker().sandbox_host(), "sandbox", "gpg", "-bsau", "K"});
  EXPECT_EQ(result.code, 125);
  EXPECT_EQ(result.err,
            "sandbox-host sandbox gpg: no sandbox-host broker answered: "
            "SANDBOX_HOST_BROKER=/nonexistent: No such file or directory\n");
}

}  // namespace
}  // namespace sandbox_host::test
