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

}  // namespace
}  // namespace sandbox_host
