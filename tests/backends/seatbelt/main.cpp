// Host::command refuses to build a command in a binary that never wired stage1().
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/stage1.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

SANDBOX_HOST_TEST_MAIN()
