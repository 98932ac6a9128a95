//! `hccl/hccl.h`: the collective and point-to-point operations. Each is checked here (NULL
//! buffers and comm `HCCL_E_PTR`; unknown types and operations, out-of-range roots and peers,
//! counts that do not fit `HCCL_E_PARA`; HiF8/FP8 `HCCL_E_NOT_SUPPORT`), then queued on its
//! stream (NULL: the current context's default stream) as one [`Op`] of the core, after the
//! stream's earlier tasks. What fails while it runs fails the stream's task
//! (`aclrtSynchronizeStream` reports it) and `HcclGetCommAsyncError`.

#![allow(non_snake_case)]

use std::ffi::c_void;

use crate::error::hccl_codes::{HcclError, HcclResult};
use crate::ffi::acl_base::aclrtStream;
use crate::ffi::hccl::hccl_types::*;
use crate::ffi::hccl_call;
use crate::ffi::ptr::slice;
use crate::hccl::comm::Comm;
use crate::hccl::ops::{Item, Layout, Op};
use crate::hccl::types::{DataType, ReduceOp};

/// The element type `raw`, checked.
fn data_type(raw: HcclDataType) -> Result<DataType, HcclError> {
    DataType::from_raw(raw)
}

/// `count` elements of `t` fit the address space (`HCCL_E_PARA` if not).
fn fits(t: DataType, count: u64, what: &str) -> Result<(), HcclError> {
    t.bytes(count).map(|_| ()).map_err(|e| HcclError::para(format!("{what}: {}", e.message)))
}

fn below_size(comm: &Comm, rank: u32, what: &str) -> Result<(), HcclError> {
    let size = comm.size();
    if rank >= size {
        return Err(HcclError::para(format!(
            "{what} {rank} is not a rank of the communicator ({size} ranks)"
        )));
    }
    Ok(())
}

/// Reads one `uint64_t` per rank of `comm` from `p` (`what` in messages).
///
/// # Safety
/// `p` is NULL or points to one readable `uint64_t` per rank of `comm`.
unsafe fn per_rank(comm: &Comm, p: *const c_void, what: &'static str) -> Result<Vec<u64>, HcclError> {
    non_null(p, what)?;
    // SAFETY: the caller's contract: one u64 per rank.
    let counts = unsafe { slice(p.cast::<u64>(), comm.size() as usize, what) }?;
    Ok(counts.to_vec())
}

/// Each element count of `counts` at its displacement of `displs` fits the address space.
fn layout(t: DataType, counts: Vec<u64>, displs: Vec<u64>, what: &str) -> Result<Layout, HcclError> {
    for (r, (&c, &d)) in counts.iter().zip(&displs).enumerate() {
        let end = c
            .checked_add(d)
            .ok_or_else(|| HcclError::para(format!("{what}[{r}]: count + displacement overflows")))?;
        fits(t, end, &format!("{what}[{r}]"))?;
    }
    Ok(Layout { counts, displs })
}

/// One side of an all-to-all-v: the buffer, its type, counts and displacements, and its name.
type Side<'a> = (*const c_void, DataType, Vec<u64>, Vec<u64>, &'a str);

/// The `AlltoAllV` of a send and a receive side.
fn alltoallv(send: Side<'_>, recv: Side<'_>) -> Result<Op, HcclError> {
    Ok(Op::AlltoAllV {
        send: send.0.addr(),
        send_layout: layout(send.1, send.2, send.3, send.4)?,
        send_type: send.1,
        recv: recv.0.addr(),
        recv_layout: layout(recv.1, recv.2, recv.3, recv.4)?,
        recv_type: recv.1,
    })
}

/// Checks the buffers of an operation and queues it.
fn queue(
    comm: HcclComm,
    stream: aclrtStream,
    op: impl FnOnce(&Comm) -> Result<Op, HcclError>,
) -> Result<(), HcclError> {
    let c = crate::ffi::hccl::hccl_types::comm_of(comm)?;
    let op = op(&c)?;
    let s = stream_of(stream)?;
    crate::ffi::hccl::group::submit(c, op, s)
}

