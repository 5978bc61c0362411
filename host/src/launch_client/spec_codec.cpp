#include <sandbox_host/host/launch_client/launch_request.hpp>
#include <sandbox_host/host/launch_client/spec_codec.hpp>

#include <boost/json.hpp>

#include <climits>
#include <cstdint>
#include <optional>
#include <stdexcept>

namespace sandbox_host {
namespace json = boost::json;
namespace {

json::array to_array(const std::vector<std::string> &items) {
  json::array array;
  for (const auto &item : items) array.emplace_back(item);
  return array;
}

std::string field(const json::object &object, const char *name) {
  const json::value *value = object.if_contains(name);
  if (value == nullptr)
    throw std::invalid_argument(std::string("spec: missing field \"") + name + "\"");
  if (!value->is_string()) {
    throw std::invalid_argument(std::string("spec: field \"") + name + "\" is not a string");
  }
  return std::string(value->get_string());
}

std::vector<std::string> list(const json::object &object, const char *name) {
  const json::value *value = object.if_contains(name);
  if (value == nullptr || !value->is_array()) {
    throw std::invalid_argument(std::string("spec: field \"") + name + "\" is not an array");
  }
  std::vector<std::string> out;
  const json::array &array = value->get_array();
  for (size_t i = 0; i < array.size(); ++i) {
    if (!array[i].is_string()) {
      throw std::invalid_argument("spec: " + std::string(name) + "[" + std::to_string(i) +
                                  "] is not a string");
    }
    out.emplace_back(array[i].get_string());
  }
  return out;
}

// One conversion per type of field; put_spec and get_spec walk Spec's fields (spec_fields.h).
json::value to_json(const std::string &value) {
  return json::value(value);
}
json::value to_json(Network value) {
  return json::value(to_string(value));
}
json::value to_json(const std::vector<std::string> &values) {
  return to_array(values);
}
json::value to_json(std::uint16_t value) {
  return json::value(static_cast<std::int64_t>(value));
}

json::value to_json(std::uint64_t value) {
  return json::value(value);
}

json::value to_json(const std::vector<PathRule> &rules) {
  json::array array;
  for (const auto &rule : rules) {
    array.emplace_back(json::object{{"path", rule.path}, {"access", to_string(rule.access)}});
  }
  return array;
}

json::value to_json(const Limits &limits) {
  json::object object;
  for_each_limit([&](const char *name, auto member) { object[name] = limits.*member; });
  return object;
}

void from_json(const json::object &object, const char *name, std::string &out) {
  out = field(object, name);
}

void from_json(const json::object &object, const char *name, std::vector<std::string> &out) {
  out = list(object, name);
}

void from_json(const json::object &object, const char *name, Network &out) {
  out = parse_network_or_throw(field(object, name), "spec");
}

void from_json(const json::object &object, const char *name, std::uint16_t &out) {
  const json::value *value = object.if_contains(name);
  if (value == nullptr || !value->is_int64() || value->get_int64() < 0 ||
      value->get_int64() > UINT16_MAX) {
    throw std::invalid_argument(std::string("spec: field \"") + name +
                                "\" is not a port (0 to 65535)");
  }
  out = static_cast<std::uint16_t>(value->get_int64());
}

void from_json(const json::object &object, const char *name, std::vector<PathRule> &out) {
  const json::value *value = object.if_contains(name);
  if (value == nullptr || !value->is_array()) {
    throw std::invalid_argument(std::string("spec: field \"") + name + "\" is not an array");
  }
  out.clear();
  const json::array &array = value->get_array();
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string where = "spec: " + std::string(name) + "[" + std::to_string(i) + "]";
    if (!array[i].is_object()) throw std::invalid_argument(where + " is not an object");
    const json::object &rule = array[i].get_object();
    const json::value *path = rule.if_contains("path");
    const json::value *access = rule.if_contains("access");
    if (path == nullptr || !path->is_string()) {
      throw std::invalid_argument(where + ".path is not a string");
    }
    std::optional<PathAccess> parsed;
    if (access != nullptr && access->is_string()) parsed = parse_path_access(access->get_string());
    if (!parsed) throw std::invalid_argument(where + ".access is not none, read or write");
    out.push_back({std::string(path->get_string()), *parsed});
  }
}

// A bound: a JSON integer from 0 to UINT64_MAX (the bound's absence).
std::uint64_t count(const json::value *value, const std::string &what) {
  if (value != nullptr && value->is_uint64()) return value->get_uint64();
  if (value != nullptr && value->is_int64() && value->get_int64() >= 0) {
    return static_cast<std::uint64_t>(value->get_int64());
  }
  throw std::invalid_argument("spec: " + what + " is not a count (0 to 18446744073709551615)");
}

void from_json(const json::object &object, const char *name, Limits &out) {
  const json::value *value = object.if_contains(name);
  if (value == nullptr || !value->is_object()) {
    throw std::invalid_argument(std::string("spec: field \"") + name + "\" is not an object");
  }
  const json::object &table = value->get_object();
  for_each_limit([&](const char *bound, auto member) {
    out.*member = count(table.if_contains(bound), std::string(name) + "." + bound);
  });
}

void from_json(const json::object &object, const char *name, std::uint64_t &out) {
  out = count(object.if_contains(name), std::string("field \"") + name + "\"");
}

void put_spec(json::object &object, const Spec &spec) {
  for_each_spec_field([&](const char *name, auto member) { object[name] = to_json(spec.*member); });
}

Spec get_spec(const json::object &object) {
  Spec spec;
  for_each_spec_field(
      [&](const char *name, auto member) { from_json(object, name, spec.*member); });
  return spec;
}

// A Spec that stage 1 or a prepared sandbox receives: its env entries are each NAME=VALUE.
Spec get_spec_with_env(const json::object &object) {
  Spec spec = get_spec(object);
  for (const auto &entry : spec.env) {
    if (entry.find('=') == std::string::npos || entry.front() == '=') {
      throw std::invalid_argument("spec: env entry \"" + entry + "\" is not NAME=VALUE");
    }
  }
  return spec;
}

json::object parse_object(std::string_view text) {
  boost::system::error_code error;
  json::value parsed = json::parse(text, error);
  if (error) throw std::invalid_argument("spec: not a JSON object: " + error.message());
  if (!parsed.is_object()) throw std::invalid_argument("spec: not a JSON object");
  return std::move(parsed.get_object());
}

}  // namespace

