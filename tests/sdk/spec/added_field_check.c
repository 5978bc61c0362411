/* The C side of the same edit: a module written in C sees the new member at the end. */
#include <sandbox_host/abi.h>

#include <stddef.h>

typedef char appended[offsetof(sh_spec, added_by_the_test) > offsetof(sh_spec, limits) ? 1 : -1];

int main(void) {
  sh_spec spec = {0};
  spec.added_by_the_test.size = 0;
  return (int)spec.added_by_the_test.size;
}
