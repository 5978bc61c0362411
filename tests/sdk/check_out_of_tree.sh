#!/usr/bin/env bash
# Checks that a third party can build a module against the installed SDK alone and that
# the installed host loads and serves it, and that a gateway builds and runs its tests
# against the installed core library:
#   1. installs the main project's build tree into <scratch>/prefix;
#   2. checks no installed SDK header (include/sandbox_host/ without host/ and egress/)
#      includes a sandbox_host/host/ header, and every <sandbox_host/...> an installed header
#      includes is installed;
#   3. configures and builds sdk/examples/hello-op against that prefix only;
#   4. drops op_hello.so into <scratch>/modules, writes <scratch>/config.toml enabling it
#      (with [ops.hello] greeting = "hi" and [broker] state_dir = "<scratch>/state"), and
#      checks `sandbox-host modules --json` reports it loaded (kind op, name hello, the
#      host's ABI)
#      and nothing failed; and that a config with an unknown key in [ops.hello] makes the
#      module refuse to load, naming the key;
#   5. starts the installed <prefix>/bin/sandbox-host serve --config <scratch>/config.toml
#      (which runs <prefix>/libexec/sandbox-host/sandbox-host-broker), waits until
#      `sandbox-host ask hello` gets an answer, and checks that
#      `ask hello --arg world` prints exactly "hi, world" and exits 0, `ask hello` exits 126
#      with the module's message on stderr, and `ask hello --stream --arg a --arg b` prints
#      "hi, a" and "hi, b" as lines; then stops the broker (also when a check fails);
#   6. configures and builds egress/connect (an egress module) against that
#      prefix only, checks `sandbox-host modules --json` reports egress connect loaded with
#      [egress] implementation = "connect", and that an unknown key of [egress.connect]
#      refuses it, naming the key; then runs the installed `sandbox-host egress` with it and
#      checks, with a client on its unix socket, that a CONNECT to the allowed loopback
#      listener tunnels bytes both ways, that another target gets 403, and that the refusal
#      is in the audit (the command's stderr);
#   7. configures and builds examples/gateway-test against that prefix only
#      (find_package(SandboxHost), find_package(GTest)), runs it with
#      SANDBOX_HOST_TEST_MODULE_DIR=<scratch>/modules and checks that its off-backend test
#      passed and its probing test was skipped with the probe's reason.
#
# usage: check_out_of_tree.sh <source-dir> <build-dir> <sandbox-host-executable> <scratch-dir>
#
# <scratch-dir> is wiped at the start of every run. Needs cmake (or $CMAKE), a C++
# compiler, GoogleTest's CMake package and python3; runs as root or as any user who can
# read the build tree.
set -euo pipefail

fail() {
  echo "check_out_of_tree: FAIL: $*" >&2
  exit 1
}

