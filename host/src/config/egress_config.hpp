// The [egress] table's schema. Addresses, blocks and host names are read by the egress
// proxy's own parsers, so what the config accepts is what the proxy enforces.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>

#include <toml++/toml.h>

namespace sandbox_host {

void read_egress(const ConfigReader &r, const toml::table &t, EgressConfig &egress);

// egress.socket's default, <broker.state_dir>/egress.sock, once the whole file is read.
void default_egress_socket(const ConfigReader &r, const toml::table &root, Config &config);

}  // namespace sandbox_host
