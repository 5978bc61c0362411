#include "commands.hpp"

#include <sandbox_host/host/host.hpp>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>

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
  const auto modules = host.registry().modules();
  const auto failures = host.registry().failures();
  if (options.json) {
    Poco::JSON::Object out;
    Poco::JSON::Array::Ptr loaded = new Poco::JSON::Array, refused = new Poco::JSON::Array;
    for (const auto &m : modules) {
      Poco::JSON::Object::Ptr o = new Poco::JSON::Object;
      o->set("kind", std::string(to_string(m->kind())));
      o->set("name", m->name());
      o->set("version", m->version());
      o->set("abi", abi_text(m->abi()));
      o->set("file", m->file().string());
      o->set("summary", m->summary());
      loaded->add(o);
    }
    for (const auto &f : failures) {
      Poco::JSON::Object::Ptr o = new Poco::JSON::Object;
      o->set("kind", std::string(to_string(f.kind)));
      o->set("name", f.name);
      o->set("error", f.error);
      refused->add(o);
    }
    out.set("host_abi", abi_text(kHostAbi));
    out.set("module_dirs", [&] {
      Poco::JSON::Array::Ptr dirs = new Poco::JSON::Array;
      for (const auto &d : host.registry().module_dirs()) dirs->add(d.string());
      return dirs;
    }());
    out.set("loaded", loaded);
    out.set("failed", refused);
    out.stringify(std::cout, 2);
    std::cout << "\n";
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
