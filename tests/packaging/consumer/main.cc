// A program outside warden's tree (tests/packaging/consumer_test.sh): runs
// run.cc's job, linked in, or from a shared library it loads.
//
//   consumer DB_FILE              run.cc, linked with libwarden.a
//   consumer DB_FILE LIBRARY.so   dlopen() the library and call its copy
#include <dlfcn.h>

#include <cstdio>

extern "C" int warden_consumer_run(const char* db_file);

int main(int argc, char** argv) {
  if (argc == 2) return warden_consumer_run(argv[1]);
  if (argc != 3) {
    std::fprintf(stderr, "usage: consumer DB_FILE [LIBRARY.so]\n");
    return 2;
  }
  void* library = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  using Run = int (*)(const char*);
  auto run = reinterpret_cast<Run>(dlsym(library, "warden_consumer_run"));
  if (run == nullptr) {
    std::fprintf(stderr, "dlsym: %s\n", dlerror());
    return 1;
  }
  return run(argv[1]);
}
