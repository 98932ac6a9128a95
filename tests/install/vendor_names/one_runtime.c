/* The vendor-named libraries of lib64/ are one runtime: a symbol looked up through any of them
 * is the one library's own function, and state set through one is seen through another.
 * Usage: one_runtime LIB64 SONAME:SYMBOL...   (each pair: a library and a symbol it exports)
 * Exits 0 only if every lookup lands on libascendless.so.0's definition and a device chosen
 * through libacl_rt.so is the current device asked through libascendcl.so. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

static void *open_lib(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
  return handle;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *dir = argv[1];
  void *core = open_lib(dir, "libascendless.so.0");
  if (core == NULL) return 1;
  for (int i = 2; i < argc; i++) {
    char name[256];
    const char *colon = strchr(argv[i], ':');
    if (colon == NULL || (size_t)(colon - argv[i]) >= sizeof name) return 2;
    memcpy(name, argv[i], (size_t)(colon - argv[i]));
    name[colon - argv[i]] = '\0';
    void *lib = open_lib(dir, name);
    if (lib == NULL) return 1;
    void *through = dlsym(lib, colon + 1);
    void *own = dlsym(core, colon + 1);
    if (through == NULL || through != own) {
      fprintf(stderr, "%s through %s is %p, the library's own is %p\n", colon + 1, name, through, own);
      return 1;
    }
  }

  void *rt = open_lib(dir, "libacl_rt.so");
  void *cl = open_lib(dir, "libascendcl.so");
  if (rt == NULL || cl == NULL) return 1;
  aclError (*init)(const char *) = (aclError(*)(const char *))dlsym(rt, "aclInit");
  aclError (*set_device)(int32_t) = (aclError(*)(int32_t))dlsym(rt, "aclrtSetDevice");
  aclError (*get_device)(int32_t *) = (aclError(*)(int32_t *))dlsym(cl, "aclrtGetDevice");
  aclError (*reset_device)(int32_t) = (aclError(*)(int32_t))dlsym(cl, "aclrtResetDevice");
  aclError (*finalize)(void) = (aclError(*)(void))dlsym(cl, "aclFinalize");
  if (!init || !set_device || !get_device || !reset_device || !finalize) return 1;
  int32_t device = -1;
  if (init(NULL) != ACL_SUCCESS || set_device(3) != ACL_SUCCESS || get_device(&device) != ACL_SUCCESS || device != 3) {
    fprintf(stderr, "device 3 set through libacl_rt.so reads back as %d through libascendcl.so\n", device);
    return 1;
  }
  if (reset_device(3) != ACL_SUCCESS || finalize() != ACL_SUCCESS) return 1;
  printf("one_runtime: %d lookups reach libascendless.so.0; device 3 set through libacl_rt.so is current through libascendcl.so\n",
         argc - 2);
  return 0;
}
