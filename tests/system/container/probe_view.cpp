#include "probe_view.hpp"

#include <Poco/Exception.h>
#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

namespace sandbox_host::test::container {

std::optional<ProbeView> read_probe(const std::string &json) {
  try {
    auto object = Poco::JSON::Parser().parse(json).extract<Poco::JSON::Object::Ptr>();
    ProbeView view;
    if (object->has("chosen") && !object->isNull("chosen")) {
      view.chosen = object->getValue<std::string>("chosen");
    }
    if (auto gaps = object->getArray("gaps")) view.chosen_gaps = gaps->size();
    auto backends = object->getArray("backends");
    if (!backends) return std::nullopt;
    for (size_t i = 0; i < backends->size(); ++i) {
      auto backend = backends->getObject(static_cast<unsigned>(i));
      if (backend->getValue<std::string>("name") != "namespaces") continue;
      view.namespaces_available = backend->getValue<bool>("available");
      view.namespaces_reason = backend->getValue<std::string>("reason");
      view.namespaces_hint = backend->getValue<std::string>("hint");
    }
    return view;
  } catch (const Poco::Exception &) {
    return std::nullopt;
  }
}

}  // namespace sandbox_host::test::container
