// The sign op loaded from its module file as the host loads it, with a reply whose runner
// records the gpg command instead of running it: the settings it refuses, which requested
// keys reach gpg and as what, and the exact gpg command lines it builds.
#include "../op_harness.hpp"

#include <sandbox_host/command_op.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ops_test {
namespace {

constexpr const char *kFingerprint = "CA9024EBED071C3E029901473554521136593CD8";

class SignOp : public ::testing::Test {
 protected:
  sandbox_host::ModuleSettings settings(const sandbox_host::ModuleSettings &more = {},
                                        std::vector<std::string> keys = {kFingerprint}) const {
    sandbox_host::ModuleSettings all{{"command", {gpg}}, {"keys", std::move(keys)}};
    for (const auto &entry : more) {
      bool replaced = false;
      for (auto &existing : all) {
        if (existing.first == entry.first) {
          existing.second = entry.second;
          replaced = true;
        }
      }
      if (!replaced) all.push_back(entry);
    }
    return all;
  }

  static Call sign(const std::string &key, std::string payload = "payload\n") {
    Call call;
    call.request.args = {"sign", key};
    call.request.input = std::move(payload);
    return call;
  }

  static sandbox_host::HostCommand ran(const Outcome &outcome) {
    EXPECT_EQ(outcome.status, SH_OK) << outcome.error;
    EXPECT_EQ(outcome.runs.size(), 1u);
    return outcome.runs.empty() ? sandbox_host::HostCommand{} : outcome.runs.front();
  }

  static std::string refusal_of(const Outcome &outcome) {
    EXPECT_EQ(outcome.status, SH_ERROR);
    EXPECT_TRUE(outcome.runs.empty());
    return outcome.error;
  }

  TempDir dir;
  const std::string gpg = dir.file("gpg", "#!/bin/sh\n", 0755);
  ScopedEnv home{"HOME", "/home/broker"};
  ScopedEnv gnupg{"GNUPGHOME", "/broker/own/gnupg"};
};

TEST_F(SignOp, RefusesSettingsItCannotUse) {
  const std::string text = dir.file("text", "x", 0644);
  struct Case {
    sandbox_host::ModuleSettings settings;
    std::string error;
  };
  const std::vector<Case> cases{
      {{{"keys", {kFingerprint}}}, "ops.sign.command: required: the absolute path of gpg"},
      {settings({{"command", {"gpg"}}}), "ops.sign.command: \"gpg\" is not an absolute path"},
      {settings({{"command", {text}}}),
       "ops.sign.command: \"" + text + "\" is not an executable file"},
      {{{"command", {gpg}}},
       "ops.sign.keys: required: the fingerprints or long key ids it may sign with"},
      {settings({}, {"89ABCDEF"}),
       "ops.sign.keys: \"89ABCDEF\" is not a long key id (16 hex digits) or a fingerprint (40 or "
       "64); short ids collide too easily"},
      {settings({}, {"Test <t@example.test>"}),
       "ops.sign.keys: \"Test <t@example.test>\" is not a long key id"},
      {settings({}, {std::string(kFingerprint) + "0"}), "is not a long key id"},
      {settings({}, {"0x3554521136593CDG"}), "is not a long key id"},
      {settings({{"args", {"--yes"}}}),
       "ops.sign.args: unknown key; allowed: command, keys, gnupg_home, timeout_ms, verify"},
      {settings({{"timeout_ms", {"0"}}}),
       "ops.sign.timeout_ms: must be a whole number from 1 to 3600000, not \"0\""},
      {settings({{"timeout_ms", {"5s"}}}), "ops.sign.timeout_ms: must be a whole number"},
      {settings({{"verify", {"yes"}}}), "ops.sign.verify: must be true or false, not \"yes\""},
      {settings({{"gnupg_home", {"gnupg"}}}),
       "ops.sign.gnupg_home: \"gnupg\" is not an absolute directory"},
      {settings({{"gnupg_home", {text}}}), "is not an absolute directory"},
  };
  for (const auto &[given, error] : cases) {
    const std::string got = load_error("sign", given);
    EXPECT_NE(got.find(error), std::string::npos) << "got: " << got << "\nwanted: " << error;
  }
  EXPECT_EQ(load_error("sign", settings()), "");
}

TEST_F(SignOp, SignsWithTheConfiguredKeyPinnedThroughGpg) {
  Op op("sign", settings({{"gnupg_home", {dir.path().string()}}, {"timeout_ms", {"2500"}}}));
  const auto command = ran(op.handle(sign(kFingerprint, "tree x\n\nmessage\n")));
  EXPECT_EQ(command.path, gpg);
  EXPECT_EQ(command.args,
            (std::vector<std::string>{"--batch", "--no-tty", "--status-fd=2", "--detach-sign",
                                      "--armor", "--local-user", std::string(kFingerprint) + "!"}));
  EXPECT_EQ(command.input, "tree x\n\nmessage\n");
  // Nothing of the broker's environment but HOME; the keyring the operator named.
  EXPECT_EQ(command.env,
            (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
                                      "HOME=/home/broker", "GNUPGHOME=" + dir.path().string()}));
  EXPECT_EQ(command.timeout, std::chrono::milliseconds(2500));
  EXPECT_FALSE(command.cwd_of_requester);
}

