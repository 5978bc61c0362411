// Writing a sandbox-host module in C++: derive from Backend, BrokerOp or EgressModule and
// register the class with one macro. The macro exports the versioned C entry point; the adapters
// below turn every exception into an error message, so nothing but C crosses the boundary.
//
//   class MyOp final : public sandbox_host::BrokerOp {
//    public:
//     void handle(const sandbox_host::Request &, const sandbox_host::Requester &,
//                 sandbox_host::Reply &reply) override { reply.out("pong"); }
//   };
//   SANDBOX_HOST_BROKER_OP_MODULE(MyOp, "my-op", "1.0.0", "answers pong")
//
// A class may take `const sandbox_host::HostInfo &` in its constructor; a constructor that
// throws refuses the module's loading with the exception's message.
#pragma once

#include <sandbox_host/abi.h>
#include <sandbox_host/egress_client.hpp>
#include <sandbox_host/op_config.hpp>
#include <sandbox_host/spec.hpp>
#include <sandbox_host/spec_abi.hpp>
#include <sandbox_host/strings.hpp>

#include <boost/dll/alias.hpp>
#include <boost/preprocessor/cat.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace sandbox_host {

struct HostInfo {
  unsigned abi_major = 0;
  unsigned abi_minor = 0;
  std::string host_version;
  // A broker operation's [ops.<name>] table (empty before host ABI 1.2, and for backends),
  // or an egress module's [egress.<name>] table.
  OpConfig config;
};

// How the host should start a plugin, as a backend describes it.
class CommandBuilder {
 public:
  explicit CommandBuilder(sh_command_builder &raw) noexcept : raw_(raw) {}
  void program(std::string_view path) { raw_.set_program(raw_.ctx, to_sh_str(path)); }
  void arg(std::string_view arg) { raw_.add_arg(raw_.ctx, to_sh_str(arg)); }
  void env(std::string_view name, std::string_view value) {
    raw_.set_env(raw_.ctx, to_sh_str(name), to_sh_str(value));
  }
  // Start the host binary again; its stage1() calls this backend's stage1() in the child.
  void reexec_stage1() { raw_.reexec_stage1(raw_.ctx); }

 private:
  sh_command_builder &raw_;
};

// Where a prepared stage 1 takes its launch from.
class LaunchSource {
 public:
  explicit LaunchSource(const sh_launch_source &raw) noexcept : raw_(raw) {}
  // Reports the sandbox ready and blocks until the host hands it a launch; then the
  // launch's stdio are this process's 0-2. The plugin's environment is the Spec's env, for
  // the plugin's execve alone; this process keeps sandbox-host's. Throws
  // "launch: <reason>" when none will come, it is malformed or for another network.
  Spec await_launch() {
    StringSink error;
    const sh_spec *spec = raw_.await_launch(raw_.ctx, error.writer());
    if (spec == nullptr) throw std::runtime_error("launch: " + error.text());
    return from_abi(*spec);
  }
  // After await_launch(): the descriptor report_status() writes to, which a backend that
  // closes descriptors keeps open in the process that reports; -1 where the host's
  // sh_launch_source is shorter than 1.5's.
  int status_descriptor() const noexcept {
    return has(offsetof(sh_launch_source, status_descriptor)) ? raw_.status_descriptor(raw_.ctx)
                                                              : -1;
  }
  // The plugin's status (exit code, or 128 + signal), for the host as soon as it is known;
  // stage 1 still exits with it too.
  void report_status(int status) const noexcept {
    if (has(offsetof(sh_launch_source, report_status))) raw_.report_status(raw_.ctx, status);
  }

 private:
  bool has(std::size_t field_offset) const noexcept { return raw_.struct_size > field_offset; }
  const sh_launch_source &raw_;
};

