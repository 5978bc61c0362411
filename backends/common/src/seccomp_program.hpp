// The filters, compiled to BPF at build time for the architecture of the build.
#pragma once

#include <linux/filter.h>

namespace sandbox_host::backends {

extern const sock_filter kDefaultSeccompProgram[];
extern const unsigned short kDefaultSeccompProgramLength;
extern const sock_filter kUnixSocketsOnlySeccompProgram[];
extern const unsigned short kUnixSocketsOnlySeccompProgramLength;

}  // namespace sandbox_host::backends
