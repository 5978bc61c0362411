/* A broker op written in C against ABI 1.7: its table ends before 1.8's report. */
#include <sandbox_host/abi.h>

#include <stddef.h>

static int32_t create(const sh_host_info *host, void **instance, sh_writer *error) {
  (void)error;
  *instance = (void *)host; /* any non-null token: this op keeps no state */
  return SH_OK;
}

static void destroy(void *instance) {
  (void)instance;
}

static int32_t handle(void *instance, const sh_request *request, const sh_requester *requester,
                      sh_reply *reply, sh_writer *error) {
  static const char kOut[] = "from C\n";
  (void)instance;
  (void)request;
  (void)requester;
  (void)error;
  reply->out.write(reply->out.ctx, (sh_str){kOut, sizeof kOut - 1});
  return SH_OK;
}

static const sh_broker_op_v1 kTable = {offsetof(sh_broker_op_v1, report), handle, NULL};

__attribute__((visibility("default"))) const sh_module_descriptor *sandbox_host_module_v1_7(void) {
  static const sh_module_descriptor descriptor = {
      sizeof(sh_module_descriptor), 1,      7,       SH_KIND_BROKER_OP, {"cop", 3}, {"0.0.7", 5},
      {"an op in C of ABI 1.7", 21}, create, destroy, &kTable};
  return &descriptor;
}
