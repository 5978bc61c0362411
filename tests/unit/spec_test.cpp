#include "fixtures.hpp"

#include <sandbox_host/host/spec_check.hpp>
#include <sandbox_host/host/spec_codec.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

namespace sandbox_host {
namespace {

using sandboxtest::TempSpec;

std::string spec_error(const Spec &spec) {
  try {
    check_spec(spec);
  } catch (const SpecError &e) {
    return e.what();
  }
  return "";
}

TEST(SpecCheck, AcceptsResolvedPaths) {
  TempSpec t("report", REPORT_PLUGIN);
  t.spec.read_paths = {"/usr/share"};
  EXPECT_EQ(spec_error(t.spec), "");
}

TEST(SpecCheck, RefusesRelativeAndUnresolvedPaths) {
  TempSpec t("report", REPORT_PLUGIN);
  Spec spec = t.spec;
  spec.binary_path = "bin/report_plugin";
  EXPECT_EQ(spec_error(spec),
            "plugin \"report\": spec BinaryPath: \"bin/report_plugin\" is not an absolute path");

  spec = t.spec;
  spec.socket_dir = t.spec.socket_dir + "/tmp/..";
  EXPECT_EQ(spec_error(spec), "plugin \"report\": spec SocketDir: \"" + spec.socket_dir +
                                  "\" is not symlink-resolved (it resolves to \"" +
                                  t.spec.socket_dir + "\")");

  std::filesystem::create_directory_symlink(t.spec.tmp_dir, t.spec.socket_dir + "/link");
  spec = t.spec;
  spec.read_paths = {"/usr/share", t.spec.socket_dir + "/link"};
  EXPECT_EQ(spec_error(spec), "plugin \"report\": spec ReadPaths[1]: \"" + t.spec.socket_dir +
                                  "/link\" is not symlink-resolved (it resolves to \"" +
                                  t.spec.tmp_dir + "\")");

  spec = t.spec;
  spec.tmp_dir = "/nonexistent/tmp";
  EXPECT_EQ(spec_error(spec),
            "plugin \"report\": spec TmpDir: \"/nonexistent/tmp\" does not exist or is unreadable");
}

TEST(SpecCheck, RefusesWrongFileTypes) {
  TempSpec t("report", REPORT_PLUGIN);
  Spec spec = t.spec;
  spec.binary_path = t.spec.tmp_dir;
  EXPECT_EQ(spec_error(spec), "plugin \"report\": spec BinaryPath: \"" + t.spec.tmp_dir +
                                  "\" is not an executable regular file");
  spec = t.spec;
  spec.socket_dir = REPORT_PLUGIN;
  EXPECT_EQ(spec_error(spec), "plugin \"report\": spec SocketDir: \"" + std::string(REPORT_PLUGIN) +
                                  "\" is not a directory");
  spec = t.spec;
  spec.plugin_name = "two\nlines";
  EXPECT_EQ(spec_error(spec), "plugin \"two\nlines\": spec PluginName: contains NUL or newline");
}

TEST(SpecCodec, RoundTrips) {
  Stage1Payload payload{"namespaces", "/usr/lib/sandbox-host/modules/backend_namespaces.so", {}};
  payload.spec = {"git \"quoted\"",
                  "/usr/bin/git",
                  "/run/s",
                  "/run/s/tmp",
                  Network::outbound,
                  {"/etc/ssl", "/usr/share/ü"},
                  {"--flag=1", "", "two words"}};
  Stage1Payload back = decode_stage1_payload(encode_stage1_payload(payload));
  EXPECT_EQ(back.backend, payload.backend);
  EXPECT_EQ(back.module_file, payload.module_file);
  EXPECT_EQ(back.spec.plugin_name, payload.spec.plugin_name);
  EXPECT_EQ(back.spec.binary_path, payload.spec.binary_path);
  EXPECT_EQ(back.spec.socket_dir, payload.spec.socket_dir);
  EXPECT_EQ(back.spec.tmp_dir, payload.spec.tmp_dir);
  EXPECT_EQ(back.spec.network, Network::outbound);
  EXPECT_EQ(back.spec.read_paths, payload.spec.read_paths);
  EXPECT_EQ(back.spec.args, payload.spec.args);
}

TEST(SpecCodec, NamesWhatIsWrong) {
  auto error = [](const std::string &json) {
    try {
      decode_stage1_payload(json);
    } catch (const std::invalid_argument &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("[1]").rfind("spec: not a JSON object", 0), 0u);
  EXPECT_EQ(error("{not json").rfind("spec: not a JSON object: ", 0), 0u);
  EXPECT_EQ(error(R"({"backend":"x"})"), "spec: missing field \"module\"");
  EXPECT_EQ(error(R"({"backend":"x","module":"m","plugin_name":"p","binary_path":1})"),
            "spec: field \"binary_path\" is not a string");
  EXPECT_EQ(error(R"({"backend":"x","module":"m","plugin_name":"p","binary_path":"/b",
                      "socket_dir":"/s","tmp_dir":"/t","network":"proxied"})"),
            "spec: unknown network \"proxied\"");
  EXPECT_EQ(error(R"({"backend":"x","module":"m","plugin_name":"p","binary_path":"/b",
                      "socket_dir":"/s","tmp_dir":"/t","network":"none","read_paths":[1],
                      "args":[]})"),
            "spec: read_paths[0] is not a string");
}

// ---- a prepared sandbox's payload and its launch ------------------------------------------

// What decoding json as a prepared payload throws, or "" when it decodes.
std::string prepared_error(const std::string &json) {
  try {
    decode_prepared_payload(json);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}

std::string prepared_json(const std::string &control_fd, const std::string &network = "none") {
  return R"({"backend":"namespaces","module":"/m/backend_namespaces.so","network":")" + network +
         "\"" + (control_fd.empty() ? "" : ",\"control_fd\":" + control_fd) + "}";
}

TEST(PreparedPayload, RoundTrips) {
  const PreparedPayload payload{"namespaces", "/usr/lib/sandbox-host/modules/backend_namespaces.so",
                                Network::outbound, 7};
  const PreparedPayload back = decode_prepared_payload(encode_prepared_payload(payload));
  EXPECT_EQ(back.backend, payload.backend);
  EXPECT_EQ(back.module_file, payload.module_file);
  EXPECT_EQ(back.network, Network::outbound);
  EXPECT_EQ(back.control_fd, 7);

  EXPECT_EQ(decode_prepared_payload(prepared_json("3")).control_fd, 3);
  EXPECT_EQ(decode_prepared_payload(prepared_json("3")).network, Network::none);
  EXPECT_EQ(decode_prepared_payload(prepared_json("2147483647")).control_fd, 2147483647);
}

TEST(PreparedPayload, TheControlDescriptorMustBeOneAboveStdio) {
  const std::string refused = "spec: field \"control_fd\" is not a descriptor above 2";
  EXPECT_EQ(prepared_error(prepared_json("")), refused);
  EXPECT_EQ(prepared_error(prepared_json("-1")), refused);
  EXPECT_EQ(prepared_error(prepared_json("0")), refused);
  EXPECT_EQ(prepared_error(prepared_json("2")), refused);
  EXPECT_EQ(prepared_error(prepared_json("\"5\"")), refused);
  EXPECT_EQ(prepared_error(prepared_json("5.5")), refused);
  EXPECT_EQ(prepared_error(prepared_json("null")), refused);
  EXPECT_EQ(prepared_error(prepared_json("2147483648")), refused);
}

TEST(PreparedPayload, NamesWhatIsWrong) {
  EXPECT_EQ(prepared_error(prepared_json("5", "proxied")), "spec: unknown network \"proxied\"");
  EXPECT_EQ(prepared_error(R"({"module":"/m","network":"none","control_fd":5})"),
            "spec: missing field \"backend\"");
  EXPECT_EQ(prepared_error(R"({"backend":"namespaces","network":"none","control_fd":5})"),
            "spec: missing field \"module\"");
  EXPECT_EQ(prepared_error(R"({"backend":"namespaces","module":"/m","control_fd":5})"),
            "spec: missing field \"network\"");
  EXPECT_EQ(prepared_error("not json").rfind("spec: not a JSON object: ", 0), 0u);
}

std::string launch_error(const std::string &json) {
  try {
    decode_launch_message(json);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}

TEST(LaunchMessage, RoundTrips) {
  const LaunchMessage message = test::sample_launch();
  const LaunchMessage back = decode_launch_message(encode_launch_message(message));
  EXPECT_EQ(back.spec.plugin_name, message.spec.plugin_name);
  EXPECT_EQ(back.spec.binary_path, message.spec.binary_path);
  EXPECT_EQ(back.spec.socket_dir, message.spec.socket_dir);
  EXPECT_EQ(back.spec.tmp_dir, message.spec.tmp_dir);
  EXPECT_EQ(back.spec.network, Network::outbound);
  EXPECT_EQ(back.spec.read_paths, message.spec.read_paths);
  EXPECT_EQ(back.spec.args, message.spec.args);
  EXPECT_EQ(back.env, message.env);

  LaunchMessage empty;
  empty.spec.plugin_name = "p";
  const LaunchMessage empty_back = decode_launch_message(encode_launch_message(empty));
  EXPECT_TRUE(empty_back.env.empty());
  EXPECT_TRUE(empty_back.spec.args.empty());
  EXPECT_EQ(empty_back.spec.network, Network::none);
}

TEST(LaunchMessage, NamesWhatIsWrong) {
  const std::string spec =
      R"("plugin_name":"p","binary_path":"/b","socket_dir":"/s","tmp_dir":"/t",)"
      R"("network":"none","read_paths":[],"args":[])";
  EXPECT_EQ(launch_error("{" + spec + R"(,"env":["A=1"]})"), "");
  EXPECT_EQ(launch_error("{" + spec + "}"), "spec: field \"env\" is not an array");
  EXPECT_EQ(launch_error("{" + spec + R"(,"env":"A=1"})"), "spec: field \"env\" is not an array");
  EXPECT_EQ(launch_error("{" + spec + R"(,"env":["A=1",2]})"), "spec: env[1] is not a string");
  EXPECT_EQ(launch_error("{" + spec + R"(,"env":["NOEQUALS"]})"),
            "spec: env entry \"NOEQUALS\" is not NAME=VALUE");
  EXPECT_EQ(launch_error("{" + spec + R"(,"env":["=value"]})"),
            "spec: env entry \"=value\" is not NAME=VALUE");
  EXPECT_EQ(launch_error("{" + spec + R"(,"env":[""]})"), "spec: env entry \"\" is not NAME=VALUE");
  EXPECT_EQ(launch_error(R"({"plugin_name":"p","env":[]})"), "spec: missing field \"binary_path\"");
  EXPECT_EQ(launch_error("[\"A=1\"]"), "spec: not a JSON object");
}

}  // namespace
}  // namespace sandbox_host