/// `recvBuf[i] = op over the ranks of sendBuf[i]`, for `count` elements of `dataType` (sum,
/// prod, max, min; integers wrap; floating point in rank order, so every rank's result is
/// bit-identical). `sendBuf == recvBuf` is allowed.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclAllReduce(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    count: u64,
    dataType: HcclDataType,
    op: HcclReduceOp,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclAllReduce", || {
        non_null(sendBuf, "sendBuf")?;
        non_null(recvBuf, "recvBuf")?;
        let t = data_type(dataType)?;
        let reduce = ReduceOp::from_raw(op)?;
        fits(t, count, "count")?;
        non_null(comm, "comm")?;
        queue(comm, stream, |_| {
            Ok(Op::AllReduce { send: sendBuf.addr(), recv: recvBuf.addr(), count, data_type: t, op: reduce })
        })
    })
}

/// The root's `count` elements of `buf` into every rank's `buf`.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclBroadcast(
    buf: *mut c_void,
    count: u64,
    dataType: HcclDataType,
    root: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclBroadcast", || {
        non_null(buf, "buf")?;
        let t = data_type(dataType)?;
        fits(t, count, "count")?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            below_size(c, root, "root")?;
            Ok(Op::Broadcast { buf: buf.addr(), count, data_type: t, root })
        })
    })
}

/// Rank r's `recvBuf` is the reduction over the ranks of the r-th `recvCount` elements of
/// their `sendBuf` (which holds `recvCount` x ranks).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclReduceScatter(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    recvCount: u64,
    dataType: HcclDataType,
    op: HcclReduceOp,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclReduceScatter", || {
        non_null(sendBuf, "sendBuf")?;
        non_null(recvBuf, "recvBuf")?;
        let t = data_type(dataType)?;
        let reduce = ReduceOp::from_raw(op)?;
        fits(t, recvCount, "recvCount")?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            fits(t, recvCount.saturating_mul(u64::from(c.size())), "recvCount x ranks")?;
            Ok(Op::ReduceScatter {
                send: sendBuf.addr(),
                recv: recvBuf.addr(),
                count: recvCount,
                data_type: t,
                op: reduce,
            })
        })
    })
}

/// `HcclReduceScatter` with a count and displacement per rank (`sendCounts`, `sendDispls`:
/// one `uint64_t` per rank, in elements).
///
/// # Safety
/// `sendCounts` and `sendDispls` are NULL or one readable `uint64_t` per rank.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclReduceScatterV(
    sendBuf: *mut c_void,
    sendCounts: *const c_void,
    sendDispls: *const c_void,
    recvBuf: *mut c_void,
    recvCount: u64,
    dataType: HcclDataType,
    op: HcclReduceOp,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclReduceScatterV", || {
        non_null(sendBuf, "sendBuf")?;
        non_null(sendCounts, "sendCounts")?;
        non_null(sendDispls, "sendDispls")?;
        non_null(recvBuf, "recvBuf")?;
        let t = data_type(dataType)?;
        let reduce = ReduceOp::from_raw(op)?;
        fits(t, recvCount, "recvCount")?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            // SAFETY: the caller's contract.
            let counts = unsafe { per_rank(c, sendCounts, "sendCounts") }?;
            // SAFETY: the caller's contract.
            let displs = unsafe { per_rank(c, sendDispls, "sendDispls") }?;
            let send_layout = layout(t, counts, displs, "sendCounts")?;
            Ok(Op::ReduceScatterV {
                send: sendBuf.addr(),
                send_layout,
                recv: recvBuf.addr(),
                recv_count: recvCount,
                data_type: t,
                op: reduce,
            })
        })
    })
}

