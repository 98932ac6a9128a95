// What the vendor's tdt_queue samples do (0_simple_queue, 1_queue_route), in our own words:
// queue attributes set and read back through pointer-sized values, two queues created, a route
// between them bound through a route list, found again by a source-and-destination query and
// read back field by field, data enqueued on the source arriving on the destination, then the
// route unbound and everything destroyed. Like the vendor's queue samples it includes
// acl/acl_tdt.h too, and links libacl_tdt_queue.so and libascendcl.so only.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include "acl/acl.h"
#include "acl/acl_tdt.h"
#include "acl/acl_tdt_queue.h"

#define EXPECT(cond)                                                      \
    do {                                                                  \
        if (!(cond)) {                                                    \
            std::printf("[ERROR] %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            return 1;                                                     \
        }                                                                 \
    } while (0)

static aclError MakeQueue(const char* name, uint32_t depth, uint32_t* qid)
{
    acltdtQueueAttr* attr = acltdtCreateQueueAttr();
    if (attr == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    aclError ret = acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof(const char*), &name);
    if (ret == ACL_SUCCESS) {
        ret = acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(depth), &depth);
    }
    if (ret == ACL_SUCCESS) {
        const char* readName = nullptr;
        uint32_t readDepth = 0;
        size_t len = 0;
        ret = acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof(readName), &len, &readName);
        if (ret == ACL_SUCCESS) {
            ret = acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof(readDepth), &len, &readDepth);
        }
        if (ret == ACL_SUCCESS && (std::strcmp(readName, name) != 0 || readDepth != depth)) {
            ret = ACL_ERROR_FAILURE;
        }
    }
    if (ret == ACL_SUCCESS) {
        ret = acltdtCreateQueue(attr, qid);
    }
    (void)acltdtDestroyQueueAttr(attr);
    return ret;
}

int main()
{
    EXPECT(aclInit(nullptr) == ACL_SUCCESS);
    EXPECT(aclrtSetDevice(0) == ACL_SUCCESS);
    uint32_t src = 0, dst = 0;
    EXPECT(MakeQueue("samples_style_src", 4, &src) == ACL_SUCCESS);
    EXPECT(MakeQueue("samples_style_dst", 4, &dst) == ACL_SUCCESS);
    EXPECT(src != dst);

    acltdtQueueRoute* route = acltdtCreateQueueRoute(src, dst);
    acltdtQueueRouteList* bind = acltdtCreateQueueRouteList();
    EXPECT(route != nullptr && bind != nullptr);
    EXPECT(acltdtAddQueueRoute(bind, route) == ACL_SUCCESS);
    EXPECT(acltdtBindQueueRoutes(bind) == ACL_SUCCESS);

    acltdtQueueRouteQueryInfo* query = acltdtCreateQueueRouteQueryInfo();
    acltdtQueueRouteQueryMode mode = ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST;
    EXPECT(acltdtSetQueueRouteQueryInfo(query, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof(mode), &mode) == ACL_SUCCESS);
    EXPECT(acltdtSetQueueRouteQueryInfo(query, ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32, sizeof(src), &src) == ACL_SUCCESS);
    EXPECT(acltdtSetQueueRouteQueryInfo(query, ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32, sizeof(dst), &dst) == ACL_SUCCESS);
    acltdtQueueRouteList* found = acltdtCreateQueueRouteList();
    EXPECT(acltdtQueryQueueRoutes(query, found) == ACL_SUCCESS);
    EXPECT(acltdtGetQueueRouteNum(found) == 1);
    acltdtQueueRoute* view = acltdtCreateQueueRoute(0, 0);
    EXPECT(acltdtGetQueueRoute(found, 0, view) == ACL_SUCCESS);
    uint32_t s = 0, d = 0;
    int32_t status = 0;
    size_t len = 0;
    EXPECT(acltdtGetQueueRouteParam(view, ACL_TDT_QUEUE_ROUTE_SRC_UINT32, sizeof(s), &len, &s) == ACL_SUCCESS);
    EXPECT(acltdtGetQueueRouteParam(view, ACL_TDT_QUEUE_ROUTE_DST_UINT32, sizeof(d), &len, &d) == ACL_SUCCESS);
    EXPECT(acltdtGetQueueRouteParam(view, ACL_TDT_QUEUE_ROUTE_STATUS_INT32, sizeof(status), &len, &status) == ACL_SUCCESS);
    EXPECT(s == src && d == dst && status == ACL_TDT_QUEUE_ROUTE_BIND);

    // What reaches the source arrives on the destination.
    const char msg[] = "routed";
    EXPECT(acltdtEnqueueData(src, msg, sizeof(msg), nullptr, 0, 1000, 0) == ACL_SUCCESS);
    char got[16] = {0};
    size_t gotSize = 0;
    EXPECT(acltdtDequeueData(dst, got, sizeof(got), &gotSize, nullptr, 0, 1000) == ACL_SUCCESS);
    EXPECT(gotSize == sizeof(msg) && std::strcmp(got, msg) == 0);

    EXPECT(acltdtDestroyQueueRoute(view) == ACL_SUCCESS);
    EXPECT(acltdtUnbindQueueRoutes(bind) == ACL_SUCCESS);
    EXPECT(acltdtDestroyQueueRouteList(found) == ACL_SUCCESS);
    EXPECT(acltdtDestroyQueueRouteQueryInfo(query) == ACL_SUCCESS);
    EXPECT(acltdtDestroyQueueRouteList(bind) == ACL_SUCCESS);
    EXPECT(acltdtDestroyQueueRoute(route) == ACL_SUCCESS);
    EXPECT(acltdtDestroyQueue(dst) == ACL_SUCCESS);
    EXPECT(acltdtDestroyQueue(src) == ACL_SUCCESS);
    EXPECT(aclrtResetDeviceForce(0) == ACL_SUCCESS);
    EXPECT(aclFinalize() == ACL_SUCCESS);
    std::printf("[SUCCESS] samples-style tdt queue ran.\n");
    return 0;
}
