#include <sandbox_host/host/launcher/launch_plan.hpp>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace sandbox_host {
namespace fs = std::filesystem;

PrivateDir::PrivateDir() {
  const char *base = ::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && base[0] == '/' ? base : "/tmp") + "/sandbox-host-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "create " + pattern);
  }
  path_ = fs::canonical(pattern);
}

PrivateDir::~PrivateDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

LaunchPlan plan_launch(Host &host, LaunchRequest request) {
  LaunchPlan plan;
  plan.spec = std::move(request.spec);
  Spec &spec = plan.spec;
  if (spec.binary_path.empty()) throw std::invalid_argument("launch: no plugin binary named");
  if (spec.plugin_name.empty()) spec.plugin_name = fs::path(spec.binary_path).filename().string();
  const Config &config = host.config();
  const PluginConfig plugin = config.plugin(spec.plugin_name);
  if (!request.network_given) spec.network = plugin.network.value_or(Network::none);
  if (spec.network == Network::proxied) {
    if (!config.egress) {
      throw std::runtime_error("network proxied goes through the egress proxy, and " +
                               (config.source.empty() ? std::string("the built-in defaults have")
                                                      : config.source + " has") +
                               " no [egress] table to say where it listens");
    }
    route_spec(spec, host.egress()->route());
  }
  // The config's grants first, then the caller's.
  std::vector<std::string> read;
  for (const auto &path : plugin.read) {
    std::error_code ec;
    const fs::path canonical = fs::canonical(path, ec);
    if (ec) throw std::runtime_error("read path " + path + ": " + ec.message());
    read.push_back(canonical.string());
  }
  read.insert(read.end(), spec.read_paths.begin(), spec.read_paths.end());
  spec.read_paths = std::move(read);

  PluginEnvRequest env{plugin.env, plugin.handshake};
  env.entries.insert(env.entries.end(), request.env.entries.begin(), request.env.entries.end());
  if (request.env.handshake) env.handshake = request.env.handshake;
  plan.plugin_env = plugin_env(env, request.caller_env);

  if (spec.socket_dir.empty()) {
    plan.private_socket_dir = std::make_unique<PrivateDir>();
    spec.socket_dir = plan.private_socket_dir->path().string();
  }
  if (spec.tmp_dir.empty()) {
    if (plan.private_socket_dir) {
      fs::create_directory(plan.private_socket_dir->path() / "tmp");
      spec.tmp_dir = (plan.private_socket_dir->path() / "tmp").string();
    } else {
      plan.private_tmp_dir = std::make_unique<PrivateDir>();
      spec.tmp_dir = plan.private_tmp_dir->path().string();
    }
  }
  plan.mode = host.mode_for(spec.plugin_name, request.backend);
  return plan;
}

}  // namespace sandbox_host
