// A shared object with no sandbox-host entry symbol: some other library in a module dir.
extern "C" __attribute__((visibility("default"))) int not_a_module() {
  return 42;
}
