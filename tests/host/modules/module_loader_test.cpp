#include "fixtures.hpp"

#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/module.hpp>
#include <sandbox_host/host/op_report.hpp>
#include <sandbox_host/host/registry.hpp>

#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

#include <fstream>

namespace sandbox_host {
namespace {

const std::filesystem::path kModules = TEST_MODULE_DIR;

// The error loading `file` as `kind` gives, or "" when it loads.
std::string load_error(const std::string &file, ModuleKind kind = ModuleKind::backend) {
  try {
    LoadedModule module(kModules / file, kind);
  } catch (const ModuleError &e) {
    EXPECT_EQ(e.file(), kModules / file);
    return e.what();
  }
  return "";
}

std::string module_prefix(const std::string &file) {
  return "module " + (kModules / file).string() + ": ";
}

TEST(ModuleLoader, LoadsAGoodModule) {
  LoadedModule module(kModules / "backend_alpha.so", ModuleKind::backend);
  EXPECT_EQ(module.name(), "alpha");
  EXPECT_EQ(module.version(), "0.0.1");
  EXPECT_EQ(module.summary(), "probe test backend");
  EXPECT_EQ(module.abi(), kHostAbi);
  EXPECT_NE(module.instance(), nullptr);
}

TEST(ModuleLoader, LoadsAModuleWrittenInC) {
  LoadedModule module(kModules / "backend_cbackend.so", ModuleKind::backend);
  EXPECT_EQ(module.name(), "cbackend");
  EXPECT_EQ(module.version(), "1.2.3");
  ProbeReport report = BackendModule(std::make_shared<LoadedModule>(
                                         kModules / "backend_cbackend.so", ModuleKind::backend))
                           .probe();
  EXPECT_TRUE(report.available);
  EXPECT_EQ(report.warning, "written in C");
}

// An op built before ABI 1.8 has a table without report: it loads, and reports nothing.
TEST(ModuleLoader, LoadsAnOpOfAnOlderMinorWhoseTableIsShorter) {
  LoadedModule op(kModules / "op_cop.so", ModuleKind::broker_op);
  EXPECT_EQ(op.name(), "cop");
  EXPECT_EQ(op.abi(), (AbiVersion{1, 7}));
  const OpReport report = op_report(op);
  EXPECT_TRUE(report.facts.empty());
  EXPECT_EQ(report.error, "");
}

// "1.<minor>" of the host these tests are built with.
std::string host_abi() {
  return std::to_string(SANDBOX_HOST_ABI_MAJOR) + "." + std::to_string(SANDBOX_HOST_ABI_MINOR);
}

TEST(ModuleLoader, RefusesAnotherAbiMajor) {
  EXPECT_EQ(load_error("backend_abimajor.so"), module_prefix("backend_abimajor.so") +
                                                   "built for module ABI 2.0, this host speaks " +
                                                   host_abi() + " (the major version must match)");
}

TEST(ModuleLoader, RefusesANewerAbiMinor) {
  EXPECT_EQ(load_error("backend_abiminor.so"),
            module_prefix("backend_abiminor.so") + "built for module ABI 1." +
                std::to_string(SANDBOX_HOST_ABI_MINOR + 1) + ", newer than this host's " +
                host_abi() + "; upgrade sandbox-host or rebuild the module against SDK " +
                host_abi());
}

TEST(ModuleLoader, RefusesAFileWithoutTheEntrySymbol) {
  EXPECT_EQ(load_error("backend_noentry.so"),
            module_prefix("backend_noentry.so") +
                "no entry symbol sandbox_host_module_v1_<minor <= " +
                std::to_string(SANDBOX_HOST_ABI_MINOR) +
                ">; not a sandbox-host module, "
                "or built without a SANDBOX_HOST_*_MODULE registration");
}

TEST(ModuleLoader, RefusesAFileThatIsNotElf) {
  EXPECT_EQ(load_error("backend_notelf.so"), module_prefix("backend_notelf.so") +
                                                 "not an ELF shared object: 20 bytes, shorter "
                                                 "than an ELF header");
  test::TempFile long_text(std::string(200, 'x'), "backend_text.so");
  try {
    LoadedModule module(long_text.path(), ModuleKind::backend);
    FAIL() << "a text file loaded";
  } catch (const ModuleError &e) {
    EXPECT_STREQ(e.what(), ("module " + long_text.path().string() +
                            ": not an ELF shared object: no ELF magic at its start")
                               .c_str());
  }
}

TEST(ModuleLoader, RefusesATruncatedModule) {
  std::string error = load_error("backend_truncated.so");
  EXPECT_EQ(error.rfind(module_prefix("backend_truncated.so") +
                            "truncated ELF file: its section headers end at byte ",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find(" of 8192"), std::string::npos) << error;
}

TEST(ModuleLoader, RefusesAModuleWhoseInitFails) {
  EXPECT_EQ(load_error("backend_initfails.so"),
            module_prefix("backend_initfails.so") + "init failed: cannot open /dev/frobnicator");
}

TEST(ModuleLoader, RefusesAModuleOfAnotherKind) {
  EXPECT_EQ(
      load_error("backend_wrongkind.so"),
      module_prefix("backend_wrongkind.so") + "is a broker-op module, expected a backend module");
}

TEST(ModuleLoader, RefusesAModuleWhoseNameIsNotItsFilesName) {
  EXPECT_EQ(load_error("op_misnamed.so", ModuleKind::broker_op),
            module_prefix("op_misnamed.so") +
                "registers the name \"ping\", so its file must be op_ping.so");
}

TEST(ModuleLoader, RefusesADirectory) {
  EXPECT_EQ(load_error(".", ModuleKind::backend), module_prefix(".") + "not a regular file");
}

// A directory full of bad modules: each is refused with its reason and audited, the good ones
// load, and the host keeps working with them.
TEST(Registry, BadModulesAreRefusedAndTheHostKeepsWorking) {
  test::AuditCapture audit;
  test::ScopedEnv alpha("TEST_BACKEND_ALPHA", "1");
  test::ScopedEnv forced(std::string(kEnvBackend), std::nullopt);
  Host host(audit.apply(test::test_config({"abimajor", "abiminor", "noentry", "notelf", "truncated",
                                           "initfails", "wrongkind", "absent", "alpha"},
                                          {"abimajor", "truncated", "absent", "alpha"}, {"ping"})));
  host.load_enabled();

  auto failures = host.registry().failures();
  ASSERT_EQ(failures.size(), 8u);
  for (const auto &failure : failures) {
    EXPECT_EQ(failure.kind, ModuleKind::backend);
    EXPECT_NE(failure.error.find("backend_" + failure.name + ".so"), std::string::npos)
        << failure.error;
  }
  EXPECT_EQ(host.registry().failure(ModuleKind::backend, "absent"),
            "module backend_absent.so: not installed (module directories: " +
                std::string(TEST_MODULE_DIR) + ", " + BUILD_MODULE_DIR + ")");
  // Every refusal but the missing file is audited.
  auto records = audit.records();
  EXPECT_EQ(records.size(), 7u);
  for (const auto &record : records) {
    EXPECT_EQ(record.at("component"), "module");
    EXPECT_EQ(record.at("rule"), "module-load");
  }

  ASSERT_NE(host.registry().find(ModuleKind::backend, "alpha"), nullptr);
  ASSERT_NE(host.registry().find(ModuleKind::broker_op, "ping"), nullptr);
  EXPECT_EQ(host.probe().mode, "alpha");
}

// A backend of ABI 1.3 loads, but the struct it reads ends before Spec::view: the host must
// not hand it a policy's launch it would run as a plugin's.
TEST(Registry, AnAgentPolicysLaunchIsRefusedToABackendOfAnOlderAbi) {
  test::ScopedEnv forced(std::string(kEnvBackend), std::nullopt);
  Host host(test::test_config({"abiold"}, {"abiold"}));
  host.load_enabled();
  ASSERT_EQ(host.registry().failures().size(), 0u);
  sandboxtest::TempSpec t("report", REPORT_PLUGIN);
  t.spec.view = {{"/usr", PathAccess::read}};
  try {
    host.command(t.spec, "abiold");
    FAIL() << "a view reached a backend of ABI 1.3";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(),
                 "backend abiold is built against module ABI 1.3, which has no agent policy "
                 "view (1.4); it cannot hold this launch to its policy");
  }
}

// Nor can it see the limits (1.6): its launches go ahead, each audited as unbounded.
TEST(Registry, ALaunchOnABackendOlderThanTheLimitsIsAuditedAsUnbounded) {
  test::ScopedEnv forced(std::string(kEnvBackend), std::nullopt);
  test::AuditCapture audit;
  Host host(audit.apply(test::test_config({"abiold", "namespaces"}, {"abiold"})));
  host.load_enabled();
  ASSERT_EQ(host.registry().failures().size(), 0u);
  sandboxtest::TempSpec t("report", REPORT_PLUGIN);
  // The stand-in builds no command; the host has decided on the launch before it asks.
  EXPECT_THROW(host.command(t.spec, "abiold"), std::exception);
  host.command(t.spec, "namespaces");
  std::vector<std::map<std::string, std::string>> unbounded;
  for (auto &record : audit.records()) {
    if (record["rule"] == "limits-unenforced") unbounded.push_back(record);
  }
  ASSERT_EQ(unbounded.size(), 1u);
  EXPECT_EQ(unbounded[0]["component"], "abiold");
  EXPECT_EQ(unbounded[0]["plugin"], "report");
  EXPECT_EQ(unbounded[0]["refused"], "false");
  EXPECT_EQ(unbounded[0]["attempted"],
            "launch without [limits]: backend abiold is built against module ABI 1.3, which has "
            "no limits (1.6)");
}

TEST(Registry, ModulesOutliveTheRegistryWhileInUse) {
  std::shared_ptr<const LoadedModule> kept;
  {
    Registry registry({TEST_MODULE_DIR});
    kept = registry.load(ModuleKind::backend, "alpha");
  }
  // The library is still mapped: calling into the module works.
  test::ScopedEnv alpha("TEST_BACKEND_ALPHA", "1");
  EXPECT_TRUE(BackendModule(kept).probe().available);
}

}  // namespace
}  // namespace sandbox_host
