// The dump calls of the vendor's adump samples (without their aclnn operator), checked.
#include <cstdio>
#include <cstring>
#include <string>
#include "acl/acl.h"
#include "acl/acl_dump.h"

#define CHECK(x)                                                                    \
    do {                                                                            \
        aclError r_ = (x);                                                          \
        if (r_ != ACL_SUCCESS) {                                                    \
            std::printf("[FAIL] %s = %d: %s\n", #x, r_, aclGetRecentErrMsg());      \
            return 1;                                                               \
        }                                                                           \
    } while (0)

static int32_t OnChunk(const acldumpChunk*, int32_t) { return 0; }

int main()
{
    CHECK(aclInit("./acl.json"));
    CHECK(aclrtSetDevice(0));
    char excPath[ACL_DUMP_MAX_FILE_PATH_LENGTH] = {0};
    CHECK(acldumpGetExceptionInfoPath(excPath, sizeof(excPath)));
    if (std::strstr(excPath, "/extra-info/data-dump/0/") == nullptr) {
        std::printf("[FAIL] exception path %s\n", excPath);
        return 1;
    }
    void* dev = nullptr;
    CHECK(aclrtMalloc(&dev, 32, ACL_MEM_MALLOC_HUGE_FIRST));
    acldumpTensorInfo t;
    std::memset(&t, 0, sizeof(t));
    t.type = ACL_DUMP_TENSOR_INPUT;
    t.tensorSize = 32;
    t.tensorAddr = static_cast<int64_t*>(dev);
    t.addrType = ACL_DUMP_ADDR_RAW;
    t.placement = ACL_DUMP_PLACEMENT_DEVICE;
    t.shapeNum = 1;
    t.shape[0] = 8;
    CHECK(acldumpSaveExceptionInfo("save_exception_info", "component=demo", &t, 1));
    CHECK(aclrtFree(dev));

    CHECK(acldumpRegCallback(OnChunk, 0));
    acldumpUnregCallback();
    CHECK(aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, "./args"));
    const char* args = acldumpGetPath(DATA_DUMP);
    if (args == nullptr || std::strstr(args, "/args") == nullptr) {
        std::printf("[FAIL] acldumpGetPath after aclopStartDumpArgs\n");
        return 1;
    }
    CHECK(aclopStopDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS));

    CHECK(aclmdlInitDump());
    CHECK(aclmdlSetDump("./model_dump.json"));
    const char* data = acldumpGetPath(DATA_DUMP);
    if (data == nullptr || std::string(data) != "./model") {
        std::printf("[FAIL] acldumpGetPath(DATA_DUMP) after aclmdlSetDump: %s\n", data ? data : "NULL");
        return 1;
    }
    CHECK(aclmdlFinalizeDump());
    CHECK(aclrtResetDeviceForce(0));
    CHECK(aclFinalize());
    std::printf("[SUCCESS] dump-style sample ran.\n");
    return 0;
}
