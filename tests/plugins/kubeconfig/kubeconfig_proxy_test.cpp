// proxy_kubeconfig on kubeconfigs as kind writes them: which clusters get the proxy, what
// else of the document stays as it was, a second pass, and the documents it refuses.
#include "kubeconfig_proxy.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace sandbox_host::kubeconfig {
namespace {

constexpr const char *kProxy = "socks5://127.0.0.1:41080";
constexpr const char *kCaData =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJBZ0lCQURB";
constexpr const char *kCertData =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURJVENDQWdtZ0F3SUJBZ0lJ";
constexpr const char *kKeyData = "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB";

// `kind get kubeconfig --name <lab>`'s shape, with the cluster's server given.
std::string kind_kubeconfig(const std::string &server, const std::string &name = "kind-lab") {
  return "apiVersion: v1\n"
         "clusters:\n"
         "- cluster:\n"
         "    certificate-authority-data: " +
         std::string(kCaData) +
         "\n"
         "    server: " +
         server +
         "\n"
         "  name: " +
         name +
         "\n"
         "contexts:\n"
         "- context:\n"
         "    cluster: " +
         name +
         "\n"
         "    user: " +
         name +
         "\n"
         "  name: " +
         name +
         "\n"
         "current-context: " +
         name +
         "\n"
         "kind: Config\n"
         "preferences: {}\n"
         "users:\n"
         "- name: " +
         name +
         "\n"
         "  user:\n"
         "    client-certificate-data: " +
         kCertData +
         "\n"
         "    client-key-data: " +
         kKeyData + "\n";
}

std::vector<std::string> keys_of(const YAML::Node &map) {
  std::vector<std::string> keys;
  for (const auto &entry : map) keys.push_back(entry.first.Scalar());
  return keys;
}

// The proxy-url of the document's cluster at index, "" without one.
std::string proxy_url_of(const std::string &document, std::size_t index = 0) {
  const YAML::Node url = YAML::Load(document)["clusters"][index]["cluster"]["proxy-url"];
  return url.IsDefined() ? url.Scalar() : "";
}

std::string refusal_of(const std::string &raw) {
  try {
    proxy_kubeconfig(raw, kProxy);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  ADD_FAILURE() << "proxy_kubeconfig took:\n" << raw;
  return "";
}

TEST(ProxyKubeconfig, PointsAKindClusterAtTheProxyAndKeepsTheRest) {
  const auto result = proxy_kubeconfig(kind_kubeconfig("https://127.0.0.1:39821"), kProxy);
  ASSERT_TRUE(result.changed);
  const YAML::Node document = YAML::Load(result.document);
  EXPECT_EQ(keys_of(document),
            (std::vector<std::string>{"apiVersion", "clusters", "contexts", "current-context",
                                      "kind", "preferences", "users"}));
  const YAML::Node cluster = document["clusters"][0]["cluster"];
  EXPECT_EQ(keys_of(cluster),
            (std::vector<std::string>{"certificate-authority-data", "server", "proxy-url"}));
  EXPECT_EQ(cluster["proxy-url"].Scalar(), kProxy);
  EXPECT_EQ(cluster["server"].Scalar(), "https://127.0.0.1:39821");
  EXPECT_EQ(cluster["certificate-authority-data"].Scalar(), kCaData);
  EXPECT_EQ(document["clusters"][0]["name"].Scalar(), "kind-lab");
  EXPECT_EQ(document["contexts"][0]["context"]["cluster"].Scalar(), "kind-lab");
  EXPECT_EQ(document["contexts"][0]["context"]["user"].Scalar(), "kind-lab");
  EXPECT_EQ(document["current-context"].Scalar(), "kind-lab");
  EXPECT_EQ(document["kind"].Scalar(), "Config");
  EXPECT_TRUE(document["preferences"].IsMap());
  EXPECT_EQ(document["preferences"].size(), 0u);
  const YAML::Node user = document["users"][0]["user"];
  EXPECT_EQ(user["client-certificate-data"].Scalar(), kCertData);
  EXPECT_EQ(user["client-key-data"].Scalar(), kKeyData);
}

TEST(ProxyKubeconfig, TakesLoopbackInEverySpelling) {
  for (const std::string &server : std::vector<std::string>{
           "https://127.0.0.1:6443", "https://127.1:6443", "https://0x7f.0.0.1:6443",
           "https://0177.0.0.1:6443", "https://2130706433:6443", "https://127.255.255.254",
           "https://127.0.0.1.:6443", "https://[::1]:6443", "https://[0:0:0:0:0:0:0:1]:6443",
           "https://[::ffff:127.0.0.1]:6443", "https://localhost:6443", "https://LocalHost.:6443",
           "HTTPS://localhost", "http://127.0.0.1:8080", "127.0.0.1:6443", "localhost:6443",
           "https://admin@127.0.0.1:6443", "https://127.0.0.1:6443/prefix?x=1"}) {
    const auto result = proxy_kubeconfig(kind_kubeconfig(server), kProxy);
    EXPECT_TRUE(result.changed) << server;
    EXPECT_EQ(proxy_url_of(result.document), kProxy) << server;
  }
}

TEST(ProxyKubeconfig, LeavesARemoteClusterAlone) {
  for (const std::string &server : std::vector<std::string>{
           "https://203.0.113.7:6443", "https://kube.example.com", "https://128.0.0.1:6443",
           "https://126.255.255.255", "https://127.example.com:6443", "https://localhost.example",
           "https://[::2]:6443", "https://[fe80::1%25lo]:6443", "https://10.0.0.1:6443"}) {
    const std::string raw = kind_kubeconfig(server);
    const auto result = proxy_kubeconfig(raw, kProxy);
    EXPECT_FALSE(result.changed) << server;
    EXPECT_EQ(result.document, raw) << server;
  }
}

TEST(ProxyKubeconfig, ChangesOnlyTheLoopbackClustersOfMany) {
  const std::string raw =
      "apiVersion: v1\n"
      "clusters:\n"
      "- cluster:\n"
      "    server: https://kube.example.com\n"
      "    proxy-url: http://corp-proxy.example:3128\n"
      "  name: prod\n"
      "- cluster:\n"
      "    server: https://127.0.0.1:40001\n"
      "  name: kind-a\n"
      "- cluster:\n"
      "    server: https://203.0.113.9:6443\n"
      "  name: staging\n"
      "- cluster:\n"
      "    server: https://[::1]:40002\n"
      "  name: kind-b\n"
      "kind: Config\n";
  const auto result = proxy_kubeconfig(raw, kProxy);
  ASSERT_TRUE(result.changed);
  EXPECT_EQ(proxy_url_of(result.document, 0), "http://corp-proxy.example:3128");
  EXPECT_EQ(proxy_url_of(result.document, 1), kProxy);
  EXPECT_EQ(proxy_url_of(result.document, 2), "");
  EXPECT_EQ(proxy_url_of(result.document, 3), kProxy);
  const YAML::Node clusters = YAML::Load(result.document)["clusters"];
  std::vector<std::string> names;
  for (const auto &cluster : clusters) names.push_back(cluster["name"].Scalar());
  EXPECT_EQ(names, (std::vector<std::string>{"prod", "kind-a", "staging", "kind-b"}));
}

TEST(ProxyKubeconfig, AnAlreadyProxiedClusterIsLeftByteForByte) {
  const std::string raw =
      "# written by the kubeconfig op\n"
      "apiVersion: v1\n"
      "clusters:\n"
      "- cluster:\n"
      "    server: https://127.0.0.1:39821   # the lab\n"
      "    proxy-url: socks5://127.0.0.1:41080\n"
      "  name: kind-lab\n";
  const auto result = proxy_kubeconfig(raw, kProxy);
  EXPECT_FALSE(result.changed);
  EXPECT_EQ(result.document, raw);
}

TEST(ProxyKubeconfig, ReplacesAnotherProxyInItsPlace) {
  const std::string raw =
      "clusters:\n"
      "- cluster:\n"
      "    proxy-url: socks5://127.0.0.1:1080\n"
      "    server: https://127.0.0.1:39821\n"
      "  name: kind-lab\n";
  const auto result = proxy_kubeconfig(raw, kProxy);
  ASSERT_TRUE(result.changed);
  const YAML::Node cluster = YAML::Load(result.document)["clusters"][0]["cluster"];
  EXPECT_EQ(keys_of(cluster), (std::vector<std::string>{"proxy-url", "server"}));
  EXPECT_EQ(cluster["proxy-url"].Scalar(), kProxy);
}

TEST(ProxyKubeconfig, ASecondPassChangesNothing) {
  const auto first = proxy_kubeconfig(kind_kubeconfig("https://127.0.0.1:39821"), kProxy);
  ASSERT_TRUE(first.changed);
  const auto second = proxy_kubeconfig(first.document, kProxy);
  EXPECT_FALSE(second.changed);
  EXPECT_EQ(second.document, first.document);
}

TEST(ProxyKubeconfig, KeepsEveryValueAndItsTypeButNotComments) {
  const std::string raw =
      "apiVersion: v1\n"
      "clusters:\n"
      "- cluster:\n"
      "    insecure-skip-tls-verify: true   # plain: a boolean\n"
      "    server: \"https://127.0.0.1:39821\"\n"
      "    tls-server-name: 'true'\n"
      "    extensions:\n"
      "    - name: numbers\n"
      "      extension: {port: 6443, ratio: 0.5, label: \"6443\", none: null, tagged: !!str 12}\n"
      "  name: kind-lab\n"
      "users:\n"
      "- name: kind-lab\n"
      "  user:\n"
      "    token: \"0123456789\"\n"
      "    exec:\n"
      "      command: kubectl-login\n"
      "      args: [\"--flag\", 'two words', \"\"]\n"
      "      env: []\n"
      "    note: |\n"
      "      two\n"
      "      lines\n";
  const auto result = proxy_kubeconfig(raw, kProxy);
  ASSERT_TRUE(result.changed);
  EXPECT_EQ(result.document.find('#'), std::string::npos) << result.document;
  const YAML::Node document = YAML::Load(result.document);
  const YAML::Node cluster = document["clusters"][0]["cluster"];
  EXPECT_EQ(cluster["insecure-skip-tls-verify"].Tag(), "?");
  EXPECT_TRUE(cluster["insecure-skip-tls-verify"].as<bool>());
  EXPECT_EQ(cluster["tls-server-name"].Tag(), "!") << "a quoted \"true\" stays a string";
  EXPECT_EQ(cluster["tls-server-name"].Scalar(), "true");
  const YAML::Node extension = cluster["extensions"][0]["extension"];
  EXPECT_EQ(extension["port"].Tag(), "?");
  EXPECT_EQ(extension["port"].as<int>(), 6443);
  EXPECT_EQ(extension["ratio"].as<double>(), 0.5);
  EXPECT_EQ(extension["label"].Tag(), "!");
  EXPECT_EQ(extension["label"].Scalar(), "6443");
  EXPECT_TRUE(extension["none"].IsNull());
  EXPECT_EQ(extension["tagged"].Tag(), "tag:yaml.org,2002:str");
  EXPECT_EQ(extension["tagged"].Scalar(), "12");
  const YAML::Node user = document["users"][0]["user"];
  EXPECT_EQ(user["token"].Tag(), "!");
  EXPECT_EQ(user["token"].Scalar(), "0123456789");
  EXPECT_EQ(user["exec"]["args"].as<std::vector<std::string>>(),
            (std::vector<std::string>{"--flag", "two words", ""}));
  EXPECT_TRUE(user["exec"]["env"].IsSequence());
  EXPECT_EQ(user["exec"]["env"].size(), 0u);
  EXPECT_EQ(user["note"].Scalar(), "two\nlines\n");
}

TEST(ProxyKubeconfig, AKubeconfigWithoutClustersStaysAsItIs) {
  for (const std::string &raw : std::vector<std::string>{"apiVersion: v1\nkind: Config\n",
                                                         "clusters:\n", "clusters: []\n"}) {
    const auto result = proxy_kubeconfig(raw, kProxy);
    EXPECT_FALSE(result.changed) << raw;
    EXPECT_EQ(result.document, raw);
  }
}

TEST(ProxyKubeconfig, RefusesWhatIsNoKubeconfig) {
  EXPECT_EQ(refusal_of("clusters: [\n"),
            "the kubeconfig is not YAML: end of sequence flow not found (line 2, column 1)");
  EXPECT_EQ(refusal_of("apiVersion: v1\n\tkind: Config\n").rfind("the kubeconfig is not YAML: ", 0),
            0u);
  EXPECT_EQ(refusal_of("a: 1\n---\nb: 2\n"),
            "the kubeconfig holds 2 YAML documents; a kubeconfig is one");
  EXPECT_EQ(refusal_of(""), "the kubeconfig holds 0 YAML documents; a kubeconfig is one");
  EXPECT_EQ(refusal_of("- a\n- b\n"),
            "the kubeconfig is a list, not a mapping of clusters, contexts and users");
  EXPECT_EQ(refusal_of("just words\n"),
            "the kubeconfig is a scalar, not a mapping of clusters, contexts and users");
  EXPECT_EQ(refusal_of("clusters: {kind-lab: {server: https://127.0.0.1:1}}\n"),
            "the kubeconfig's clusters are a mapping, not a list");
}

TEST(ProxyKubeconfig, RefusesAClusterItCannotJudgeNamingIt) {
  EXPECT_EQ(refusal_of("clusters:\n- cluster:\n    certificate-authority-data: x\n  name: lab\n"),
            "cluster \"lab\" has no server");
  EXPECT_EQ(refusal_of("clusters:\n- cluster:\n    server:\n  name: lab\n"),
            "cluster \"lab\" has no server");
  EXPECT_EQ(refusal_of("clusters:\n- cluster:\n    server: {host: 127.0.0.1}\n  name: lab\n"),
            "cluster \"lab\": its server is a mapping, not a string");
  EXPECT_EQ(refusal_of("clusters:\n- cluster:\n    server: [a]\n  name: lab\n"),
            "cluster \"lab\": its server is a list, not a string");
  EXPECT_EQ(refusal_of("clusters:\n- cluster:\n    server: 6443\n  name: lab\n"),
            "cluster \"lab\": its server is \"6443\", which YAML reads as no string, not a string");
  EXPECT_EQ(refusal_of("clusters:\n- cluster:\n    server: true\n  name: lab\n"),
            "cluster \"lab\": its server is \"true\", which YAML reads as no string, not a string");
  EXPECT_EQ(refusal_of("clusters:\n- cluster:\n    server: https://:6443\n  name: lab\n"),
            "cluster \"lab\": its server \"https://:6443\" has no host");
  EXPECT_EQ(refusal_of("clusters:\n- cluster:\n    server: \"\"\n  name: lab\n"),
            "cluster \"lab\": its server \"\" has no host");
  EXPECT_EQ(refusal_of("clusters:\n- cluster:\n    server: https://[::1:6443\n  name: lab\n"),
            "cluster \"lab\": its server \"https://[::1:6443\" has an unclosed [");
  EXPECT_EQ(refusal_of("clusters:\n- name: lab\n"),
            "cluster \"lab\" has no cluster mapping (its cluster is missing)");
  EXPECT_EQ(refusal_of("clusters:\n- name: lab\n  cluster: https://127.0.0.1:1\n"),
            "cluster \"lab\" has no cluster mapping (its cluster is a scalar)");
  EXPECT_EQ(refusal_of("clusters:\n- cluster:\n    server: https://127.0.0.1:1\n- just-a-name\n"),
            "cluster #2 (without a name) is a scalar, not a mapping");
  EXPECT_EQ(refusal_of("clusters:\n- cluster: {}\n  name: \"lab\\e[2J\"\n"),
            "cluster \"lab\\x1b[2J\" has no server");
}

TEST(ProxyKubeconfig, RefusesAnEmptyProxy) {
  try {
    proxy_kubeconfig(kind_kubeconfig("https://127.0.0.1:1"), "");
    ADD_FAILURE() << "an empty proxy was taken";
  } catch (const std::invalid_argument &e) {
    EXPECT_STREQ(e.what(), "no proxy URL to set on the loopback clusters");
  }
}

}  // namespace
}  // namespace sandbox_host::kubeconfig
