// The ADXL sample's client, written as the vendor's sample is: an engine on 127.0.0.1 (no
// port: it only connects out) registers host memory, connects to the server, READs the
// server's device memory, verifies it, then WRITEs changed data back and disconnects.
// Usage: adxl_client PORT DIR   (reads DIR/server_addr; writes DIR/client_done)
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  const adxl::AscendString remote_engine = (std::string("127.0.0.1:") + argv[1]).c_str();
  const std::string dir = argv[2];
  const std::string published = WaitFor(dir + "/server_addr", 60);
  if (published.empty()) {
    std::fprintf(stderr, "the server did not publish its address\n");
    return 1;
  }
  const uintptr_t remote_addr = std::strtoull(published.c_str(), nullptr, 10);

  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  void *host = nullptr;
  CHECK_ACL(aclrtMallocHost(&host, kSize));
  std::memset(host, 0, kSize);
  uint8_t *bytes = static_cast<uint8_t *>(host);

  adxl::AdxlEngine engine;
  std::map<adxl::AscendString, adxl::AscendString> options;
  CHECK_ADXL(engine.Initialize("127.0.0.1", options));
  adxl::MemDesc mem{};
  mem.addr = reinterpret_cast<uintptr_t>(host);
  mem.len = kSize;
  adxl::MemHandle handle = nullptr;
  CHECK_ADXL(engine.RegisterMem(mem, adxl::MEM_HOST, handle));
  CHECK_ADXL(engine.Connect(remote_engine, 5000));

  std::vector<adxl::TransferOpDesc> ops{{mem.addr, remote_addr, kSize}};
  CHECK_ADXL(engine.TransferSync(remote_engine, adxl::READ, ops, 5000));
  for (size_t i = 0; i < kSize; i++) {
    if (bytes[i] != ServerByte(i)) {
      std::fprintf(stderr, "READ: byte %zu is %u, not %u\n", i, bytes[i], ServerByte(i));
      return 1;
    }
  }
  std::printf("client: READ %zu bytes from %s, verified\n", kSize, remote_engine.GetString());

  for (size_t i = 0; i < kSize; i++) bytes[i] = ClientByte(i);
  CHECK_ADXL(engine.TransferSync(remote_engine, adxl::WRITE, ops, 5000));
  std::printf("client: WROTE %zu bytes back\n", kSize);

  CHECK_ADXL(engine.Disconnect(remote_engine, 5000));
  CHECK_ADXL(engine.DeregisterMem(handle));
  engine.Finalize();
  CHECK_ACL(aclrtFreeHost(host));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  return Publish(dir + "/client_done", "ok") ? 0 : 1;
}
