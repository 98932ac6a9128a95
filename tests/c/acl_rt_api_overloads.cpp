// The C++ overloads of acl/acl_rt_api.h, called as C++ code written against the vendor's header
// calls them (typed pointers, default arguments), each checked by what it did. Prints
// "N failures" at the end.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "acl/acl.h"
#include "acl/acl_rt_api.h"

static int failures = 0;

#define EXPECT(cond)                                                    \
  do {                                                                  \
    if (!(cond)) {                                                      \
      std::printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);    \
      failures++;                                                       \
    }                                                                   \
  } while (0)

struct Pair {
  int a;
  int b;
};

int main() {
  EXPECT(aclInit(nullptr) == ACL_SUCCESS);
  EXPECT(aclrtSetDevice(0) == ACL_SUCCESS);

  aclrtStream stream = nullptr;
  EXPECT(aclrtCreateStream(&stream, 0, 0) == ACL_SUCCESS);  // aclrtCreateStreamWithConfig

  Pair *dev = nullptr;
  EXPECT(aclrtMalloc(&dev, sizeof(Pair) * 4) == ACL_SUCCESS);  // typed, default policy
  int *dev2 = nullptr;
  EXPECT(aclrtMalloc(&dev2, 64, ACL_MEM_MALLOC_NORMAL_ONLY) == ACL_SUCCESS);
  Pair *host = nullptr;
  EXPECT(aclrtMallocHost(&host, sizeof(Pair) * 4) == ACL_SUCCESS);
  for (int i = 0; i < 4; i++) host[i] = Pair{i, -i};

  // Typed copies there and back, synchronously and on the stream.
  Pair back[4] = {};
  EXPECT(aclrtMemcpy(dev, sizeof(Pair) * 4, host, sizeof(Pair) * 4, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
  EXPECT(aclrtMemcpyAsync(back, sizeof(back), dev, sizeof(back), ACL_MEMCPY_DEVICE_TO_HOST, stream) == ACL_SUCCESS);
  EXPECT(aclrtSynchronizeStream(stream, 5000) == ACL_SUCCESS);  // WithTimeout
  EXPECT(std::memcmp(back, host, sizeof(back)) == 0);

  // 2-D: one int of each Pair (a column) into dense device memory, then back.
  int column[4] = {};
  EXPECT(aclrtMemcpy2d(dev2, sizeof(int), host, sizeof(Pair), sizeof(int), 4, ACL_MEMCPY_HOST_TO_DEVICE) ==
         ACL_SUCCESS);
  EXPECT(aclrtMemcpy(column, sizeof(column), dev2, sizeof(column), ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS);
  EXPECT(column[3] == 3);

  // A batch with one attribute for every copy (aclrtMemcpyBatchV2).
  int src_a[2] = {7, 8}, src_b[2] = {9, 10};
  int *dsts[2] = {dev2, dev2 + 2};
  int *srcs[2] = {src_a, src_b};
  size_t maxs[2] = {sizeof(src_a), sizeof(src_b)};
  size_t sizes[2] = {sizeof(src_a), sizeof(src_b)};
  aclrtMemcpyBatchAttr attr{};
  attr.srcLoc.type = ACL_MEM_LOCATION_TYPE_HOST;
  attr.dstLoc.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  attr.dstLoc.id = 0;
  EXPECT(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attr) == ACL_SUCCESS);
  int got[4] = {};
  EXPECT(aclrtMemcpy(got, sizeof(got), dev2, sizeof(got), ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS);
  EXPECT(got[0] == 7 && got[3] == 10);

  // Events: the flag form (aclrtCreateEventExWithFlag) and the time-out forms.
  aclrtEvent event = nullptr;
  EXPECT(aclrtCreateEvent(&event, ACL_EVENT_SYNC) == ACL_SUCCESS);
  EXPECT(aclrtRecordEvent(event, stream) == ACL_SUCCESS);
  EXPECT(aclrtSynchronizeEvent(event, 5000) == ACL_SUCCESS);
  EXPECT(aclrtStreamWaitEvent(stream, event, 5000) == ACL_SUCCESS);
  EXPECT(aclrtSynchronizeDevice(5000) == ACL_SUCCESS);

  // Pointer attributes and host registration, typed.
  aclrtPtrAttributes attrs{};
  EXPECT(aclrtPointerGetAttributes(dev, &attrs) == ACL_SUCCESS);
  EXPECT(attrs.location.type == ACL_MEM_LOCATION_TYPE_DEVICE);
  long *registered = static_cast<long *>(aligned_alloc(4096, 4096));
  long *mapped = nullptr;
  EXPECT(aclrtHostRegister(registered, 4096, ACL_HOST_REGISTER_MAPPED, &mapped) == ACL_SUCCESS);
  EXPECT(mapped != nullptr);
  EXPECT(aclrtHostUnregister(registered) == ACL_SUCCESS);
  std::free(registered);

  // Managed memory with the default flag.
  double *managed = nullptr;
  EXPECT(aclrtMemAllocManaged(&managed, 4096) == ACL_SUCCESS);
  if (managed != nullptr) {
    managed[1] = 2.5;
    EXPECT(managed[1] > 2.0);
    EXPECT(aclrtFree(managed) == ACL_SUCCESS);
  }

  // Symbols need an NPU: the documented "not supported".
  static int symbol = 0;
  void *address = nullptr;
  EXPECT(aclrtGetSymbolAddress(symbol, &address) == ACL_ERROR_RT_FEATURE_NOT_SUPPORT);

  EXPECT(aclrtDestroyEvent(event) == ACL_SUCCESS);
  EXPECT(aclrtFreeHost(host) == ACL_SUCCESS);
  EXPECT(aclrtFree(dev) == ACL_SUCCESS);
  EXPECT(aclrtFree(dev2) == ACL_SUCCESS);
  EXPECT(aclrtDestroyStream(stream) == ACL_SUCCESS);
  EXPECT(aclrtResetDevice(0) == ACL_SUCCESS);
  EXPECT(aclFinalize() == ACL_SUCCESS);
  std::printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
