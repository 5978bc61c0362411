#include "commands.hpp"

#include <sandbox_host/host/host.hpp>

#include <boost/json.hpp>

#include <iomanip>
#include <iostream>
#include <memory>

namespace sandbox_host::cli {
namespace {

struct ModulesOptions {
  std::optional<std::string> config;
  bool json = false;
};

std::string abi_text(AbiVersion v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

int run_modules(const ModulesOptions &options) {
  Host host(load_config_or_defaults(options.config));
  host.load_enabled();
  const auto modules = host.registry().modules();
  const auto failures = host.registry().failures();
  if (options.json) {
    boost::json::array loaded, refused, dirs;
    for (const auto &m : modules) {
      loaded.push_back(boost::json::object{{"kind", to_string(m->kind())},
                                           {"name", m->name()},
                                           {"version", m->version()},
                                           {"abi", abi_text(m->abi())},
                                           {"file", m->file().string()},
                                           {"summary", m->summary()}});
    }
    for (const auto &f : failures) {
      refused.push_back(
          boost::json::object{{"kind", to_string(f.kind)}, {"name", f.name}, {"error", f.error}});
    }
    for (const auto &d : host.registry().module_dirs()) dirs.emplace_back(d.string());
    boost::json::object out{{"host_abi", abi_text(kHostAbi)},
                            {"module_dirs", std::move(dirs)},
                            {"loaded", std::move(loaded)},
                            {"failed", std::move(refused)}};
    std::cout << boost::json::serialize(out) << "\n";
    return 0;
  }
  std::cout << "host module ABI " << abi_text(kHostAbi) << "; module directories:";
  for (const auto &d : host.registry().module_dirs()) std::cout << " " << d.string();
  std::cout << "\n"
            << std::left << std::setw(9) << "KIND" << std::setw(12) << "NAME" << std::setw(10)
            << "VERSION" << std::setw(6) << "ABI"
            << "FILE\n";
  for (const auto &m : modules) {
    std::cout << std::setw(9) << to_string(m->kind()) << std::setw(12) << m->name() << std::setw(10)
              << m->version() << std::setw(6) << abi_text(m->abi()) << m->file().string() << "\n";
  }
  for (const auto &f : failures) {
    std::cout << std::setw(9) << to_string(f.kind) << std::setw(12) << f.name
              << "not loaded: " << f.error << "\n";
  }
  return 0;
}

}  // namespace

Command add_modules_command(CLI::App &app) {
  auto options = std::make_shared<ModulesOptions>();
  auto *sub = app.add_subcommand("modules", "List the modules the config enables, loaded or not");
  sub->add_option("--config", options->config, "Config file");
  sub->add_flag("--json", options->json, "Print JSON instead of text");
  return {sub, [options] { return run_modules(*options); }};
}

}  // namespace sandbox_host::cli