if [[ $# -ne 4 ]]; then
  echo "usage: $0 <source-dir> <build-dir> <sandbox-host-executable> <scratch-dir>" >&2
  exit 2
fi

absolute() { # an absolute path for $1, which need not exist yet
  case "$1" in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s/%s\n' "$PWD" "$1" ;;
  esac
}

source_dir=$(absolute "$1")
build_dir=$(absolute "$2")
host_exe=$(absolute "$3")
scratch=$(absolute "$4")
cmake_bin=${CMAKE:-cmake}

hello_source="$source_dir/sdk/examples/hello-op"
connect_source="$source_dir/egress/connect"
gateway_source="$source_dir/examples/gateway-test"
for example in "$hello_source" "$connect_source" "$gateway_source"; do
  [[ -f "$example/CMakeLists.txt" ]] ||
    fail "$source_dir is not the sandbox-host source tree (no ${example#"$source_dir"/}/CMakeLists.txt)"
done
[[ -f "$build_dir/cmake_install.cmake" ]] ||
  fail "$build_dir is not a configured build tree of sandbox-host (no cmake_install.cmake)"
[[ -x "$host_exe" ]] || fail "$host_exe is not an executable"
command -v "$cmake_bin" >/dev/null || fail "cmake not found (set CMAKE=/path/to/cmake)"
command -v python3 >/dev/null || fail "python3 not found; it parses sandbox-host's JSON"

# Wipe the scratch directory, but never something that looks like a mistake.
case "$scratch" in
  / | /tmp | /tmp/ | "${HOME:-/}" | "${HOME:-/}/" | "$source_dir" | "$build_dir")
    fail "refusing to wipe $scratch as the scratch directory" ;;
esac
rm -rf -- "$scratch"
mkdir -p -- "$scratch"

prefix="$scratch/prefix"
hello_build="$scratch/hello-build"
connect_build="$scratch/connect-build"
gateway_build="$scratch/gateway-build"
modules="$scratch/modules"
config="$scratch/config.toml"
logs="$scratch/logs"
mkdir -p -- "$logs" "$modules"

# Runs a step with its output in $logs/<name>.log, shown when the step fails.
step() {
  local name=$1
  shift
  echo "check_out_of_tree: $name"
  if ! "$@" >"$logs/$name.log" 2>&1; then
    tail -n 40 "$logs/$name.log" >&2 || true
    fail "$name failed: $* (full log: $logs/$name.log)"
  fi
}

# 1. Install into the scratch prefix. `cmake --install` also writes install_manifest.txt
# into the build tree; when another user owns that tree, run a copy of its install script
# that writes the manifest into the scratch directory instead.
if [[ -w "$build_dir" ]]; then
  step install "$cmake_bin" --install "$build_dir" --prefix "$prefix"
else
  python3 - "$build_dir/cmake_install.cmake" "$scratch/cmake_install.cmake" "$build_dir" "$scratch" <<'EOF'
import sys
source, target, build_dir, scratch = sys.argv[1:]
text = open(source).read()
manifest = 'file(WRITE "' + build_dir + '/${CMAKE_INSTALL_MANIFEST}"'
if manifest not in text:
    sys.exit(f"check_out_of_tree: FAIL: {build_dir} is not writable and its install script "
             "does not write the manifest the way this script expects; run as its owner")
open(target, "w").write(text.replace(manifest, 'file(WRITE "' + scratch + '/${CMAKE_INSTALL_MANIFEST}"'))
EOF
  step install "$cmake_bin" -DCMAKE_INSTALL_PREFIX="$prefix" -P "$scratch/cmake_install.cmake"
fi

# 2. The installed SDK headers stand alone: the SDK is everything under
# include/sandbox_host/ except host/ and egress/, which hold the core library's and the
# egress proxy's headers (package SandboxHost), and no SDK header includes one of those.
include_dir="$prefix/include"
[[ -f "$include_dir/sandbox_host/module.hpp" ]] ||
  fail "the install put no SDK headers in $include_dir/sandbox_host"
[[ -f "$include_dir/sandbox_host/host/host.hpp" ]] ||
  fail "the install put no core library headers in $include_dir/sandbox_host/host"
find "$include_dir/sandbox_host" \( -path "$include_dir/sandbox_host/host" -o \
  -path "$include_dir/sandbox_host/egress" \) -prune -o -type f -print >"$logs/sdk-headers.txt"
[[ -s "$logs/sdk-headers.txt" ]] || fail "no SDK headers installed under $include_dir/sandbox_host"
: >"$logs/host-includes.txt"
while IFS= read -r header; do
  grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]sandbox_host/host/' "$header" \
    >>"$logs/host-includes.txt" || true
done <"$logs/sdk-headers.txt"
if [[ -s "$logs/host-includes.txt" ]]; then
  cat "$logs/host-includes.txt" >&2
  fail "installed SDK headers include host/ headers (above); the SDK must need nothing from host/"
fi
# Every <sandbox_host/...> an installed header (SDK or core) includes is installed too.
missing=0
while IFS= read -r included; do
  if [[ ! -f "$include_dir/$included" ]]; then
    echo "check_out_of_tree: an installed header includes <$included>, which is not installed" >&2
    missing=1
  fi
done < <(grep -rhoE '#[[:space:]]*include[[:space:]]*[<"]sandbox_host/[^>"]+' "$include_dir" |
           sed -E 's/.*[<"]//' | sort -u)
[[ $missing -eq 0 ]] || fail "the installed headers are incomplete"