/// The root's `sendBuf` (`recvCount` x ranks elements), one part to each rank's `recvBuf` in
/// rank order (`sendBuf` is read on the root only).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclScatter(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    recvCount: u64,
    dataType: HcclDataType,
    root: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclScatter", || {
        non_null(recvBuf, "recvBuf")?;
        let t = data_type(dataType)?;
        fits(t, recvCount, "recvCount")?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            below_size(c, root, "root")?;
            if c.rank() == root {
                non_null(sendBuf, "sendBuf (on the root)")?;
            }
            Ok(Op::Scatter {
                send: sendBuf.addr(),
                recv: recvBuf.addr(),
                count: recvCount,
                data_type: t,
                root,
            })
        })
    })
}

/// Every rank's `sendCount` elements, in rank order, into every rank's `recvBuf`.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclAllGather(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    sendCount: u64,
    dataType: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclAllGather", || {
        non_null(sendBuf, "sendBuf")?;
        non_null(recvBuf, "recvBuf")?;
        let t = data_type(dataType)?;
        fits(t, sendCount, "sendCount")?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            fits(t, sendCount.saturating_mul(u64::from(c.size())), "sendCount x ranks")?;
            Ok(Op::AllGather { send: sendBuf.addr(), recv: recvBuf.addr(), count: sendCount, data_type: t })
        })
    })
}

/// `HcclAllGather` with a count and displacement per rank in `recvBuf` (`recvCounts`,
/// `recvDispls`: one `uint64_t` per rank, in elements).
///
/// # Safety
/// `recvCounts` and `recvDispls` are NULL or one readable `uint64_t` per rank.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAllGatherV(
    sendBuf: *mut c_void,
    sendCount: u64,
    recvBuf: *mut c_void,
    recvCounts: *const c_void,
    recvDispls: *const c_void,
    dataType: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclAllGatherV", || {
        non_null(sendBuf, "sendBuf")?;
        non_null(recvBuf, "recvBuf")?;
        non_null(recvCounts, "recvCounts")?;
        non_null(recvDispls, "recvDispls")?;
        let t = data_type(dataType)?;
        fits(t, sendCount, "sendCount")?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            // SAFETY: the caller's contract.
            let counts = unsafe { per_rank(c, recvCounts, "recvCounts") }?;
            // SAFETY: the caller's contract.
            let displs = unsafe { per_rank(c, recvDispls, "recvDispls") }?;
            let recv_layout = layout(t, counts, displs, "recvCounts")?;
            Ok(Op::AllGatherV {
                send: sendBuf.addr(),
                send_count: sendCount,
                recv: recvBuf.addr(),
                recv_layout,
                data_type: t,
            })
        })
    })
}

/// `count` elements of `sendBuf` to rank `destRank`, which receives them with `HcclRecv`.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclSend(
    sendBuf: *mut c_void,
    count: u64,
    dataType: HcclDataType,
    destRank: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclSend", || {
        non_null(sendBuf, "sendBuf")?;
        let t = data_type(dataType)?;
        fits(t, count, "count")?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            below_size(c, destRank, "destRank")?;
            Ok(Op::Send { buf: sendBuf.addr(), count, data_type: t, peer: destRank })
        })
    })
}

/// `count` elements from rank `srcRank`'s `HcclSend` into `recvBuf`.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclRecv(
    recvBuf: *mut c_void,
    count: u64,
    dataType: HcclDataType,
    srcRank: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclRecv", || {
        non_null(recvBuf, "recvBuf")?;
        let t = data_type(dataType)?;
        fits(t, count, "count")?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            below_size(c, srcRank, "srcRank")?;
            Ok(Op::Recv { buf: recvBuf.addr(), count, data_type: t, peer: srcRank })
        })
    })
}