class Backend {
 public:
  using Interface = Backend;
  virtual ~Backend() = default;
  virtual ProbeReport probe() = 0;
  virtual void build_command(const Spec &spec, CommandBuilder &command) = 0;
  // In the re-exec'd child: set the sandbox up and exec the plugin. Throwing reports a
  // setup failure; the message should read "<step>: <reason>".
  virtual void stage1(const Spec &) { throw std::logic_error("stage1: backend does not re-exec"); }
  // Optional (abi.h's stage1_prepared): a backend that overrides it lets a long-running
  // host keep sandboxes ready. In the re-exec'd child, before the launch exists: set up
  // what depends only on the network, take the launch from source, finish, exec the
  // plugin. Throwing reports a setup failure, as in stage1.
  virtual void stage1_prepared(Network, LaunchSource &) {
    throw std::logic_error("stage1: backend does not prepare sandboxes");
  }
};

// One ask of the broker (docs/design.md#broker-protocol).
struct Request {
  std::string op, unit, slice, max, swap;
  std::vector<std::string> args;
  std::string wait, resource, input;
  bool stream = false;
};

// The process that holds the request, as the broker identified it. pidfd pins it: use it
// (not pid) for anything done to the process later, since a pid can be reused.
struct Requester {
  int pid = 0;
  int pidfd = -1;
  unsigned uid = 0;
  std::string cwd;
  bool sandboxed = false;
  // "NAME=VALUE" for the variables the operator's ops.<name>.requester_env names.
  std::vector<std::string> env;
};

// A command the host runs for an operation (Reply::run).
struct HostCommand {
  std::string path;                      // absolute
  std::vector<std::string> args;         // after argv[0]
  std::vector<std::string> env;          // the whole environment, "NAME=VALUE"
  std::string input;                     // standard input
  std::string cwd;                       // absolute; empty: "/"
  bool cwd_of_requester = false;         // run in the requester's working directory instead
  std::chrono::milliseconds timeout{0};  // zero: no limit
};

class Reply {
 public:
  explicit Reply(sh_reply &raw) noexcept : raw_(raw) {}
  void out(std::string_view bytes) { write(&raw_.out, bytes); }
  void err(std::string_view bytes) { write(&raw_.err, bytes); }
  void code(int code) { raw_.set_code(raw_.ctx, code); }

  // Whether the request streams: out and err reach the requester as they are written.
  bool streaming() const noexcept { return has(offsetof(sh_reply, streaming)) && raw_.streaming; }

  // Runs command on the host (abi.h's sh_reply.run): its output becomes this reply's, its
  // exit status the reply's code. Throws when it could not start, timed out, or its
  // requester went away; the command was killed then.
  void run(const HostCommand &command) {
    if (!has(offsetof(sh_reply, run)) || raw_.run == nullptr) {
      throw std::runtime_error("this host cannot run commands for operations (ABI < 1.2)");
    }
    if (command.timeout.count() < 0 || command.timeout.count() > UINT32_MAX) {
      throw std::invalid_argument("run: timeout of " + std::to_string(command.timeout.count()) +
                                  " ms is out of range (0 to 4294967295)");
    }
    std::vector<sh_str> args, env;
    for (const auto &a : command.args) args.push_back(to_sh_str(a));
    for (const auto &e : command.env) env.push_back(to_sh_str(e));
    sh_host_command raw{
        sizeof(sh_host_command),          to_sh_str(command.path),
        {args.data(), args.size()},       {env.data(), env.size()},
        to_sh_str(command.input),         to_sh_str(command.cwd),
        command.cwd_of_requester ? 1 : 0, static_cast<uint32_t>(command.timeout.count())};
    StringSink error;
    if (raw_.run(raw_.ctx, &raw, error.writer()) != SH_OK) throw std::runtime_error(error.text());
  }

  // Streaming only: whether the requester stopped holding the request.
  bool requester_gone() const noexcept {
    return has(offsetof(sh_reply, requester_gone)) && raw_.requester_gone != nullptr &&
           raw_.requester_gone(raw_.ctx) != 0;
  }

 private:
  bool has(size_t offset) const noexcept { return raw_.struct_size > offset; }
  sh_reply &raw_;
};

