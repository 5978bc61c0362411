// The filters, compiled to BPF at build time for the architecture of the build.
#pragma once

#include <linux/filter.h>

namespace sandbox_host::backends {

extern const sock_filter kDefaultSeccompProgram[];
extern const unsigned short kDefaultSeccompProgramLength;
extern const sock_filter kNoSharedIpcSeccompProgram[];
extern const unsigned short kNoSharedIpcSeccompProgramLength;
extern const sock_filter kNoSharedIpcUnixSocketsOnlySeccompProgram[];
extern const unsigned short kNoSharedIpcUnixSocketsOnlySeccompProgramLength;

}  // namespace sandbox_host::backends
