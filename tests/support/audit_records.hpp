// The records of sandbox-host's audit in JSON (`[audit] format = "json"`), as a test reads
// them: with Poco, another implementation than the one that wrote them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::test {

struct AuditLine {
  std::string component, plugin, rule, attempted, hint;
};

// The records of audit (one JSON object a line) whose rule begins with rule_prefix
// ("seccomp: ", "landlock: "), in their order.
std::vector<AuditLine> audit_records(const std::string &audit, std::string_view rule_prefix);

// "N more refusals of this rule ..." of the audit's count records, summed; 0 where none.
unsigned long counted(const std::vector<AuditLine> &records);

}  // namespace sandbox_host::test