class BrokerOp {
 public:
  using Interface = BrokerOp;
  virtual ~BrokerOp() = default;
  // Throwing refuses the request with the exception's message.
  virtual void handle(const Request &request, const Requester &requester, Reply &reply) = 0;
  // What the op found on this host, key and value, for `sandbox-host probe` (ABI 1.8): the
  // driver it chose and why, say. Only a class that overrides it offers a report.
  virtual std::vector<std::pair<std::string, std::string>> report() const { return {}; }
};

// What the host gives a started egress (sh_egress_sinks): usable from any thread until
// stop() returns.
class EgressSinks {
 public:
  explicit EgressSinks(const sh_egress_sinks &raw) noexcept : raw_(raw) {}
  void refused(std::string_view rule, std::string_view attempted, std::string_view hint) const {
    raw_.refused(raw_.ctx, to_sh_str(rule), to_sh_str(attempted), to_sh_str(hint));
  }
  void log(std::string_view line) const { raw_.log(raw_.ctx, to_sh_str(line)); }

 private:
  sh_egress_sinks raw_;
};

// An egress implementation: what network "proxied" leads to, and the proxy behind it.
class EgressModule {
 public:
  using Interface = EgressModule;
  virtual ~EgressModule() = default;
  // Called for every proxied launch, from any thread, started or not.
  virtual EgressRoute route() const = 0;
  // Serve on route().socket in threads of the module's own; return once it accepts.
  // Throwing starts nothing, with the exception's message.
  virtual void start(EgressSinks sinks) = 0;
  // Stop accepting, end every connection, and return once no thread of it runs.
  virtual void stop() noexcept = 0;
  // As BrokerOp::report.
  virtual std::vector<std::pair<std::string, std::string>> report() const { return {}; }
};

namespace detail {

template <class F>
int32_t guarded(sh_writer *error, F &&body) noexcept {
  try {
    body();
    return SH_OK;
  } catch (const std::exception &e) {
    write(error, e.what());
  } catch (...) {
    write(error, "unknown exception");
  }
  return SH_ERROR;
}

// The name the module registered, and the config table its OpConfig names in messages
// (set by describe()).
template <class T>
inline std::string_view registered_name;
template <class T>
inline std::string_view registered_table;

template <class T>
int32_t create(const sh_host_info *raw, void **instance, sh_writer *error) noexcept {
  return guarded(error, [&] {
    if constexpr (std::is_constructible_v<T, const HostInfo &>) {
      HostInfo info;
      if (raw != nullptr && raw->struct_size >= offsetof(sh_host_info, config)) {
        info = {raw->abi_major, raw->abi_minor, std::string(to_view(raw->host_version)), {}};
      }
      if (raw != nullptr && raw->struct_size >= sizeof(sh_host_info)) {
        info.config =
            OpConfig::from_abi(std::string(registered_name<T>), raw->config,
                               std::string(registered_table<T>) + std::string(registered_name<T>));
      }
      *instance = static_cast<typename T::Interface *>(new T(info));
    } else {
      *instance = static_cast<typename T::Interface *>(new T());
    }
  });
}

// An instance crosses the boundary as a pointer to its interface (Backend, BrokerOp or
// EgressModule), so
// the adapters call the interface's public virtuals whatever access the class gives them.
template <class T>
void destroy(void *instance) noexcept {
  delete static_cast<typename T::Interface *>(instance);
}

// A report as lines "<key>\t<value>\n".
inline void write_report(const std::vector<std::pair<std::string, std::string>> &report,
                         sh_writer *out) {
  std::string lines;
  for (const auto &[key, value] : report) {
    if (key.empty() || key.find_first_of("\t\n") != std::string::npos ||
        value.find('\n') != std::string::npos) {
      throw std::invalid_argument("report: a key is one word and a value one line");
    }
    lines += key + "\t" + value + "\n";
  }
  write(out, lines);
}

template <class T>
struct BackendAdapter {
  static_assert(std::is_base_of_v<Backend, T>, "a backend module's class derives from Backend");
  static constexpr uint32_t kind = SH_KIND_BACKEND;
  static constexpr std::string_view table_prefix = "";