# 3. Build the example against the installed prefix and nothing else.
# build_example <step> <source> <build dir> <module file>: configures and builds a module
# example against $prefix alone, checks that it found the SDK there, and prints the module.
build_example() {
  local name=$1 source=$2 build=$3 file=$4 example=${2#"$source_dir"/}
  step "$name-configure" "$cmake_bin" -S "$source" -B "$build" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
  local sdk_dir
  sdk_dir=$(sed -n 's/^SandboxHostSDK_DIR:PATH=//p' "$build/CMakeCache.txt")
  case "$sdk_dir" in
    "$prefix"/*) ;;
    *) fail "$example found the SDK at '$sdk_dir', not in the installed prefix $prefix" ;;
  esac
  step "$name-build" "$cmake_bin" --build "$build" >&2
  local built
  built=$(find "$build" -name "$file" -type f -print -quit)
  [[ -n "$built" ]] || fail "building $example produced no $file under $build"
  printf '%s\n' "$built"
}
built=$(build_example hello "$hello_source" "$hello_build" op_hello.so)

# 4. The host loads it. backend_off.so comes from the same install, since the config
# enables the off backend and module_dirs names only the scratch module directory.
cp -- "$built" "$modules/op_hello.so"
off=$(find "$prefix" -name backend_off.so -type f -print -quit)
[[ -n "$off" ]] || fail "the install put no backend_off.so under $prefix"
cp -- "$off" "$modules/backend_off.so"

state="$scratch/state"
spool="$state/spool"
# write_config <file> <the module's own tables>: the off backend, the scratch state and
# module directories, and what a check adds.
write_config() {
  cat >"$1" <<EOF
module_dirs = ["$modules"]

[backends]
enabled = ["off"]
priority = []

[broker]
state_dir = "$state"

$2
EOF
}
# write_hello_config <file> <the lines of the [ops.hello] table>
write_hello_config() { write_config "$1" "[ops]
enabled = [\"hello\"]

[ops.hello]
$2"; }
write_hello_config "$config" 'greeting = "hi"'

echo "check_out_of_tree: sandbox-host modules --json --config $config"
if ! "$host_exe" modules --json --config "$config" >"$scratch/modules.json" 2>"$logs/modules.err"; then
  cat "$logs/modules.err" >&2
  fail "sandbox-host modules --json --config $config exited non-zero"
fi

python3 - "$scratch/modules.json" "$modules" <<'EOF'
import json, sys

path, modules_dir = sys.argv[1], sys.argv[2]
try:
    with open(path) as f:
        report = json.load(f)
except ValueError as e:
    sys.exit(f"check_out_of_tree: FAIL: sandbox-host printed no valid JSON ({e}); see {path}")

problems = []
failed = report.get("failed")
if failed != []:
    problems.append(f"'failed' is not empty: {json.dumps(failed)}")
loaded = report.get("loaded") or []
hello = [m for m in loaded if m.get("kind") == "op" and m.get("name") == "hello"]
if len(hello) != 1:
    problems.append(f"no loaded module of kind 'op' and name 'hello' in {json.dumps(loaded)}")
else:
    m = hello[0]
    if m.get("abi") != report.get("host_abi"):
        problems.append(f"op hello has abi {m.get('abi')!r}, not the host's "
                        f"{report.get('host_abi')!r}")
    if m.get("file") != f"{modules_dir}/op_hello.so":
        problems.append(f"op hello was loaded from {m.get('file')!r}, not {modules_dir}/op_hello.so")
if problems:
    sys.exit("check_out_of_tree: FAIL: " + "; ".join(problems) + f" (report: {path})")
EOF

# The module reads its own [ops.hello] table: a key it does not know refuses its loading.
bad_config="$scratch/bad-key.toml"
write_hello_config "$bad_config" 'greting = "hi"'
echo "check_out_of_tree: sandbox-host modules --json --config $bad_config"
"$host_exe" modules --json --config "$bad_config" >"$scratch/bad-key.json" 2>"$logs/bad-key.err" ||
  true
python3 - "$scratch/bad-key.json" <<'EOF'
import json, sys

path = sys.argv[1]
try:
    with open(path) as f:
        report = json.load(f)
except ValueError as e:
    sys.exit(f"check_out_of_tree: FAIL: sandbox-host printed no valid JSON ({e}); see {path}")
expected = "ops.hello.greting: unknown key; allowed: greeting"
failed = [m for m in report.get("failed") or [] if m.get("name") == "hello"]
if len(failed) != 1 or expected not in failed[0].get("error", ""):
    sys.exit("check_out_of_tree: FAIL: with greting = \"hi\" in [ops.hello], op hello should "
             f"fail to load with '{expected}'; report: {json.dumps(report)}")
EOF

# 5. The installed host serves it. `serve` and `ask` are run by <prefix>/bin/sandbox-host
# through <prefix>/libexec/sandbox-host/sandbox-host-broker, so both must be installed.
installed_host="$prefix/bin/sandbox-host"
installed_broker="$prefix/libexec/sandbox-host/sandbox-host-broker"
[[ -x "$installed_host" ]] || fail "the install put no executable $installed_host"
[[ -x "$installed_broker" ]] || fail "the install put no executable $installed_broker"

# The broker runs in the background; it is stopped however this script ends.
broker_pid=
stop_broker() {
  if [[ -n "$broker_pid" ]]; then
    kill -TERM "$broker_pid" 2>/dev/null || true
    wait "$broker_pid" 2>/dev/null || true
    broker_pid=
  fi
}
trap stop_broker EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "check_out_of_tree: $installed_host serve --config $config &"
"$installed_host" serve --config "$config" >"$logs/serve.log" 2>&1 &
broker_pid=$!

# ask <name> <ask's arguments...>: asks hello, keeping stdout, stderr and the exit code in
# $logs/ask-<name>.{out,err,code}; returns the exit code.
ask() {
  local name=$1 code=0
  shift
  "$installed_host" ask hello --spool "$spool" "$@" \
    >"$logs/ask-$name.out" 2>"$logs/ask-$name.err" || code=$?
  echo "$code" >"$logs/ask-$name.code"
  return "$code"
}
show_ask() { # what ask <name> got, for a failure message
  echo "exit $(cat "$logs/ask-$1.code"); stdout: '$(cat "$logs/ask-$1.out")';" \
    "stderr: '$(cat "$logs/ask-$1.err")'; broker log: $logs/serve.log"
}

# The broker takes a moment to load the module and open the spool; until then ask exits
# 125 (no broker).
ready=0
for _ in $(seq 1 100); do
  if ! kill -0 "$broker_pid" 2>/dev/null; then
    tail -n 40 "$logs/serve.log" >&2 || true
    fail "sandbox-host serve --config $config exited early (log: $logs/serve.log)"
  fi
  if ask ready --arg x --timeout 2000; then
    ready=1
    break
  fi
  sleep 0.1
done
[[ $ready -eq 1 ]] || fail "the broker never answered ask hello --arg x: $(show_ask ready)"

echo "check_out_of_tree: sandbox-host ask hello --arg world --spool $spool"
ask world --arg world || fail "ask hello --arg world failed: $(show_ask world)"
printf 'hi, world' | cmp -s - "$logs/ask-world.out" ||
  fail "ask hello --arg world should print exactly 'hi, world': $(show_ask world)"

echo "check_out_of_tree: sandbox-host ask hello --spool $spool (no argument: refused)"
code=0
ask none || code=$?
[[ $code -eq 126 ]] ||
  fail "ask hello without an argument should exit 126 (refused): $(show_ask none)"
grep -qF 'hello: needs a name to greet' "$logs/ask-none.err" ||
  fail "ask hello without an argument should give the module's message on stderr: $(show_ask none)"
[[ ! -s "$logs/ask-none.out" ]] || fail "a refused ask printed on stdout: $(show_ask none)"

echo "check_out_of_tree: sandbox-host ask hello --stream --arg a --arg b --spool $spool"
ask stream --stream --arg a --arg b || fail "ask hello --stream failed: $(show_ask stream)"
printf 'hi, a\nhi, b\n' | cmp -s - "$logs/ask-stream.out" ||
  fail "ask hello --stream --arg a --arg b should print the lines 'hi, a' and 'hi, b': $(show_ask stream)"

# The broker stops cleanly on SIGTERM and says so.
kill -TERM "$broker_pid"
serve_code=0
wait "$broker_pid" || serve_code=$?
broker_pid=
[[ $serve_code -eq 0 ]] ||
  fail "sandbox-host serve exited $serve_code on SIGTERM, expected 0 (log: $logs/serve.log)"
grep -q 'stopped by signal' "$logs/serve.log" ||
  fail "sandbox-host serve did not report stopping (log: $logs/serve.log)"
echo "check_out_of_tree: $(tail -n 1 "$logs/serve.log")"

# 6. An egress module, built against the installed SDK alone, loaded and served.
built=$(build_example connect "$connect_source" "$connect_build" egress_connect.so)
cp -- "$built" "$modules/egress_connect.so"

connect_socket="$scratch/connect.sock"
# write_egress_config <file> <the lines of the [egress.connect] table>
write_egress_config() { write_config "$1" "[ops]
enabled = []

[egress]
implementation = \"connect\"

[egress.connect]
$2"; }
# The allowed target: a loopback listener of the client below, on a port picked now.
target_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
egress_config="$scratch/egress.toml"
write_egress_config "$egress_config" "socket = \"$connect_socket\"
allow = [\"127.0.0.1:$target_port\"]"
bad_egress="$scratch/egress-bad-key.toml"
write_egress_config "$bad_egress" "socket = \"$connect_socket\"
allow = [\"127.0.0.1:$target_port\"]
greting = 1"
for which in good bad; do
  file=$egress_config
  [[ $which == bad ]] && file=$bad_egress
  "$host_exe" modules --json --config "$file" >"$scratch/egress-$which.json" \
    2>"$logs/egress-$which.err" || true
done
python3 - "$scratch/egress-good.json" "$scratch/egress-bad.json" "$modules" <<'EOF'
import json, sys

good_path, bad_path, modules_dir = sys.argv[1:]
def read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError as e:
        sys.exit(f"check_out_of_tree: FAIL: sandbox-host printed no valid JSON ({e}); see {path}")
good, bad = read(good_path), read(bad_path)
connect = [m for m in good.get("loaded") or [] if m.get("kind") == "egress"]
problems = []
if len(connect) != 1 or connect[0].get("name") != "connect":
    problems.append(f"no loaded module of kind 'egress' and name 'connect' in {json.dumps(good)}")
elif connect[0].get("abi") != good.get("host_abi"):
    problems.append(f"egress connect has abi {connect[0].get('abi')!r}, not the host's")
elif connect[0].get("file") != f"{modules_dir}/egress_connect.so":
    problems.append(f"egress connect was loaded from {connect[0].get('file')!r}")
if good.get("failed") != []:
    problems.append(f"'failed' is not empty: {json.dumps(good.get('failed'))}")
expected = "egress.connect.greting: unknown key; allowed: socket, allow, port"
failed = [m for m in bad.get("failed") or [] if m.get("kind") == "egress"]
if len(failed) != 1 or expected not in failed[0].get("error", ""):
    problems.append(f"with greting = 1 in [egress.connect], egress connect should fail to load "
                    f"with '{expected}'; report: {json.dumps(bad)}")
if problems:
    sys.exit("check_out_of_tree: FAIL: " + "; ".join(problems))
EOF

echo "check_out_of_tree: $installed_host egress --config $egress_config &"
"$installed_host" egress --config "$egress_config" >"$logs/egress.log" 2>&1 &
broker_pid=$!
for _ in $(seq 1 100); do
  [[ -S "$connect_socket" ]] && break
  kill -0 "$broker_pid" 2>/dev/null ||
    fail "sandbox-host egress exited early: $(tail -n 20 "$logs/egress.log")"
  sleep 0.1
done
[[ -S "$connect_socket" ]] || fail "sandbox-host egress made no socket at $connect_socket"
python3 - "$connect_socket" "$target_port" <<'EOF' || fail "the egress module's tunnels (above)"
import socket, sys, threading

path, port = sys.argv[1], int(sys.argv[2])
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(1)
listener.settimeout(10)

def echo():
    peer, _ = listener.accept()
    peer.settimeout(10)
    peer.sendall(b"echo:" + peer.recv(100))
    peer.close()
threading.Thread(target=echo, daemon=True).start()

def ask(target, payload=b""):
    client = socket.socket(socket.AF_UNIX)
    client.settimeout(10)
    client.connect(path)
    client.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode() + payload)
    got = b""
    while True:
        chunk = client.recv(4096)
        if not chunk:
            return got
        got += chunk

tunnel = ask(f"127.0.0.1:{port}", b"hi")
if tunnel != b"HTTP/1.1 200 Connection established\r\n\r\necho:hi":
    sys.exit(f"check_out_of_tree: FAIL: a CONNECT to the allowed 127.0.0.1:{port} got {tunnel!r}")
refused = ask("127.0.0.1:1")
if not refused.startswith(b"HTTP/1.1 403 "):
    sys.exit(f"check_out_of_tree: FAIL: a CONNECT to 127.0.0.1:1 got {refused!r}, not 403")
EOF
kill -TERM "$broker_pid"
wait "$broker_pid" || true
broker_pid=
grep -qF 'CONNECT 127.0.0.1:1' "$logs/egress.log" ||
  fail "the refused CONNECT left no audit record (log: $logs/egress.log)"
[[ ! -e "$connect_socket" ]] || fail "sandbox-host egress left its socket $connect_socket behind"
echo "check_out_of_tree: egress connect, built against $prefix alone, tunnelled and refused as configured"

# 7. A gateway's test, built against the installed SandboxHost package and GoogleTest.
step gateway-configure "$cmake_bin" -S "$gateway_source" -B "$gateway_build" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
for package in SandboxHost SandboxHostSDK; do
  package_dir=$(sed -n "s/^${package}_DIR:PATH=//p" "$gateway_build/CMakeCache.txt")
  case "$package_dir" in
    "$prefix"/*) ;;
    *) fail "examples/gateway-test found $package at '$package_dir', not in the installed prefix $prefix" ;;
  esac
done
step gateway-build "$cmake_bin" --build "$gateway_build"
gateway_test="$gateway_build/gateway_test"
[[ -x "$gateway_test" ]] || fail "building examples/gateway-test produced no $gateway_test"

echo "check_out_of_tree: SANDBOX_HOST_TEST_MODULE_DIR=$modules $gateway_test --gtest_brief=0"
gateway_log="$logs/gateway-test.log"
# No forced backend: the probing test must see this host as it is.
if ! env -u CLAWPATROL_SANDBOX_BACKEND SANDBOX_HOST_TEST_MODULE_DIR="$modules" \
     "$gateway_test" --gtest_brief=0 >"$gateway_log" 2>&1; then
  tail -n 40 "$gateway_log" >&2 || true
  fail "$gateway_test exited non-zero (full log: $gateway_log)"
fi

python3 - "$gateway_log" <<'EOF'
import re, sys

path = sys.argv[1]
probing = "Gateway.RunsTrueInTheBestSandbox"
off = "Gateway.RunsTrueUnsandboxedWhenTheConfigSaysOff"
reason = "no sandbox backend here:"
log = open(path, errors="replace").read()

# Each test's output, from its "[ RUN      ]" line to its result line.
results = {}
for m in re.finditer(r"^\[ RUN      \] (\S+)\n(.*?)^\[ *(OK|SKIPPED|FAILED) *\] \1\b",
                     log, re.S | re.M):
    results[m.group(1)] = (m.group(3), m.group(2))

problems = []
if off not in results:
    problems.append(f"{off} did not run")
elif results[off][0] != "OK":
    problems.append(f"{off} {results[off][0]}, expected OK")
if probing not in results:
    problems.append(f"{probing} did not run")
else:
    result, output = results[probing]
    if result == "OK":
        problems.append(f"{probing} ran and passed: a sandbox backend works under this host's "
                        "default config, so the skip path was not exercised")
    elif result != "SKIPPED":
        problems.append(f"{probing} {result}, expected SKIPPED")
    elif reason not in output:
        problems.append(f"{probing} was skipped without the probe's reason ('{reason} ...')")
if problems:
    sys.exit("check_out_of_tree: FAIL: " + "; ".join(problems) + f" (log: {path})")
skip = next(line for line in results[probing][1].splitlines() if reason in line)
print(f"check_out_of_tree: {off} passed; {probing} skipped: {skip.strip()}")
EOF

echo "check_out_of_tree: PASS: op_hello.so and egress_connect.so built against $prefix alone," \
  "loaded by $host_exe and served by $installed_host; gateway_test built against $prefix alone" \
  "and ran"
