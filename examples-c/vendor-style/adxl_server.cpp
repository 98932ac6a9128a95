// The ADXL sample's server, written as the vendor's sample is: it fills device memory,
// registers it with an engine listening on 127.0.0.1:PORT, publishes the address and waits
// while a client READs and then WRITEs it; then it checks what the client wrote.
// Usage: adxl_server PORT DIR   (DIR/server_addr is published; DIR/client_done is awaited)
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "adxl/adxl_engine.h"
#include "sample_common.h"

#define CHECK_ACL(call)                                             \
  do {                                                              \
    aclError ret_ = (call);                                         \
    if (ret_ != ACL_SUCCESS) {                                      \
      std::fprintf(stderr, "%s failed: %d\n", #call, int(ret_));    \
      return 1;                                                     \
    }                                                               \
  } while (0)
#define CHECK_ADXL(call)                                            \
  do {                                                              \
    adxl::Status ret_ = (call);                                     \
    if (ret_ != adxl::SUCCESS) {                                    \
      std::fprintf(stderr, "%s failed: %u\n", #call, ret_);         \
      return 1;                                                     \
    }                                                               \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PORT DIR\n", argv[0]);
    return 2;
  }
  const std::string local_engine = std::string("127.0.0.1:") + argv[1];
  const std::string dir = argv[2];

  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  void *dev = nullptr;
  CHECK_ACL(aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_HUGE_FIRST));
  std::vector<uint8_t> host(kSize);
  for (size_t i = 0; i < kSize; i++) host[i] = ServerByte(i);
  CHECK_ACL(aclrtMemcpy(dev, kSize, host.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE));

  adxl::AdxlEngine engine;
  std::map<adxl::AscendString, adxl::AscendString> options;
  CHECK_ADXL(engine.Initialize(local_engine.c_str(), options));
  adxl::MemDesc mem{};
  mem.addr = reinterpret_cast<uintptr_t>(dev);
  mem.len = kSize;
  adxl::MemHandle handle = nullptr;
  CHECK_ADXL(engine.RegisterMem(mem, adxl::MEM_DEVICE, handle));

  // The client learns where to read from this file (a real deployment sends it over its own
  // channel, as the vendor's sample leaves to the user).
  if (!Publish(dir + "/server_addr", std::to_string(mem.addr))) {
    std::fprintf(stderr, "cannot write %s/server_addr\n", dir.c_str());
    return 1;
  }
  std::printf("server %s: %zu bytes of device memory registered at 0x%lx\n", local_engine.c_str(), kSize,
              static_cast<unsigned long>(mem.addr));
  std::fflush(stdout);
  if (WaitFor(dir + "/client_done", 60) != "ok") {
    std::fprintf(stderr, "the client did not finish\n");
    return 1;
  }

  CHECK_ACL(aclrtMemcpy(host.data(), kSize, dev, kSize, ACL_MEMCPY_DEVICE_TO_HOST));
  for (size_t i = 0; i < kSize; i++) {
    if (host[i] != ClientByte(i)) {
      std::fprintf(stderr, "byte %zu is %u after the client's WRITE, not %u\n", i, host[i], ClientByte(i));
      return 1;
    }
  }
  std::printf("server: the client's WRITE arrived intact\n");

  CHECK_ADXL(engine.DeregisterMem(handle));
  engine.Finalize();
  CHECK_ACL(aclrtFree(dev));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  return 0;
}
