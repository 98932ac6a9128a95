/* ucx_shim.c - part of ascendless.
 * The few UCX calls src/sys/ucx.rs needs, as plain C functions over opaque pointers, so that
 * no UCX struct layout (ucp_params_t, ucp_request_param_t...) is copied by hand into Rust: the
 * real headers lay them out here. Every function is hidden (not exported from
 * libascendless.so). Statuses are ucs_status_t values (0 is UCS_OK, negative an error).
 * Locking is the caller's: every call on a worker, and on the context's memory maps, runs under
 * the Rust side's mutex (the worker is UCS_THREAD_MODE_SERIALIZED). */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#define ASL_HIDDEN __attribute__((visibility("hidden")))

/* ---- context and worker ---------------------------------------------------------------- */

/* Endpoints use UCP_ERR_HANDLING_MODE_PEER, which UCX 1.13 grants the shared-memory transports
 * (posix, sysv) only when their ERROR_HANDLING option is on; it is off by default, and then no
 * shared-memory endpoint can be created at all. Turned on ("MM_ERROR_HANDLING" is the name
 * ucp_config_modify accepts for both) unless the environment sets it. */
static ucs_status_t asl_ucx_shm_error_handling(ucp_config_t *config, const char *tls)
{
    if (getenv("UCX_MM_ERROR_HANDLING") != NULL || getenv("UCX_POSIX_ERROR_HANDLING") != NULL ||
        getenv("UCX_SYSV_ERROR_HANDLING") != NULL) {
        return UCS_OK;
    }
    /* UCX warns of an option no transport used, so skip it for lists without shared memory
     * (all lists but "all", exclusions "^..." and names of posix or sysv). */
    if (tls == NULL) {
        tls = getenv("UCX_TLS");
    }
    if (tls != NULL && tls[0] != '^' && strstr(tls, "all") == NULL && strstr(tls, "sm") == NULL &&
        strstr(tls, "shm") == NULL && strstr(tls, "mm") == NULL && strstr(tls, "posix") == NULL &&
        strstr(tls, "sysv") == NULL) {
        return UCS_OK;
    }
    return ucp_config_modify(config, "MM_ERROR_HANDLING", "y");
}

/* UCX's own keepalive off, unless the environment sets it. In UCX 1.13 the keepalive timer is a
 * timerfd that ucp_worker_arm reads with a blocking read: once the timer is idle (its endpoint
 * gone, say after a peer died), arming the worker blocks until the next tick that never comes,
 * and the progress thread holds the worker for good (seen: a transfer to a restarted peer timed
 * out). The engine watches every peer through its TCP connection instead. */
static ucs_status_t asl_ucx_keepalive(ucp_config_t *config)
{
    if (getenv("UCX_KEEPALIVE_INTERVAL") != NULL) {
        return UCS_OK;
    }
    return ucp_config_modify(config, "KEEPALIVE_INTERVAL", "inf");
}

/* Every endpoint resolves its peer's endpoint when it is made (RESOLVE_REMOTE_EP_ID=y; 1.13's
 * default is to wait for the first remote key that needs it), so the wireup request leaves at
 * once and Context::connect can wait for the whole exchange. UCX 1.13 asserts (and aborts the
 * process) when a worker is destroyed, an endpoint force-closed or failed while a wireup
 * REQUEST or REPLY is still queued on a transport endpoint ("got REP message" in
 * ucp_request_send_state_ff): a connect that returns only once the peer's reply arrived leaves
 * neither side with one. Set even when the environment sets it, for that reason; a UCX without
 * the option (UCS_ERR_NO_ELEM) is left as it is. */
static ucs_status_t asl_ucx_resolve_remote_ep_id(ucp_config_t *config)
{
    ucs_status_t status = ucp_config_modify(config, "RESOLVE_REMOTE_EP_ID", "y");
    return status == UCS_ERR_NO_ELEM ? UCS_OK : status;
}

/* A context (features RMA | WAKEUP) with one serialised worker and its event fd. `tls` NULL
 * keeps UCX's own configuration (UCX_TLS...); otherwise it overrides TLS. `names`/`values`
 * (`count` pairs) are more options, set the same way. */
