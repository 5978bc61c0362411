/* The one description of a plugin launch (docs/design.md#the-spec). Everything that holds or
 * carries a Spec is made from these lists: the C struct sh_spec that crosses the module boundary
 * (abi.h), the C++ struct Spec (spec.hpp), the lending and reading of an sh_spec
 * (spec_abi.hpp) and the JSON that stage 1, a prepared sandbox and the launch service receive
 * (the host's spec_codec.cpp).
 *
 * Adding a field is one line here, at the end of its list, with the ABI minor it comes in,
 * plus that minor's bump in abi.h: the boundary only ever appends, and a reader built against
 * an older minor reads the fields its struct_size covers and leaves the rest at their
 * defaults. A field of a new kind also needs that kind's member type and conversions.
 *
 * X(kind, name, since): kind is STRING (sh_str / std::string), NETWORK (sh_str holding
 * "none", "outbound" or "proxied" / Network), STRINGS (sh_str_list / std::vector<std::string>),
 * PORT (uint32_t / std::uint16_t, 0 to 65535), VIEW (a pointer to sh_path_rule and name_count /
 * std::vector<PathRule>), LIMITS (sh_limits / Limits) or BYTES (uint64_t / std::uint64_t,
 * UINT64_MAX for no bound). Paths are absolute and symlink-resolved; a C++ field starts out
 * empty, none, 0, at Limits' defaults or, for BYTES, at no bound. */
#ifndef SANDBOX_HOST_SPEC_FIELDS_H
#define SANDBOX_HOST_SPEC_FIELDS_H

#define SH_SPEC_FIELDS(X)                                                                      \
  X(STRING, plugin_name, 0) /* for error text only */                                          \
  X(STRING, binary_path, 0)                                                                    \
  X(STRING, socket_dir, 0)  /* read-write at the same absolute path inside the sandbox */      \
  X(STRING, tmp_dir, 0)     /* private scratch space; HOME and TMPDIR point here */            \
  X(NETWORK, network, 0)    /* "proxied" since 1.3 */                                          \
  X(STRINGS, read_paths, 0) /* extra recursive read-only grants */                             \
  X(STRINGS, args, 0)       /* the plugin's arguments after the binary */                      \
  /* For network "proxied" only, empty and 0 otherwise: the egress proxy's unix socket on the  \
   * host, which the sandbox relays 127.0.0.1:proxy_port to, and the egress directory (the     \
   * proxy's CA bundle), bound read-only where it exists; "" for none. */                      \
  X(STRING, proxy_socket, 3)                                                                   \
  X(STRING, egress_dir, 3)                                                                     \
  X(PORT, proxy_port, 3)                                                                       \
  /* Empty for a plugin: the deny-by-default tree. Otherwise the view of an agent policy       \
   * (docs/agent-policy.md, sandbox-host run --policy): the host's whole file system readable, \
   * each rule's path and everything below it at the rule's access, the rule with the          \
   * longest path winning. read_paths, the binary, socket_dir and tmp_dir keep their grants    \
   * on top of it. A backend that cannot hold a launch to every rule refuses the Spec; the     \
   * host refuses a view to a backend built against an older minor, which would not see it. */ \
  X(VIEW, view, 4)                                                                             \
  /* What the launch may consume; the host sets it from its config ([limits]) for every        \
   * launch, and audits one on a backend built against an older minor as unbounded. */         \
  X(LIMITS, limits, 6)                                                                         \
  /* The plugin's whole environment, "NAME=VALUE": BaseEnv, the backend's variables and those  \
   * its caller named, composed by the host (a Spec given to the host must leave it empty).    \
   * A backend passes it to the plugin's own execve and to nothing else: stage 1 and the       \
   * sandbox's init run with the environment sandbox-host chose, so that neither the dynamic   \
   * loader nor libc of a host process reads a variable a caller or a plugin named. A backend  \
   * built against an older minor, which execs with environ, gets it as its environment just   \
   * before its stage1 is called. */                                                           \
  X(STRINGS, env, 10)                                                                          \
  /* [limits] memory where the launch has no cgroup that bounds memory, else UINT64_MAX: the   \
   * backend sets it as the plugin's RLIMIT_DATA with the rlimits of limits, a bound on each   \
   * process's private writable memory (docs/security-model.md says what it leaves out). */    \
  X(BYTES, process_memory, 11)

/* X(name, default): one bound of Limits, in the order of sh_limits. UINT64_MAX leaves the
 * bound off; a backend enforces the others before the exec, as far as it can
 * (docs/security-model.md says which hold where). Core dumps are always off and have no
 * field. */
#define SH_LIMITS_FIELDS(X)                                                    \
  X(processes, 1024)        /* processes and threads (RLIMIT_NPROC) */         \
  X(open_files, 4096)       /* descriptors (RLIMIT_NOFILE) */                  \
  X(file_size, 4ULL << 30)  /* bytes of one file written (RLIMIT_FSIZE) */     \
  X(tmp_size, 512ULL << 20) /* bytes in the sandbox's /tmp (a tmpfs) */        \
  X(tmp_inodes, 65536)      /* files in the sandbox's /tmp, and in /dev/shm */ \
  X(shm_size, 64ULL << 20)  /* bytes in the sandbox's /dev/shm (a tmpfs) */

#endif
