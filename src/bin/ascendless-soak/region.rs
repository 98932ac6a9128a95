//! The memory a worker serves to its peers: one allocation (device memory from `aclrtMalloc`
//! or host memory from `aclrtMallocHost`), registered with the engine, divided into slots of
//! [`SLOT`] bytes, one per initiator thread of every process.

use ascendless::engine::{Engine, MemType};
use ascendless::runtime::memory::{self, AllocKind, Limits};

use crate::pattern::checksum;
use crate::worker::{SLOT, runtime_only, span};

pub struct Region {
    pub addr: usize,
    slots: usize,
    kind: AllocKind,
    handle: u64,
}

impl Region {
    /// Allocates `slots` slots (on `device` when `on_device`) and registers them with `engine`.
    pub fn serve(engine: &Engine, slots: usize, on_device: bool, device: i32) -> Result<Region, String> {
        let len = slots * SLOT;
        let (addr, kind, mem_type) = if on_device {
            let a = memory::alloc_device(device, len, 0, &Limits::of(ascendless::config::settings()))
                .map_err(|e| format!("aclrtMalloc({len}): {e}"))?;
            (a, AllocKind::Device, MemType::Device)
        } else {
            let a = memory::alloc_host(len).map_err(|e| format!("aclrtMallocHost({len}): {e}"))?;
            (a, AllocKind::Host, MemType::Host)
        };
        let handle = engine
            .register_mem(addr, len, mem_type, runtime_only)
            .map_err(|e| format!("RegisterMem: {e}"))?;
        Ok(Region { addr, slots, kind, handle })
    }

    /// The checksum of what each slot holds now.
    pub fn sums(&self) -> Vec<u64> {
        let mut buf = vec![0u8; SLOT];
        (0..self.slots)
            .map(|slot| {
                span(self.addr + slot * SLOT, SLOT).read_into(&mut buf);
                checksum(&buf)
            })
            .collect()
    }

    /// Deregisters the region from `engine` and frees it.
    pub fn release(self, engine: &Engine) -> Result<(), String> {
        engine.deregister_mem(self.handle).map_err(|e| format!("DeregisterMem: {e}"))?;
        memory::free(self.addr, self.kind).map_err(|e| format!("freeing the region: {e}"))
    }
}
