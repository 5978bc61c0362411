#include <sandbox_host/host/spec_codec.hpp>

#include <boost/json.hpp>

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
  if (value == nullptr) throw std::invalid_argument(std::string("spec: missing field \"") + name + "\"");
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

}  // namespace

std::string encode_stage1_payload(const Stage1Payload &payload) {
  const Spec &spec = payload.spec;
  json::object object;
  object["backend"] = payload.backend;
  object["module"] = payload.module_file;
  object["plugin_name"] = spec.plugin_name;
  object["binary_path"] = spec.binary_path;
  object["socket_dir"] = spec.socket_dir;
  object["tmp_dir"] = spec.tmp_dir;
  object["network"] = to_string(spec.network);
  object["read_paths"] = to_array(spec.read_paths);
  object["args"] = to_array(spec.args);
  return json::serialize(object);
}

Stage1Payload decode_stage1_payload(std::string_view text) {
  boost::system::error_code error;
  json::value parsed = json::parse(text, error);
  if (error) throw std::invalid_argument("spec: not a JSON object: " + error.message());
  if (!parsed.is_object()) throw std::invalid_argument("spec: not a JSON object");
  const json::object &object = parsed.get_object();
  Stage1Payload payload;
  payload.backend = field(object, "backend");
  payload.module_file = field(object, "module");
  Spec &spec = payload.spec;
  spec.plugin_name = field(object, "plugin_name");
  spec.binary_path = field(object, "binary_path");
  spec.socket_dir = field(object, "socket_dir");
  spec.tmp_dir = field(object, "tmp_dir");
  std::string network = field(object, "network");
  auto parsed_network = parse_network(network);
  if (!parsed_network) throw std::invalid_argument("spec: unknown network \"" + network + "\"");
  spec.network = *parsed_network;
  spec.read_paths = list(object, "read_paths");
  spec.args = list(object, "args");
  return payload;
}

}  // namespace sandbox_host