ASL_HIDDEN int asl_ucx_init(const char *tls, const char *const *names, const char *const *values, size_t count,
                            void **context, void **worker, int *efd)
{
    ucp_config_t *config;
    ucs_status_t status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        return status;
    }
    if (tls != NULL) {
        status = ucp_config_modify(config, "TLS", tls);
    }
    /* The engine's own settings (IB_TRAFFIC_CLASS, IB_SL): transport options, which UCX keeps
     * and applies to the transports that have them. */
    for (size_t i = 0; status == UCS_OK && i < count; i++) {
        status = ucp_config_modify(config, names[i], values[i]);
    }
    if (status == UCS_OK) {
        status = asl_ucx_shm_error_handling(config, tls);
    }
    if (status == UCS_OK) {
        status = asl_ucx_keepalive(config);
    }
    if (status == UCS_OK) {
        status = asl_ucx_resolve_remote_ep_id(config);
    }
    if (status != UCS_OK) {
        ucp_config_release(config);
        return status;
    }
    ucp_params_t params = {0};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
    ucp_context_h ctx;
    status = ucp_init(&params, config, &ctx);
    ucp_config_release(config);
    if (status != UCS_OK) {
        return status;
    }
    ucp_worker_params_t wparams = {0};
    wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    ucp_worker_h w;
    status = ucp_worker_create(ctx, &wparams, &w);
    if (status != UCS_OK) {
        ucp_cleanup(ctx);
        return status;
    }
    int fd;
    status = ucp_worker_get_efd(w, &fd);
    if (status != UCS_OK) {
        ucp_worker_destroy(w);
        ucp_cleanup(ctx);
        return status;
    }
    *context = ctx;
    *worker = w;
    *efd = fd;
    return UCS_OK;
}

ASL_HIDDEN void asl_ucx_fini(void *context, void *worker)
{
    ucp_worker_destroy((ucp_worker_h)worker);
    ucp_cleanup((ucp_context_h)context);
}

ASL_HIDDEN const char *asl_ucx_status_string(int status)
{
    return ucs_status_string((ucs_status_t)status);
}

ASL_HIDDEN int asl_ucx_address(void *worker, void **addr, size_t *len)
{
    ucp_address_t *a;
    ucs_status_t status = ucp_worker_get_address((ucp_worker_h)worker, &a, len);
    *addr = a;
    return status;
}

ASL_HIDDEN void asl_ucx_address_release(void *worker, void *addr)
{
    ucp_worker_release_address((ucp_worker_h)worker, (ucp_address_t *)addr);
}

ASL_HIDDEN unsigned asl_ucx_progress(void *worker)
{
    return ucp_worker_progress((ucp_worker_h)worker);
}

/* UCS_OK when armed (the event fd will signal), UCS_ERR_BUSY when events are pending. */
ASL_HIDDEN int asl_ucx_arm(void *worker)
{
    return ucp_worker_arm((ucp_worker_h)worker);
}

/* ---- memory ---------------------------------------------------------------------------- */

ASL_HIDDEN int asl_ucx_mem_map(void *context, uint64_t addr, size_t len, void **memh)
{
    ucp_mem_map_params_t params = {0};
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    params.address = (void *)(uintptr_t)addr;
    params.length = len;
    ucp_mem_h h;
    ucs_status_t status = ucp_mem_map((ucp_context_h)context, &params, &h);
    *memh = h;
    return status;
}

ASL_HIDDEN int asl_ucx_mem_unmap(void *context, void *memh)
{
    return ucp_mem_unmap((ucp_context_h)context, (ucp_mem_h)memh);
}

ASL_HIDDEN int asl_ucx_rkey_pack(void *context, void *memh, void **buf, size_t *len)
{
    return ucp_rkey_pack((ucp_context_h)context, (ucp_mem_h)memh, buf, len);
}

ASL_HIDDEN void asl_ucx_rkey_buffer_release(void *buf)
{
    ucp_rkey_buffer_release(buf);
}

/* ---- endpoints ------------------------------------------------------------------------- */

/* What an endpoint's error handler writes: the first failure status (0 while healthy). Owned
 * by the endpoint's Rust state, which outlives the endpoint's close. */
static void asl_ucx_on_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    int32_t expected = 0;
    __atomic_compare_exchange_n((int32_t *)arg, &expected, (int32_t)status, 0, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
}

ASL_HIDDEN int asl_ucx_ep_create(void *worker, const void *addr, int32_t *failed, void **ep)
{
    ucp_ep_params_t params = {0};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address = (const ucp_address_t *)addr;
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = asl_ucx_on_error;
    params.err_handler.arg = failed;
    ucp_ep_h e;
    ucs_status_t status = ucp_ep_create((ucp_worker_h)worker, &params, &e);
    *ep = e;
    return status;
}

/* Starts closing: the status when done at once (*req NULL), else a request to poll with
 * asl_ucx_request_done and release with asl_ucx_request_free. */
