// [metrics] scrapers: the users besides serve's own that may scrape the endpoint, resolved
// to uids when the config is loaded (docs/config.md, docs/security-model.md).
#pragma once

#include "config_reader.hpp"

#include <sys/types.h>

#include <toml++/toml.h>

#include <string>
#include <vector>

namespace sandbox_host {

// Each entry of the array at node is a user name (looked up with getpwnam_r now, so that a
// user removed later keeps the uid it had) or a uid, as a TOML integer or a string of
// digits. Refused, naming key[i]: a user not in the password database, a negative or
// out-of-range uid, a uid listed twice, serve's own uid (served without listing), and root
// when serve is not root: an unprivileged serve trusts a listed uid by uid alone, which
// holds only for a uid that no sandbox of any host on the machine keeps (a root host's
// sandboxes run as root).
std::vector<uid_t> read_scrapers(const ConfigReader &r, const toml::node &node,
                                 const std::string &key, uid_t serve_uid);

}  // namespace sandbox_host
