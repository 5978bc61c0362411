#include "fixtures.hpp"

#include <sandbox_host/host/spec_check.hpp>
#include <sandbox_host/host/launch_client/spec_codec.hpp>
#include <sandbox_host/sandboxtest.hpp>
#include <sandbox_host/spec_abi.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

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

TEST(SpecCheck, ProxyFieldsBelongToNetworkProxiedAlone) {
  TempSpec t("report", REPORT_PLUGIN);
  Spec spec = t.spec;
  spec.proxy_socket = "/run/egress.sock";
  EXPECT_EQ(spec_error(spec),
            "plugin \"report\": spec ProxySocket: is set, but only network proxied goes through "
            "the egress proxy (network is \"none\")");
  spec = t.spec;
  spec.network = Network::outbound;
  spec.proxy_port = 3128;
  EXPECT_EQ(spec_error(spec),
            "plugin \"report\": spec ProxyPort: is set, but only network proxied goes through "
            "the egress proxy (network is \"outbound\")");
  spec = t.spec;
  spec.egress_dir = "/run/user/0/clawpatrol-sandbox/egress";
  EXPECT_EQ(spec_error(spec),
            "plugin \"report\": spec EgressDir: is set, but only network proxied goes through "
            "the egress proxy (network is \"none\")");
}

TEST(SpecCheck, AProxiedSpecNeedsACleanSocketPathAndAPort) {
  TempSpec t("report", REPORT_PLUGIN, Network::proxied);
  const std::string dir = t.spec.socket_dir;
  // Neither the socket nor the egress directory needs to exist yet: stage 1 says so.
  t.spec.proxy_socket = dir + "/egress.sock";
  t.spec.proxy_port = 3128;
  t.spec.egress_dir = dir + "/egress";
  EXPECT_EQ(spec_error(t.spec), "");

  Spec spec = t.spec;
  spec.proxy_socket = "";
  EXPECT_EQ(spec_error(spec), "plugin \"report\": spec ProxySocket: is empty");
  spec.proxy_socket = "egress.sock";
  EXPECT_EQ(spec_error(spec),
            "plugin \"report\": spec ProxySocket: \"egress.sock\" is not an absolute path");
  spec.proxy_socket = dir + "//tmp/../egress.sock";
  EXPECT_EQ(spec_error(spec), "plugin \"report\": spec ProxySocket: \"" + spec.proxy_socket +
                                  "\" is not a clean path (it would be \"" + dir +
                                  "/egress.sock\")");
  spec.proxy_socket = "/" + std::string(107, 's');
  EXPECT_EQ(spec_error(spec), "plugin \"report\": spec ProxySocket: \"" + spec.proxy_socket +
                                  "\" is longer than a unix socket address holds (107 bytes)");
  spec.proxy_socket = "/" + std::string(106, 's');
  EXPECT_EQ(spec_error(spec), "");

  spec = t.spec;
  spec.proxy_port = 0;
  EXPECT_EQ(spec_error(spec),
            "plugin \"report\": spec ProxyPort: is 0; network proxied needs the port inside the "
            "sandbox that leads to the egress proxy (1 to 65535)");

  spec = t.spec;
  spec.egress_dir = "run/egress";
  EXPECT_EQ(spec_error(spec),
            "plugin \"report\": spec EgressDir: \"run/egress\" is not an absolute path");
  // Where it exists, it must be where it really is.
  std::filesystem::create_directory_symlink(t.spec.tmp_dir, dir + "/egress");
  EXPECT_EQ(spec_error(t.spec), "plugin \"report\": spec EgressDir: \"" + dir +
                                    "/egress\" is not symlink-resolved (it resolves to \"" +
                                    t.spec.tmp_dir + "\")");
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
  EXPECT_EQ(back.spec.proxy_socket, "");
  EXPECT_EQ(back.spec.proxy_port, 0);
  EXPECT_EQ(back.spec.egress_dir, "");
}

