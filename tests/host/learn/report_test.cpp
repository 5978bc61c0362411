// Judging attempts against a Spec, which grants are suggested, and the report: its config
// lines parse as TOML and grant what was refused, its JSON parses, hostile names stay inert.
#include <sandbox_host/host/learn/findings.hpp>
#include <sandbox_host/host/learn/grant_advice.hpp>
#include <sandbox_host/host/learn/learn_report.hpp>
#include <sandbox_host/host/learn/spec_grants.hpp>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace sandbox_host::learn {
namespace {

namespace fs = std::filesystem;

Spec spec_with(Network network = Network::none) {
  Spec spec;
  spec.plugin_name = "demo";
  spec.binary_path = "/opt/demo/bin/demo";
  spec.socket_dir = "/run/demo/sock";
  spec.tmp_dir = "/var/tmp/demo";
  spec.read_paths = {"/srv/data"};
  spec.network = network;
  if (network == Network::proxied) {
    spec.proxy_socket = "/var/lib/sandbox-host/egress.sock";
    spec.proxy_port = 3128;
  }
  return spec;
}

Endpoint inet(const std::string &address, std::uint16_t port) {
  return {Endpoint::Family::inet, address, port};
}

TEST(SpecGrants, NamespacesGrantsTheSpecTheSystemAndItsOwnTrees) {
  const SpecGrants grants(spec_with(), "namespaces");
  EXPECT_TRUE(grants.grants("/usr/lib/x86_64-linux-gnu/libc.so.6", FileUse::exec));
  EXPECT_TRUE(grants.grants("/etc/ssl/certs/ca-certificates.crt", FileUse::read));
  EXPECT_TRUE(grants.grants("/srv/data/x", FileUse::read));
  EXPECT_TRUE(grants.grants("/opt/demo/bin/demo", FileUse::exec));
  EXPECT_TRUE(grants.grants("/var/tmp/demo/cache/x", FileUse::write));
  EXPECT_TRUE(grants.grants("/run/demo/sock/s", FileUse::write));
  EXPECT_TRUE(grants.grants("/tmp/x", FileUse::write));
  // The sandbox's /tmp is its own: a host file there is not what the plugin sees.
  EXPECT_FALSE(grants.grants("/tmp/x", FileUse::read));
  EXPECT_TRUE(grants.grants("/proc/self/maps", FileUse::read));
  EXPECT_TRUE(grants.grants("/dev/null", FileUse::write));
  EXPECT_TRUE(grants.grants("/etc", FileUse::read)) << "the tree's /etc, its grants alone";
  EXPECT_TRUE(grants.grants("/opt/demo", FileUse::look));

  EXPECT_FALSE(grants.grants("/srv/data/x", FileUse::write));
  EXPECT_FALSE(grants.grants("/srv/database", FileUse::read)) << "a sibling sharing a prefix";
  EXPECT_FALSE(grants.grants("/opt/demo/share/x", FileUse::read));
  EXPECT_FALSE(grants.grants("/etc/shadow", FileUse::look));
  EXPECT_FALSE(grants.grants("/etc/hosts", FileUse::write));
  EXPECT_FALSE(grants.grants("/dev/sda", FileUse::read));

  EXPECT_FALSE(grants.grants(inet("192.0.2.7", 443)));
  EXPECT_FALSE(grants.grants(inet("127.0.0.1", 8080)));
  EXPECT_TRUE(grants.grants(Endpoint{Endpoint::Family::unix_path, "/run/demo/sock/s", 0}));
  EXPECT_FALSE(grants.grants(Endpoint{Endpoint::Family::unix_path, "/run/dbus/socket", 0}));
}

TEST(SpecGrants, LandlockLeavesStatAloneAndGrantsNoPrivateTrees) {
  const SpecGrants grants(spec_with(), "landlock");
  EXPECT_TRUE(grants.grants("/root/.ssh/id_ed25519", FileUse::look));
  EXPECT_FALSE(grants.grants("/root/.ssh/id_ed25519", FileUse::read));
  EXPECT_FALSE(grants.grants("/tmp/x", FileUse::write));
  EXPECT_FALSE(grants.grants("/proc/1/environ", FileUse::read));
  EXPECT_TRUE(grants.grants("/proc/self/status", FileUse::read));
  EXPECT_FALSE(grants.grants("/etc", FileUse::read));
}

TEST(SpecGrants, ProxiedReachesOnlyTheProxyPort) {
  const SpecGrants grants(spec_with(Network::proxied), "namespaces");
  EXPECT_TRUE(grants.grants(inet("127.0.0.1", 3128)));
  EXPECT_FALSE(grants.grants(inet("127.0.0.1", 3129)));
  EXPECT_FALSE(grants.grants(inet("192.0.2.7", 3128)));
  EXPECT_TRUE(SpecGrants(spec_with(Network::outbound), "landlock").grants(inet("192.0.2.7", 1)));
}

TEST(GrantAdvice, RefusesSystemTreesSecretsHomesAndTheHostsState) {
  const GrantAdvice advice({"/var/lib/sandbox-host"});
  for (const char *path :
       {"/", "/proc", "/proc/1/environ", "/dev/sda", "/sys/kernel", "/etc", "/etc/shadow",
        "/etc/ssh/ssh_host_ed25519_key", "/etc/ssl/private/key.pem", "/root", "/root/.ssh/id_rsa",
        "/root/.aws/credentials", "/var/lib/sandbox-host/spool/x", "/var/lib", "/run/user/0"}) {
    EXPECT_TRUE(advice.refusal(path)) << path;
  }
  for (const char *path : {"/srv/data/x", "/etc/ssl/certs/extra.pem", "/root/project/data.json",
                           "/opt/tool/share/x", "/usr/local/share/ca.pem"}) {
    EXPECT_FALSE(advice.refusal(path)) << path << ": " << advice.refusal(path).value_or("");
  }
  EXPECT_TRUE(advice.refusal("/srv/bad\nname"));
  EXPECT_TRUE(advice.refusal("/srv/\xff"));
  EXPECT_TRUE(advice.may_cover("/opt/tool/share"));
  for (const char *dir :
       {"/", "/etc", "/etc/ssl", "/usr", "/var/lib", "/home", "/root", "/opt", "/var"}) {
    EXPECT_FALSE(advice.may_cover(dir)) << dir;
  }
}

struct Scratch {
  Scratch() {
    // Not below /tmp, which the namespaces backend gives every plugin a private one of.
    char pattern[] = "/var/tmp/learn-report-XXXXXX";
    dir = ::mkdtemp(pattern);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  fs::path dir;
};

void touch(const fs::path &path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "x";
}

TEST(LearnReport, SuggestsTheNarrowestGrantsAndNeverASecret) {
  Scratch scratch;
  const fs::path many = scratch.dir / "share";
  for (const char *name : {"a.json", "b.json", "c.json"}) touch(many / name);
  const fs::path single = scratch.dir / "ca" / "ca.pem";
  touch(single);
  touch(scratch.dir / "ca" / "other.pem");
  fs::create_symlink(single, scratch.dir / "link.pem");

  Spec spec = spec_with();
  spec.read_paths = {"/srv/data"};
  SpecGrants grants(spec, "namespaces");
  FindingsRecorder recorder(grants);
  auto file = [&](const fs::path &path, FileUse use, const char *call = "openat") {
    recorder.record(FileAttempt{path.string(), use, call});
  };
  for (const char *name : {"a.json", "b.json", "c.json"}) file(many / name, FileUse::read);
  file(single, FileUse::read);
  file(scratch.dir / "link.pem", FileUse::read);  // the same file through a symlink
  file(scratch.dir / "missing" / "probe.py", FileUse::read);
  file("/etc/shadow", FileUse::read);
  file("/usr/bin/newfile", FileUse::write, "mkdirat");
  file("/usr/lib/os-release", FileUse::read);  // granted
  recorder.record(SocketAttempt{inet("10.255.255.53", 53), "connect"});
  const Findings findings = recorder.snapshot();
  EXPECT_EQ(findings.probes, 1u);

  ReportContext context;
  context.plugin = "demo";
  context.backend = "namespaces";
  context.read_paths = spec.read_paths;
  const LearnReport report = make_report(findings, context, grants, GrantAdvice());
  ASSERT_EQ(report.read.size(), 2u);
  EXPECT_EQ(report.read[0].path, single.string());
  EXPECT_EQ(report.read[0].covers.size(), 2u) << "the file and its symlink";
  EXPECT_EQ(report.read[1].path, many.string()) << "three files of one directory";
  ASSERT_FALSE(report.plugin_lines.empty());
  EXPECT_EQ(report.plugin_lines[0],
            "read = [\"/srv/data\", \"" + single.string() + "\", \"" + many.string() + "\"]");
  EXPECT_EQ(report.plugin_lines[1], "network = \"proxied\"");
  ASSERT_EQ(report.not_suggested.size(), 1u);
  EXPECT_EQ(report.not_suggested[0].path, "/etc/shadow");
  ASSERT_EQ(report.writes.size(), 1u);
  EXPECT_EQ(report.writes[0].path, "/usr/bin/newfile");
  EXPECT_FALSE(report.notes.empty());

  const std::string text = render_text(report);
  EXPECT_NE(text.find("[plugins.demo]\n" + report.plugin_lines[0] + "\nnetwork = \"proxied\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("needs a write grant, which plugins never get: use TmpDir"),
            std::string::npos)
      << text;
  Poco::JSON::Parser parser;
  const auto json = parser.parse(render_json(report)).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(json->getValue<std::string>("plugin"), "demo");
  EXPECT_EQ(json->getObject("read")->getArray("items")->size(), 2u);
  EXPECT_EQ(
      json->getObject("config")->getObject("plugin")->getArray("lines")->getElement<std::string>(0),
      report.plugin_lines[0]);
}

TEST(LearnReport, NamesBecomeAllowEntriesAndHostileNamesStayInert) {
  SpecGrants grants(spec_with(Network::proxied), "namespaces");
  FindingsRecorder recorder(grants);
  recorder.record(NameAttempt{"api.example.com", NameAttempt::Source::proxy, 443});
  recorder.record(NameAttempt{"allowed.example.com", NameAttempt::Source::proxy, 443});
  recorder.record(NameAttempt{"odd.example.com", NameAttempt::Source::proxy, 8443});
  recorder.record(NameAttempt{"evil\"]\n[x]\x1b[2J", NameAttempt::Source::dns, 0});
  recorder.record(SocketAttempt{inet("93.184.216.34", 443), "connect"});
  ReportContext context;
  context.plugin = "demo";
  context.backend = "namespaces";
  context.network = Network::proxied;
  context.egress_table = true;
  context.egress_allow = {"allowed.example.com"};
  const LearnReport report = make_report(recorder.snapshot(), context, grants, GrantAdvice());
  EXPECT_TRUE(report.plugin_lines.empty()) << "network proxied already";
  ASSERT_EQ(report.egress_lines.size(), 1u);
  EXPECT_EQ(report.egress_lines[0],
            "allow = [\"allowed.example.com\", \"93.184.216.34\", \"api.example.com\", "
            "\"odd.example.com:8443\"]");
  const std::string text = render_text(report);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find("\n[x]"), std::string::npos) << text;
  Poco::JSON::Parser parser;
  EXPECT_NO_THROW(parser.parse(render_json(report)));
}

TEST(LearnReport, PluginNamesAreOneTomlKey) {
  EXPECT_EQ(toml_key("demo-plugin_2"), "demo-plugin_2");
  EXPECT_EQ(toml_key("python3.11"), "\"python3.11\"");
  EXPECT_EQ(toml_key("a]\n[b"), "\"a]\\u000a[b\"");
}

TEST(LearnReport, TomlStringsEscapeWhatWouldEndThem) {
  EXPECT_EQ(toml_string("/a\"b\\c"), "\"/a\\\"b\\\\c\"");
  EXPECT_EQ(toml_string("/a\nb"), "\"/a\\u000ab\"");
}

TEST(LearnReport, BoundsEachGroup) {
  SpecGrants grants(spec_with(), "namespaces");
  FindingsRecorder recorder(grants);
  for (int i = 0; i < 50; ++i) {
    recorder.record(FileAttempt{"/usr/write-" + std::to_string(i), FileUse::write, "openat"});
  }
  ReportContext context;
  context.plugin = "demo";
  context.backend = "namespaces";
  context.max_items = 5;
  const LearnReport report = make_report(recorder.snapshot(), context, grants, GrantAdvice());
  const std::string text = render_text(report);
  EXPECT_NE(text.find("... and 45 more"), std::string::npos) << text;
  Poco::JSON::Parser parser;
  const auto json = parser.parse(render_json(report)).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(json->getObject("writes")->getArray("items")->size(), 5u);
  EXPECT_EQ(json->getObject("writes")->getValue<int>("more"), 45);
}

}  // namespace
}  // namespace sandbox_host::learn
