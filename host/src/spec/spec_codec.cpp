#include <sandbox_host/host/launcher/launch_request.hpp>
#include <sandbox_host/host/spec_codec.hpp>

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

void put_spec(json::object &object, const Spec &spec) {
  object["plugin_name"] = spec.plugin_name;
  object["binary_path"] = spec.binary_path;
  object["socket_dir"] = spec.socket_dir;
  object["tmp_dir"] = spec.tmp_dir;
  object["network"] = to_string(spec.network);
  object["read_paths"] = to_array(spec.read_paths);
  object["args"] = to_array(spec.args);
  object["proxy_socket"] = spec.proxy_socket;
  object["proxy_port"] = static_cast<std::int64_t>(spec.proxy_port);
  object["egress_dir"] = spec.egress_dir;
  json::array view;
  for (const auto &rule : spec.view) {
    view.emplace_back(json::object{{"path", rule.path}, {"access", to_string(rule.access)}});
  }
  object["view"] = std::move(view);
  const Limits &limits = spec.limits;
  object["limits"] =
      json::object{{"processes", limits.processes},   {"open_files", limits.open_files},
                   {"file_size", limits.file_size},   {"tmp_size", limits.tmp_size},
                   {"tmp_inodes", limits.tmp_inodes}, {"shm_size", limits.shm_size}};
}

Limits limits_field(const json::object &object) {
  const json::value *value = object.if_contains("limits");
  if (value == nullptr || !value->is_object()) {
    throw std::invalid_argument("spec: field \"limits\" is not an object");
  }
  const json::object &table = value->get_object();
  auto bound = [&table](const char *name) {
    const json::value *field = table.if_contains(name);
    if (field != nullptr && field->is_uint64()) return field->get_uint64();
    if (field != nullptr && field->is_int64() && field->get_int64() >= 0) {
      return static_cast<std::uint64_t>(field->get_int64());
    }
    throw std::invalid_argument(std::string("spec: limits.") + name +
                                " is not a count (0 to 18446744073709551615)");
  };
  return {bound("processes"), bound("open_files"), bound("file_size"),
          bound("tmp_size"),  bound("tmp_inodes"), bound("shm_size")};
}

std::vector<PathRule> view_field(const json::object &object) {
  const json::value *value = object.if_contains("view");
  if (value == nullptr || !value->is_array()) {
    throw std::invalid_argument("spec: field \"view\" is not an array");
  }
  std::vector<PathRule> view;
  const json::array &array = value->get_array();
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string where = "spec: view[" + std::to_string(i) + "]";
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
    view.push_back({std::string(path->get_string()), *parsed});
  }
  return view;
}

Network network_field(const json::object &object) {
  std::string network = field(object, "network");
  auto parsed = parse_network(network);
  if (!parsed) throw std::invalid_argument("spec: unknown network \"" + network + "\"");
  return *parsed;
}

std::uint16_t port_field(const json::object &object, const char *name) {
  const json::value *value = object.if_contains(name);
  if (value == nullptr || !value->is_int64() || value->get_int64() < 0 ||
      value->get_int64() > UINT16_MAX) {
    throw std::invalid_argument(std::string("spec: field \"") + name +
                                "\" is not a port (0 to 65535)");
  }
  return static_cast<std::uint16_t>(value->get_int64());
}

Spec get_spec(const json::object &object) {
  Spec spec;
  spec.plugin_name = field(object, "plugin_name");
  spec.binary_path = field(object, "binary_path");
  spec.socket_dir = field(object, "socket_dir");
  spec.tmp_dir = field(object, "tmp_dir");
  spec.network = network_field(object);
  spec.read_paths = list(object, "read_paths");
  spec.args = list(object, "args");
  spec.proxy_socket = field(object, "proxy_socket");
  spec.proxy_port = port_field(object, "proxy_port");
  spec.egress_dir = field(object, "egress_dir");
  spec.view = view_field(object);
  spec.limits = limits_field(object);
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
  return {field(object, "backend"), field(object, "module"), get_spec(object)};
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
  PreparedPayload payload{field(object, "backend"), field(object, "module"), network_field(object),
                          -1};
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
  object["env"] = to_array(message.env);
  return json::serialize(object);
}

LaunchMessage decode_launch_message(std::string_view text) {
  const json::object object = parse_object(text);
  LaunchMessage message{get_spec(object), list(object, "env")};
  for (const auto &entry : message.env) {
    if (entry.find('=') == std::string::npos || entry.front() == '=') {
      throw std::invalid_argument("spec: env entry \"" + entry + "\" is not NAME=VALUE");
    }
  }
  return message;
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