ASL_HIDDEN int asl_ucx_ep_close(void *ep, int force, void **req)
{
    ucp_request_param_t param = {0};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t r = ucp_ep_close_nbx((ucp_ep_h)ep, &param);
    *req = NULL;
    if (UCS_PTR_IS_PTR(r)) {
        *req = r;
        return UCS_INPROGRESS;
    }
    return UCS_PTR_STATUS(r);
}

/* UCS_INPROGRESS while running, else the request's final status. */
ASL_HIDDEN int asl_ucx_request_check(void *req)
{
    return ucp_request_check_status(req);
}

ASL_HIDDEN void asl_ucx_request_free(void *req)
{
    ucp_request_free(req);
}

ASL_HIDDEN int asl_ucx_rkey_unpack(void *ep, const void *packed, void **rkey)
{
    ucp_rkey_h r;
    ucs_status_t status = ucp_ep_rkey_unpack((ucp_ep_h)ep, packed, &r);
    *rkey = r;
    return status;
}

ASL_HIDDEN void asl_ucx_rkey_destroy(void *rkey)
{
    ucp_rkey_destroy((ucp_rkey_h)rkey);
}

/* ---- one run's requests ---------------------------------------------------------------- */

/* The requests of one run still in flight, and the first error among them. Only touched under
 * the worker lock (posts, and callbacks inside progress). */
typedef struct asl_ucx_batch {
    size_t pending;
    int status;
} asl_ucx_batch;

ASL_HIDDEN asl_ucx_batch *asl_ucx_batch_new(void)
{
    return calloc(1, sizeof(asl_ucx_batch));
}

ASL_HIDDEN void asl_ucx_batch_free(asl_ucx_batch *b)
{
    free(b);
}

ASL_HIDDEN size_t asl_ucx_batch_pending(const asl_ucx_batch *b)
{
    return b->pending;
}

ASL_HIDDEN int asl_ucx_batch_status(const asl_ucx_batch *b)
{
    return b->status;
}

static void asl_ucx_batch_record(asl_ucx_batch *b, ucs_status_t status)
{
    if (status != UCS_OK && b->status == UCS_OK) {
        b->status = status;
    }
}

static void asl_ucx_batch_done(void *request, ucs_status_t status, void *user_data)
{
    asl_ucx_batch *b = user_data;
    asl_ucx_batch_record(b, status);
    b->pending--;
    ucp_request_free(request);
}

/* Counts a posted operation: immediate completions (and errors) at once, requests when their
 * callback runs. */
static int asl_ucx_batch_track(asl_ucx_batch *b, ucs_status_ptr_t r)
{
    if (UCS_PTR_IS_PTR(r)) {
        b->pending++;
        return UCS_INPROGRESS;
    }
    asl_ucx_batch_record(b, UCS_PTR_STATUS(r));
    return UCS_PTR_STATUS(r);
}

static ucp_request_param_t asl_ucx_batch_param(asl_ucx_batch *b, void *memh)
{
    ucp_request_param_t param = {0};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = asl_ucx_batch_done;
    param.user_data = b;
    if (memh != NULL) {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
        param.memh = (ucp_mem_h)memh;
    }
    return param;
}

/* One get (`put` 0) or put of `len` bytes between `local` and `remote`. */
ASL_HIDDEN int asl_ucx_post(asl_ucx_batch *b, void *ep, int put, void *local, size_t len,
                            void *memh, uint64_t remote, void *rkey)
{
    ucp_request_param_t param = asl_ucx_batch_param(b, memh);
    ucs_status_ptr_t r;
    if (put) {
        r = ucp_put_nbx((ucp_ep_h)ep, local, len, remote, (ucp_rkey_h)rkey, &param);
    } else {
        r = ucp_get_nbx((ucp_ep_h)ep, local, len, remote, (ucp_rkey_h)rkey, &param);
    }
    return asl_ucx_batch_track(b, r);
}

ASL_HIDDEN int asl_ucx_flush(asl_ucx_batch *b, void *ep)
{
    ucp_request_param_t param = asl_ucx_batch_param(b, NULL);
    return asl_ucx_batch_track(b, ucp_ep_flush_nbx((ucp_ep_h)ep, &param));
}

/* A flush of every endpoint of the worker (those UCX made for peers' wireup requests too). */
ASL_HIDDEN int asl_ucx_worker_flush(asl_ucx_batch *b, void *worker)
{
    ucp_request_param_t param = asl_ucx_batch_param(b, NULL);
    return asl_ucx_batch_track(b, ucp_worker_flush_nbx((ucp_worker_h)worker, &param));
}