TEST_F(SignOp, WithoutGnupgHomeGpgUsesItsOwnDefaultAndTheDefaultTimeout) {
  Op op("sign", settings());
  const auto command = ran(op.handle(sign(kFingerprint)));
  EXPECT_EQ(command.env, (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin",
                                                   "LANG=C.UTF-8", "HOME=/home/broker"}));
  EXPECT_EQ(command.timeout, std::chrono::milliseconds(60000));
}

TEST_F(SignOp, MatchesAKeyWhateverItsCaseSpacesOrPrefix) {
  // The operator wrote the fingerprint as gpg prints it, in lower case.
  Op op("sign", settings({}, {"ca90 24eb ed07 1c3e 0299  0147 3554 5211 3659 3cd8"}));
  for (const std::string &key :
       {std::string(kFingerprint), std::string("0x") + kFingerprint,
        std::string("0Xca9024ebed071c3e029901473554521136593cd8"), std::string(kFingerprint) + "!",
        std::string("CA90 24EB ED07 1C3E 0299  0147 3554 5211 3659 3CD8")}) {
    EXPECT_EQ(ran(op.handle(sign(key))).args.back(), std::string(kFingerprint) + "!") << key;
  }
}

TEST_F(SignOp, RefusesEveryOtherKey) {
  Op op("sign", settings({}, {kFingerprint, "0x1122334455667788"}));
  const std::string no_key_id = " is not a long key id or fingerprint (set git's user.signingkey)";
  const std::string allowed = std::string("; allowed: ") + kFingerprint + ", 1122334455667788";
  struct Case {
    std::string key, why;
  };
  const std::vector<Case> cases{
      // The long and short ids of the configured fingerprint name it, but not exactly.
      {"3554521136593CD8", " is not one this broker signs with"},
      {"36593CD8", no_key_id},
      {"0x36593CD8!", no_key_id},
      // A fingerprint that ends in the configured long id.
      {"00000000000000000000000011223344556677 88", " is not one this broker signs with"},
      {std::string(kFingerprint).substr(0, 39) + "9", " is not one this broker signs with"},
      {std::string(kFingerprint) + "!!", no_key_id},
      {"Test <t@example.test>", no_key_id},
      {"t@example.test", no_key_id},
      {"", no_key_id},
      {std::string(kFingerprint) + "\n", no_key_id},
  };
  for (const auto &[key, why] : cases) {
    EXPECT_EQ(refusal_of(op.handle(sign(key))),
              "sign: key " + sandbox_host::in_quotes(key) + why + allowed)
        << key;
  }
  EXPECT_EQ(refusal_of(op.handle(sign(std::string(600, 'A')))),
            "sign: a key of 600 bytes is no key id");
}

TEST_F(SignOp, RefusesMalformedRequests) {
  Op op("sign", settings());
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{}, "sign: the first argument must be sign or verify"},
      {{"encrypt", kFingerprint}, "sign: the first argument must be sign or verify"},
      {{"sign"}, "sign: sign takes one key: args [\"sign\", KEY]"},
      {{"sign", kFingerprint, "--yes"}, "sign: sign takes one key: args [\"sign\", KEY]"},
      {{"verify"}, "sign: verify takes one signature: args [\"verify\", SIG]"},
      {{"verify", "", "x"}, "sign: verify takes one signature: args [\"verify\", SIG]"},
      {{"verify", ""}, "sign: verify: the signature is empty"},
      {{"verify", std::string(64 * 1024 + 1, 'x')},
       "sign: verify: a signature of 65537 bytes, more than 65536"},
  };
  for (const auto &[args, error] : cases) {
    Call call;
    call.request.args = args;
    EXPECT_EQ(refusal_of(op.handle(call)), error);
  }
}

TEST_F(SignOp, VerifiesWithTheHostsKeyringNeverFetchingKeys) {
  Op op("sign", settings());
  Call call;
  call.request.args = {"verify", "-----BEGIN PGP SIGNATURE-----\n...\n"};
  call.request.input = "signed data\n";
  const auto command = ran(op.handle(call));
  ASSERT_EQ(command.args.size(), 9u);
  EXPECT_EQ(std::vector<std::string>(command.args.begin(), command.args.begin() + 7),
            (std::vector<std::string>{"--batch", "--no-tty", "--no-auto-key-retrieve",
                                      "--no-auto-key-import", "--keyid-format=long",
                                      "--status-fd=1", "--verify"}));
  EXPECT_EQ(command.args.back(), "-");
  EXPECT_EQ(command.input, "signed data\n");
  // The signature's file lived only for the request.
  EXPECT_FALSE(std::filesystem::exists(command.args[7])) << command.args[7];
}

TEST_F(SignOp, VerifyCanBeTurnedOff) {
  Op op("sign", settings({{"verify", {"false"}}}));
  Call call;
  call.request.args = {"verify", "sig"};
  EXPECT_EQ(refusal_of(op.handle(call)), "sign: verify is off here (ops.sign.verify = false)");
}

TEST_F(SignOp, AGpgThatRunsPastItsTimeIsAFailure) {
  Op op("sign", settings());
  Call call = sign(kFingerprint);
  call.run_status = SH_ERROR;
  call.run_error = gpg + ": timed out after 60000 ms";
  const Outcome outcome = op.handle(call);
  EXPECT_EQ(outcome.status, SH_ERROR);
  EXPECT_EQ(outcome.error, "sign: " + gpg + ": timed out after 60000 ms");
}

}  // namespace
}  // namespace ops_test