Spec proxied_spec() {
  Spec spec{"gh", "/usr/bin/gh", "/run/s", "/run/s/tmp", Network::proxied, {"/etc/ssl"}, {"api"}};
  spec.proxy_socket = "/var/lib/sandbox-host/egress \"ü\".sock";
  spec.proxy_port = 65535;
  spec.egress_dir = "/run/user/1000/clawpatrol-sandbox/egress";
  spec.view = {{"/home/u", PathAccess::none},
               {"/home/u/.gitconfig", PathAccess::read},
               {"/home/u/src \"ü\"", PathAccess::write}};
  spec.limits = {7, 64, Limits::kUnlimited, 1ULL << 40, 16, 4096};
  spec.process_memory = 256ULL << 20;
  return spec;
}

TEST(SpecCodec, RoundTripsAProxiedSpec) {
  const Spec spec = proxied_spec();
  const Spec back =
      decode_stage1_payload(encode_stage1_payload({"namespaces", "/m.so", spec})).spec;
  EXPECT_EQ(back.network, Network::proxied);
  EXPECT_EQ(back.proxy_socket, spec.proxy_socket);
  EXPECT_EQ(back.proxy_port, 65535);
  EXPECT_EQ(back.egress_dir, spec.egress_dir);
  EXPECT_EQ(back.read_paths, spec.read_paths);
  EXPECT_EQ(back.view, spec.view);
  EXPECT_EQ(back.limits, spec.limits);
  EXPECT_EQ(back.process_memory, 256ULL << 20);

  Spec with_env = spec;
  with_env.env = {"A=1"};
  const LaunchMessage launched = decode_launch_message(encode_launch_message({with_env}));
  EXPECT_EQ(launched.spec.env, with_env.env);
  EXPECT_EQ(launched.spec.network, Network::proxied);
  EXPECT_EQ(launched.spec.proxy_socket, spec.proxy_socket);
  EXPECT_EQ(launched.spec.proxy_port, 65535);
  EXPECT_EQ(launched.spec.egress_dir, spec.egress_dir);
  EXPECT_EQ(launched.spec.view, spec.view);
  EXPECT_EQ(launched.spec.limits, spec.limits);
  EXPECT_EQ(launched.spec.process_memory, 256ULL << 20);

  const PreparedPayload prepared{"namespaces", "/m.so", Network::proxied, 4};
  EXPECT_EQ(decode_prepared_payload(encode_prepared_payload(prepared)).network, Network::proxied);
}

// The Spec as a backend module reads it back from the boundary's struct.
TEST(SpecAbi, RoundTripsEveryField) {
  const Spec spec = proxied_spec();
  const SpecAbiView view(spec);
  const Spec back = from_abi(*view.get());
  EXPECT_EQ(back.plugin_name, spec.plugin_name);
  EXPECT_EQ(back.binary_path, spec.binary_path);
  EXPECT_EQ(back.socket_dir, spec.socket_dir);
  EXPECT_EQ(back.tmp_dir, spec.tmp_dir);
  EXPECT_EQ(back.network, Network::proxied);
  EXPECT_EQ(back.read_paths, spec.read_paths);
  EXPECT_EQ(back.args, spec.args);
  EXPECT_EQ(back.proxy_socket, spec.proxy_socket);
  EXPECT_EQ(back.proxy_port, 65535);
  EXPECT_EQ(back.egress_dir, spec.egress_dir);
  EXPECT_EQ(back.view, spec.view);
  EXPECT_EQ(back.limits, spec.limits);
  EXPECT_EQ(back.process_memory, 256ULL << 20);
}

TEST(SpecAbi, AStructWithoutProcessMemoryLeavesMemoryUnbounded) {
  const SpecAbiView view(proxied_spec());
  // As a host of ABI 1.10 lays it out: the struct ends before process_memory.
  sh_spec older = *view.get();
  older.struct_size = offsetof(sh_spec, process_memory);
  const Spec back = from_abi(older);
  EXPECT_EQ(back.limits, proxied_spec().limits);
  EXPECT_EQ(back.process_memory, Limits::kUnlimited);
  EXPECT_EQ(Spec{}.process_memory, Limits::kUnlimited);
}

