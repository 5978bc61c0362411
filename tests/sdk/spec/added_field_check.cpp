// Built by spec_schema_test.py against a copy of the SDK whose spec_fields.h has one more
// line, X(STRING, added_by_the_test, 10), and nothing else changed: the field exists in Spec
// and sh_spec and travels through the JSON codec and the module boundary like the others.
#include <sandbox_host/host/launch_client/spec_codec.hpp>
#include <sandbox_host/spec_abi.hpp>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

namespace {

int failures = 0;

void expect(bool ok, const std::string &what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL: %s\n", what.c_str());
    ++failures;
  }
}

std::string error_of(const std::string &json) {
  try {
    sandbox_host::decode_stage1_payload(json);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}

}  // namespace

int main() {
  using namespace sandbox_host;
  Spec spec;
  spec.plugin_name = "p";
  spec.binary_path = "/b";
  spec.socket_dir = "/s";
  spec.tmp_dir = "/t";
  spec.added_by_the_test = "the new value";
  spec.limits.processes = 7;

  const std::string json = encode_stage1_payload({"off", "/m.so", spec});
  expect(json.find(R"("added_by_the_test":"the new value")") != std::string::npos,
         "the JSON carries the field: " + json);
  const Spec decoded = decode_stage1_payload(json).spec;
  expect(decoded.added_by_the_test == "the new value", "the JSON round trip keeps the field");
  expect(decoded.limits.processes == 7, "the JSON round trip keeps the fields before it");

  const std::string field = R"(,"added_by_the_test":"the new value")";
  std::string without = json;
  without.erase(without.find(field), field.size());
  expect(error_of(without) == R"(spec: missing field "added_by_the_test")",
         "a JSON without the field is refused by name: " + error_of(without));

  const SpecAbiView view(spec);
  expect(from_abi(*view.get()).added_by_the_test == "the new value",
         "the module boundary carries the field");
  sh_spec older = *view.get();
  older.struct_size = offsetof(sh_spec, added_by_the_test);
  const Spec from_older = from_abi(older);
  expect(from_older.added_by_the_test.empty(),
         "a struct from an older minor leaves the field at its default");
  expect(from_older.limits.processes == 7, "and keeps the fields it has");
  expect(spec_since::added_by_the_test == 10, "the field's minor is the one the schema gives");
  static_assert(offsetof(sh_spec, added_by_the_test) > offsetof(sh_spec, limits),
                "a new field is appended to sh_spec");
  return failures == 0 ? 0 : 1;
}
