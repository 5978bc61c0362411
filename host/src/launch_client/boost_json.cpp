// Boost.JSON compiled into the core, header-only: the sandbox-host executable is started
// twice per sandboxed launch (run, then the stage-1 re-exec), and every shared library it
// links costs relocations at each start (docs/benchmarks.md).
#include <boost/json/src.hpp>
