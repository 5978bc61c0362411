/* A backend written in C against abi.h alone: its entry is a plain exported function. */
#include <sandbox_host/abi.h>

#include <string.h>

static int32_t create(const sh_host_info *host, void **instance, sh_writer *error) {
  static const char kTooOld[] = "host ABI too old";
  if (host->abi_major != SANDBOX_HOST_ABI_MAJOR) {
    error->write(error->ctx, (sh_str){kTooOld, sizeof kTooOld - 1});
    return SH_ERROR;
  }
  *instance = (void *)host; /* any non-null token: this backend keeps no state */
  return SH_OK;
}

static void destroy(void *instance) {
  (void)instance;
}

static int32_t probe(void *instance, sh_probe_report *out) {
  static const char kWarning[] = "written in C";
  (void)instance;
  out->available = 1;
  out->warning.write(out->warning.ctx, (sh_str){kWarning, sizeof kWarning - 1});
  return SH_OK;
}

static int32_t build_command(void *instance, const sh_spec *spec, sh_command_builder *out,
                             sh_writer *error) {
  size_t i;
  (void)instance;
  (void)error;
  out->set_program(out->ctx, spec->binary_path);
  for (i = 0; i < spec->args.count; ++i) out->add_arg(out->ctx, spec->args.items[i]);
  return SH_OK;
}

static int32_t stage1(void *instance, const sh_spec *spec, sh_writer *error) {
  (void)instance;
  (void)spec;
  (void)error;
  return SH_ERROR;
}

/* Written against ABI 1.0: the table ends before 1.1's stage1_prepared. */
static const sh_backend_v1 kTable = {offsetof(sh_backend_v1, stage1_prepared), probe, build_command,
                                     stage1, NULL};

__attribute__((visibility("default"))) const sh_module_descriptor *sandbox_host_module_v1_0(void) {
  static const sh_module_descriptor descriptor = {
      sizeof(sh_module_descriptor), 1,      0,       SH_KIND_BACKEND, {"cbackend", 8}, {"1.2.3", 5},
      {"a backend in C", 14},       create, destroy, &kTable};
  return &descriptor;
}
