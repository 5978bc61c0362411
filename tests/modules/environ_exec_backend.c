/* A backend as one built against ABI 1.9 is: its stage 1 execs the plugin with environ, the
 * environment the host gave the process, since the Spec had no env before 1.10. The host
 * must still give it the plugin's environment there, and only there. */
#include <sandbox_host/abi.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static int32_t create(const sh_host_info *host, void **instance, sh_writer *error) {
  (void)error;
  *instance = (void *)host;
  return SH_OK;
}

static void destroy(void *instance) {
  (void)instance;
}

static int32_t probe(void *instance, sh_probe_report *out) {
  (void)instance;
  out->available = 1;
  return SH_OK;
}

static int32_t build_command(void *instance, const sh_spec *spec, sh_command_builder *out,
                             sh_writer *error) {
  (void)instance;
  (void)spec;
  (void)error;
  out->reexec_stage1(out->ctx);
  return SH_OK;
}

/* A copy of an sh_str as a C string; the process execs or exits soon after. */
static char *c_string(sh_str text) {
  char *copy = malloc(text.size + 1);
  if (copy == NULL) return NULL;
  memcpy(copy, text.data, text.size);
  copy[text.size] = '\0';
  return copy;
}

static int32_t stage1(void *instance, const sh_spec *spec, sh_writer *error) {
  static const char kFailed[] = "exec: the plugin did not start";
  char **argv = calloc(spec->args.count + 2, sizeof *argv);
  size_t i;
  (void)instance;
  if (argv == NULL) return SH_ERROR;
  argv[0] = c_string(spec->binary_path);
  for (i = 0; i < spec->args.count; ++i) argv[i + 1] = c_string(spec->args.items[i]);
  execve(argv[0], argv, environ);
  error->write(error->ctx, (sh_str){kFailed, sizeof kFailed - 1});
  return SH_ERROR;
}

/* Written against ABI 1.9; 1.10 appended nothing to the table, only to sh_spec. */
static const sh_backend_v1 kTable = {sizeof(sh_backend_v1), probe, build_command, stage1, NULL};

__attribute__((visibility("default"))) const sh_module_descriptor *sandbox_host_module_v1_9(void) {
  static const sh_module_descriptor descriptor = {sizeof(sh_module_descriptor),
                                                  1,
                                                  9,
                                                  SH_KIND_BACKEND,
                                                  {"olderexec", 9},
                                                  {"1.9.0", 5},
                                                  {"execs with environ, as before 1.10", 34},
                                                  create,
                                                  destroy,
                                                  &kTable};
  return &descriptor;
}
