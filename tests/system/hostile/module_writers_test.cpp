// Module files another uid or a group could have written, as a plugin's user could plant one
// where the host looks: the loader refuses them before it runs any of their code, whatever
// their kind (an egress module here, which serve loads beside the proxy), naming the file,
// its directory and what is wrong.
#include <gtest/gtest.h>

#include "fixtures.hpp"

#include <sandbox_host/host/module.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace sandbox_host {
namespace {
namespace fs = std::filesystem;

class ModuleWriters : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_.dir() / "modules";
    fs::create_directory(dir_);
    fs::permissions(dir_, fs::perms(0755));
    module_ = dir_ / "egress_connect.so";
    fs::copy_file(fs::path(TEST_MODULE_DIR) / "egress_connect.so", module_);
    fs::permissions(module_, fs::perms(0755));
  }

  // Past the loader's checks, the module's own init complains of the missing config.
  static constexpr const char *kLoaded = "init failed: egress.connect.socket";

  std::string load_error() const {
    try {
      LoadedModule module(module_, ModuleKind::egress);
    } catch (const ModuleError &e) {
      return e.what();
    }
    return "";
  }

  test::TempFile scratch_{"", "unused"};
  fs::path dir_, module_;
};

TEST_F(ModuleWriters, OnlyTheOwnerMayWriteTheFileOrItsDirectory) {
  ASSERT_NE(load_error().find(kLoaded), std::string::npos) << "the module as installed loads";

  fs::permissions(module_, fs::perms(0775));
  EXPECT_NE(load_error().find("the file " + module_.string() +
                              " is mode 0775, writable by its group or by every user"),
            std::string::npos)
      << load_error();
  fs::permissions(module_, fs::perms(0757));
  EXPECT_NE(load_error().find("is mode 0757"), std::string::npos) << load_error();
  fs::permissions(module_, fs::perms(0755));

  fs::permissions(dir_, fs::perms(0777));
  EXPECT_NE(load_error().find("its directory " + dir_.string() + " is mode 0777"),
            std::string::npos)
      << load_error();
  // A sticky directory still lets every user add a file of the name the registry looks for.
  fs::permissions(dir_, fs::perms(01777));
  EXPECT_NE(load_error().find("is mode 1777"), std::string::npos) << load_error();
  fs::permissions(dir_, fs::perms(0755));
  EXPECT_NE(load_error().find(kLoaded), std::string::npos) << load_error();
}

TEST_F(ModuleWriters, AFileOrDirectoryOfAnotherUidIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "handing a file to another uid needs root";
  ASSERT_EQ(::chown(module_.c_str(), test::kNobody, test::kNobody), 0);
  EXPECT_NE(load_error().find("the file " + module_.string() +
                              " belongs to uid 65534, neither "
                              "root nor uid 0"),
            std::string::npos)
      << load_error();
  ASSERT_EQ(::chown(module_.c_str(), 0, 0), 0);
  ASSERT_EQ(::chown(dir_.c_str(), test::kNobody, test::kNobody), 0);
  EXPECT_NE(load_error().find("its directory " + dir_.string() + " belongs to uid 65534"),
            std::string::npos)
      << load_error();
}

// A symlink is judged by what it leads to: a link in a good directory to a file anyone may
// write is refused.
TEST_F(ModuleWriters, ASymlinkIsJudgedByWhatItLeadsTo) {
  const fs::path elsewhere = scratch_.dir() / "open";
  fs::create_directory(elsewhere);
  fs::permissions(elsewhere, fs::perms(0777));
  fs::rename(module_, elsewhere / "egress_connect.so");
  fs::create_symlink(elsewhere / "egress_connect.so", module_);
  EXPECT_NE(load_error().find("its directory " + elsewhere.string() + " is mode 0777"),
            std::string::npos)
      << load_error();
}

}  // namespace
}  // namespace sandbox_host