/// `HcclAlltoAllV` from the whole count matrix (`sendCountMatrix[i * ranks + j]`: what rank i
/// sends to rank j): this rank's counts are its row (what it sends) and column (what it
/// receives), each packed in rank order (displacements are the prefix sums).
///
/// # Safety
/// `sendCountMatrix` is NULL or ranks x ranks readable `uint64_t`.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAlltoAllVC(
    sendBuf: *const c_void,
    sendCountMatrix: *const c_void,
    sendType: HcclDataType,
    recvBuf: *const c_void,
    recvType: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclAlltoAllVC", || {
        non_null(sendBuf, "sendBuf")?;
        non_null(sendCountMatrix, "sendCountMatrix")?;
        non_null(recvBuf, "recvBuf")?;
        let st = data_type(sendType)?;
        let rt = data_type(recvType)?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            let n = c.size() as usize;
            let me = c.rank() as usize;
            let cells = n.checked_mul(n).ok_or_else(|| HcclError::para("ranks x ranks overflows"))?;
            // SAFETY: the caller's contract: ranks x ranks u64.
            let m = unsafe { slice(sendCountMatrix.cast::<u64>(), cells, "sendCountMatrix") }?;
            let prefix = |counts: &[u64], what: &str| -> Result<Vec<u64>, HcclError> {
                let mut at = 0u64;
                counts
                    .iter()
                    .map(|&k| {
                        let d = at;
                        at = at
                            .checked_add(k)
                            .ok_or_else(|| HcclError::para(format!("{what}: the counts overflow")))?;
                        Ok(d)
                    })
                    .collect()
            };
            let send_counts: Vec<u64> = m[me * n..(me + 1) * n].to_vec();
            let recv_counts: Vec<u64> = (0..n).map(|i| m[i * n + me]).collect();
            let send_displs = prefix(&send_counts, "sendCountMatrix row")?;
            let recv_displs = prefix(&recv_counts, "sendCountMatrix column")?;
            alltoallv(
                (sendBuf, st, send_counts, send_displs, "sendCountMatrix row"),
                (recvBuf, rt, recv_counts, recv_displs, "sendCountMatrix column"),
            )
        })
    })
}

/// To rank j, `sendCounts[j]` elements at `sdispls[j]` of `sendBuf`; from rank j,
/// `recvCounts[j]` elements at `rdispls[j]` of `recvBuf` (one `uint64_t` per rank, in
/// elements of the send and receive types).
///
/// # Safety
/// The four arrays are NULL or one readable `uint64_t` per rank.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAlltoAllV(
    sendBuf: *const c_void,
    sendCounts: *const c_void,
    sdispls: *const c_void,
    sendType: HcclDataType,
    recvBuf: *const c_void,
    recvCounts: *const c_void,
    rdispls: *const c_void,
    recvType: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclAlltoAllV", || {
        non_null(sendBuf, "sendBuf")?;
        non_null(sendCounts, "sendCounts")?;
        non_null(sdispls, "sdispls")?;
        non_null(recvBuf, "recvBuf")?;
        non_null(recvCounts, "recvCounts")?;
        non_null(rdispls, "rdispls")?;
        let st = data_type(sendType)?;
        let rt = data_type(recvType)?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            // SAFETY: the caller's contract (each array: one u64 per rank).
            let (sc, sd, rc, rd) = unsafe {
                (
                    per_rank(c, sendCounts, "sendCounts")?,
                    per_rank(c, sdispls, "sdispls")?,
                    per_rank(c, recvCounts, "recvCounts")?,
                    per_rank(c, rdispls, "rdispls")?,
                )
            };
            alltoallv((sendBuf, st, sc, sd, "sendCounts"), (recvBuf, rt, rc, rd, "recvCounts"))
        })
    })
}

