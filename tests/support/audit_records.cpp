#include "audit_records.hpp"

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <sstream>

namespace sandbox_host::test {

std::vector<AuditLine> audit_records(const std::string &audit, std::string_view rule_prefix) {
  std::vector<AuditLine> out;
  std::istringstream lines(audit);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    Poco::JSON::Parser parser;
    const auto object = parser.parse(line).extract<Poco::JSON::Object::Ptr>();
    AuditLine record{object->getValue<std::string>("component"),
                     object->getValue<std::string>("plugin"), object->getValue<std::string>("rule"),
                     object->getValue<std::string>("attempted"),
                     object->getValue<std::string>("hint")};
    if (record.rule.rfind(rule_prefix, 0) == 0) out.push_back(std::move(record));
  }
  return out;
}

unsigned long counted(const std::vector<AuditLine> &records) {
  unsigned long total = 0;
  for (const AuditLine &record : records) {
    if (record.attempted.find(" more refusals of this rule") != std::string::npos) {
      total += std::stoul(record.attempted);
    }
  }
  return total;
}

}  // namespace sandbox_host::test
