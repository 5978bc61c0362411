#include "audit_config.hpp"

#include "schema_key.hpp"

namespace sandbox_host {
namespace {

void read_format(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                 const ConfigKeyDoc &, Config &config) {
  std::string format = r.string(node, dotted, "\"text\" or \"json\"");
  if (format == "text") {
    config.audit_format = AuditFormat::text;
  } else if (format == "json") {
    config.audit_format = AuditFormat::json;
  } else {
    r.fail(node.source(), dotted,
           "\"" + format + "\" is not a format; allowed: \"text\", \"json\"");
  }
}

void read_path(const ConfigReader &r, const toml::node &node, const std::string &dotted,
               const ConfigKeyDoc &, Config &config) {
  config.audit_path = r.string(node, dotted, "\"stderr\" or an absolute path");
  if (config.audit_path != "stderr" &&
      (config.audit_path.empty() || config.audit_path.front() != '/')) {
    r.fail(node.source(), dotted,
           "\"" + config.audit_path + "\" is neither \"stderr\" nor an absolute path");
  }
}

constexpr SchemaKey<Config> kAuditKeys[] = {
    {{"format", "string", "\"text\"", std::nullopt, "\"text\" or \"json\""}, &read_format},
    {{"path", "string", "\"stderr\"", std::nullopt,
      "\"stderr\" or an absolute path, opened for appending"},
     &read_path},
};

}  // namespace

void read_audit(const ConfigReader &r, const toml::table &t, Config &config) {
  read_keys(r, t, "audit", kAuditKeys, config);
}

ConfigTableDoc audit_schema() {
  return {"audit", key_docs(kAuditKeys)};
}

}  // namespace sandbox_host
