//! Runs an operation on one rank, as a task of its stream: the steps of docs/hccl.md over the
//! endpoint's messages and reads.
//!
//! Every operation is a set of reads: a rank offers ranges of its memory to the peers that
//! need them (`R`), each peer reads its range into its own memory and says so (`D`), and the
//! offering rank waits for that before the operation ends (so the caller may reuse its
//! buffers). Reductions combine the peers' parts piece by piece in rank order (rank 0's first),
//! where a same-host peer's are mapped or else read into a staging piece, so every rank
//! computes the same bits; an all-reduce is then an all-gather of the reduced parts (`A`
//! offers them).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::engine::{MemType, Offer};
use crate::error::hccl_codes::{HCCL_E_INTERNAL, HCCL_E_MEMORY, HCCL_E_PARA, HCCL_E_TIMEOUT, HcclError};
use crate::hccl::endpoint::{Endpoint, Lease, Vouch, local_span};
use crate::hccl::ops::{Item, Op};
use crate::hccl::plan::share;
use crate::hccl::types::{DataType, ReduceOp};
use crate::runtime::memory::{self as runtime_memory, AllocKind};
use crate::runtime::reduce;
use crate::sync::lock;
use crate::sys::span::RawSpan;

/// The largest piece a reduction stages at once: small enough that the accumulator and the
/// piece stay in the caches while they are combined.
const PIECE: usize = 512 << 10;

/// An operation with the keys its messages carry.
#[derive(Debug, Clone)]
pub struct Job {
    pub op: Op,
    /// The collective's key (`c<n>`), or one key per point-to-point transfer, in item order.
    pub keys: Vec<String>,
    /// The collective's number: collectives of a communicator run one at a time, in the order
    /// they were queued, on every rank.
    pub turn: Option<u64>,
}

/// Orders a communicator's collectives.
#[derive(Default)]
struct Turns {
    state: Mutex<(u64, BTreeSet<u64>)>,
    changed: Condvar,
}

impl Turns {
    fn wait(&self, n: u64, deadline: Instant) -> Result<(), HcclError> {
        let mut s = lock(&self.state);
        while s.0 != n {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(HcclError::new(
                    HCCL_E_TIMEOUT,
                    format!("collective {n} waited for collective {} to finish", s.0),
                ));
            }
            s = self.changed.wait_timeout(s, left).unwrap_or_else(|p| p.into_inner()).0;
        }
        Ok(())
    }

    fn finish(&self, n: u64) {
        let mut s = lock(&self.state);
        s.1.insert(n);
        loop {
            let next = s.0;
            if !s.1.remove(&next) {
                break;
            }
            s.0 += 1;
        }
        self.changed.notify_all();
    }
}

/// The staging memory of reductions: one accumulator piece and one read piece, runtime host
/// memory registered with the engine (local only: peers never read it).
struct Scratch {
    addr: usize,
    piece: usize,
    span: RawSpan,
}

/// What a communicator's operations share.
pub struct Shared {
    pub ep: Arc<Endpoint>,
    pub name: String,
    pub exec_timeout: Duration,
    buffer_bytes: usize,
    scratch: Mutex<Option<Scratch>>,
    turns: Turns,
    /// The next collective's number, and per peer the next send and receive numbers.
    seqs: Mutex<(u64, Vec<u64>, Vec<u64>)>,
    pub async_error: AtomicI32,
    pub destroyed: AtomicBool,
}

impl Shared {
    pub fn new(ep: Endpoint, name: String, exec_timeout: Duration, buffer_bytes: usize) -> Shared {
        let n = ep.size() as usize;
        Shared {
            ep: Arc::new(ep),
            name,
            exec_timeout,
            buffer_bytes,
            scratch: Mutex::new(None),
            turns: Turns::default(),
            seqs: Mutex::new((0, vec![0; n], vec![0; n])),
            async_error: AtomicI32::new(0),
            destroyed: AtomicBool::new(false),
        }
    }

