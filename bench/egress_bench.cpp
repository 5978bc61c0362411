// The egress proxy's load generator (bench/egress_report.py runs it): one measurement per
// invocation, one JSON line on stdout. The client connects either straight to the upstream
// (nginx) or to a proxy, and reaches the upstream through it by CONNECT or by an
// absolute-form request (forward), so the same code times direct and proxied requests.
//
//   egress_bench bulk    --connect A:P [--via connect --target N:P] --path /f --expect BYTES
//   egress_bench latency --connect A:P [--via connect|forward --target N:P] --path /f
//                        --expect BYTES --requests N [--warmup W]
//   egress_bench tls     --connect A:P [--via connect --target N:443] --sni N --ca FILE
//                        --path /f --expect BYTES --connections C --seconds S
//   egress_bench idle    --connect A:P --target N:P --count N
//   egress_bench hold    --listen A:P
//
// bulk: one GET of a large file on a new connection (through a CONNECT tunnel when --via
// connect), timed from the request to its last byte; the client reads with recv(2) into a
// 1 MiB buffer. latency: N requests one after the other, each on a new connection, each
// timed from socket(2) to the last byte of the response (the tunnel's CONNECT and its 200
// inside that time), after W untimed ones. tls: C connections, each its own thread, each
// a TLS session (to the proxy's CA through the tunnel, or to the upstream directly) that
// sends keep-alive GETs back to back for S seconds after all have finished their
// handshake. idle: N tunnels opened through the proxy one after the other and held without
// a byte; prints one line when they are open, waits for a line (or the end) on stdin,
// closes them and prints another. hold: the idle server those tunnels end at (a process of
// its own, since RLIMIT_NOFILE bounds each process), accepting and holding every
// connection. A read waits 30 s at most (SO_RCVTIMEO).

#include "egress_bench.hpp"

#include <iostream>
#include <map>
#include <string>

namespace {

using namespace egress_bench;

Options parse_options(int argc, char **argv) {
  if (argc < 2) throw Failure("usage: egress_bench bulk|latency|tls|idle --option value ...");
  Options o;
  o.mode = argv[1];
  std::map<std::string, std::string *> strings{
      {"--connect", &o.connect}, {"--via", &o.via}, {"--target", &o.target}, {"--path", &o.path},
      {"--sni", &o.sni},         {"--ca", &o.ca},   {"--listen", &o.listen}};
  std::map<std::string, int *> integers{{"--requests", &o.requests},
                                        {"--warmup", &o.warmup},
                                        {"--connections", &o.connections},
                                        {"--count", &o.count}};
  for (int i = 2; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw Failure(key + " needs a value");
    const std::string value = argv[i + 1];
    if (auto s = strings.find(key); s != strings.end()) {
      *s->second = value;
    } else if (auto n = integers.find(key); n != integers.end()) {
      *n->second = std::stoi(value);
    } else if (key == "--expect") {
      o.expect = std::stoull(value);
    } else if (key == "--seconds") {
      o.seconds = std::stod(value);
    } else {
      throw Failure("unknown option " + key);
    }
  }
  if (o.connect.empty() && o.mode != "hold") throw Failure("--connect is required");
  if (o.via != "direct" && o.via != "connect" && o.via != "forward") {
    throw Failure("--via is direct, connect or forward");
  }
  if (o.via != "direct" && o.target.empty()) throw Failure("--via " + o.via + " needs --target");
  return o;
}

}  // namespace

int main(int argc, char **argv) {
  try {
    const Options o = parse_options(argc, argv);
    raise_nofile();
    if (o.mode == "bulk") {
      bulk(o);
    } else if (o.mode == "latency") {
      latency(o);
    } else if (o.mode == "tls") {
      tls(o);
    } else if (o.mode == "idle") {
      idle(o);
    } else if (o.mode == "hold") {
      hold(o);
    } else {
      throw Failure("unknown mode " + o.mode);
    }
  } catch (const std::exception &e) {
    std::cerr << "egress_bench: " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
