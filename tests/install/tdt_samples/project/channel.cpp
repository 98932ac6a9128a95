// What the vendor's tdt_channel samples do (0_simple_channel, 1_channel_capacity), in our own
// words: one host process opens a channel with a capacity, sends a float tensor, reads the
// channel's size, receives the tensor back into another dataset and checks it, then fills the
// channel to its capacity (a send that does not wait answers ACL_ERROR_RT_QUEUE_FULL), and
// cleans, stops and destroys the channel before resetting the device and finalizing.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include "acl/acl.h"
#include "acl/acl_tdt.h"

#define EXPECT(cond)                                                      \
    do {                                                                  \
        if (!(cond)) {                                                    \
            std::printf("[ERROR] %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            return 1;                                                     \
        }                                                                 \
    } while (0)

static acltdtDataset* FloatDataset(std::vector<float>& values)
{
    int64_t dims[] = {1, static_cast<int64_t>(values.size())};
    acltdtDataItem* item = acltdtCreateDataItem(
        ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, values.data(), values.size() * sizeof(float));
    acltdtDataset* set = acltdtCreateDataset();
    if (item == nullptr || set == nullptr || acltdtAddDataItem(set, item) != ACL_SUCCESS) {
        return nullptr;
    }
    return set;
}

static void DestroyWithItems(acltdtDataset* set)
{
    for (size_t i = 0; i < acltdtGetDatasetSize(set); ++i) {
        (void)acltdtDestroyDataItem(acltdtGetDataItem(set, i));
    }
    (void)acltdtDestroyDataset(set);
}

int main()
{
    EXPECT(aclInit(nullptr) == ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0) == ACL_SUCCESS);

    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "samples_style_channel", 2);
    EXPECT(channel != nullptr);
    std::vector<float> sent = {1.0F, 2.0F, 3.0F, 4.0F};
    acltdtDataset* out = FloatDataset(sent);
    EXPECT(out != nullptr);
    EXPECT(acltdtSendTensor(channel, out, 1000) == ACL_SUCCESS);
    size_t size = 0;
    EXPECT(acltdtQueryChannelSize(channel, &size) == ACL_SUCCESS && size == 1);

    acltdtDataset* in = acltdtCreateDataset();
    EXPECT(acltdtReceiveTensor(channel, in, 1000) == ACL_SUCCESS);
    EXPECT(acltdtGetDatasetSize(in) == 1);
    acltdtDataItem* item = acltdtGetDataItem(in, 0);
    EXPECT(acltdtGetTensorTypeFromItem(item) == ACL_TENSOR_DATA_TENSOR);
    EXPECT(acltdtGetDataTypeFromItem(item) == ACL_FLOAT);
    EXPECT(acltdtGetDataSizeFromItem(item) == sent.size() * sizeof(float));
    std::vector<int64_t> dims(acltdtGetDimNumFromItem(item));
    EXPECT(dims.size() == 2 && acltdtGetDimsFromItem(item, dims.data(), dims.size()) == ACL_SUCCESS);
    EXPECT(dims[0] == 1 && dims[1] == 4);
    EXPECT(std::memcmp(acltdtGetDataAddrFromItem(item), sent.data(), 16) == 0);
    size_t sliceNum = 1, sliceId = 1;
    EXPECT(acltdtGetSliceInfoFromItem(item, &sliceNum, &sliceId) == ACL_SUCCESS && sliceNum == 0 && sliceId == 0);
    EXPECT(acltdtGetDatasetName(out) != nullptr);
    EXPECT(acltdtQueryChannelSize(channel, &size) == ACL_SUCCESS && size == 0);

    // The capacity: two fit, a third that does not wait is refused.
    EXPECT(acltdtSendTensor(channel, out, 1000) == ACL_SUCCESS);
    EXPECT(acltdtSendTensor(channel, out, 0) == ACL_SUCCESS);
    EXPECT(acltdtSendTensor(channel, out, 0) == ACL_ERROR_RT_QUEUE_FULL);

    EXPECT(acltdtCleanChannel(channel) == ACL_SUCCESS);
    EXPECT(acltdtStopChannel(channel) == ACL_SUCCESS);
    EXPECT(acltdtDestroyChannel(channel) == ACL_SUCCESS);
    (void)acltdtDestroyDataset(in);
    DestroyWithItems(out);
    EXPECT(aclrtResetDeviceForce(0) == ACL_SUCCESS);
    EXPECT(aclFinalize() == ACL_SUCCESS);
    std::printf("[SUCCESS] samples-style tdt channel ran.\n");
    return 0;
}
