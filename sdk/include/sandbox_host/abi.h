/* The module boundary of sandbox-host: plain C, so a module built by another compiler or
 * another standard library still talks to the host.
 *
 * Rules of the boundary:
 * - Strings cross as pointer + length (sh_str) and are only borrowed for the call.
 * - What a module hands back (messages, probe reports, command lines) it writes through
 *   host-provided sinks; the host copies, so no memory changes owner across the boundary.
 * - Every function in a table is noexcept: the SDK's C++ adapters catch everything.
 * - Every struct starts with struct_size. A minor ABI version may only append fields and
 *   table entries; readers check struct_size before touching an appended field.
 * - The entry symbol's name carries the ABI version (sandbox_host_module_v<major>_<minor>),
 *   so the host can read it from the ELF symbol table before it runs any of the module's code.
 *   It is either the Boost.DLL alias the SDK's C++ macros export (a pointer in the ELF
 *   section "boostdll") or, for a module written in C, a plain exported function of type
 *   sh_module_entry with that name.
 */
#ifndef SANDBOX_HOST_ABI_H
#define SANDBOX_HOST_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "spec_fields.h"

#define SANDBOX_HOST_ABI_MAJOR 1
#define SANDBOX_HOST_ABI_MINOR 11
#define SANDBOX_HOST_ENTRY_PREFIX "sandbox_host_module_v"

