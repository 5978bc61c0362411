#include <sandbox_host/host/broker/host_command.hpp>
#include <sandbox_host/host/broker/op_call.hpp>
#include <sandbox_host/host/identity/process_identity.hpp>
#include <sandbox_host/host/metrics/recorder.hpp>
#include <sandbox_host/strings.hpp>

#include <boost/algorithm/string/join.hpp>
#include <boost/range/adaptor/map.hpp>

#include <fcntl.h>

#include <system_error>

namespace sandbox_host::broker {
namespace {

// The state behind one sh_reply: what the module writes, how it reaches the requester.
class Call {
 public:
  Call(const Request &request, const Asker &asker, Conversation &conversation,
       const CallSettings &settings)
      : request_(request), asker_(asker), conversation_(conversation), settings_(settings) {}

  sh_reply reply() {
    return {sizeof(sh_reply),
            {this, &Call::write_out},
            {this, &Call::write_err},
            this,
            &Call::set_code,
            request_.stream ? 1 : 0,
            &Call::run,
            &Call::requester_gone};
  }

  // Sends what is left and the last frame.
  void finish(std::string error) {
    if (error.empty() && overflow_) {
      error = "reply of more than " + std::to_string(settings_.max_reply_bytes) +
              " bytes (the broker's max_reply_bytes)";
    }
    if (error.empty()) {
      send_chunks(out_, true);
      send_chunks(err_, false);
    }
    ReplyFrame last;
    last.error = std::move(error);
    last.code = code_;
    last.end = true;
    conversation_.send(encode_frame(last));
  }

 private:
  void write(std::string_view bytes, bool is_out) {
    if (request_.stream) {
      std::string chunk(bytes);
      send_chunks(chunk, is_out);
      return;
    }
    std::string &buffer = is_out ? out_ : err_;
    if (out_.size() + err_.size() + bytes.size() > settings_.max_reply_bytes) {
      overflow_ = true;
      return;
    }
    buffer.append(bytes);
  }

  void send_chunks(std::string &bytes, bool is_out) {
    for (std::size_t at = 0; at < bytes.size() && !lost_; at += kFrameChunk) {
      ReplyFrame frame;
      (is_out ? frame.out : frame.err) = bytes.substr(at, kFrameChunk);
      lost_ = !conversation_.send(encode_frame(frame));
    }
    bytes.clear();
  }

  bool gone() {
    return lost_ || settings_.stop.stop_requested() ||
           (request_.stream && conversation_.requester_gone());
  }

  static void write_out(void *ctx, sh_str bytes) noexcept {
    try {
      static_cast<Call *>(ctx)->write(to_view(bytes), true);
    } catch (...) {
      static_cast<Call *>(ctx)->overflow_ = true;
    }
  }
  static void write_err(void *ctx, sh_str bytes) noexcept {
    try {
      static_cast<Call *>(ctx)->write(to_view(bytes), false);
    } catch (...) {
      static_cast<Call *>(ctx)->overflow_ = true;
    }
  }
  static void set_code(void *ctx, int32_t code) noexcept { static_cast<Call *>(ctx)->code_ = code; }
  static int32_t requester_gone(void *ctx) noexcept {
    try {
      return static_cast<Call *>(ctx)->gone() ? 1 : 0;
    } catch (...) {
      return 1;
    }
  }

