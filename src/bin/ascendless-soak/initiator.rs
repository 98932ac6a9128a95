//! One initiator thread: mixed READ and WRITE transfers, TransferSync and TransferAsync, of
//! one to four ranges of mixed sizes at a time, to every peer in turn at random, all inside the
//! slot of each peer's region that this thread alone owns. It keeps a shadow copy of what each
//! of those slots must hold, so every byte a READ brings back is checked, and at the end the
//! shadow's checksum is compared with what the peer itself finds in its memory.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use ascendless::engine::{Engine, MemType, TransferDesc, TransferOp};
use ascendless::runtime::memory::{self, AllocKind};

use crate::pattern::{Rng, checksum};
use crate::protocol::Peer;
use crate::worker::{Counters, SLOT, TIMEOUT_MS, runtime_only, span};

/// The name of the ADXL notifies the soak sends (a transfer's sequence number is the message).
pub const NOTIFY_NAME: &str = "soak";
/// A request's ranges: range `i` lies in the `i`-th quarter of the slot, so they never overlap.
const MAX_RANGES: usize = 4;
const QUARTER: usize = SLOT / MAX_RANGES;
/// Range lengths: single bytes, odd sizes, page sizes and whole quarters.
const SIZES: [usize; 9] = [1, 3, 64, 4095, 4096, 65_536, 100_003, 262_144, QUARTER];

/// What an initiator thread needs.
pub struct Job {
    pub engine: Arc<Engine>,
    pub counters: Arc<Counters>,
    pub peers: Vec<Peer>,
    /// This thread's slot in every peer's region.
    pub slot: usize,
    pub seed: u64,
}

/// What the thread leaves: per peer, the checksum its slot must hold (`None` when a failed
/// transfer left it unknown).
pub struct Shadows {
    pub slot: usize,
    pub sums: Vec<(usize, Option<u64>)>,
    pub failure: Option<String>,
}

impl Shadows {
    pub fn lost(why: &str) -> Shadows {
        Shadows { slot: 0, sums: Vec::new(), failure: Some(why.to_owned()) }
    }
}

/// One peer as this thread sees it: where its slot is, and what it must hold.
struct Target {
    peer: Peer,
    remote: usize,
    shadow: Vec<u8>,
    /// A transfer into the slot failed: its content is unknown until rewritten whole.
    unknown: bool,
}

pub fn run(job: Job) -> Shadows {
    match Thread::new(&job) {
        Ok(mut t) => {
            t.run();
            t.finish()
        }
        Err(e) => Shadows { slot: job.slot, sums: Vec::new(), failure: Some(e) },
    }
}

struct Thread<'a> {
    job: &'a Job,
    rng: Rng,
    /// Local memory: the source of WRITEs and, a slot further, the destination of READs.
    local: usize,
    local_handle: u64,
    targets: Vec<Target>,
    seq: u64,
}

