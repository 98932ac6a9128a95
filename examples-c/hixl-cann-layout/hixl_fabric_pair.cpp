// Two peers, each with 2 MiB of virtual device memory (reserved, backed by a physical
// allocation, mapped) registered with a fabric-memory HIXL engine, write their first half into
// the other's second half and check what arrived: the call sequence of the vendor's fabric
// memory sample. Like the vendor's samples it prints with std::cerr having included only
// acl/acl.h, securec.h and hixl/hixl.h, and fills buffers with memset_s.
// Usage: hixl_fabric_pair DEVICE LOCAL_ENGINE REMOTE_ENGINE DIR   (run two, crossed)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "hixl/hixl.h"
#include "securec.h"

namespace {
constexpr size_t kMemSize = 2UL * 1024 * 1024;
constexpr size_t kHalf = kMemSize / 2;
constexpr int kWaitMs = 30000;

#define CHECK_ACL(call)                                                          \
  do {                                                                           \
    const aclError ret_ = (call);                                                \
    if (ret_ != ACL_SUCCESS) {                                                   \
      std::cerr << #call << " failed: " << ret_ << " " << Recent() << std::endl; \
      return 1;                                                                  \
    }                                                                            \
  } while (0)
#define CHECK_HIXL(call)                                                         \
  do {                                                                           \
    const hixl::Status ret_ = (call);                                            \
    if (ret_ != hixl::SUCCESS) {                                                 \
      std::cerr << #call << " failed: " << ret_ << " " << Recent() << std::endl; \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

const char *Recent() {
  const char *msg = aclGetRecentErrMsg();
  return msg == nullptr ? "" : msg;
}

// The peers meet through files in DIR, named after the engine that wrote them.
bool Publish(const std::string &path, const std::string &text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text << std::endl;
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

bool Await(const std::string &path, std::string &text) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    if (in && std::getline(in, text)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::cerr << "timed out waiting for " << path << std::endl;
  return false;
}

int Run(int32_t device, const std::string &local, const std::string &remote, const std::string &dir) {
  void *va = nullptr;
  CHECK_ACL(aclrtReserveMemAddress(&va, kMemSize, 0, nullptr, 1));
  aclrtPhysicalMemProp prop{};
  prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = ACL_HBM_MEM_HUGE;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = static_cast<uint32_t>(device);
  aclrtDrvMemHandle physical = nullptr;
  CHECK_ACL(aclrtMallocPhysical(&physical, kMemSize, &prop, 0));
  CHECK_ACL(aclrtMapMem(va, kMemSize, 0, physical, 0));
  std::vector<unsigned char> host(kMemSize);
  if (memset_s(host.data(), host.size(), 0x40 + device, host.size()) != EOK) {
    std::cerr << "memset_s failed" << std::endl;
    return 1;
  }
  CHECK_ACL(aclrtMemcpy(va, kMemSize, host.data(), kMemSize, ACL_MEMCPY_HOST_TO_DEVICE));

  hixl::Hixl engine;
  std::map<hixl::AscendString, hixl::AscendString> options;
  options[hixl::OPTION_ENABLE_USE_FABRIC_MEM] = "1";
  CHECK_HIXL(engine.Initialize(local.c_str(), options));
  hixl::MemDesc desc{};
  desc.addr = reinterpret_cast<uintptr_t>(va);
  desc.len = kMemSize;
  hixl::MemHandle handle = nullptr;
  CHECK_HIXL(engine.RegisterMem(desc, hixl::MEM_DEVICE, handle));
  if (!Publish(dir + "/" + local, std::to_string(desc.addr) + " " + std::to_string(device))) return 1;

  std::string peer;
  if (!Await(dir + "/" + remote, peer)) return 1;
  unsigned long long remote_addr = 0;
  int remote_device = 0;
  if (std::sscanf(peer.c_str(), "%llu %d", &remote_addr, &remote_device) != 2) return 1;
  CHECK_HIXL(engine.Connect(remote.c_str(), kWaitMs));
  const hixl::TransferOpDesc op{desc.addr, static_cast<uintptr_t>(remote_addr) + kHalf, kHalf};
  CHECK_HIXL(engine.TransferSync(remote.c_str(), hixl::WRITE, {op}, kWaitMs));
  if (!Publish(dir + "/" + local + ".done", "done")) return 1;
  std::string done;
  if (!Await(dir + "/" + remote + ".done", done)) return 1;

  CHECK_ACL(aclrtMemcpy(host.data(), kHalf, static_cast<unsigned char *>(va) + kHalf, kHalf, ACL_MEMCPY_DEVICE_TO_HOST));
  for (size_t i = 0; i < kHalf; i++) {
    if (host[i] != static_cast<unsigned char>(0x40 + remote_device)) {
      std::cerr << local << ": byte " << i << " is " << int(host[i]) << std::endl;
      return 1;
    }
  }
  std::printf("%s: the peer's WRITE of %zu bytes arrived intact\n", local.c_str(), kHalf);
  CHECK_HIXL(engine.Disconnect(remote.c_str(), kWaitMs));
  CHECK_HIXL(engine.DeregisterMem(handle));
  engine.Finalize();
  CHECK_ACL(aclrtUnmapMem(va));
  CHECK_ACL(aclrtFreePhysical(physical));
  CHECK_ACL(aclrtReleaseMemAddress(va));
  return 0;
}
}  // namespace

int main(int argc, char **argv) {
  if (argc != 5) {
    std::cerr << "usage: " << argv[0] << " DEVICE LOCAL_ENGINE REMOTE_ENGINE DIR" << std::endl;
    return 2;
  }
  const int32_t device = std::atoi(argv[1]);
  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(device));
  const int status = Run(device, argv[2], argv[3], argv[4]);
  CHECK_ACL(aclrtResetDevice(device));
  aclFinalize();
  return status;
}