  static int32_t run(void *ctx, const sh_host_command *raw, sh_writer *error) noexcept {
    auto &call = *static_cast<Call *>(ctx);
    try {
      if (raw == nullptr || raw->struct_size < sizeof(sh_host_command)) {
        throw std::invalid_argument("run: command from an older SDK than 1.2");
      }
      HostCommand command{std::string(to_view(raw->path)),
                          to_strings(raw->args),
                          to_strings(raw->env),
                          std::string(to_view(raw->input)),
                          std::string(to_view(raw->cwd)),
                          raw->cwd_of_requester != 0,
                          std::chrono::milliseconds(raw->timeout_ms)};
      CommandIo io;
      io.out = [&](std::string_view bytes) { call.write(bytes, true); };
      io.err = [&](std::string_view bytes) { call.write(bytes, false); };
      io.requester_gone = [&] { return call.gone(); };
      io.tick = call.settings_.tick;
      io.max_output = call.request_.stream ? 0 : call.settings_.max_reply_bytes;
      if (call.request_.stream) {
        io.wake_fd = call.conversation_.wake_fd();
        io.wake_events = call.conversation_.wake_events();
      }
      UniqueFd cwd;
      if (command.cwd_of_requester) {
        // The directory itself, through the magic link: it resolves in the requester's own
        // mount namespace, which the broker's paths may not show.
        const auto link = call.settings_.proc_dir / std::to_string(call.asker_.pid) / "cwd";
        cwd.reset(::open(link.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!cwd || !running(call.asker_.pidfd.get())) {
          throw std::runtime_error("the requester's working directory is gone");
        }
        io.cwd_fd = cwd.get();
      }
      CommandResult result = run_host_command(command, io);
      call.code_ = result.code;
      if (!result.error.empty()) throw std::runtime_error(command.path + ": " + result.error);
      return SH_OK;
    } catch (const std::exception &e) {
      sandbox_host::write(error, e.what());
    }
    return SH_ERROR;
  }

  const Request &request_;
  const Asker &asker_;
  Conversation &conversation_;
  const CallSettings &settings_;
  std::string out_, err_;
  int code_ = 0;
  bool overflow_ = false;
  bool lost_ = false;
};

std::string operation_names(const Operations &operations) {
  if (operations.empty()) return "none enabled";
  return boost::algorithm::join(operations | boost::adaptors::map_keys, ", ");
}

}  // namespace

void refuse(Conversation &conversation, const std::string &error) {
  ReplyFrame frame;
  frame.error = error;
  frame.end = true;
  conversation.send(encode_frame(frame));
}

namespace {

std::string answer_by_operation(const Operations &operations, const Request &request,
                                const Asker &asker, Conversation &conversation,
                                const CallSettings &settings) {
  const auto found = operations.find(request.op);
  if (found == operations.end()) {
    std::string error =
        "unknown operation " + echo(request.op) + "; operations: " + operation_names(operations);
    refuse(conversation, error);
    return error;
  }
  const Operation &op = found->second;
  Origin where;
  bool in_sandbox = false;
  try {
    where = origin(settings.proc_dir, asker.pid, op.requester_env);
    in_sandbox = sandboxed(settings.proc_dir, asker.pid);
  } catch (const std::exception &e) {
    // The reason names the requester's host pid, which a sandbox may not see.
    const std::string error = "cannot read the requester's working directory or namespace";
    refuse(conversation, error);
    return error + " (" + e.what() + ")";
  }
  // What was read belongs to the pinned process only if it still runs now.
  if (!running(asker.pidfd.get())) {
    std::string error = "the requester exited before its request was taken";
    refuse(conversation, error);
    return error;
  }
  std::vector<sh_str> env;
  for (const auto &entry : where.env) env.push_back(to_sh_str(entry));
  std::vector<sh_str> args;
  for (const auto &arg : request.args) args.push_back(to_sh_str(arg));
  const sh_request raw_request{
      sizeof(sh_request),         to_sh_str(request.op),   to_sh_str(request.unit),
      to_sh_str(request.slice),   to_sh_str(request.max),  to_sh_str(request.swap),
      {args.data(), args.size()}, to_sh_str(request.wait), to_sh_str(request.resource),
      to_sh_str(request.input),   request.stream ? 1 : 0};
  const sh_requester requester{
      sizeof(sh_requester), asker.pid,          asker.pidfd.get(),       asker.uid,
      to_sh_str(where.cwd), in_sandbox ? 1 : 0, {env.data(), env.size()}};
  Call call(request, asker, conversation, settings);
  sh_reply reply = call.reply();
  StringSink error;
  const auto *table = static_cast<const sh_broker_op_v1 *>(op.module->table());
  std::string refusal;
  if (table->handle(op.module->instance(), &raw_request, &requester, &reply, error.writer()) !=
      SH_OK) {
    refusal = error.text().empty() ? request.op + ": refused without a reason" : error.text();
  }
  call.finish(refusal);
  return refusal;
}

}  // namespace

std::string answer(const Operations &operations, const Request &request, const Asker &asker,
                   Conversation &conversation, const CallSettings &settings) {
  const auto started = std::chrono::steady_clock::now();
  std::string refusal = answer_by_operation(operations, request, asker, conversation, settings);
  // The op's name is the requester's text: a label only when it names an enabled operation.
  metrics::recorder()->broker_request(operations.contains(request.op) ? request.op : "unknown",
                                      refusal.empty() ? "answered" : "refused",
                                      std::chrono::steady_clock::now() - started);
  return refusal;
}

}  // namespace sandbox_host::broker