impl<'a> Thread<'a> {
    fn new(job: &'a Job) -> Result<Thread<'a>, String> {
        let local = memory::alloc_host(2 * SLOT).map_err(|e| format!("aclrtMallocHost: {e}"))?;
        let local_handle = job
            .engine
            .register_mem(local, 2 * SLOT, MemType::Host, runtime_only)
            .map_err(|e| format!("RegisterMem(local): {e}"))?;
        let targets = job
            .peers
            .iter()
            .map(|p| Target {
                peer: p.clone(),
                remote: p.region + job.slot * SLOT,
                shadow: vec![0; SLOT],
                unknown: true,
            })
            .collect();
        Ok(Thread { job, rng: Rng::new(job.seed), local, local_handle, targets, seq: 0 })
    }

    fn run(&mut self) {
        let c = Arc::clone(&self.job.counters);
        while !c.stopping() {
            let t = self.rng.below(self.targets.len() as u64) as usize;
            let result = if self.targets[t].unknown { self.rewrite(t) } else { self.mixed(t) };
            if let Err(e) = result {
                self.targets[t].unknown = true;
                c.error(format!("{} ({}): {e}", self.targets[t].peer.engine, self.job.slot));
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    /// Writes the whole slot of target `t` with fresh bytes.
    fn rewrite(&mut self, t: usize) -> Result<(), String> {
        let ranges: Vec<(usize, usize)> = (0..MAX_RANGES).map(|i| (i * QUARTER, QUARTER)).collect();
        self.write(t, &ranges, false)?;
        self.targets[t].unknown = false;
        Ok(())
    }

    /// One random request to target `t`.
    fn mixed(&mut self, t: usize) -> Result<(), String> {
        let n = 1 + self.rng.below(MAX_RANGES as u64) as usize;
        let ranges: Vec<(usize, usize)> = (0..n)
            .map(|i| {
                let len = SIZES[self.rng.below(SIZES.len() as u64) as usize];
                (i * QUARTER + self.rng.below((QUARTER - len + 1) as u64) as usize, len)
            })
            .collect();
        let asynchronous = self.rng.below(3) == 0;
        if self.rng.below(2) == 0 {
            self.write(t, &ranges, asynchronous)?;
            if self.rng.below(8) == 0 {
                self.notify(t)?;
            }
            Ok(())
        } else {
            self.read(t, &ranges, asynchronous)
        }
    }

    fn descs(&self, t: usize, ranges: &[(usize, usize)], local_base: usize) -> Vec<TransferDesc> {
        ranges
            .iter()
            .map(|&(off, len)| TransferDesc {
                local_addr: local_base + off,
                remote_addr: self.targets[t].remote + off,
                len,
            })
            .collect()
    }

    fn write(&mut self, t: usize, ranges: &[(usize, usize)], asynchronous: bool) -> Result<(), String> {
        let src = span(self.local, SLOT);
        for &(off, len) in ranges {
            let bytes = &mut self.targets[t].shadow[off..off + len];
            self.rng.fill(bytes);
            src.write_at(off, bytes);
        }
        let descs = self.descs(t, ranges, self.local);
        self.transfer(t, TransferOp::Write, &descs, asynchronous)
    }

    fn read(&mut self, t: usize, ranges: &[(usize, usize)], asynchronous: bool) -> Result<(), String> {
        let dst = span(self.local + SLOT, SLOT);
        // Bytes a READ failed to bring would show as this filler, not as last time's data.
        for &(off, len) in ranges {
            dst.sub(off, len).expect("a range inside the slot").fill(0xa5);
        }
        let descs = self.descs(t, ranges, self.local + SLOT);
        self.transfer(t, TransferOp::Read, &descs, asynchronous)?;
        let mut got = Vec::new();
        for &(off, len) in ranges {
            got.resize(len, 0);
            dst.sub(off, len).expect("a range inside the slot").read_into(&mut got);
            let want = &self.targets[t].shadow[off..off + len];
            if got != want {
                let bad = got.iter().zip(want).filter(|(a, b)| a != b).count() as u64;
                let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
                self.job.counters.corrupt.fetch_add(bad, Ordering::Relaxed);
                return Err(format!(
                    "READ of {len} bytes at slot offset {off}: {bad} byte(s) wrong, the first at +{first}"
                ));
            }
        }
        Ok(())
    }

    fn transfer(
        &mut self,
        t: usize,
        op: TransferOp,
        descs: &[TransferDesc],
        asynchronous: bool,
    ) -> Result<(), String> {
        let engine = &self.job.engine;
        let remote = &self.targets[t].peer.engine;
        if asynchronous {
            let req = engine
                .transfer_async(remote, op, descs, runtime_only)
                .map_err(|e| format!("TransferAsync: {e}"))?;
            let deadline = Instant::now() + Duration::from_millis(TIMEOUT_MS as u64);
            loop {
                match engine.transfer_status(req) {
                    (Some(1), Ok(())) => break,
                    (Some(0), Ok(())) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_micros(200))
                    }
                    (status, result) => {
                        return Err(format!(
                            "TransferAsync request ended with status {status:?}: {result:?}"
                        ));
                    }
                }
            }
        } else {
            engine
                .transfer_sync(remote, op, descs, TIMEOUT_MS, runtime_only)
                .map_err(|e| format!("TransferSync: {e}"))?;
        }
        let c = &self.job.counters;
        c.transfers.fetch_add(1, Ordering::Relaxed);
        c.bytes.fetch_add(descs.iter().map(|d| d.len as u64).sum(), Ordering::Relaxed);
        Ok(())
    }

    fn notify(&mut self, t: usize) -> Result<(), String> {
        self.seq += 1;
        let msg = format!("{}:{}", self.job.slot, self.seq);
        self.job
            .engine
            .send_notify(&self.targets[t].peer.engine, NOTIFY_NAME, &msg, TIMEOUT_MS)
            .map_err(|e| format!("SendNotify: {e}"))?;
        self.job.counters.adxl_sent.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn finish(self) -> Shadows {
        let mut failure = None;
        if let Err(e) = self.job.engine.deregister_mem(self.local_handle) {
            failure = Some(format!("DeregisterMem(local): {e}"));
        }
        if let Err(e) = memory::free(self.local, AllocKind::Host) {
            failure.get_or_insert(format!("aclrtFreeHost: {e}"));
        }
        let sums =
            self.targets.iter().map(|t| (t.peer.index, (!t.unknown).then(|| checksum(&t.shadow)))).collect();
        Shadows { slot: self.job.slot, sums, failure }
    }
}
