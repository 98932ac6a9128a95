// A program written against the vendor's ADXL headers for the C++ LD_PRELOAD test: two
// engines in one process, a server on 127.0.0.1:PORT and a client, over loopback; the client
// READs the server's host memory and WRITEs it back changed. Exits 0 only if the data arrive.
// Usage: cxx_preload_app PORT
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "adxl/adxl_engine.h"

#define CHECK(call)                                          \
  do {                                                       \
    adxl::Status ret_ = (call);                              \
    if (ret_ != adxl::SUCCESS) {                             \
      std::fprintf(stderr, "%s failed: %u\n", #call, ret_);  \
      return 1;                                              \
    }                                                        \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const std::string server_name = std::string("127.0.0.1:") + argv[1];
  const size_t size = 64 * 1024;
  std::vector<unsigned char> server_buf(size), client_buf(size, 0);
  for (size_t i = 0; i < size; i++) server_buf[i] = static_cast<unsigned char>(i * 13 + 1);

  const std::map<adxl::AscendString, adxl::AscendString> options;
  adxl::AdxlEngine server, client;
  CHECK(server.Initialize(server_name.c_str(), options));
  CHECK(client.Initialize("127.0.0.1", options));
  adxl::MemDesc server_mem{}, client_mem{};
  server_mem.addr = reinterpret_cast<uintptr_t>(server_buf.data());
  server_mem.len = size;
  client_mem.addr = reinterpret_cast<uintptr_t>(client_buf.data());
  client_mem.len = size;
  adxl::MemHandle server_handle = nullptr, client_handle = nullptr;
  CHECK(server.RegisterMem(server_mem, adxl::MEM_HOST, server_handle));
  CHECK(client.RegisterMem(client_mem, adxl::MEM_HOST, client_handle));
  CHECK(client.Connect(server_name.c_str()));

  const std::vector<adxl::TransferOpDesc> ops{{client_mem.addr, server_mem.addr, size}};
  CHECK(client.TransferSync(server_name.c_str(), adxl::READ, ops));
  if (client_buf != server_buf) {
    std::fprintf(stderr, "READ brought the wrong bytes\n");
    return 1;
  }
  for (auto &b : client_buf) b ^= 0xFF;
  CHECK(client.TransferSync(server_name.c_str(), adxl::WRITE, ops));
  if (client_buf != server_buf) {
    std::fprintf(stderr, "WRITE did not arrive\n");
    return 1;
  }
  CHECK(client.Disconnect(server_name.c_str()));
  CHECK(client.DeregisterMem(client_handle));
  CHECK(server.DeregisterMem(server_handle));
  client.Finalize();
  server.Finalize();
  std::printf("READ and WRITE of %zu bytes verified\n", size);
  return 0;
}
