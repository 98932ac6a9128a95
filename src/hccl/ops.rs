//! The operations a communicator runs, as the C calls give them: addresses as integers (device
//! memory from `aclrtMalloc`, host memory from `aclrtMallocHost` or the caller's own), counts in
//! elements. [`crate::hccl::plan`] checks them and turns each into the transfers that do it.

use crate::hccl::types::{DataType, ReduceOp};

/// One item of `HcclBatchSendRecv` (`HcclSendRecvItem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    pub send: bool,
    pub buf: usize,
    pub count: u64,
    pub data_type: DataType,
    pub peer: u32,
}

/// The per-peer counts and displacements (in elements) of the "V" collectives.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Layout {
    pub counts: Vec<u64>,
    pub displs: Vec<u64>,
}

/// One HCCL operation of a communicator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    AllReduce {
        send: usize,
        recv: usize,
        count: u64,
        data_type: DataType,
        op: ReduceOp,
    },
    Broadcast {
        buf: usize,
        count: u64,
        data_type: DataType,
        root: u32,
    },
    /// `count` elements from each rank, gathered in rank order.
    AllGather {
        send: usize,
        recv: usize,
        count: u64,
        data_type: DataType,
    },
    /// `send_count` from this rank; rank r's lands at `recv.displs[r]`, `recv.counts[r]` long.
    AllGatherV {
        send: usize,
        send_count: u64,
        recv: usize,
        recv_layout: Layout,
        data_type: DataType,
    },
    /// `count` elements of the result per rank (the send buffer holds `count` x ranks).
    ReduceScatter {
        send: usize,
        recv: usize,
        count: u64,
        data_type: DataType,
        op: ReduceOp,
    },
    /// Rank r's result is the part `send.displs[r]`, `send.counts[r]` long, of every send buffer.
    ReduceScatterV {
        send: usize,
        send_layout: Layout,
        recv: usize,
        recv_count: u64,
        data_type: DataType,
        op: ReduceOp,
    },
    Reduce {
        send: usize,
        recv: usize,
        count: u64,
        data_type: DataType,
        op: ReduceOp,
        root: u32,
    },
    /// `count` elements to each rank, from the root's send buffer in rank order.
    Scatter {
        send: usize,
        recv: usize,
        count: u64,
        data_type: DataType,
        root: u32,
    },
    /// `send_count` elements to each rank, `recv_count` from each, in rank order.
    AlltoAll {
        send: usize,
        send_count: u64,
        send_type: DataType,
        recv: usize,
        recv_count: u64,
        recv_type: DataType,
    },
    AlltoAllV {
        send: usize,
        send_layout: Layout,
        send_type: DataType,
        recv: usize,
        recv_layout: Layout,
        recv_type: DataType,
    },
    Barrier,
    Send {
        buf: usize,
        count: u64,
        data_type: DataType,
        peer: u32,
    },
    Recv {
        buf: usize,
        count: u64,
        data_type: DataType,
        peer: u32,
    },
    BatchSendRecv {
        items: Vec<Item>,
    },
}

impl Op {
    /// The vendor's name of the call, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Op::AllReduce { .. } => "HcclAllReduce",
            Op::Broadcast { .. } => "HcclBroadcast",
            Op::AllGather { .. } => "HcclAllGather",
            Op::AllGatherV { .. } => "HcclAllGatherV",
            Op::ReduceScatter { .. } => "HcclReduceScatter",
            Op::ReduceScatterV { .. } => "HcclReduceScatterV",
            Op::Reduce { .. } => "HcclReduce",
            Op::Scatter { .. } => "HcclScatter",
            Op::AlltoAll { .. } => "HcclAlltoAll",
            Op::AlltoAllV { .. } => "HcclAlltoAllV",
            Op::Barrier => "HcclBarrier",
            Op::Send { .. } => "HcclSend",
            Op::Recv { .. } => "HcclRecv",
            Op::BatchSendRecv { .. } => "HcclBatchSendRecv",
        }
    }
}
