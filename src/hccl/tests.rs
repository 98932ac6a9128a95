//! The collectives in one process: `HcclCommInitAll`'s communicators, one thread per rank,
//! on runtime host memory; every result checked bit for bit against one computed here.

use std::sync::Arc;

use crate::hccl::comm::Comm;
use crate::hccl::ops::{Item, Layout, Op};
use crate::hccl::types::{DataType, ReduceOp};
use crate::runtime::memory::{self as runtime_memory, AllocKind};
use crate::runtime::reduce;

/// Runtime host memory holding `bytes`, freed when dropped.
struct Buf {
    addr: usize,
    len: usize,
}

impl Buf {
    fn new(bytes: &[u8]) -> Buf {
        let len = bytes.len().max(1);
        let addr = runtime_memory::alloc_host(len).unwrap();
        let b = Buf { addr, len };
        b.span().write_at(0, bytes);
        b
    }

    fn zeroed(len: usize) -> Buf {
        Buf::new(&vec![0u8; len])
    }

    fn span(&self) -> crate::sys::span::RawSpan {
        runtime_memory::runtime_span(self.addr, self.len).unwrap()
    }

    fn bytes(&self, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        self.span().sub(0, len).unwrap().read_into(&mut out);
        out
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        let _ = runtime_memory::free(self.addr, AllocKind::Host);
    }
}

