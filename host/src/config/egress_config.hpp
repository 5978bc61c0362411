// The [egress] table's schema. Addresses, blocks and host names are read by the egress
// proxy's own parsers, so what the config accepts is what the proxy enforces.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/config_schema.hpp>

#include <toml++/toml.h>

namespace sandbox_host {

void read_egress(const ConfigReader &r, const toml::table &t, EgressConfig &egress);
ConfigTableDoc egress_schema();

// "<loopback address>:<port>" (egress::LoopbackEndpoint), or "" for none (nullopt); a
// refusal shows example_port in what is allowed. egress.listen and metrics.listen.
std::optional<egress::LoopbackEndpoint> read_loopback_listen(const ConfigReader &r,
                                                             const toml::node &node,
                                                             const std::string &key,
                                                             std::uint16_t example_port);

// egress.socket's default, <broker.state_dir>/egress.sock, once the whole file is read.
void default_egress_socket(const ConfigReader &r, const toml::table &root, Config &config);

}  // namespace sandbox_host
