// Network `none`: the sandbox's own network namespace, with only `lo`, brought up.
#pragma once

namespace sandbox_host::namespaces {

void bring_up_loopback();

}  // namespace sandbox_host::namespaces