TEST(SpecAbi, AStructWithoutTheLimitsKeepsTheViewAndTheDefaultLimits) {
  const Spec spec = proxied_spec();
  const SpecAbiView view(spec);
  // As a host of ABI 1.5 lays it out: the struct ends before the limits.
  sh_spec older = *view.get();
  older.struct_size = offsetof(sh_spec, limits);
  const Spec back = from_abi(older);
  EXPECT_EQ(back.view, spec.view);
  EXPECT_EQ(back.limits, Limits{});
}

TEST(SpecAbi, AStructWithoutTheViewLeavesItEmptyAndAnUnknownAccessIsRefused) {
  const Spec spec = proxied_spec();
  const SpecAbiView view(spec);
  // As a host of ABI 1.3 lays it out: the struct ends before the view.
  sh_spec older = *view.get();
  older.struct_size = offsetof(sh_spec, view);
  const Spec back = from_abi(older);
  EXPECT_EQ(back.proxy_port, 65535);
  EXPECT_TRUE(back.view.empty());

  sh_spec raw = *view.get();
  std::vector<sh_path_rule> rules(raw.view, raw.view + raw.view_count);
  rules[1].access = 3;
  raw.view = rules.data();
  try {
    from_abi(raw);
    FAIL() << "access 3 was read";
  } catch (const std::invalid_argument &e) {
    EXPECT_STREQ(e.what(), "spec: view[1] has unknown access 3");
  }
}

// sh_spec as ABI 1.9 released it, written out by hand once: the schema in spec_fields.h may
// only append to it, so every module built since 1.0 keeps reading the fields it knows.
struct ReleasedSpec19 {
  uint32_t struct_size;
  sh_str plugin_name, binary_path, socket_dir, tmp_dir, network;
  sh_str_list read_paths, args;
  sh_str proxy_socket, egress_dir;
  uint32_t proxy_port;
  const sh_path_rule *view;
  size_t view_count;
  uint64_t processes, open_files, file_size, tmp_size, tmp_inodes, shm_size;
};

TEST(SpecAbi, TheSchemaKeepsTheReleasedLayout) {
#define SAME_OFFSET(field) \
  EXPECT_EQ(offsetof(sh_spec, field), offsetof(ReleasedSpec19, field)) << #field
  SAME_OFFSET(struct_size);
  SAME_OFFSET(plugin_name);
  SAME_OFFSET(binary_path);
  SAME_OFFSET(socket_dir);
  SAME_OFFSET(tmp_dir);
  SAME_OFFSET(network);
  SAME_OFFSET(read_paths);
  SAME_OFFSET(args);
  SAME_OFFSET(proxy_socket);
  SAME_OFFSET(egress_dir);
  SAME_OFFSET(proxy_port);
  SAME_OFFSET(view);
  SAME_OFFSET(view_count);
#undef SAME_OFFSET
  EXPECT_EQ(offsetof(sh_spec, limits), offsetof(ReleasedSpec19, processes));
  EXPECT_EQ(offsetof(sh_spec, limits) + offsetof(sh_limits, shm_size),
            offsetof(ReleasedSpec19, shm_size));
  EXPECT_GE(sizeof(sh_spec), sizeof(ReleasedSpec19));
}