  static int32_t probe(void *instance, sh_probe_report *out) noexcept {
    if (out == nullptr || out->struct_size < sizeof(sh_probe_report)) return SH_ERROR;
    return guarded(&out->reason, [&] {
      ProbeReport report = static_cast<Backend *>(instance)->probe();
      out->available = report.available ? 1 : 0;
      out->landlock_abi = report.landlock_abi;
      write(&out->reason, report.reason);
      write(&out->hint, report.hint);
      write(&out->warning, report.warning);
      std::string bounds;
      for (const LimitBound &bound : report.bounds) {
        bounds += bound.limit + "\t" + (bound.enforced ? "1" : "0") + "\t" + bound.how + "\n";
      }
      write(&out->bounds, bounds);
    });
  }
  static int32_t build_command(void *instance, const sh_spec *spec, sh_command_builder *out,
                               sh_writer *error) noexcept {
    return guarded(error, [&] {
      CommandBuilder command(*out);
      static_cast<Backend *>(instance)->build_command(from_abi(*spec), command);
    });
  }
  static int32_t stage1(void *instance, const sh_spec *spec, sh_writer *error) noexcept {
    return guarded(error, [&] { static_cast<Backend *>(instance)->stage1(from_abi(*spec)); });
  }
  static int32_t stage1_prepared(void *instance, sh_str network, const sh_launch_source *source,
                                 sh_writer *error) noexcept {
    return guarded(error, [&] {
      Network parsed = parse_network_or_throw(to_view(network), "prepare");
      LaunchSource launches(*source);
      static_cast<Backend *>(instance)->stage1_prepared(parsed, launches);
    });
  }
  // Only a class that overrides stage1_prepared offers it to the host.
  static constexpr bool prepares =
      !std::is_same_v<decltype(&T::stage1_prepared), decltype(&Backend::stage1_prepared)>;
  static inline const sh_backend_v1 table{sizeof(sh_backend_v1), &probe, &build_command, &stage1,
                                          prepares ? &stage1_prepared : nullptr};
};

template <class T>
struct BrokerOpAdapter {
  static_assert(std::is_base_of_v<BrokerOp, T>, "a broker-op module's class derives from BrokerOp");
  static constexpr uint32_t kind = SH_KIND_BROKER_OP;
  static constexpr std::string_view table_prefix = "ops.";

  static int32_t handle(void *instance, const sh_request *raw, const sh_requester *who,
                        sh_reply *reply, sh_writer *error) noexcept {
    return guarded(error, [&] {
      Request request{std::string(to_view(raw->op)),    std::string(to_view(raw->unit)),
                      std::string(to_view(raw->slice)), std::string(to_view(raw->max)),
                      std::string(to_view(raw->swap)),  to_strings(raw->args),
                      std::string(to_view(raw->wait)),  std::string(to_view(raw->resource)),
                      std::string(to_view(raw->input)), raw->stream != 0};
      Requester requester{
          who->pid, who->pidfd, who->uid, std::string(to_view(who->cwd)), who->sandboxed != 0, {}};
      if (who->struct_size >= sizeof(sh_requester)) requester.env = to_strings(who->env);
      Reply out(*reply);
      static_cast<BrokerOp *>(instance)->handle(request, requester, out);
    });
  }
  static int32_t report(void *instance, sh_writer *out, sh_writer *error) noexcept {
    return guarded(error,
                   [&] { write_report(static_cast<const BrokerOp *>(instance)->report(), out); });
  }
  static constexpr bool reports =
      !std::is_same_v<decltype(&T::report), decltype(&BrokerOp::report)>;
  static inline const sh_broker_op_v1 table{sizeof(sh_broker_op_v1), &handle,
                                            reports ? &report : nullptr};
};

template <class T>
struct EgressAdapter {
  static_assert(std::is_base_of_v<EgressModule, T>,
                "an egress module's class derives from EgressModule");
  static constexpr uint32_t kind = SH_KIND_EGRESS;
  static constexpr std::string_view table_prefix = "egress.";

