// A C++ ADXL peer on adxl::AdxlEngine, for the Python engine's tests (python/tests/test_adxl_cxx.py).
// Byte i of a buffer filled with SALT is (i * 7 + SALT) & 0xff.
//
//   adxl_peer server IP:PORT SIZE
//       Registers SIZE bytes filled with salt 1 and prints "ready ADDR". Then, per line on stdin,
//       "check SALT" prints "ok" or "bad INDEX"; at end of input it finalizes and exits.
//   adxl_peer client IP SERVER ADDR SIZE
//       Connects to SERVER, READs SIZE bytes at ADDR (expecting salt 1), WRITEs them back with
//       salt 2, READs again, prints "ok" and exits 0 (else a message and exit 1).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "adxl/adxl_engine.h"

using namespace adxl;

static void fill(std::vector<uint8_t> &buf, unsigned salt) {
    for (size_t i = 0; i < buf.size(); i++) buf[i] = static_cast<uint8_t>(i * 7 + salt);
}

// The index of the first wrong byte, or -1.
static long first_bad(const std::vector<uint8_t> &buf, unsigned salt) {
    for (size_t i = 0; i < buf.size(); i++) {
        if (buf[i] != static_cast<uint8_t>(i * 7 + salt)) return static_cast<long>(i);
    }
    return -1;
}

static void must(Status st, const char *what) {
    if (st != SUCCESS) {
        std::printf("error %s %u\n", what, st);
        std::fflush(stdout);
        std::exit(1);
    }
}

int main(int argc, char **argv) {
    std::map<AscendString, AscendString> options;
    if (argc == 4 && std::strcmp(argv[1], "server") == 0) {
        std::vector<uint8_t> buf(std::strtoull(argv[3], nullptr, 10));
        fill(buf, 1);
        AdxlEngine engine;
        must(engine.Initialize(argv[2], options), "initialize");
        MemDesc desc{};
        desc.addr = reinterpret_cast<uintptr_t>(buf.data());
        desc.len = buf.size();
        MemHandle handle = nullptr;
        must(engine.RegisterMem(desc, MEM_HOST, handle), "register");
        std::printf("ready %llu\n", static_cast<unsigned long long>(desc.addr));
        std::fflush(stdout);
        std::string word;
        unsigned salt = 0;
        while (std::cin >> word >> salt) {
            long bad = first_bad(buf, salt);
            if (bad < 0) {
                std::printf("ok\n");
            } else {
                std::printf("bad %ld\n", bad);
            }
            std::fflush(stdout);
        }
        must(engine.DeregisterMem(handle), "deregister");
        engine.Finalize();
        return 0;
    }
    if (argc == 6 && std::strcmp(argv[1], "client") == 0) {
        const char *server = argv[3];
        uintptr_t remote = static_cast<uintptr_t>(std::strtoull(argv[4], nullptr, 10));
        std::vector<uint8_t> buf(std::strtoull(argv[5], nullptr, 10));
        AdxlEngine engine;
        must(engine.Initialize(argv[2], options), "initialize");
        MemDesc desc{};
        desc.addr = reinterpret_cast<uintptr_t>(buf.data());
        desc.len = buf.size();
        MemHandle handle = nullptr;
        must(engine.RegisterMem(desc, MEM_HOST, handle), "register");
        must(engine.Connect(server, 5000), "connect");
        std::vector<TransferOpDesc> descs{TransferOpDesc{desc.addr, remote, buf.size()}};
        must(engine.TransferSync(server, READ, descs, 10000), "read");
        if (first_bad(buf, 1) >= 0) {
            std::printf("error read-bytes %ld\n", first_bad(buf, 1));
            return 1;
        }
        fill(buf, 2);
        must(engine.TransferSync(server, WRITE, descs, 10000), "write");
        std::fill(buf.begin(), buf.end(), 0);
        must(engine.TransferSync(server, READ, descs, 10000), "read-back");
        if (first_bad(buf, 2) >= 0) {
            std::printf("error read-back-bytes %ld\n", first_bad(buf, 2));
            return 1;
        }
        must(engine.Disconnect(server, 5000), "disconnect");
        must(engine.DeregisterMem(handle), "deregister");
        engine.Finalize();
        std::printf("ok\n");
        return 0;
    }
    std::fprintf(stderr, "usage: %s server IP:PORT SIZE | client IP SERVER ADDR SIZE\n", argv[0]);
    return 2;
}
