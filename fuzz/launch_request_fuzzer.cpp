// Fuzzes what the launch service makes of a client's bytes: decode_launch_request gives a
// LaunchRequest or an invalid_argument that says why, nothing else; a request it took
// encodes and decodes to the same; the plugin environment picked from it is NAME=VALUE
// entries of portable names, none CLAWPATROL_* or BaseEnv's, or a refusal that says why;
// and the service's replies and the client's signals decode or are a FrameError.
#include "fuzz_check.hpp"

#include <sandbox_host/host/base_env.hpp>
#include <sandbox_host/host/launch_client/launch_frames.hpp>
#include <sandbox_host/host/launch_client/launch_request.hpp>
#include <sandbox_host/host/launch_client/plugin_env.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>

namespace sandbox_host::fuzz {
namespace {

using sandbox_host::egress::fuzz::check;

[[noreturn]] void unexpected(const std::exception &e, const char *property) {
  std::fprintf(stderr, "%s: %s\n", typeid(e).name(), e.what());
  check(false, property);
  std::abort();
}

void check_env(const LaunchRequest &request) {
  std::vector<std::string> env;
  try {
    env = plugin_env(request.env, request.caller_env);
  } catch (const std::invalid_argument &e) {
    check(e.what()[0] != '\0', "an env refusal says why");
    return;
  } catch (const std::exception &e) {
    unexpected(e, "plugin_env throws invalid_argument and nothing else");
  }
  for (const auto &entry : env) {
    const std::size_t equals = entry.find('=');
    check(equals != std::string::npos && equals > 0, "each entry is NAME=VALUE");
    const std::string_view name(entry.data(), equals);
    check(!name.starts_with("CLAWPATROL_"), "no CLAWPATROL_ variable passes");
    check(std::find(std::begin(kBaseEnvNames), std::end(kBaseEnvNames), name) ==
              std::end(kBaseEnvNames),
          "no BaseEnv variable is replaced");
    check(std::count_if(env.begin(), env.end(),
                        [&](const std::string &other) {
                          return other.compare(0, equals + 1, entry, 0, equals + 1) == 0;
                        }) == 1,
          "each name passes once");
  }
}

}  // namespace
}  // namespace sandbox_host::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  using namespace sandbox_host;
  using sandbox_host::egress::fuzz::check;
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  try {
    const LaunchRequest request = decode_launch_request(input);
    const std::string encoded = encode_launch_request(request);
    check(encode_launch_request(decode_launch_request(encoded)) == encoded,
          "a decoded request reads back the same once encoded");
    fuzz::check_env(request);
  } catch (const std::invalid_argument &e) {
    check(e.what()[0] != '\0', "a refusal says why");
  } catch (const std::exception &e) {
    fuzz::unexpected(e, "decode_launch_request throws invalid_argument and nothing else");
  }
  for (auto decode : {+[](std::string_view text) { decode_reply(text); },
                      +[](std::string_view text) { decode_signal(text); }}) {
    try {
      decode(input);
    } catch (const FrameError &e) {
      check(e.what()[0] != '\0', "a frame error says why");
    } catch (const std::exception &e) {
      fuzz::unexpected(e, "a reply or signal decodes or is a FrameError");
    }
  }
  return 0;
}
