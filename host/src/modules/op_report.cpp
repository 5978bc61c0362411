#include <sandbox_host/host/op_report.hpp>
#include <sandbox_host/strings.hpp>

#include <cstddef>
#include <sstream>

namespace sandbox_host {

OpReport op_report(const LoadedModule &op) {
  const auto *table = static_cast<const sh_broker_op_v1 *>(op.table());
  OpReport out;
  if (table->struct_size < offsetof(sh_broker_op_v1, report) + sizeof table->report ||
      table->report == nullptr) {
    return out;
  }
  StringSink lines, error;
  if (table->report(op.instance(), lines.writer(), error.writer()) != SH_OK) {
    out.error = error.text().empty() ? "its report failed without a reason" : error.text();
    return out;
  }
  std::istringstream in(lines.text());
  for (std::string line; std::getline(in, line);) {
    const std::size_t tab = line.find('\t');
    if (tab == 0 || tab == std::string::npos) {
      return {{}, "its report has a line that is not \"<key>\\t<value>\": \"" + line + "\""};
    }
    out.facts.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  return out;
}

}  // namespace sandbox_host
