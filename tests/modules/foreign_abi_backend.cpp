// A module as a different SDK would build it: its descriptor and entry symbol speak ABI
// TEST_ABI_MAJOR.TEST_ABI_MINOR instead of this SDK's.
#include <sandbox_host/abi.h>

#include <boost/dll/alias.hpp>
#include <boost/preprocessor/cat.hpp>

namespace {

int32_t create(const sh_host_info *, void **instance, sh_writer *) noexcept {
  static int token;
  *instance = &token;
  return SH_OK;
}
void destroy(void *) noexcept {}
int32_t probe(void *, sh_probe_report *out) noexcept {
  out->available = 1;
  return SH_OK;
}
int32_t build(void *, const sh_spec *, sh_command_builder *, sh_writer *) noexcept {
  return SH_ERROR;
}
int32_t stage1(void *, const sh_spec *, sh_writer *) noexcept {
  return SH_ERROR;
}

const sh_backend_v1 table{sizeof(sh_backend_v1), &probe, &build, &stage1, nullptr};

const sh_module_descriptor *entry() {
  static const sh_module_descriptor descriptor{sizeof(sh_module_descriptor),
                                               TEST_ABI_MAJOR,
                                               TEST_ABI_MINOR,
                                               SH_KIND_BACKEND,
                                               {TEST_NAME, sizeof(TEST_NAME) - 1},
                                               {"9.9.9", 5},
                                               {"", 0},
                                               &create,
                                               &destroy,
                                               &table};
  return &descriptor;
}

}  // namespace

BOOST_DLL_ALIAS(entry, BOOST_PP_CAT(sandbox_host_module_v,
                                    BOOST_PP_CAT(TEST_ABI_MAJOR, BOOST_PP_CAT(_, TEST_ABI_MINOR))))
