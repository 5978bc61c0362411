// The launch service's replies: an exited reply carries the line about the plugin's death by
// a bound when there is one, and reads the same without it, as an older service sends it.
#include <sandbox_host/host/launch_client/launch_frames.hpp>

#include <gtest/gtest.h>

namespace sandbox_host {
namespace {

TEST(LaunchReplyFrame, AnExitedReplyCarriesTheDeathLineWhenThereIsOne) {
  LaunchReply sent;
  sent.kind = LaunchReply::Kind::exited;
  sent.signal = 31;
  sent.death = "sandbox-host: plugin p died: killed by the seccomp filter";
  const LaunchReply read = decode_reply(encode_reply(sent));
  EXPECT_EQ(read.kind, LaunchReply::Kind::exited);
  EXPECT_EQ(read.signal, 31);
  EXPECT_EQ(read.death, sent.death);

  sent.death.clear();
  EXPECT_EQ(encode_reply(sent), R"({"exited":{"code":0,"signal":31}})");
  EXPECT_EQ(decode_reply(R"({"exited":{"code":7,"signal":0}})").death, "");
  EXPECT_THROW(decode_reply(R"({"exited":{"code":0,"signal":9,"death":5}})"), FrameError);
}

}  // namespace
}  // namespace sandbox_host
