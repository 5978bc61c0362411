#include <sandbox_host/host/spec_codec.hpp>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <sstream>
#include <stdexcept>

namespace sandbox_host {
namespace {

Poco::JSON::Array::Ptr to_array(const std::vector<std::string> &items) {
  Poco::JSON::Array::Ptr array = new Poco::JSON::Array;
  for (const auto &item : items) array->add(item);
  return array;
}

std::string field(const Poco::JSON::Object &object, const std::string &name) {
  if (!object.has(name)) throw std::invalid_argument("spec: missing field \"" + name + "\"");
  auto value = object.get(name);
  if (!value.isString())
    throw std::invalid_argument("spec: field \"" + name + "\" is not a string");
  return value.extract<std::string>();
}

std::vector<std::string> list(const Poco::JSON::Object &object, const std::string &name) {
  auto array = object.getArray(name);
  if (!array) throw std::invalid_argument("spec: field \"" + name + "\" is not an array");
  std::vector<std::string> out;
  for (size_t i = 0; i < array->size(); ++i) {
    auto value = array->get(static_cast<unsigned>(i));
    if (!value.isString()) {
      throw std::invalid_argument("spec: " + name + "[" + std::to_string(i) + "] is not a string");
    }
    out.push_back(value.extract<std::string>());
  }
  return out;
}

}  // namespace

std::string encode_stage1_payload(const Stage1Payload &payload) {
  const Spec &spec = payload.spec;
  Poco::JSON::Object object;
  object.set("backend", payload.backend);
  object.set("module", payload.module_file);
  object.set("plugin_name", spec.plugin_name);
  object.set("binary_path", spec.binary_path);
  object.set("socket_dir", spec.socket_dir);
  object.set("tmp_dir", spec.tmp_dir);
  object.set("network", std::string(to_string(spec.network)));
  object.set("read_paths", to_array(spec.read_paths));
  object.set("args", to_array(spec.args));
  std::ostringstream out;
  object.stringify(out);
  return out.str();
}

Stage1Payload decode_stage1_payload(std::string_view json) {
  Poco::JSON::Object::Ptr object;
  try {
    object = Poco::JSON::Parser().parse(std::string(json)).extract<Poco::JSON::Object::Ptr>();
  } catch (const Poco::Exception &e) {
    throw std::invalid_argument("spec: not a JSON object: " + e.displayText());
  }
  if (!object) throw std::invalid_argument("spec: not a JSON object");
  Stage1Payload payload;
  payload.backend = field(*object, "backend");
  payload.module_file = field(*object, "module");
  Spec &spec = payload.spec;
  spec.plugin_name = field(*object, "plugin_name");
  spec.binary_path = field(*object, "binary_path");
  spec.socket_dir = field(*object, "socket_dir");
  spec.tmp_dir = field(*object, "tmp_dir");
  std::string network = field(*object, "network");
  auto parsed = parse_network(network);
  if (!parsed) throw std::invalid_argument("spec: unknown network \"" + network + "\"");
  spec.network = *parsed;
  spec.read_paths = list(*object, "read_paths");
  spec.args = list(*object, "args");
  return payload;
}

}  // namespace sandbox_host
