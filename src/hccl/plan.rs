//! Argument checks of every operation, done when it is queued (`HCCL_E_PARA`), so that what
//! runs later only meets the peers' faults.

use crate::error::hccl_codes::HcclError;
use crate::hccl::ops::{Layout, Op};
use crate::hccl::types::DataType;

fn rank_ok(what: &str, r: u32, size: u32) -> Result<(), HcclError> {
    if r >= size {
        return Err(HcclError::para(format!("{what} {r} is not a rank of this communicator ({size} ranks)")));
    }
    Ok(())
}

fn buf_ok(what: &str, addr: usize, count: u64, dt: DataType) -> Result<usize, HcclError> {
    let bytes = dt.bytes(count)?;
    if bytes > 0 && addr == 0 {
        return Err(HcclError::para(format!("{what} is NULL for {count} elements")));
    }
    if addr.checked_add(bytes).is_none() {
        return Err(HcclError::para(format!("{what} {addr:#x} + {bytes} bytes wraps the address space")));
    }
    Ok(bytes)
}

/// The bytes a layout covers from its buffer: the end of its furthest part.
fn layout_ok(what: &str, addr: usize, l: &Layout, dt: DataType, size: u32) -> Result<(), HcclError> {
    if l.counts.len() != size as usize || l.displs.len() != size as usize {
        return Err(HcclError::para(format!(
            "{what} has {} counts and {} displacements for {size} ranks",
            l.counts.len(),
            l.displs.len()
        )));
    }
    for (c, d) in l.counts.iter().zip(&l.displs) {
        let end = d
            .checked_add(*c)
            .ok_or_else(|| HcclError::para(format!("{what}: displacement {d} + count {c} overflows")))?;
        buf_ok(what, addr, end, dt)?;
        if *c > 0 && addr == 0 {
            return Err(HcclError::para(format!("{what} is NULL")));
        }
    }
    Ok(())
}

