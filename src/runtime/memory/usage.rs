//! `aclrtGetMemUsageInfo`: device memory by the component that holds it.
//!
//! The vendor's driver names the modules that allocated device memory and reports only those
//! holding some now, largest first. Here every byte of device memory is allocated by the
//! application (`aclrtMalloc`), so there is one component, `APP`; imported IPC memory belongs
//! to the exporting process and is not counted, as it is not against the capacity.

use super::registry::Registry;

/// The component name of memory the application allocated.
pub const APP: &str = "APP";

/// One component's device memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Component {
    pub name: &'static str,
    /// Bytes it holds now.
    pub current: u64,
    /// The most it has held at once.
    pub peak: u64,
}

impl Registry {
    /// The components holding memory of `device` now, largest first.
    pub fn usage_by_component(&self, device: i32) -> Vec<Component> {
        let mut all =
            vec![Component { name: APP, current: self.usage(device), peak: self.peak_usage(device) }];
        all.retain(|c| c.current > 0);
        all.sort_by_key(|c| std::cmp::Reverse(c.current));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::memory::{AllocKind, Limits, MemFd};

    #[test]
    fn the_application_component_reports_current_and_peak_bytes() {
        let reg = Registry::new();
        let limits = Limits { capacity: 1 << 30, strict: false };
        assert_eq!(reg.usage_by_component(3), vec![], "nothing held, nothing listed");
        let a = reg.alloc_device(3, 4096, 2, &limits).unwrap();
        let b = reg.alloc_device(3, 3 * 4096, 2, &limits).unwrap();
        reg.register_import(3, MemFd::create("usage-test", 4096).unwrap(), 0, 4096, false).unwrap();
        assert_eq!(
            reg.usage_by_component(3),
            vec![Component { name: APP, current: 4 * 4096, peak: 4 * 4096 }]
        );
        reg.free(b, AllocKind::Device).unwrap();
        assert_eq!(reg.usage_by_component(3), vec![Component { name: APP, current: 4096, peak: 4 * 4096 }]);
        reg.free(a, AllocKind::Device).unwrap();
        assert_eq!(reg.usage_by_component(3), vec![]);
        assert_eq!(reg.usage_by_component(4), vec![], "another device");
    }
}