    /// Numbers `op` (in the order the caller queues operations, which every rank shares).
    pub fn job(&self, op: Op) -> Job {
        let mut s = lock(&self.seqs);
        let mut p2p = |send: bool, peer: u32| {
            let v = if send { &mut s.1 } else { &mut s.2 };
            let n = v[peer as usize];
            v[peer as usize] += 1;
            // The sender's and the receiver's numbering of one direction agree.
            if send { format!("s{}.{}", self.ep.rank, n) } else { format!("s{peer}.{n}") }
        };
        let keys = match &op {
            Op::Send { peer, .. } => vec![p2p(true, *peer)],
            Op::Recv { peer, .. } => vec![p2p(false, *peer)],
            Op::BatchSendRecv { items } => items.iter().map(|it| p2p(it.send, it.peer)).collect(),
            _ => Vec::new(),
        };
        if !keys.is_empty() {
            return Job { op, keys, turn: None };
        }
        let n = s.0;
        s.0 += 1;
        Job { op, keys: vec![format!("c{n}")], turn: Some(n) }
    }

    /// A job that was numbered but will not run (its stream refused it).
    pub fn drop_job(&self, job: &Job) {
        if let Some(n) = job.turn {
            self.turns.finish(n);
        }
    }

    /// Runs `job` (on its stream's worker).
    pub fn run(&self, job: &Job, vouch: Vouch) -> Result<(), HcclError> {
        let deadline = Instant::now() + self.exec_timeout;
        let result = match job.turn {
            Some(n) => {
                let r = self
                    .turns
                    .wait(n, deadline)
                    .and_then(|()| Ctx { sh: self, deadline, vouch }.collective(&job.op, &job.keys[0]));
                self.turns.finish(n);
                r
            }
            None => Ctx { sh: self, deadline, vouch }.p2p(job),
        };
        if let Err(e) = &result {
            let _ = self.async_error.compare_exchange(0, e.code, Ordering::AcqRel, Ordering::Acquire);
            for key in &job.keys {
                self.ep.fail(key);
            }
            log::error!(target: "ascendless::hccl", "{} on communicator {} (rank {}): {e}", job.op.name(), self.name, self.ep.rank);
        }
        result
    }

    /// Frees the staging memory (the communicator is destroyed).
    pub fn release(&self) {
        if let Some(s) = lock(&self.scratch).take() {
            drop(s.span);
            let _ = runtime_memory::free(s.addr, AllocKind::Host);
        }
    }

    fn with_scratch<T>(
        &self,
        vouch: Vouch,
        f: impl FnOnce(&Scratch) -> Result<T, HcclError>,
    ) -> Result<T, HcclError> {
        let mut guard = lock(&self.scratch);
        if guard.is_none() {
            let piece = (self.buffer_bytes / 2).clamp(4 << 10, PIECE) & !15;
            let addr = runtime_memory::alloc_host(2 * piece).map_err(|e| {
                HcclError::new(
                    HCCL_E_MEMORY,
                    format!("cannot allocate the HCCL staging memory: {}", e.message),
                )
            })?;
            let span = runtime_memory::runtime_span(addr, 2 * piece)
                .ok_or_else(|| HcclError::new(HCCL_E_INTERNAL, "staging memory has no span"))?;
            let offer = Offer { local_only: true, ..Offer::default() };
            self.ep.engine.register_mem_with(addr, 2 * piece, MemType::Host, offer, vouch).map_err(|e| {
                HcclError::new(
                    HCCL_E_INTERNAL,
                    format!("cannot register the HCCL staging memory: {}", e.message),
                )
            })?;
            *guard = Some(Scratch { addr, piece, span });
        }
        f(guard.as_ref().expect("allocated above"))
    }
}

/// One read: from `peer`, under `key`, `len` bytes into local `dst`.
struct Import {
    peer: u32,
    key: String,
    dst: usize,
    len: usize,
}