  static int32_t route(void *instance, sh_egress_route *out, sh_writer *error) noexcept {
    return guarded(error, [&] {
      if (out == nullptr || out->struct_size < sizeof(sh_egress_route)) {
        throw std::invalid_argument("route: the host's route struct is short");
      }
      const EgressRoute route = static_cast<const EgressModule *>(instance)->route();
      write(&out->socket, route.socket);
      write(&out->directory, route.directory);
      out->port = route.port;
    });
  }
  static int32_t start(void *instance, const sh_egress_sinks *sinks, sh_writer *error) noexcept {
    return guarded(error, [&] {
      if (sinks == nullptr || sinks->struct_size < sizeof(sh_egress_sinks)) {
        throw std::invalid_argument("start: the host's sinks struct is short");
      }
      static_cast<EgressModule *>(instance)->start(EgressSinks(*sinks));
    });
  }
  static void stop(void *instance) noexcept { static_cast<EgressModule *>(instance)->stop(); }
  static int32_t report(void *instance, sh_writer *out, sh_writer *error) noexcept {
    return guarded(
        error, [&] { write_report(static_cast<const EgressModule *>(instance)->report(), out); });
  }
  static constexpr bool reports =
      !std::is_same_v<decltype(&T::report), decltype(&EgressModule::report)>;
  static inline const sh_egress_v1 table{sizeof(sh_egress_v1), &route, &start, &stop,
                                         reports ? &report : nullptr};
};

template <template <class> class Adapter, class T>
sh_module_descriptor describe(std::string_view name, std::string_view version,
                              std::string_view summary) noexcept {
  registered_name<T> = name;
  registered_table<T> = Adapter<T>::table_prefix;
  return {sizeof(sh_module_descriptor),
          SANDBOX_HOST_ABI_MAJOR,
          SANDBOX_HOST_ABI_MINOR,
          Adapter<T>::kind,
          to_sh_str(name),
          to_sh_str(version),
          to_sh_str(summary),
          &create<T>,
          &destroy<T>,
          &Adapter<T>::table};
}

}  // namespace detail
}  // namespace sandbox_host

// sandbox_host_module_v<major>_<minor>
#define SANDBOX_HOST_ENTRY_SYMBOL     \
  BOOST_PP_CAT(sandbox_host_module_v, \
               BOOST_PP_CAT(SANDBOX_HOST_ABI_MAJOR, BOOST_PP_CAT(_, SANDBOX_HOST_ABI_MINOR)))

#define SANDBOX_HOST_MODULE_(Adapter, Class, Name, Version, Summary)              \
  namespace {                                                                     \
  const sh_module_descriptor *sandbox_host_module_entry() {                       \
    static const sh_module_descriptor descriptor =                                \
        ::sandbox_host::detail::describe<Adapter, Class>(Name, Version, Summary); \
    return &descriptor;                                                           \
  }                                                                               \
  }                                                                               \
  BOOST_DLL_ALIAS(sandbox_host_module_entry, SANDBOX_HOST_ENTRY_SYMBOL)

#define SANDBOX_HOST_BACKEND_MODULE(Class, Name, Version, Summary) \
  SANDBOX_HOST_MODULE_(::sandbox_host::detail::BackendAdapter, Class, Name, Version, Summary)

#define SANDBOX_HOST_BROKER_OP_MODULE(Class, Name, Version, Summary) \
  SANDBOX_HOST_MODULE_(::sandbox_host::detail::BrokerOpAdapter, Class, Name, Version, Summary)

#define SANDBOX_HOST_EGRESS_MODULE(Class, Name, Version, Summary) \
  SANDBOX_HOST_MODULE_(::sandbox_host::detail::EgressAdapter, Class, Name, Version, Summary)