TEST(SpecAbi, RefusesAListWithItemsAndNoArray) {
  const Spec spec = proxied_spec();
  const SpecAbiView view(spec);
  auto error = [](const sh_spec &raw) {
    try {
      from_abi(raw);
    } catch (const std::invalid_argument &e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  sh_spec raw = *view.get();
  raw.read_paths.items = nullptr;
  EXPECT_EQ(error(raw), "spec: field \"read_paths\" has count 1 and no array");
  raw = *view.get();
  raw.view = nullptr;
  EXPECT_EQ(error(raw), "spec: field \"view\" has count 3 and no array");
  raw.view_count = 0;
  EXPECT_EQ(error(raw), "read");
}

TEST(SpecCodec, RefusesAViewRuleWithoutPathOrWithAnUnknownAccess) {
  const std::string good = encode_stage1_payload({"namespaces", "/m.so", proxied_spec()});
  auto decode_error = [&](const std::string &from, const std::string &to) {
    std::string text = good;
    const size_t at = text.find(from);
    if (at == std::string::npos) return std::string("no ") + from + " in " + text;
    text.replace(at, from.size(), to);
    try {
      decode_stage1_payload(text);
    } catch (const std::invalid_argument &e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(decode_error("\"access\":\"read\"", "\"access\":\"exec\""),
            "spec: view[1].access is not none, read or write");
  EXPECT_EQ(decode_error("\"path\":\"/home/u\"", "\"path\":7"),
            "spec: view[0].path is not a string");
  EXPECT_EQ(decode_error("\"view\":[", "\"view\":7,\"x\":["),
            "spec: field \"view\" is not an array");
}

TEST(SpecCheck, RefusesAViewRuleOnAPathThatIsMissingUnresolvedOrRepeated) {
  TempSpec t("report", REPORT_PLUGIN);
  Spec spec = t.spec;
  spec.view = {{t.spec.socket_dir, PathAccess::none}, {"/usr/share", PathAccess::read}};
  EXPECT_EQ(spec_error(spec), "");

  spec.view.push_back({t.spec.socket_dir + "/missing", PathAccess::none});
  EXPECT_EQ(spec_error(spec), "plugin \"report\": spec View[2]: \"" + t.spec.socket_dir +
                                  "/missing\" does not exist or is unreadable");

  std::filesystem::create_directory_symlink(t.spec.tmp_dir, t.spec.socket_dir + "/link");
  spec.view.back() = {t.spec.socket_dir + "/link", PathAccess::write};
  EXPECT_EQ(spec_error(spec), "plugin \"report\": spec View[2]: \"" + t.spec.socket_dir +
                                  "/link\" is not symlink-resolved (it resolves to \"" +
                                  t.spec.tmp_dir + "\")");

  spec.view.back() = {"/usr/share", PathAccess::write};
  EXPECT_EQ(spec_error(spec), "plugin \"report\": spec View[2]: \"/usr/share\" has a rule already");
}

TEST(SpecAbi, AStructWithoutTheProxyFieldsLeavesThemEmpty) {
  const Spec spec = proxied_spec();
  const SpecAbiView view(spec);
  // As a host of ABI 1.0 to 1.2 lays it out: the struct ends before the proxy's fields.
  sh_spec older = *view.get();
  older.struct_size = offsetof(sh_spec, proxy_socket);
  const Spec back = from_abi(older);
  EXPECT_EQ(back.network, Network::proxied);
  EXPECT_EQ(back.proxy_socket, "");
  EXPECT_EQ(back.proxy_port, 0);
  EXPECT_EQ(back.egress_dir, "");

  older.struct_size = offsetof(sh_spec, proxy_socket) - 1;
  EXPECT_THROW(from_abi(older), std::invalid_argument);
}

TEST(SpecAbi, RefusesAPortOutOfRangeAndAnUnknownNetwork) {
  const Spec spec = proxied_spec();
  const SpecAbiView view(spec);
  sh_spec raw = *view.get();
  raw.proxy_port = 65536;
  try {
    from_abi(raw);
    FAIL() << "port 65536 was read";
  } catch (const std::invalid_argument &e) {
    EXPECT_STREQ(e.what(), "spec: field \"proxy_port\" is 65536, not a port (0 to 65535)");
  }
  raw = *view.get();
  raw.network = to_sh_str("lan");
  try {
    from_abi(raw);
    FAIL() << "network lan was read";
  } catch (const std::invalid_argument &e) {
    EXPECT_STREQ(e.what(), "spec: unknown network \"lan\"");
  }
}

TEST(NetworkNames, SpellTheThreeValues) {
  for (Network network : {Network::none, Network::outbound, Network::proxied}) {
    EXPECT_EQ(parse_network(to_string(network)), network);
  }
  EXPECT_EQ(to_string(Network::proxied), "proxied");
  EXPECT_EQ(parse_network("Proxied"), std::nullopt);
  EXPECT_EQ(parse_network(""), std::nullopt);
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
                      "socket_dir":"/s","tmp_dir":"/t","network":"lan"})"),
            "spec: unknown network \"lan\"");
  EXPECT_EQ(error(R"({"backend":"x","module":"m","plugin_name":"p","binary_path":"/b",
                      "socket_dir":"/s","tmp_dir":"/t","network":"none","read_paths":[1],
                      "args":[]})"),
            "spec: read_paths[0] is not a string");
  const std::string head =
      R"({"backend":"x","module":"m","plugin_name":"p","binary_path":"/b","socket_dir":"/s",)"
      R"("tmp_dir":"/t","network":"proxied","read_paths":[],"args":[])";
  EXPECT_EQ(error(head + "}"), "spec: missing field \"proxy_socket\"");
  EXPECT_EQ(error(head + R"(,"proxy_socket":7})"), "spec: field \"proxy_socket\" is not a string");
  const std::string socket = head + R"(,"proxy_socket":"/e.sock")";
  EXPECT_EQ(error(socket + "}"), "spec: missing field \"egress_dir\"");
  const std::string egress = socket + R"(,"egress_dir":"")";
  EXPECT_EQ(error(egress + "}"), "spec: field \"proxy_port\" is not a port (0 to 65535)");
  for (const char *port : {"-1", "65536", "\"3128\"", "31.5", "null"}) {
    EXPECT_EQ(error(egress + ",\"proxy_port\":" + port + "}"),
              "spec: field \"proxy_port\" is not a port (0 to 65535)")
        << port;
  }
  EXPECT_EQ(error(egress + R"(,"proxy_port":3128})"), "spec: field \"view\" is not an array");
  const std::string view = egress + R"(,"proxy_port":3128,"view":[])";
  EXPECT_EQ(error(view + "}"), "spec: field \"limits\" is not an object");
  const std::string limits =
      R"("processes":1,"open_files":8,"file_size":4096,"tmp_size":4096,"tmp_inodes":16)";
  EXPECT_EQ(error(view + R"(,"limits":{)" + limits + "}}"),
            "spec: limits.shm_size is not a count (0 to 18446744073709551615)");
  for (const char *bad : {"-1", "\"64M\"", "1.5", "null"}) {
    EXPECT_EQ(error(view + R"(,"limits":{)" + limits + R"(,"shm_size":)" + bad + "}}"),
              "spec: limits.shm_size is not a count (0 to 18446744073709551615)")
        << bad;
  }
  const std::string bounded =
      view + R"(,"limits":{)" + limits + R"(,"shm_size":18446744073709551615})";
  EXPECT_EQ(error(bounded + "}"), "spec: field \"env\" is not an array");
  EXPECT_EQ(error(bounded + R"(,"env":"A=1"})"), "spec: field \"env\" is not an array");
  EXPECT_EQ(error(bounded + R"(,"env":[1]})"), "spec: env[0] is not a string");
  const std::string with_env = bounded + R"(,"env":["A=1"])";
  for (const char *bad : {"", R"(,"process_memory":-1)", R"(,"process_memory":"2G")"}) {
    EXPECT_EQ(error(with_env + bad + "}"),
              "spec: field \"process_memory\" is not a count (0 to 18446744073709551615)")
        << bad;
  }
  EXPECT_EQ(error(with_env + R"(,"process_memory":2147483648})"), "");
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
  EXPECT_EQ(prepared_error(prepared_json("5", "lan")), "spec: unknown network \"lan\"");
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
  EXPECT_EQ(back.spec.env, message.spec.env);

  LaunchMessage empty;
  empty.spec.plugin_name = "p";
  const LaunchMessage empty_back = decode_launch_message(encode_launch_message(empty));
  EXPECT_TRUE(empty_back.spec.env.empty());
  EXPECT_TRUE(empty_back.spec.args.empty());
  EXPECT_EQ(empty_back.spec.network, Network::none);
}

TEST(LaunchMessage, NamesWhatIsWrong) {
  const std::string spec =
      R"("plugin_name":"p","binary_path":"/b","socket_dir":"/s","tmp_dir":"/t",)"
      R"("network":"none","read_paths":[],"args":[],"proxy_socket":"","proxy_port":0,)"
      R"("egress_dir":"","view":[],"limits":{"processes":1,"open_files":8,"file_size":4096,)"
      R"("tmp_size":4096,"tmp_inodes":16,"shm_size":4096},"process_memory":268435456)";
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