/// One offer: to `peer`, under `key`, `len` bytes at local `src`.
struct Export {
    peer: u32,
    key: String,
    src: usize,
    len: usize,
}

/// What a rank reduces, rank by rank: its own memory or a peer's offer (rank, address).
#[derive(Clone, Copy)]
enum Source {
    Own,
    Peer(u32, usize),
}

struct Ctx<'a> {
    sh: &'a Shared,
    deadline: Instant,
    vouch: Vouch,
}

impl Ctx<'_> {
    fn ep(&self) -> &Endpoint {
        &self.sh.ep
    }

    fn peers(&self) -> impl Iterator<Item = u32> + '_ {
        let me = self.ep().rank;
        (0..self.ep().size()).filter(move |&k| k != me)
    }

    /// Waits for `kind` from `from` and checks the range it offers is `len` bytes.
    fn offered(&self, from: u32, key: &str, kind: char, len: usize) -> Result<usize, HcclError> {
        let args = self.ep().wait(from, key, kind, self.deadline)?;
        match args.as_slice() {
            [addr, l] if *l as usize == len => Ok(*addr as usize),
            [_, l] => Err(HcclError::new(
                HCCL_E_PARA,
                format!("rank {from} offers {l} bytes where rank {} expects {len} ({key})", self.ep().rank),
            )),
            _ => Err(HcclError::new(HCCL_E_INTERNAL, format!("rank {from} sent a malformed offer ({key})"))),
        }
    }

    /// Copies `len` bytes at `remote` of rank `from` into local `dst`. In a collective every
    /// rank is busy, so a same-host peer's mapped bytes are copied on this thread; otherwise
    /// (and from other hosts) the engine's transfer, which may split a large copy over a
    /// helper thread as TransferSync does.
    fn fetch(
        &self,
        from: u32,
        remote: usize,
        dst: usize,
        len: usize,
        collective: bool,
    ) -> Result<(), HcclError> {
        if len == 0 {
            return Ok(());
        }
        if collective {
            let to = local_span(dst, len, true, self.vouch);
            if self
                .ep()
                .with_peer(from, remote, len, self.deadline, |x| to.copy_part_from(0, x, 0, len))?
                .is_some()
            {
                return Ok(());
            }
        }
        self.ep().read(from, remote, dst, len, self.deadline, self.vouch)
    }

    fn copy(&self, src: usize, dst: usize, len: usize) {
        if len == 0 || src == dst {
            return;
        }
        let from = local_span(src, len, false, self.vouch);
        let to = local_span(dst, len, true, self.vouch);
        to.copy_part_from(0, &from, 0, len);
    }

    /// Offers, own copies, then reads: the shape of every operation that moves bytes unchanged.
    fn exchange(
        &self,
        exports: &[Export],
        imports: &[Import],
        own: &[(usize, usize, usize)],
        collective: bool,
    ) -> Result<(), HcclError> {
        let mut ranges: Vec<(usize, usize, bool)> = exports.iter().map(|e| (e.src, e.len, true)).collect();
        ranges.extend(imports.iter().map(|i| (i.dst, i.len, false)));
        let _lease = Lease::cover(self.ep(), &ranges, self.vouch)?;
        for e in exports {
            self.ep().send(e.peer, &e.key, 'R', &[e.src as u64, e.len as u64], self.deadline)?;
        }
        for &(src, dst, len) in own {
            self.copy(src, dst, len);
        }
        for i in imports {
            let addr = self.offered(i.peer, &i.key, 'R', i.len)?;
            self.fetch(i.peer, addr, i.dst, i.len, collective)?;
            self.ep().send(i.peer, &i.key, 'D', &[], self.deadline)?;
        }
        for e in exports {
            self.ep().wait(e.peer, &e.key, 'D', self.deadline)?;
        }
        Ok(())
    }

    fn p2p(&self, job: &Job) -> Result<(), HcclError> {
        let items: Vec<Item> = match &job.op {
            Op::Send { buf, count, data_type, peer } => {
                vec![Item { send: true, buf: *buf, count: *count, data_type: *data_type, peer: *peer }]
            }
            Op::Recv { buf, count, data_type, peer } => {
                vec![Item { send: false, buf: *buf, count: *count, data_type: *data_type, peer: *peer }]
            }
            Op::BatchSendRecv { items } => items.clone(),
            other => {
                return Err(HcclError::new(
                    HCCL_E_INTERNAL,
                    format!("{} is not point-to-point", other.name()),
                ));
            }
        };
        let (mut exports, mut imports) = (Vec::new(), Vec::new());
        for (it, key) in items.iter().zip(&job.keys) {
            let len = it.data_type.bytes(it.count)?;
            if it.send {
                exports.push(Export { peer: it.peer, key: key.clone(), src: it.buf, len });
            } else {
                imports.push(Import { peer: it.peer, key: key.clone(), dst: it.buf, len });
            }
        }
        self.exchange(&exports, &imports, &[], false)
    }

    fn collective(&self, op: &Op, key: &str) -> Result<(), HcclError> {
        let (me, n) = (self.ep().rank, self.ep().size());
        let k = |s: &str| s.to_owned();
        let all_exports = |f: &dyn Fn(u32) -> (usize, usize)| -> Vec<Export> {
            self.peers()
                .map(|p| {
                    let (src, len) = f(p);
                    Export { peer: p, key: k(key), src, len }
                })
                .collect()
        };
        let all_imports = |f: &dyn Fn(u32) -> (usize, usize)| -> Vec<Import> {
            self.peers()
                .map(|p| {
                    let (dst, len) = f(p);
                    Import { peer: p, key: k(key), dst, len }
                })
                .collect()
        };
        match op {
            Op::Barrier => {
                for p in self.peers() {
                    self.ep().send(p, key, 'D', &[], self.deadline)?;
                }
                for p in self.peers() {
                    self.ep().wait(p, key, 'D', self.deadline)?;
                }
                Ok(())
            }
            Op::Broadcast { buf, count, data_type, root } => {
                let len = data_type.bytes(*count)?;
                if me == *root {
                    self.exchange(&all_exports(&|_| (*buf, len)), &[], &[], true)
                } else {
                    self.exchange(&[], &[Import { peer: *root, key: k(key), dst: *buf, len }], &[], true)
                }
            }
            Op::AllGather { send, recv, count, data_type } => {
                let b = data_type.bytes(*count)?;
                self.exchange(
                    &all_exports(&|_| (*send, b)),
                    &all_imports(&|p| (recv + p as usize * b, b)),
                    &[(*send, recv + me as usize * b, b)],
                    true,
                )
            }
            Op::AllGatherV { send, send_count, recv, recv_layout: l, data_type: dt } => {
                let es = dt.size();
                let b = dt.bytes(*send_count)?;
                let at =
                    |p: u32| (recv + l.displs[p as usize] as usize * es, l.counts[p as usize] as usize * es);
                self.exchange(&all_exports(&|_| (*send, b)), &all_imports(&at), &[(*send, at(me).0, b)], true)
            }
            Op::Scatter { send, recv, count, data_type, root } => {
                let b = data_type.bytes(*count)?;
                if me == *root {
                    self.exchange(
                        &all_exports(&|p| (send + p as usize * b, b)),
                        &[],
                        &[(send + me as usize * b, *recv, b)],
                        true,
                    )
                } else {
                    self.exchange(&[], &[Import { peer: *root, key: k(key), dst: *recv, len: b }], &[], true)
                }
            }
            Op::AlltoAll { send, send_count, send_type, recv, recv_count, recv_type } => {
                let (sb, rb) = (send_type.bytes(*send_count)?, recv_type.bytes(*recv_count)?);
                self.exchange(
                    &all_exports(&|p| (send + p as usize * sb, sb)),
                    &all_imports(&|p| (recv + p as usize * rb, rb)),
                    &[(send + me as usize * sb, recv + me as usize * rb, sb)],
                    true,
                )
            }
            Op::AlltoAllV { send, send_layout: s, send_type, recv, recv_layout: r, recv_type } => {
                let (ses, res) = (send_type.size(), recv_type.size());
                let out = |p: u32| {
                    (send + s.displs[p as usize] as usize * ses, s.counts[p as usize] as usize * ses)
                };
                let inn = |p: u32| {
                    (recv + r.displs[p as usize] as usize * res, r.counts[p as usize] as usize * res)
                };
                self.exchange(
                    &all_exports(&out),
                    &all_imports(&inn),
                    &[(out(me).0, inn(me).0, out(me).1)],
                    true,
                )
            }
            Op::AllReduce { send, recv, count, data_type: dt, op } => {
                let es = dt.size();
                let part = |p: u32| {
                    let (start, len) = share(*count, n, p);
                    (start as usize * es, len as usize * es)
                };
                let total = dt.bytes(*count)?;
                let _lease =
                    Lease::cover(self.ep(), &[(*send, total, true), (*recv, total, true)], self.vouch)?;
                let (mine, mlen) = part(me);
                self.reduce_part(key, &|p| (send + part(p).0, part(p).1), recv + mine, *dt, *op)?;
                // Everyone's part is reduced where it belongs in their receive buffer: gather.
                for p in self.peers() {
                    self.ep().send(p, key, 'A', &[(recv + mine) as u64, mlen as u64], self.deadline)?;
                }
                for p in self.peers() {
                    let (at, len) = part(p);
                    let addr = self.offered(p, key, 'A', len)?;
                    self.fetch(p, addr, recv + at, len, true)?;
                    self.ep().send(p, key, 'D', &[], self.deadline)?;
                }
                for p in self.peers() {
                    self.ep().wait(p, key, 'D', self.deadline)?;
                }
                Ok(())
            }
            Op::ReduceScatter { send, recv, count, data_type: dt, op } => {
                let b = dt.bytes(*count)?;
                let _lease =
                    Lease::cover(self.ep(), &[(*send, b * n as usize, true), (*recv, b, false)], self.vouch)?;
                self.reduce_part(key, &|p| (send + p as usize * b, b), *recv, *dt, *op)?;
                self.done_reading(key)
            }
            Op::ReduceScatterV { send, send_layout: l, recv, recv_count, data_type: dt, op } => {
                let es = dt.size();
                let b = dt.bytes(*recv_count)?;
                let end =
                    l.counts.iter().zip(&l.displs).map(|(c, d)| (c + d) as usize * es).max().unwrap_or(0);
                let _lease = Lease::cover(self.ep(), &[(*send, end, true), (*recv, b, false)], self.vouch)?;
                let at =
                    |p: u32| (send + l.displs[p as usize] as usize * es, l.counts[p as usize] as usize * es);
                self.reduce_part(key, &at, *recv, *dt, *op)?;
                self.done_reading(key)
            }
            Op::Reduce { send, recv, count, data_type: dt, op, root } => {
                let b = dt.bytes(*count)?;
                if me != *root {
                    let _lease = Lease::cover(self.ep(), &[(*send, b, true)], self.vouch)?;
                    self.ep().send(*root, key, 'R', &[*send as u64, b as u64], self.deadline)?;
                    self.ep().wait(*root, key, 'A', self.deadline)?;
                    return Ok(());
                }
                let _lease = Lease::cover(self.ep(), &[(*send, b, false), (*recv, b, false)], self.vouch)?;
                self.reduce_from(key, *send, b, *recv, *dt, *op)?;
                for p in self.peers() {
                    self.ep().send(p, key, 'A', &[], self.deadline)?;
                }
                Ok(())
            }
            Op::Send { .. } | Op::Recv { .. } | Op::BatchSendRecv { .. } => {
                Err(HcclError::new(HCCL_E_INTERNAL, format!("{} is not a collective", op.name())))
            }
        }
    }

    /// Offers each peer its part of this rank's send buffer (`at(p)`: address and length),
    /// then reduces this rank's own part into `out`.
    fn reduce_part(
        &self,
        key: &str,
        at: &dyn Fn(u32) -> (usize, usize),
        out: usize,
        dt: DataType,
        op: ReduceOp,
    ) -> Result<(), HcclError> {
        for p in self.peers() {
            let (addr, len) = at(p);
            self.ep().send(p, key, 'R', &[addr as u64, len as u64], self.deadline)?;
        }
        let (own, len) = at(self.ep().rank);
        self.reduce_from(key, own, len, out, dt, op)
    }

    /// Tells every peer this rank has read its part, and waits until every peer has read this
    /// rank's (its send buffer may then be reused).
    fn done_reading(&self, key: &str) -> Result<(), HcclError> {
        for p in self.peers() {
            self.ep().send(p, key, 'A', &[], self.deadline)?;
        }
        for p in self.peers() {
            self.ep().wait(p, key, 'A', self.deadline)?;
        }
        Ok(())
    }

    /// Reduces `len` bytes, rank 0's first: this rank's own at `own`, each peer's from its
    /// offer (`R`), into `out`, piece by piece.
    fn reduce_from(
        &self,
        key: &str,
        own: usize,
        len: usize,
        out: usize,
        dt: DataType,
        op: ReduceOp,
    ) -> Result<(), HcclError> {
        let (me, n) = (self.ep().rank, self.ep().size());
        let mut sources = Vec::with_capacity(n as usize);
        for p in 0..n {
            sources.push(if p == me {
                Source::Own
            } else {
                Source::Peer(p, self.offered(p, key, 'R', len)?)
            });
        }
        if len == 0 {
            return Ok(());
        }
        let (elem, rop) = (dt.elem(), op.op());
        let own_span = local_span(own, len, false, self.vouch);
        let out_span = local_span(out, len, true, self.vouch);
        // The sums go straight into `out` unless it overlaps this rank's own input (in place),
        // which must stay unchanged until every piece of it has been added.
        let in_place = own < out + len && out < own + len;
        self.sh.with_scratch(self.vouch, |s| {
            let piece = s.piece - s.piece % dt.size();
            let mut off = 0;
            while off < len {
                let c = piece.min(len - off);
                let (acc, at, acc_addr) =
                    if in_place { (&s.span, 0, s.addr) } else { (&out_span, off, out + off) };
                let add = |d: &mut [u8], x: &[u8]| reduce::apply(rop, elem, d, x);
                for (j, src) in sources.iter().enumerate() {
                    match *src {
                        Source::Own if j == 0 => acc.copy_part_from(at, &own_span, off, c),
                        Source::Own => acc.combine_part_from(at, &own_span, off, c, add),
                        Source::Peer(p, addr) => {
                            // A same-host peer's bytes are combined where they are; others are
                            // read into the staging piece first (rank 0's straight in place).
                            let combined = self.ep().with_peer(p, addr + off, c, self.deadline, |x| {
                                if j == 0 {
                                    acc.copy_part_from(at, x, 0, c);
                                } else {
                                    acc.combine_part_from(at, x, 0, c, add);
                                }
                            })?;
                            if combined.is_none() {
                                let stage = s.addr + s.piece;
                                let into = if j == 0 { acc_addr } else { stage };
                                self.ep().read(p, addr + off, into, c, self.deadline, self.vouch)?;
                                if j > 0 {
                                    acc.combine_part_from(at, &s.span, s.piece, c, add);
                                }
                            }
                        }
                    }
                }
                if in_place {
                    out_span.copy_part_from(off, &s.span, 0, c);
                }
                off += c;
            }
            Ok(())
        })
    }
}