/// Checks `op` for rank `rank` of `size`.
pub fn check(op: &Op, rank: u32, size: u32) -> Result<(), HcclError> {
    match op {
        Op::AllReduce { send, recv, count, data_type, .. }
        | Op::Reduce { send, recv, count, data_type, .. } => {
            buf_ok("sendBuf", *send, *count, *data_type)?;
            buf_ok("recvBuf", *recv, *count, *data_type)?;
            if let Op::Reduce { root, .. } = op {
                rank_ok("root", *root, size)?;
            }
        }
        Op::Broadcast { buf, count, data_type, root } => {
            buf_ok("buf", *buf, *count, *data_type)?;
            rank_ok("root", *root, size)?;
        }
        Op::AllGather { send, recv, count, data_type } => {
            buf_ok("sendBuf", *send, *count, *data_type)?;
            buf_ok("recvBuf", *recv, count.saturating_mul(size as u64), *data_type)?;
        }
        Op::AllGatherV { send, send_count, recv, recv_layout, data_type } => {
            buf_ok("sendBuf", *send, *send_count, *data_type)?;
            layout_ok("recvCounts/recvDispls", *recv, recv_layout, *data_type, size)?;
            if recv_layout.counts[rank as usize] != *send_count {
                return Err(HcclError::para(format!(
                    "recvCounts[{rank}] is {} but this rank sends {send_count}",
                    recv_layout.counts[rank as usize]
                )));
            }
        }
        Op::ReduceScatter { send, recv, count, data_type, .. } => {
            buf_ok("sendBuf", *send, count.saturating_mul(size as u64), *data_type)?;
            buf_ok("recvBuf", *recv, *count, *data_type)?;
        }
        Op::ReduceScatterV { send, send_layout, recv, recv_count, data_type, .. } => {
            layout_ok("sendCounts/sendDispls", *send, send_layout, *data_type, size)?;
            buf_ok("recvBuf", *recv, *recv_count, *data_type)?;
            if send_layout.counts[rank as usize] != *recv_count {
                return Err(HcclError::para(format!(
                    "sendCounts[{rank}] is {} but recvCount is {recv_count}",
                    send_layout.counts[rank as usize]
                )));
            }
        }
        Op::Scatter { send, recv, count, data_type, root } => {
            rank_ok("root", *root, size)?;
            if rank == *root {
                buf_ok("sendBuf", *send, count.saturating_mul(size as u64), *data_type)?;
            }
            buf_ok("recvBuf", *recv, *count, *data_type)?;
        }
        Op::AlltoAll { send, send_count, send_type, recv, recv_count, recv_type } => {
            let s = buf_ok("sendBuf", *send, send_count.saturating_mul(size as u64), *send_type)?;
            let r = buf_ok("recvBuf", *recv, recv_count.saturating_mul(size as u64), *recv_type)?;
            if s != r {
                return Err(HcclError::para(format!("each rank sends {s} bytes but receives {r}")));
            }
            apart(*send, s, *recv, r)?;
        }
        Op::AlltoAllV { send, send_layout, send_type, recv, recv_layout, recv_type } => {
            layout_ok("sendCounts/sdispls", *send, send_layout, *send_type, size)?;
            layout_ok("recvCounts/rdispls", *recv, recv_layout, *recv_type, size)?;
            let own_s = send_type.bytes(send_layout.counts[rank as usize])?;
            let own_r = recv_type.bytes(recv_layout.counts[rank as usize])?;
            if own_s != own_r {
                return Err(HcclError::para(format!(
                    "this rank sends itself {own_s} bytes but receives {own_r}"
                )));
            }
        }
        Op::Barrier => {}
        Op::Send { buf, count, data_type, peer } | Op::Recv { buf, count, data_type, peer } => {
            buf_ok("buf", *buf, *count, *data_type)?;
            rank_ok("peer", *peer, size)?;
            if *peer == rank {
                return Err(HcclError::para(format!("rank {rank} cannot send to or receive from itself")));
            }
        }
        Op::BatchSendRecv { items } => {
            for (i, it) in items.iter().enumerate() {
                buf_ok(&format!("item {i}'s buf"), it.buf, it.count, it.data_type)?;
                rank_ok(&format!("item {i}'s remote rank"), it.peer, size)?;
                if it.peer == rank {
                    return Err(HcclError::para(format!(
                        "item {i}: rank {rank} cannot send to or receive from itself"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// All-to-all in place would overwrite what peers are still to read.
fn apart(a: usize, alen: usize, b: usize, blen: usize) -> Result<(), HcclError> {
    if alen > 0 && blen > 0 && a < b + blen && b < a + alen {
        return Err(HcclError::para("sendBuf and recvBuf overlap: all-to-all does not work in place"));
    }
    Ok(())
}

/// Rank `k`'s share of `count` elements split over `size` ranks: (first element, elements).
/// The first `count % size` ranks have one more.
pub fn share(count: u64, size: u32, k: u32) -> (u64, u64) {
    let (n, k) = (size as u64, k as u64);
    let (base, extra) = (count / n, count % n);
    (k * base + k.min(extra), base + u64::from(k < extra))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hccl::types::ReduceOp;

    #[test]
    fn shares_cover_the_count_once_in_order() {
        for (count, size) in [(0, 3), (1, 4), (10, 3), (64, 8), (7, 7)] {
            let mut next = 0;
            for k in 0..size {
                let (start, len) = share(count, size, k);
                assert_eq!(start, next);
                next += len;
            }
            assert_eq!(next, count);
        }
    }

    #[test]
    fn bad_arguments_are_para() {
        let f = DataType::Fp32;
        let cases = [
            Op::Broadcast { buf: 0x1000, count: 4, data_type: f, root: 2 },
            Op::AllReduce { send: 0, recv: 0x1000, count: 1, data_type: f, op: ReduceOp::Sum },
            Op::Send { buf: 0x1000, count: 1, data_type: f, peer: 0 },
            Op::Recv { buf: 0x1000, count: 1, data_type: f, peer: 9 },
            Op::AlltoAll {
                send: 0x1000,
                send_count: 4,
                send_type: f,
                recv: 0x1008,
                recv_count: 4,
                recv_type: f,
            },
            Op::AllGatherV {
                send: 0x1000,
                send_count: 1,
                recv: 0x2000,
                recv_layout: Layout { counts: vec![1], displs: vec![0] },
                data_type: f,
            },
        ];
        for op in cases {
            assert_eq!(check(&op, 0, 2).unwrap_err().code, crate::error::hccl_codes::HCCL_E_PARA, "{op:?}");
        }
        assert!(
            check(&Op::AllReduce { send: 0, recv: 0, count: 0, data_type: f, op: ReduceOp::Max }, 0, 2)
                .is_ok()
        );
        assert!(check(&Op::Barrier, 1, 2).is_ok());
    }
}
