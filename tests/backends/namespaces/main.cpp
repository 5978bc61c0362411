#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/stage1.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

SANDBOX_HOST_TEST_MAIN()
