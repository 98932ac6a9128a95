// The HIXL sample's server: registers 1 MiB of device memory filled with a known pattern,
// publishes its address, waits until a client has read it and written another pattern back,
// and checks that pattern. The client may be hixl::Hixl or adxl::AdxlEngine (the same wire).
// Usage: hixl_server PORT DIR
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "hixl/hixl.h"
#include "sample_common.h"

#define CHECK_ACL(call)                                          \
  do {                                                           \
    aclError ret_ = (call);                                      \
    if (ret_ != ACL_SUCCESS) {                                   \
      std::fprintf(stderr, "%s failed: %d\n", #call, int(ret_)); \
      return 1;                                                  \
    }                                                            \
  } while (0)
#define CHECK_HIXL(call)                                         \
  do {                                                           \
    hixl::Status ret_ = (call);                                  \
    if (ret_ != hixl::SUCCESS) {                                 \
      std::fprintf(stderr, "%s failed: %u\n", #call, ret_);      \
      return 1;                                                  \
    }                                                            \
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
  CHECK_ACL(aclrtMalloc(&dev, kSize, ACL_MEM_MALLOC_HUGE_ONLY));
  std::vector<uint8_t> host(kSize);
  for (size_t i = 0; i < kSize; i++) host[i] = ServerByte(i);
  CHECK_ACL(aclrtMemcpy(dev, kSize, host.data(), kSize, ACL_MEMCPY_HOST_TO_DEVICE));

  hixl::Hixl engine;
  std::map<hixl::AscendString, hixl::AscendString> options;
  options[hixl::OPTION_BUFFER_POOL] = "0:0";
  CHECK_HIXL(engine.Initialize(local_engine.c_str(), options));
  hixl::MemDesc mem{};
  mem.addr = reinterpret_cast<uintptr_t>(dev);
  mem.len = kSize;
  hixl::MemHandle handle = nullptr;
  CHECK_HIXL(engine.RegisterMem(mem, hixl::MEM_DEVICE, handle));

  if (!Publish(dir + "/server_addr", std::to_string(mem.addr))) {
    std::fprintf(stderr, "cannot write %s/server_addr\n", dir.c_str());
    return 1;
  }
  std::printf("server %s: %zu bytes of device memory registered\n", local_engine.c_str(), kSize);
  std::fflush(stdout);
  if (WaitFor(dir + "/client_done", 60) != "ok") {
    std::fprintf(stderr, "the client did not finish\n");
    return 1;
  }
  std::vector<hixl::NotifyDesc> notifies;
  CHECK_HIXL(engine.GetNotifies(notifies));
  for (const auto &n : notifies) {
    std::printf("server: notify %s: %s\n", n.name.GetString(), n.notify_msg.GetString());
  }

  CHECK_ACL(aclrtMemcpy(host.data(), kSize, dev, kSize, ACL_MEMCPY_DEVICE_TO_HOST));
  for (size_t i = 0; i < kSize; i++) {
    if (host[i] != ClientByte(i)) {
      std::fprintf(stderr, "byte %zu is %u after the client's WRITE, not %u\n", i, host[i], ClientByte(i));
      return 1;
    }
  }
  std::printf("server: the client's WRITE arrived intact\n");

  CHECK_HIXL(engine.DeregisterMem(handle));
  engine.Finalize();
  CHECK_ACL(aclrtFree(dev));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  return 0;
}