#ifdef __cplusplus
#define SH_NOEXCEPT noexcept
extern "C" {
#else
#define SH_NOEXCEPT
#endif

typedef struct sh_str {
  const char *data;
  size_t size;
} sh_str;

typedef struct sh_str_list {
  const sh_str *items;
  size_t count;
} sh_str_list;

/* A byte sink owned by the caller of a module function. */
typedef struct sh_writer {
  void *ctx;
  void (*write)(void *ctx, sh_str bytes) SH_NOEXCEPT;
} sh_writer;

enum sh_status {
  SH_OK = 0,
  SH_ERROR = 1, /* a message was written to the error sink */
};

enum sh_module_kind {
  SH_KIND_BACKEND = 1,
  SH_KIND_BROKER_OP = 2,
  SH_KIND_EGRESS = 3, /* since 1.9 */
};

/* Since 1.2. One key of the operator's [ops.<name>] table: a string, number or boolean is
 * one value, an array of them its elements, each as text. */
typedef struct sh_config_entry {
  sh_str key;
  sh_str_list values;
} sh_config_entry;

typedef struct sh_config {
  const sh_config_entry *entries;
  size_t count;
} sh_config;

/* What the host tells a module when it creates an instance. */
typedef struct sh_host_info {
  uint32_t struct_size;
  uint16_t abi_major;
  uint16_t abi_minor;
  sh_str host_version;
  /* Since 1.2: the module's [ops.<name>] table, without the keys the host itself reads
   * (requester_env); for an egress module (since 1.9) its [egress.<name>] table; empty for
   * a backend. Valid for the call only. */
  sh_config config;
} sh_host_info;

/* ---- backends -------------------------------------------------------------------------- */

/* Since 1.4. One rule of an agent policy's view: access is SH_ACCESS_*. */
enum sh_path_access {
  SH_ACCESS_NONE = 0,
  SH_ACCESS_READ = 1,
  SH_ACCESS_WRITE = 2,
};

typedef struct sh_path_rule {
  sh_str path;
  uint32_t access;
} sh_path_rule;

/* The fields of both structs below are listed once, in spec_fields.h. */
#define SH_LIMITS_MEMBER(name, default_value) uint64_t name;
#define SH_SPEC_MEMBER_STRING(name) sh_str name;
#define SH_SPEC_MEMBER_NETWORK(name) sh_str name;
#define SH_SPEC_MEMBER_STRINGS(name) sh_str_list name;
#define SH_SPEC_MEMBER_PORT(name) uint32_t name;
#define SH_SPEC_MEMBER_VIEW(name)  \
  const struct sh_path_rule *name; \
  size_t name##_count;
#define SH_SPEC_MEMBER_LIMITS(name) sh_limits name;
#define SH_SPEC_MEMBER_BYTES(name) uint64_t name;
#define SH_SPEC_MEMBER(kind, name, since) SH_SPEC_MEMBER_##kind(name)

/* Since 1.6. What one launch may consume (Limits in spec.hpp); UINT64_MAX is no bound. */
typedef struct sh_limits {
  SH_LIMITS_FIELDS(SH_LIMITS_MEMBER)
} sh_limits;

/* One plugin launch (docs/design.md#the-spec): struct_size, then the fields of SH_SPEC_FIELDS in
 * its order, a VIEW field as a pointer and a count. */
typedef struct sh_spec {
  uint32_t struct_size;
  SH_SPEC_FIELDS(SH_SPEC_MEMBER)
} sh_spec;

typedef struct sh_probe_report {
  uint32_t struct_size;
  int32_t available;    /* non-zero when the backend works on this host */
  int32_t landlock_abi; /* 0 when unsupported or not applicable */
  sh_writer reason;     /* why it does not work */
  sh_writer hint;       /* what the operator could do about it */
  sh_writer warning;    /* what a degraded backend does not cover */
  /* Since 1.7: how the backend bounds each limit of sh_limits here, one line per limit:
   * "<limit>\t1\t<mechanism>" or "<limit>\t0\t<why not>" (probe shows them). */
  sh_writer bounds;
} sh_probe_report;

/* How the host should start the plugin. Either the backend names a program and its
 * arguments, or it asks for a re-exec of the host binary into stage 1, where the host
 * calls the backend's stage1() in the child. */
typedef struct sh_command_builder {
  uint32_t struct_size;
  void *ctx;
  void (*set_program)(void *ctx, sh_str path) SH_NOEXCEPT;
  void (*add_arg)(void *ctx, sh_str arg) SH_NOEXCEPT;
  void (*set_env)(void *ctx, sh_str name, sh_str value) SH_NOEXCEPT;
  void (*reexec_stage1)(void *ctx) SH_NOEXCEPT;
} sh_command_builder;

/* Since 1.1. Where a prepared stage 1 takes its launch from (see stage1_prepared). */
typedef struct sh_launch_source {
  uint32_t struct_size;
  void *ctx;
  /* Tells the host this sandbox is ready, then blocks until the host hands it a launch:
   * makes the launch's stdin, stdout and stderr this process's 0, 1 and 2 and returns the
   * launch's Spec, valid for the rest of the process. Since 1.10 the plugin's environment is
   * the Spec's env and this process keeps its own; before, it became this process's.
   * Returns NULL, with the reason in error, when no launch will come,
   * the one that came is malformed, or its network is not the one prepared for. Call it
   * once, in the process that execs the plugin. */
  const sh_spec *(*await_launch)(void *ctx, sh_writer *error)SH_NOEXCEPT;
  /* Since 1.5. After await_launch: the descriptor report_status writes to (close-on-exec, so
   * the plugin never holds it). A backend that closes descriptors before the exec keeps this
   * one in the process that will call report_status. -1 before the launch came. */
  int32_t (*status_descriptor)(void *ctx) SH_NOEXCEPT;
  /* Since 1.5. Tells the host the plugin's status (its exit code, or 128 + its signal) as
   * soon as it is known, so that the host can answer its caller before the sandbox's own
   * processes have exited; stage 1 still exits with the same status. Call it at most once,
   * from the process that holds status_descriptor; a backend whose stage 1 execs the plugin
   * itself has nothing to call. */
  void (*report_status)(void *ctx, int32_t status) SH_NOEXCEPT;
} sh_launch_source;

typedef struct sh_backend_v1 {
  uint32_t struct_size;
  int32_t (*probe)(void *instance, sh_probe_report *out) SH_NOEXCEPT;
  int32_t (*build_command)(void *instance, const sh_spec *spec, sh_command_builder *out,
                           sh_writer *error) SH_NOEXCEPT;
  /* Runs in the re-exec'd child: set the sandbox up and exec the plugin. Returns only on
   * failure, with "<step>: <reason>" in error. */
  int32_t (*stage1)(void *instance, const sh_spec *spec, sh_writer *error) SH_NOEXCEPT;
  /* Since 1.1; NULL when the backend only sets up for a known Spec. Runs in the re-exec'd
   * child like stage1, but before the launch exists, so that a long-running host can keep
   * sandboxes ready: set up everything that does not depend on the Spec beyond its network
   * (sh_str "none", "outbound" or, since 1.3, "proxied"), take the launch from source
   * (which refuses one for another network), finish and exec the plugin. Returns only on
   * failure, with "<step>: <reason>" in error. */
  int32_t (*stage1_prepared)(void *instance, sh_str network, const sh_launch_source *source,
                             sh_writer *error) SH_NOEXCEPT;
} sh_backend_v1;

/* ---- broker operations ------------------------------------------------------------------ */

/* One ask of the broker (docs/design.md#broker-protocol); absent fields are empty. */
typedef struct sh_request {
  uint32_t struct_size;
  sh_str op;
  sh_str unit;
  sh_str slice;
  sh_str max;
  sh_str swap;
  sh_str_list args;
  sh_str wait;
  sh_str resource;
  sh_str input;
  int32_t stream;
} sh_request;

/* The process the broker identified as the request's holder. */
typedef struct sh_requester {
  uint32_t struct_size;
  int32_t pid;
  int32_t pidfd; /* -1 where the kernel has no pidfd */
  uint32_t uid;
  sh_str cwd;
  int32_t sandboxed; /* another mount namespace than the broker's, or the sandbox mark */
  /* Since 1.2: "NAME=VALUE" for each variable named in ops.<name>.requester_env that the
   * requester's environment has. */
  sh_str_list env;
} sh_requester;

/* Since 1.2. A command the host runs on an operation's behalf (sh_reply.run). */
typedef struct sh_host_command {
  uint32_t struct_size;
  sh_str path;              /* absolute; argv[0] */
  sh_str_list args;         /* argv[1..] */
  sh_str_list env;          /* the command's whole environment, "NAME=VALUE" */
  sh_str input;             /* its standard input; empty: /dev/null */
  sh_str cwd;               /* absolute directory to run in; empty: "/" */
  int32_t cwd_of_requester; /* non-zero: the requester's working directory instead of cwd */
  uint32_t timeout_ms;      /* 0: no limit */
} sh_host_command;

/* The reply (docs/design.md#broker-protocol): output and error streams, and an exit code. */
typedef struct sh_reply {
  uint32_t struct_size;
  sh_writer out;
  sh_writer err;
  void *ctx;
  void (*set_code)(void *ctx, int32_t code) SH_NOEXCEPT;
  /* Since 1.2. Non-zero when the request streams: what goes to out and err reaches the
   * requester while the operation runs, and the operation is tied to its requester. */
  int32_t streaming;
  /* Since 1.2. Runs command on the host, in its own process group, with nothing but its
   * stdio open: its stdout and stderr go to out and err, its exit status becomes the
   * reply's code (128 + signal when a signal ended it). Returns SH_OK once it ended, and
   * SH_ERROR with the reason in error when it could not start, ran past its timeout or the
   * reply's output cap, or (streaming) its requester stopped holding the request; in those
   * cases the command and its process group were killed first. */
  int32_t (*run)(void *ctx, const sh_host_command *command, sh_writer *error) SH_NOEXCEPT;
  /* Since 1.2. Non-zero once the requester no longer holds the request (streaming only;
   * always 0 otherwise): a long operation that runs no command should end then. */
  int32_t (*requester_gone)(void *ctx) SH_NOEXCEPT;
} sh_reply;

typedef struct sh_broker_op_v1 {
  uint32_t struct_size;
  /* A non-zero return refuses the request with the message written to error. The host
   * calls handle from several threads at once, one request each. */
  int32_t (*handle)(void *instance, const sh_request *request, const sh_requester *requester,
                    sh_reply *reply, sh_writer *error) SH_NOEXCEPT;
  /* Since 1.8, and NULL in a module with nothing to say: what the instance found on this
   * host when it was created, for `sandbox-host probe`, as lines "<key>\t<value>\n" (the
   * host names no op's facts itself). A non-zero return is shown with the message written
   * to error. */
  int32_t (*report)(void *instance, sh_writer *out, sh_writer *error) SH_NOEXCEPT;
} sh_broker_op_v1;

/* ---- egress (since 1.9) ---------------------------------------------------------------- */

/* Where a proxied launch's network leads (the Spec's proxy_socket, proxy_port and
 * egress_dir): the unix socket on the host that the sandbox's 127.0.0.1:port is relayed to,
 * and the egress directory, bound read-only into the sandbox, whose files (egress_client.hpp:
 * ca.pem, bundle.pem, gh, gpg) the plugin's variables point at. */
typedef struct sh_egress_route {
  uint32_t struct_size;
  sh_writer socket;    /* an absolute path */
  sh_writer directory; /* an absolute path, or nothing written for none */
  uint32_t port;       /* 1..65535 */
} sh_egress_route;

/* What the host gives a started egress: both callable from any of the module's threads
 * from start until stop returns, never after. */
typedef struct sh_egress_sinks {
  uint32_t struct_size;
  void *ctx;
  /* A connection refused, for the host's audit sink: the rule that refused it, what the
   * client attempted (its target) and what the operator could do. */
  void (*refused)(void *ctx, sh_str rule, sh_str attempted, sh_str hint) SH_NOEXCEPT;
  /* A line of what the egress did that is no refusal (a connection let through, say). */
  void (*log)(void *ctx, sh_str line) SH_NOEXCEPT;
} sh_egress_sinks;

typedef struct sh_egress_v1 {
  uint32_t struct_size;
  /* Where a proxied launch is pointed; called for every launch, from any thread, whether
   * this process started the egress or not (a one-shot `sandbox-host run` only routes). */
  int32_t (*route)(void *instance, sh_egress_route *out, sh_writer *error) SH_NOEXCEPT;
  /* Starts serving on the route's socket in the module's own threads and returns once
   * connections are accepted; a non-zero return, with the reason in error, starts nothing. */
  int32_t (*start)(void *instance, const sh_egress_sinks *sinks, sh_writer *error) SH_NOEXCEPT;
  /* Stops accepting, ends every connection and returns once no thread of the egress runs
   * and the sinks are no longer used. Called once after each successful start; start is
   * called again only after stop returned. */
  void (*stop)(void *instance) SH_NOEXCEPT;
  /* NULL in a module with nothing to say: as sh_broker_op_v1.report. */
  int32_t (*report)(void *instance, sh_writer *out, sh_writer *error) SH_NOEXCEPT;
} sh_egress_v1;

/* ---- the module --------------------------------------------------------------------------- */

typedef struct sh_module_descriptor {
  uint32_t struct_size;
  uint16_t abi_major;
  uint16_t abi_minor;
  uint32_t kind; /* enum sh_module_kind */
  sh_str name;
  sh_str version;
  sh_str summary;
  int32_t (*create)(const sh_host_info *host, void **instance, sh_writer *error) SH_NOEXCEPT;
  void (*destroy)(void *instance) SH_NOEXCEPT;
  const void *table; /* sh_backend_v1, sh_broker_op_v1 or sh_egress_v1, by kind */
} sh_module_descriptor;

typedef const sh_module_descriptor *(*sh_module_entry)(void);

#ifdef __cplusplus
}
#endif

#endif /* SANDBOX_HOST_ABI_H */
