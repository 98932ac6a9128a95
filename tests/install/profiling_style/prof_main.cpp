// The calls of the vendor's profiling samples (0_create_config, 1_msproftx, 2_subscribe_model),
// checked: a session with msproftx marks, ranges, push/pop and steps, then a subscription to a
// captured model whose records come back through a pipe.
#include <pthread.h>
#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include "securec.h"
#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "profiling/aprof_pub.h"

#define CHECK(x)                                                                    \
    do {                                                                            \
        aclError r_ = (x);                                                          \
        if (r_ != ACL_SUCCESS) {                                                    \
            std::printf("[FAIL] %s = %d: %s\n", #x, r_, aclGetRecentErrMsg());      \
            return 1;                                                               \
        }                                                                           \
    } while (0)

static void* Stamp(const char* msg)
{
    void* s = aclprofCreateStamp();
    if (s != nullptr && aclprofSetStampTraceMessage(s, msg, static_cast<uint32_t>(std::strlen(msg))) != ACL_SUCCESS) {
        return nullptr;
    }
    return s;
}

static void Nothing(void*) {}

struct Reader {
    int fd;
    std::vector<char> data;
};

static void* Read(void* arg)
{
    Reader* r = static_cast<Reader*>(arg);
    size_t size = 0;
    aclprofGetOpDescSize(&size);
    std::vector<char> buf(size * 10);
    ssize_t n;
    while ((n = read(r->fd, buf.data(), buf.size())) > 0) {
        r->data.insert(r->data.end(), buf.begin(), buf.begin() + n);
        memset_s(buf.data(), buf.size(), 0, buf.size());
    }
    return nullptr;
}

int main()
{
    uint32_t devices[1] = {0};
    aclrtStream stream = nullptr;
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(devices[0]));
    CHECK(aclrtCreateStream(&stream));

    std::string path = "./output";
    CHECK(aclprofInit(path.c_str(), path.length()));
    aclprofConfig* config = aclprofCreateConfig(devices, 1, ACL_AICORE_ARITHMETIC_UTILIZATION, nullptr,
                                                ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX);
    if (config == nullptr) {
        std::printf("[FAIL] aclprofCreateConfig: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    std::string freq = "15";
    CHECK(aclprofSetConfig(ACL_PROF_SYS_HARDWARE_MEM_FREQ, freq.c_str(), freq.length()));
    CHECK(aclprofStart(config));
    aclprofStepInfo* step = aclprofCreateStepInfo();
    CHECK(aclprofGetStepTimestamp(step, ACL_STEP_START, stream));
    void* mark = Stamp("model_load_mark");
    void* push = Stamp("forward_pass_push");
    void* range = Stamp("preprocess_range");
    if (mark == nullptr || push == nullptr || range == nullptr) {
        std::printf("[FAIL] stamps: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    CHECK(aclprofMark(mark));
    CHECK(aclprofPush(push));
    uint32_t rangeId = 0;
    CHECK(aclprofRangeStart(range, &rangeId));
    CHECK(aclprofRangeStop(rangeId));
    CHECK(aclprofPop());
    CHECK(aclprofGetStepTimestamp(step, ACL_STEP_END, stream));
    CHECK(aclrtSynchronizeStream(stream));
    aclprofDestroyStepInfo(step);
    aclprofDestroyStamp(mark);
    aclprofDestroyStamp(push);
    aclprofDestroyStamp(range);
    CHECK(aclprofStop(config));
    CHECK(aclprofDestroyConfig(config));
    CHECK(aclprofFinalize());
    std::printf("[INFO] profiling session done\n");

    // A subscription: a model captured from the stream, run once.
    CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    CHECK(aclrtLaunchHostFunc(stream, Nothing, nullptr));
    aclmdlRI model = nullptr;
    CHECK(aclmdlRICaptureEnd(stream, &model));
    uint32_t modelId = 0;
    CHECK(aclmdlRIGetId(model, &modelId));
    if (MsprofSetDeviceIdByGeModelIdx(modelId, devices[0]) != 0) {
        std::printf("[FAIL] MsprofSetDeviceIdByGeModelIdx\n");
        return 1;
    }
    int fds[2];
    if (pipe(fds) != 0) {
        return 1;
    }
    aclprofSubscribeConfig* sub = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &fds[1]);
    CHECK(aclprofModelSubscribe(modelId, sub));
    Reader reader{fds[0], {}};
    pthread_t tid = 0;
    pthread_create(&tid, nullptr, Read, &reader);
    CHECK(aclmdlRIExecuteAsync(model, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclprofModelUnSubscribe(modelId));
    pthread_join(tid, nullptr);
    close(fds[0]);
    uint32_t ops = 0;
    CHECK(aclprofGetOpNum(reader.data.data(), reader.data.size(), &ops));
    if (ops != 1) {
        std::printf("[FAIL] %u records, not 1\n", ops);
        return 1;
    }
    size_t typeLen = 0;
    CHECK(aclprofGetOpTypeLen(reader.data.data(), reader.data.size(), 0, &typeLen));
    std::vector<char> type(typeLen);
    CHECK(aclprofGetOpType(reader.data.data(), reader.data.size(), 0, type.data(), typeLen));
    uint64_t start = aclprofGetOpStart(reader.data.data(), reader.data.size(), 0);
    uint64_t end = aclprofGetOpEnd(reader.data.data(), reader.data.size(), 0);
    if (std::string(type.data()) != "host function" || start == 0 || end < start ||
        aclprofGetModelId(reader.data.data(), reader.data.size(), 0) != modelId) {
        std::printf("[FAIL] record: %s %llu %llu\n", type.data(), (unsigned long long)start, (unsigned long long)end);
        return 1;
    }
    CHECK(aclprofDestroySubscribeConfig(sub));
    CHECK(aclmdlRIDestroy(model));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDeviceForce(devices[0]));
    CHECK(aclFinalize());
    std::printf("[SUCCESS] profiling-style sample ran.\n");
    return 0;
}
