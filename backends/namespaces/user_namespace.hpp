// The user namespace and its siblings: one unshare, then the caller's uid and gid mapped to
// themselves, with setgroups denied.
#pragma once

#include <sys/types.h>

namespace sandbox_host::namespaces {

// unshare(CLONE_NEWUSER | more_flags) and map uid -> uid, gid -> gid.
void enter_user_namespace(int more_flags, uid_t uid, gid_t gid);

}  // namespace sandbox_host::namespaces
