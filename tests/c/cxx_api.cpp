// Links against libascendless.so and takes the address of every member the vendor's headers
// declare, so a missing or misnamed export fails the link; then checks the behaviour of the
// parts that are implemented. Built once per C++ string ABI.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "adxl/adxl_engine.h"

static int failures = 0;
#define CHECK(cond)                                                    \
    do {                                                               \
        if (!(cond)) {                                                 \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                \
        }                                                              \
    } while (0)

template <typename T> static void keep(T member) {
    volatile bool present = (member != nullptr);
    CHECK(present);
}

// Two engines of this process over loopback: the C++ class end to end.
static void transfer_between_engines(const char *port) {
    using namespace adxl;
    std::string server_name = std::string("127.0.0.1:") + port;
    AdxlEngine server;
    AdxlEngine client;
    std::map<ge::AscendString, ge::AscendString> no_options;
    CHECK(client.Connect(server_name.c_str()) == FAILED);  // before Initialize
    CHECK(server.Initialize(server_name.c_str(), no_options) == SUCCESS);
    std::map<ge::AscendString, ge::AscendString> options{{OPTION_BUFFER_POOL, "4:8"}};
    CHECK(client.Initialize("127.0.0.1", options) == SUCCESS);
    std::map<ge::AscendString, ge::AscendString> bad{{"adxl.NoSuchOption", "1"}};
    AdxlEngine third;
    CHECK(third.Initialize("127.0.0.1", bad) == PARAM_INVALID);
    // Our access-control options pass through the map: a client with a secret refuses a server
    // without one (FAILED); an empty secret is PARAM_INVALID.
    std::map<ge::AscendString, ge::AscendString> guarded_options{
        {"adxl.Secret", "a secret the server does not have"}, {"adxl.RemoteAccess", "registered"}};
    AdxlEngine guarded;
    CHECK(guarded.Initialize("127.0.0.1", guarded_options) == SUCCESS);
    CHECK(guarded.Connect(server_name.c_str()) == FAILED);
    std::map<ge::AscendString, ge::AscendString> empty_secret{{"adxl.Secret", ""}};
    CHECK(third.Initialize("127.0.0.1", empty_secret) == PARAM_INVALID);

    std::vector<unsigned char> remote(1 << 20), local(1 << 20);
    for (size_t i = 0; i < remote.size(); i++) remote[i] = static_cast<unsigned char>(i * 3 + 1);
    MemDesc rdesc{};
    rdesc.addr = reinterpret_cast<uintptr_t>(remote.data());
    rdesc.len = remote.size();
    MemDesc ldesc{};
    ldesc.addr = reinterpret_cast<uintptr_t>(local.data());
    ldesc.len = local.size();
    MemHandle rh = nullptr, lh = nullptr;
    CHECK(server.RegisterMem(rdesc, MEM_HOST, rh) == SUCCESS && rh != nullptr);
    CHECK(client.RegisterMem(ldesc, MEM_HOST, lh) == SUCCESS && lh != nullptr);
    CHECK(client.Connect(server_name.c_str(), 0) == PARAM_INVALID);
    CHECK(client.Connect(server_name.c_str()) == SUCCESS);
    CHECK(client.Connect(server_name.c_str()) == ALREADY_CONNECTED);

    std::vector<TransferOpDesc> descs;
    for (size_t off = 0; off < local.size(); off += 1 << 16) {
        descs.push_back(TransferOpDesc{ldesc.addr + off, rdesc.addr + off, 1 << 16});
    }
    CHECK(client.TransferSync(server_name.c_str(), READ, descs) == SUCCESS);
    CHECK(local == remote);
    for (auto &b : local) b = 0xEE;
    CHECK(client.TransferSync(server_name.c_str(), WRITE, descs, 5000) == SUCCESS);
    CHECK(remote == local);
    CHECK(client.TransferSync("127.0.0.1:1", READ, descs) == NOT_CONNECTED);

    // TransferAsync / GetTransferStatus, then a notify that lands after the data.
    for (size_t i = 0; i < remote.size(); i++) remote[i] = static_cast<unsigned char>(i * 7 + 2);
    std::vector<TransferReq> reqs;
    for (int k = 0; k < 16; k++) {
        TransferReq req = nullptr;
        std::vector<TransferOpDesc> one{descs[static_cast<size_t>(k)]};
        CHECK(client.TransferAsync(server_name.c_str(), READ, one, TransferArgs{}, req) == SUCCESS && req != nullptr);
        reqs.push_back(req);
    }
    for (TransferReq req : reqs) {
        TransferStatus st = TransferStatus::WAITING;
        // Bounded by time, not by polls: under valgrind the worker can take seconds.
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (client.GetTransferStatus(req, st) == SUCCESS && st == TransferStatus::WAITING &&
               std::chrono::steady_clock::now() < give_up) {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        CHECK(st == TransferStatus::COMPLETED);
        CHECK(client.GetTransferStatus(req, st) == PARAM_INVALID);
    }
    CHECK(std::memcmp(local.data(), remote.data(), remote.size()) == 0);
    TransferStatus st = TransferStatus::WAITING;
    CHECK(client.GetTransferStatus(nullptr, st) == FAILED);
    TransferReq req = nullptr;
    CHECK(client.TransferAsync("127.0.0.1:1", READ, descs, TransferArgs{}, req) == NOT_CONNECTED);
    NotifyDesc note{"kv_ready", "layer 3"};
    CHECK(client.SendNotify(server_name.c_str(), note) == SUCCESS);
    CHECK(client.SendNotify("127.0.0.1:1", note) == NOT_CONNECTED);
    std::vector<NotifyDesc> notes{NotifyDesc{"kept", ""}};
    CHECK(server.GetNotifies(notes) == SUCCESS);
    CHECK(notes.size() == 2 && notes[1].name == "kv_ready" && notes[1].notify_msg == "layer 3");
    notes.clear();
    CHECK(server.GetNotifies(notes) == SUCCESS && notes.empty());
    CHECK(client.TransferSync(server_name.c_str(), READ, descs, 0) == PARAM_INVALID);
    CHECK(client.Disconnect(server_name.c_str()) == SUCCESS);
    CHECK(client.Disconnect(server_name.c_str()) == NOT_CONNECTED);
    CHECK(client.DeregisterMem(lh) == SUCCESS);
    CHECK(client.DeregisterMem(nullptr) == PARAM_INVALID);
    client.Finalize();
    client.Finalize();
    CHECK(client.Connect(server_name.c_str()) == FAILED);  // after Finalize
}

int main(int argc, char **argv) {
    using adxl::AdxlEngine;
    using ge::AscendString;
    keep(&AdxlEngine::Initialize);
    keep(&AdxlEngine::Finalize);
    keep(&AdxlEngine::RegisterMem);
    keep(&AdxlEngine::DeregisterMem);
    keep(&AdxlEngine::Connect);
    keep(&AdxlEngine::Disconnect);
    keep(&AdxlEngine::TransferSync);
    keep(&AdxlEngine::TransferAsync);
    keep(&AdxlEngine::GetTransferStatus);
    keep(&AdxlEngine::SendNotify);
    keep(&AdxlEngine::GetNotifies);
    keep(&AdxlEngine::MallocMem);
    keep(&AdxlEngine::ExportToShareableHandle);
    keep(&AdxlEngine::FreeMem);
    keep(&AdxlEngine::GetCapability);
    keep(&AscendString::GetString);
    keep(&AscendString::GetLength);
    keep(&AscendString::Find);
    keep(&AscendString::Hash);
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator<));
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator>));
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator<=));
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator>=));
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator==));
    keep(static_cast<bool (AscendString::*)(const AscendString &) const>(&AscendString::operator!=));
    keep(static_cast<bool (AscendString::*)(const char *const) const>(&AscendString::operator==));
    keep(static_cast<bool (AscendString::*)(const char *const) const>(&AscendString::operator!=));

    // ge::AscendString: the vendor's null rules.
    AscendString null_str;
    AscendString from_null(nullptr);
    AscendString empty("");
    AscendString abc("abc");
    AscendString ab("abcdef", 2);
    CHECK(std::strcmp(null_str.GetString(), "") == 0 && null_str.GetLength() == 0);
    CHECK(from_null == null_str && !(from_null < null_str));
    CHECK(null_str < empty && empty > null_str && null_str <= empty && empty >= null_str);
    CHECK(ab == "ab" && ab.GetLength() == 2 && ab < abc && abc != ab);
    CHECK(abc.Find(AscendString("bc")) == 1 && abc.Find(AscendString("x")) == std::string::npos);
    CHECK(abc.Hash() == AscendString("abc").Hash());
    CHECK(std::hash<AscendString>()(abc) == abc.Hash());
    std::map<AscendString, AscendString> options{{adxl::OPTION_BUFFER_POOL, "4:8"}, {"AutoConnect", "1"}};
    CHECK(options.size() == 2 && options[AscendString("adxl.BufferPool")] == "4:8");
    std::unordered_map<AscendString, int> counts;
    counts[AscendString("x")]++;
    counts[AscendString("x")]++;
    CHECK(counts.size() == 1 && counts[AscendString("x")] == 2);
    AscendString copy = abc;
    CHECK(copy == abc && std::strcmp(copy.GetString(), "abc") == 0);

    // adxl::AdxlEngine: constructible on the stack, with its vendor size.
    {
        AdxlEngine engine;
        int32_t value = -1;
        CHECK(AdxlEngine::GetCapability(adxl::AUTO_CONNECT, value) == adxl::SUCCESS);
        CHECK(value == adxl::FEATURE_SUPPORTED || value == adxl::FEATURE_NOT_SUPPORTED);
        CHECK(AdxlEngine::GetCapability(static_cast<adxl::FeatureType>(7), value) == adxl::SUCCESS && value == 0);
        CHECK(AdxlEngine::GetCapability(static_cast<adxl::FeatureType>(-3), value) == adxl::PARAM_INVALID);
        engine.Finalize();
        engine.Finalize();

        // MallocMem / FreeMem: shareable memory of either type.
        void *p = nullptr;
        CHECK(AdxlEngine::MallocMem(adxl::MEM_HOST, 4096, &p) == adxl::SUCCESS && p != nullptr);
        std::memset(p, 0x5A, 4096);
        // ExportToShareableHandle: only MallocMem's start addresses, one handle per allocation
        // (another process imports it: tests/c/shared_segment.cpp).
        adxl::ShareableHandle handle{};
        CHECK(AdxlEngine::ExportToShareableHandle(nullptr, handle) == adxl::PARAM_INVALID);
        CHECK(AdxlEngine::ExportToShareableHandle(static_cast<char *>(p) + 1, handle) == adxl::PARAM_INVALID);
        CHECK(AdxlEngine::ExportToShareableHandle(p, handle) == adxl::SUCCESS);
        adxl::ShareableHandle again{};
        CHECK(AdxlEngine::ExportToShareableHandle(p, again) == adxl::SUCCESS);
        CHECK(std::memcmp(handle.data, again.data, sizeof handle.data) == 0);
        CHECK(AdxlEngine::FreeMem(p) == adxl::SUCCESS);
        CHECK(AdxlEngine::ExportToShareableHandle(p, handle) == adxl::PARAM_INVALID);  // freed
        CHECK(AdxlEngine::FreeMem(p) == adxl::PARAM_INVALID);
        CHECK(AdxlEngine::MallocMem(adxl::MEM_HOST, 0, &p) == adxl::PARAM_INVALID);
        CHECK(AdxlEngine::MallocMem(adxl::MEM_DEVICE, 4096, &p) == adxl::FAILED);  // no current device
        CHECK(AdxlEngine::MallocMem(adxl::MEM_HOST, 4096, nullptr) == adxl::PARAM_INVALID);
    }

    if (argc > 1) {
        transfer_between_engines(argv[1]);
    }

    std::printf("cxx_api: %d failures\n", failures);
    return failures == 0 ? 0 : 1;
}
