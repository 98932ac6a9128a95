// The HIXL sample's client: connects with ConnectAsync (polling GetAsyncConnectStatus), READs
// the server's memory with TransferSync, then WRITEs another pattern back as 64 TransferAsync
// requests, each carrying its index as user_data, collected with the batched
// GetTransferStatus; a local-only staging buffer shows MemDesc::local_only. The server may be
// hixl::Hixl or adxl::AdxlEngine. Usage: hixl_client PORT DIR
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
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

namespace {
constexpr size_t kChunks = 64;

// Polls the async state of `remote` until it is `want` (or 10 s pass).
bool WaitState(hixl::Hixl &engine, const hixl::AscendString &remote, hixl::AsyncConnectStatus want) {
  for (int i = 0; i < 1000; i++) {
    hixl::AsyncConnectStatus status = hixl::AsyncConnectStatus::NOT_CONNECT;
    if (engine.GetAsyncConnectStatus(remote, status) != hixl::SUCCESS) return false;
    if (status == want) return true;
    if (status == hixl::AsyncConnectStatus::CONNECT_FAILED) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}
}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PORT DIR\n", argv[0]);
    return 2;
  }
  const hixl::AscendString remote_engine = (std::string("127.0.0.1:") + argv[1]).c_str();
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

  hixl::Hixl engine;
  std::map<hixl::AscendString, hixl::AscendString> options;
  options[hixl::OPTION_BUFFER_POOL] = "0:0";
  CHECK_HIXL(engine.Initialize("127.0.0.1", options));
  hixl::MemDesc mem{};
  mem.addr = reinterpret_cast<uintptr_t>(host);
  mem.len = kSize;
  mem.local_only = true;  // only this engine's transfers use it; never offered to the server
  hixl::MemHandle handle = nullptr;
  CHECK_HIXL(engine.RegisterMem(mem, hixl::MEM_HOST, handle));

  CHECK_HIXL(engine.ConnectAsync(remote_engine, 5000));
  if (!WaitState(engine, remote_engine, hixl::AsyncConnectStatus::CONNECTED)) {
    std::fprintf(stderr, "ConnectAsync to %s did not connect\n", remote_engine.GetString());
    return 1;
  }
  std::map<hixl::AscendString, hixl::AsyncConnectStatus> all;
  CHECK_HIXL(engine.GetAsyncConnectStatus(all));
  std::printf("client: connected asynchronously (%zu remote)\n", all.size());

  std::vector<hixl::TransferOpDesc> whole{{mem.addr, remote_addr, kSize}};
  CHECK_HIXL(engine.TransferSync(remote_engine, hixl::READ, whole, 5000));
  for (size_t i = 0; i < kSize; i++) {
    if (bytes[i] != ServerByte(i)) {
      std::fprintf(stderr, "READ: byte %zu is %u, not %u\n", i, bytes[i], ServerByte(i));
      return 1;
    }
  }
  std::printf("client: READ %zu bytes from %s, verified\n", kSize, remote_engine.GetString());

  for (size_t i = 0; i < kSize; i++) bytes[i] = ClientByte(i);
  static size_t index[kChunks];
  const size_t chunk = kSize / kChunks;
  for (size_t c = 0; c < kChunks; c++) {
    index[c] = c;
    std::vector<hixl::TransferOpDesc> one{{mem.addr + c * chunk, remote_addr + c * chunk, chunk}};
    hixl::TransferArgs args;
    args.user_data = &index[c];
    hixl::TransferReq req = nullptr;
    CHECK_HIXL(engine.TransferAsync(remote_engine, hixl::WRITE, one, args, req));
  }
  std::vector<bool> seen(kChunks, false);
  size_t done = 0;
  hixl::GetTransferStatusArgs query;
  query.skip_waiting = true;
  for (int spin = 0; done < kChunks && spin < 10000; spin++) {
    std::vector<hixl::TransferResult> results;
    CHECK_HIXL(engine.GetTransferStatus(query, results));
    for (const auto &r : results) {
      const size_t c = *static_cast<const size_t *>(r.user_data);
      if (r.status != hixl::TransferStatus::COMPLETED || c >= kChunks || seen[c]) {
        std::fprintf(stderr, "request of chunk %zu: status %d\n", c, static_cast<int>(r.status));
        return 1;
      }
      seen[c] = true;
      done++;
    }
    if (done < kChunks) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (done != kChunks) {
    std::fprintf(stderr, "only %zu of %zu requests completed\n", done, kChunks);
    return 1;
  }
  std::printf("client: WROTE %zu bytes back in %zu async requests, collected by user_data\n", kSize, kChunks);

  hixl::NotifyDesc notify;
  notify.name = "hixl_sample";
  notify.notify_msg = "write done";
  CHECK_HIXL(engine.SendNotify(remote_engine, notify, 5000));
  CHECK_HIXL(engine.DisconnectAsync(remote_engine, 5000));
  if (!WaitState(engine, remote_engine, hixl::AsyncConnectStatus::NOT_CONNECT)) {
    std::fprintf(stderr, "DisconnectAsync did not finish\n");
    return 1;
  }
  CHECK_HIXL(engine.DeregisterMem(handle));
  engine.Finalize();
  CHECK_ACL(aclrtFreeHost(host));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  return Publish(dir + "/client_done", "ok") ? 0 : 1;
}