/// `sendCount` elements to each rank and `recvCount` from each, in rank order.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclAlltoAll(
    sendBuf: *const c_void,
    sendCount: u64,
    sendType: HcclDataType,
    recvBuf: *const c_void,
    recvCount: u64,
    recvType: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclAlltoAll", || {
        non_null(sendBuf, "sendBuf")?;
        non_null(recvBuf, "recvBuf")?;
        let st = data_type(sendType)?;
        let rt = data_type(recvType)?;
        fits(st, sendCount, "sendCount")?;
        fits(rt, recvCount, "recvCount")?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            let n = u64::from(c.size());
            fits(st, sendCount.saturating_mul(n), "sendCount x ranks")?;
            fits(rt, recvCount.saturating_mul(n), "recvCount x ranks")?;
            Ok(Op::AlltoAll {
                send: sendBuf.addr(),
                send_count: sendCount,
                send_type: st,
                recv: recvBuf.addr(),
                recv_count: recvCount,
                recv_type: rt,
            })
        })
    })
}

/// `HcclAllReduce` whose result lands in the root's `recvBuf` only (`recvBuf` is written on
/// the root only).
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub extern "C" fn HcclReduce(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    count: u64,
    dataType: HcclDataType,
    op: HcclReduceOp,
    root: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclReduce", || {
        non_null(sendBuf, "sendBuf")?;
        let t = data_type(dataType)?;
        let reduce = ReduceOp::from_raw(op)?;
        fits(t, count, "count")?;
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            below_size(c, root, "root")?;
            if c.rank() == root {
                non_null(recvBuf, "recvBuf (on the root)")?;
            }
            Ok(Op::Reduce {
                send: sendBuf.addr(),
                recv: recvBuf.addr(),
                count,
                data_type: t,
                op: reduce,
                root,
            })
        })
    })
}

/// The `itemNum` sends and receives of `sendRecvInfo` as one operation (in any order the
/// peers' lists make possible, so two ranks may each send to and receive from the other).
/// At most one send and one receive per peer, as the vendor's.
///
/// # Safety
/// `sendRecvInfo` is NULL or `itemNum` readable items.
/// cbindgen:prefix=extern
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclBatchSendRecv(
    sendRecvInfo: *mut HcclSendRecvItem,
    itemNum: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    hccl_call("HcclBatchSendRecv", || {
        non_null(sendRecvInfo, "sendRecvInfo")?;
        if itemNum == 0 {
            return Err(HcclError::para("itemNum is 0"));
        }
        // SAFETY: the caller's contract: `itemNum` readable items.
        let raw_items = unsafe { slice(sendRecvInfo.cast_const(), itemNum as usize, "sendRecvInfo") }?;
        let mut items = Vec::with_capacity(raw_items.len());
        for (i, it) in raw_items.iter().enumerate() {
            let send = match it.sendRecvType {
                HCCL_SEND => true,
                HCCL_RECV => false,
                other => {
                    return Err(HcclError::para(format!(
                        "sendRecvInfo[{i}].sendRecvType {other}: HCCL_SEND or HCCL_RECV"
                    )));
                }
            };
            non_null(it.buf, "sendRecvInfo[].buf")?;
            let t = data_type(it.dataType)?;
            fits(t, it.count, "sendRecvInfo[].count")?;
            items.push(Item { send, buf: it.buf.addr(), count: it.count, data_type: t, peer: it.remoteRank });
        }
        non_null(comm, "comm")?;
        queue(comm, stream, |c| {
            let n = c.size();
            if itemNum > n.saturating_mul(2) {
                return Err(HcclError::para(format!("itemNum {itemNum} is above twice the ranks ({n})")));
            }
            for (i, it) in items.iter().enumerate() {
                below_size(c, it.peer, &format!("sendRecvInfo[{i}].remoteRank"))?;
                if items[..i].iter().any(|o| o.send == it.send && o.peer == it.peer) {
                    return Err(HcclError::para(format!(
                        "sendRecvInfo[{i}]: a second {} with rank {}",
                        if it.send { "send" } else { "receive" },
                        it.peer
                    )));
                }
            }
            Ok(Op::BatchSendRecv { items })
        })
    })
}
