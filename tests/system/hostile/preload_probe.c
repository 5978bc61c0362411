/* A library a plugin names in LD_PRELOAD (or LD_AUDIT), for tests/system/hostile: wherever the
 * dynamic loader loads it, its constructor says so on stderr with the program's name. In the
 * plugin that is what the plugin asked for; in sandbox-host it is code of the plugin's
 * choosing running on the host's side of the sandbox. */
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void say_where_loaded(void) {
  char exe[4096];
  const ssize_t size = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (size <= 0) return;
  exe[size] = '\0';
  const char *name = strrchr(exe, '/');
  name = name != NULL ? name + 1 : exe;
  static const char prefix[] = "preload-probe: loaded in ";
  ssize_t ignored = write(STDERR_FILENO, prefix, sizeof prefix - 1);
  ignored = write(STDERR_FILENO, name, strlen(name));
  ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
}

/* Named in LD_AUDIT too: the loader takes a library as an auditor only with this. */
unsigned int la_version(unsigned int version) {
  return version;
}