/// Runs `f(rank, comm)` on every rank at once.
fn on_all(n: u32, f: impl Fn(u32, &Comm) + Send + Sync + 'static) {
    let comms = Comm::init_all(n).unwrap();
    let f = Arc::new(f);
    std::thread::scope(|s| {
        for (r, c) in comms.iter().enumerate() {
            let f = f.clone();
            s.spawn(move || f(r as u32, c));
        }
    });
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// Rank r's input of `count` f32s: values whose sums depend on the order of addition.
fn input(r: u32, count: usize) -> Vec<f32> {
    (0..count).map(|i| ((i as f32) * 0.37 + r as f32 * 1.1e-3).sin() * 10f32.powi((r % 3) as i32)).collect()
}

/// The reduction of every rank's bytes in rank order, as the communicator defines it.
fn reference(inputs: &[Vec<u8>], dt: DataType, op: ReduceOp) -> Vec<u8> {
    let mut acc = inputs[0].clone();
    for x in &inputs[1..] {
        reduce::apply(op.op(), dt.elem(), &mut acc, x);
    }
    acc
}

#[test]
fn all_reduce_sum_is_bit_exact_for_2_3_and_4_ranks_also_in_place() {
    for (n, count, in_place) in [
        (2u32, 1000usize, false),
        (3, 333_333, false),
        (4, 70_001, true),
        (3, 0, false),
        (2, 1_500_007, true),
    ] {
        let inputs: Vec<Vec<u8>> = (0..n).map(|r| f32s(&input(r, count))).collect();
        let want = reference(&inputs, DataType::Fp32, ReduceOp::Sum);
        let (inputs, want) = (Arc::new(inputs), Arc::new(want));
        on_all(n, move |r, c| {
            let send = Buf::new(&inputs[r as usize]);
            let recv = if in_place { None } else { Some(Buf::zeroed(count * 4)) };
            let out = recv.as_ref().map_or(send.addr, |b| b.addr);
            let op = Op::AllReduce {
                send: send.addr,
                recv: out,
                count: count as u64,
                data_type: DataType::Fp32,
                op: ReduceOp::Sum,
            };
            c.run_now(op).unwrap();
            let got = recv.as_ref().unwrap_or(&send).bytes(count * 4);
            assert!(got == *want, "rank {r} of {n}: all-reduce of {count} differs");
        });
    }
}

#[test]
fn all_reduce_max_prod_min_over_integer_and_half_types() {
    for (dt, op) in [
        (DataType::Int32, ReduceOp::Max),
        (DataType::Int8, ReduceOp::Prod),
        (DataType::Fp16, ReduceOp::Sum),
        (DataType::Bfp16, ReduceOp::Min),
        (DataType::Int64, ReduceOp::Sum),
    ] {
        let n = 3u32;
        let count = 1537usize;
        let inputs: Vec<Vec<u8>> = (0..n)
            .map(|r| {
                (0..count * dt.size())
                    .map(|i| (i as u8).wrapping_mul(31).wrapping_add(r as u8 * 7) & 0x3f)
                    .collect()
            })
            .collect();
        let want = Arc::new(reference(&inputs, dt, op));
        let inputs = Arc::new(inputs);
        on_all(n, move |r, c| {
            let send = Buf::new(&inputs[r as usize]);
            let recv = Buf::zeroed(count * dt.size());
            c.run_now(Op::AllReduce {
                send: send.addr,
                recv: recv.addr,
                count: count as u64,
                data_type: dt,
                op,
            })
            .unwrap();
            assert!(recv.bytes(count * dt.size()) == *want, "{dt:?} {op:?} rank {r}");
        });
    }
}

#[test]
fn broadcast_allgather_reducescatter_reduce_scatter_and_barrier() {
    let n = 4u32;
    let count = 10_000usize;
    let inputs: Arc<Vec<Vec<u8>>> = Arc::new((0..n).map(|r| f32s(&input(r, count * n as usize))).collect());
    on_all(n, move |r, c| {
        let b = count * 4;
        let me = &inputs[r as usize];
        // Broadcast from rank 2.
        let buf = Buf::new(if r == 2 { me } else { &inputs[0] });
        c.run_now(Op::Broadcast {
            buf: buf.addr,
            count: (count * 4) as u64,
            data_type: DataType::Fp32,
            root: 2,
        })
        .unwrap();
        assert!(buf.bytes(b * 4) == inputs[2], "broadcast at rank {r}");
        // All-gather of each rank's first `count`.
        let send = Buf::new(&me[..b]);
        let recv = Buf::zeroed(b * n as usize);
        c.run_now(Op::AllGather {
            send: send.addr,
            recv: recv.addr,
            count: count as u64,
            data_type: DataType::Fp32,
        })
        .unwrap();
        let want: Vec<u8> = inputs.iter().flat_map(|x| x[..b].to_vec()).collect();
        assert!(recv.bytes(b * n as usize) == want, "all-gather at rank {r}");
        // Reduce-scatter: rank r gets part r of the reduction.
        let send = Buf::new(me);
        let out = Buf::zeroed(b);
        c.run_now(Op::ReduceScatter {
            send: send.addr,
            recv: out.addr,
            count: count as u64,
            data_type: DataType::Fp32,
            op: ReduceOp::Sum,
        })
        .unwrap();
        let full = reference(&inputs, DataType::Fp32, ReduceOp::Sum);
        assert!(out.bytes(b) == full[r as usize * b..(r as usize + 1) * b], "reduce-scatter at rank {r}");
        // Reduce to rank 1.
        let out = Buf::zeroed(b * n as usize);
        c.run_now(Op::Reduce {
            send: send.addr,
            recv: out.addr,
            count: (count * n as usize) as u64,
            data_type: DataType::Fp32,
            op: ReduceOp::Max,
            root: 1,
        })
        .unwrap();
        if r == 1 {
            assert!(
                out.bytes(b * n as usize) == reference(&inputs, DataType::Fp32, ReduceOp::Max),
                "reduce at the root"
            );
        }
        // Scatter from rank 3.
        let out = Buf::zeroed(b);
        c.run_now(Op::Scatter {
            send: send.addr,
            recv: out.addr,
            count: count as u64,
            data_type: DataType::Fp32,
            root: 3,
        })
        .unwrap();
        assert!(out.bytes(b) == inputs[3][r as usize * b..(r as usize + 1) * b], "scatter at rank {r}");
        c.run_now(Op::Barrier).unwrap();
    });
}

#[test]
fn alltoallv_gatherv_scatterv_send_recv_and_batches() {
    let n = 3u32;
    on_all(n, move |r, c| {
        let dt = DataType::Int32;
        let word = |from: u32, to: u32, i: u64| (from * 1_000_000 + to * 1000) as i32 + i as i32;
        // Rank r sends (r + p + 1) words to p.
        let counts: Vec<u64> = (0..n).map(|p| (r + p + 1) as u64).collect();
        let displs: Vec<u64> = counts
            .iter()
            .scan(0, |s, c| {
                let d = *s;
                *s += c;
                Some(d)
            })
            .collect();
        let send: Vec<u8> = (0..n)
            .flat_map(|p| (0..counts[p as usize]).flat_map(move |i| word(r, p, i).to_ne_bytes()))
            .collect();
        let rcounts: Vec<u64> = (0..n).map(|p| (p + r + 1) as u64).collect();
        let rdispls: Vec<u64> = rcounts
            .iter()
            .scan(5, |s, c| {
                let d = *s;
                *s += c + 2;
                Some(d)
            })
            .collect();
        let rlen = (rdispls[n as usize - 1] + rcounts[n as usize - 1]) as usize * 4;
        let (sb, rb) = (Buf::new(&send), Buf::zeroed(rlen));
        c.run_now(Op::AlltoAllV {
            send: sb.addr,
            send_layout: Layout { counts: counts.clone(), displs },
            send_type: dt,
            recv: rb.addr,
            recv_layout: Layout { counts: rcounts.clone(), displs: rdispls.clone() },
            recv_type: dt,
        })
        .unwrap();
        let got = rb.bytes(rlen);
        for p in 0..n {
            for i in 0..rcounts[p as usize] {
                let at = (rdispls[p as usize] + i) as usize * 4;
                assert_eq!(
                    i32::from_ne_bytes(got[at..at + 4].try_into().unwrap()),
                    word(p, r, i),
                    "alltoallv {p}->{r} word {i}"
                );
            }
        }
        // A ring of sends and receives, as one batch: to the next rank, from the previous.
        let next = (r + 1) % n;
        let prev = (r + n - 1) % n;
        let out = Buf::new(&f32s(&input(r, 5000)));
        let inn = Buf::zeroed(5000 * 4);
        let items = vec![
            Item { send: true, buf: out.addr, count: 5000, data_type: DataType::Fp32, peer: next },
            Item { send: false, buf: inn.addr, count: 5000, data_type: DataType::Fp32, peer: prev },
        ];
        c.run_now(Op::BatchSendRecv { items }).unwrap();
        assert_eq!(inn.bytes(5000 * 4), f32s(&input(prev, 5000)));
        // Plain send/recv between ranks 0 and 2, twice in each direction.
        for round in 0..2u32 {
            if r == 0 {
                let b = Buf::new(&f32s(&input(round, 100)));
                c.run_now(Op::Send { buf: b.addr, count: 100, data_type: DataType::Fp32, peer: 2 }).unwrap();
                let back = Buf::zeroed(400);
                c.run_now(Op::Recv { buf: back.addr, count: 100, data_type: DataType::Fp32, peer: 2 })
                    .unwrap();
                assert_eq!(back.bytes(400), f32s(&input(round + 10, 100)));
            } else if r == 2 {
                let b = Buf::zeroed(400);
                c.run_now(Op::Recv { buf: b.addr, count: 100, data_type: DataType::Fp32, peer: 0 }).unwrap();
                assert_eq!(b.bytes(400), f32s(&input(round, 100)));
                let back = Buf::new(&f32s(&input(round + 10, 100)));
                c.run_now(Op::Send { buf: back.addr, count: 100, data_type: DataType::Fp32, peer: 0 })
                    .unwrap();
            }
        }
        c.run_now(Op::Barrier).unwrap();
    });
}

#[test]
fn a_destroyed_peer_fails_the_others_promptly_with_remote() {
    let comms = Comm::init_all(2).unwrap();
    comms[1].destroy().unwrap();
    let b = Buf::zeroed(64);
    let started = std::time::Instant::now();
    let e = comms[0]
        .run_now(Op::Recv { buf: b.addr, count: 16, data_type: DataType::Fp32, peer: 1 })
        .unwrap_err();
    assert_eq!(e.code, crate::error::hccl_codes::HCCL_E_REMOTE, "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(comms[0].async_error(), crate::error::hccl_codes::HCCL_E_REMOTE);
}

#[test]
fn reduce_scatter_v_and_all_gather_v_follow_their_layouts() {
    let n = 3u32;
    let counts: Vec<u64> = vec![3, 0, 1000];
    let displs: Vec<u64> = vec![1000, 7, 0];
    let len = 1003usize;
    let inputs: Arc<Vec<Vec<u8>>> = Arc::new((0..n).map(|r| f32s(&input(r, len))).collect());
    on_all(n, move |r, c| {
        let (counts, displs) = (counts.clone(), displs.clone());
        let send = Buf::new(&inputs[r as usize]);
        let mine = counts[r as usize] as usize;
        let out = Buf::zeroed(mine * 4);
        let layout = Layout { counts: counts.clone(), displs: displs.clone() };
        c.run_now(Op::ReduceScatterV {
            send: send.addr,
            send_layout: layout.clone(),
            recv: out.addr,
            recv_count: mine as u64,
            data_type: DataType::Fp32,
            op: ReduceOp::Sum,
        })
        .unwrap();
        let full = reference(&inputs, DataType::Fp32, ReduceOp::Sum);
        let at = displs[r as usize] as usize * 4;
        assert!(out.bytes(mine * 4) == full[at..at + mine * 4], "reduce-scatter-v at rank {r}");
        // Gather the parts back into their places: the reduction again.
        let all = Buf::zeroed(len * 4);
        c.run_now(Op::AllGatherV {
            send: out.addr,
            send_count: mine as u64,
            recv: all.addr,
            recv_layout: layout,
            data_type: DataType::Fp32,
        })
        .unwrap();
        let got = all.bytes(len * 4);
        for p in 0..n as usize {
            let (a, l) = (displs[p] as usize * 4, counts[p] as usize * 4);
            assert!(got[a..a + l] == full[a..a + l], "all-gather-v part {p} at rank {r}");
        }
    });
}
