// What holds a command to an agent policy's view (Spec::view) under Landlock. Landlock only
// grants, each grant to a whole hierarchy, and cannot take a right away below one, so "the
// longest rule wins" becomes grants by complement: a path whose subtree holds a rule of less
// access is not granted itself, its entries are, one by one, apart from the way to that rule.
// The entries are those that exist when stage 1 walks the host's file system.
#pragma once

#include "landlock_abi.hpp"
#include "landlock_policy.hpp"

#include <sandbox_host/spec.hpp>

#include <string>
#include <vector>

namespace sandbox_host::landlock {

// The view's grants: the whole file system readable apart from /proc and /dev (the system's
// grants hold what a command needs there, and all of /proc would show every other process),
// each rule's path and everything below it at its access. read is execute, read file and
// read directory; write is every right of rights.fs. A path on the way to a rule of less
// access gets no grant (it cannot be listed, nor its entries created, removed or renamed);
// its entries are granted, symlinks apart (a grant follows nothing: the target answers for
// itself). Entries of a directory that cannot be listed are left out. Grants are made with
// Ruleset::allow_exact_if_present.
std::vector<Grant> view_grants(const std::vector<PathRule> &view, const AbiRights &rights);

// The access the view gives path (absolute, resolved): its longest rule's, with /proc and
// /dev none and the rest of the file system read.
PathAccess view_access(const std::vector<PathRule> &view, const std::string &path);

}  // namespace sandbox_host::landlock
