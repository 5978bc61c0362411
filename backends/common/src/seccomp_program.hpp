// The filters, compiled to BPF at build time for the architecture of the build
// (tools/seccomp_bpf_generator.cpp).
#pragma once

#include <linux/filter.h>

namespace sandbox_host::backends {

// [Namespaces][Verdicts]: which namespaces the filter stands in for (hardening.hpp), and how
// it answers a refusal (seccomp_rules.hpp), in the order of their enums.
extern const sock_fprog kSeccompPrograms[3][3];

}  // namespace sandbox_host::backends