std::string encode_stage1_payload(const Stage1Payload &payload) {
  json::object object;
  object["backend"] = payload.backend;
  object["module"] = payload.module_file;
  put_spec(object, payload.spec);
  return json::serialize(object);
}

Stage1Payload decode_stage1_payload(std::string_view text) {
  const json::object object = parse_object(text);
  return {field(object, "backend"), field(object, "module"), get_spec_with_env(object)};
}

std::string encode_prepared_payload(const PreparedPayload &payload) {
  json::object object;
  object["backend"] = payload.backend;
  object["module"] = payload.module_file;
  object["network"] = to_string(payload.network);
  object["control_fd"] = payload.control_fd;
  return json::serialize(object);
}

PreparedPayload decode_prepared_payload(std::string_view text) {
  const json::object object = parse_object(text);
  PreparedPayload payload{field(object, "backend"), field(object, "module"), Network::none, -1};
  from_json(object, "network", payload.network);
  const json::value *fd = object.if_contains("control_fd");
  if (fd == nullptr || !fd->is_int64() || fd->get_int64() < 3 || fd->get_int64() > INT32_MAX) {
    throw std::invalid_argument("spec: field \"control_fd\" is not a descriptor above 2");
  }
  payload.control_fd = static_cast<int>(fd->get_int64());
  return payload;
}

std::string encode_launch_message(const LaunchMessage &message) {
  json::object object;
  put_spec(object, message.spec);
  return json::serialize(object);
}

LaunchMessage decode_launch_message(std::string_view text) {
  const json::object object = parse_object(text);
  return {get_spec_with_env(object)};
}

std::string encode_launch_request(const LaunchRequest &request) {
  json::object object;
  json::object spec;
  put_spec(spec, request.spec);
  object["spec"] = std::move(spec);
  object["network_given"] = request.network_given;
  object["backend"] = request.backend ? json::value(*request.backend) : json::value(nullptr);
  object["env"] = to_array(request.env.entries);
  object["handshake"] =
      request.env.handshake ? json::value(*request.env.handshake) : json::value(nullptr);
  object["caller_env"] = to_array(request.caller_env);
  return json::serialize(object);
}

namespace {

std::optional<std::string> optional_field(const json::object &object, const char *name) {
  const json::value *value = object.if_contains(name);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_string()) {
    throw std::invalid_argument(std::string("request: field \"") + name +
                                "\" is neither a string nor null");
  }
  return std::string(value->get_string());
}

}  // namespace

LaunchRequest decode_launch_request(std::string_view text) {
  const json::object object = parse_object(text);
  const json::value *spec = object.if_contains("spec");
  if (spec == nullptr || !spec->is_object()) {
    throw std::invalid_argument("request: field \"spec\" is not an object");
  }
  const json::value *given = object.if_contains("network_given");
  if (given == nullptr || !given->is_bool()) {
    throw std::invalid_argument("request: field \"network_given\" is not a boolean");
  }
  LaunchRequest request;
  request.spec = get_spec(spec->get_object());
  request.network_given = given->get_bool();
  request.backend = optional_field(object, "backend");
  request.env.entries = list(object, "env");
  request.env.handshake = optional_field(object, "handshake");
  request.caller_env = list(object, "caller_env");
  return request;
}

}  // namespace sandbox_host
