//! The emulated product, chosen by SoC name, and what differs between products.
//!
//! A leaf module: the configuration chooses the product and the runtime asks it what it
//! allows, so it belongs to neither.

/// Product families as the vendor's support tables name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Product {
    /// Ascend 950PR / 950DT.
    Ascend950,
    /// Atlas A3 training / inference products (Ascend910_93xx).
    AtlasA3,
    /// Atlas A2 training / inference products (Ascend910B1..B4).
    AtlasA2,
    /// Atlas 200I/500 A2 inference products (Ascend310B).
    Atlas200I500A2,
    /// Atlas inference products (Ascend310P).
    AtlasInference,
    /// Atlas training products (Ascend910A/B/PremiumA/ProA/ProB).
    AtlasTraining,
}

impl Product {
    /// The family a SoC name belongs to; `None` for names no product uses.
    pub fn from_soc(soc: &str) -> Option<Product> {
        let s = soc.trim();
        if s.starts_with("Ascend950") {
            Some(Product::Ascend950)
        } else if s.starts_with("Ascend910_93") {
            Some(Product::AtlasA3)
        } else if [
            "Ascend910B1",
            "Ascend910B2",
            "Ascend910B2C",
            "Ascend910B3",
            "Ascend910B4",
            "Ascend910B4-1",
        ]
        .contains(&s)
        {
            Some(Product::AtlasA2)
        } else if s.starts_with("Ascend310B") {
            Some(Product::Atlas200I500A2)
        } else if s.starts_with("Ascend310P") {
            Some(Product::AtlasInference)
        } else if ["Ascend910A", "Ascend910B", "Ascend910PremiumA", "Ascend910ProA", "Ascend910ProB"]
            .contains(&s)
        {
            Some(Product::AtlasTraining)
        } else {
            None
        }
    }
}

impl Product {
    /// Notifies one device may have at once. 8192 on Atlas A2/A3 (the vendor's figure); the
    /// same is assumed for Ascend 950; 1024 on the older products (an assumption, written down
    /// in docs/compatibility.md, the `aclrtCreateNotify` row).
    pub fn notify_limit(self) -> u32 {
        match self {
            Product::AtlasA2 | Product::AtlasA3 | Product::Ascend950 => 8192,
            Product::Atlas200I500A2 | Product::AtlasInference | Product::AtlasTraining => 1024,
        }
    }

    /// Streams one device may have at once, default streams included (the vendor's figures
    /// for `aclrtCreateStream`).
    pub fn stream_limit(self) -> u32 {
        match self {
            Product::AtlasA2 | Product::AtlasA3 | Product::Ascend950 => 1984,
            Product::Atlas200I500A2 => 512,
            Product::AtlasInference => 1024,
            Product::AtlasTraining => 2048,
        }
    }

    /// Whether the product supports importing notifies and IPC memory from other processes (the
    /// seed's table: all but Atlas 200I/500 A2).
    pub fn supports_ipc_import(self) -> bool {
        self != Product::Atlas200I500A2
    }

    /// Multi-server super-node products, where the `...InterServer` calls exist.
    pub fn is_super_node(self) -> bool {
        matches!(self, Product::AtlasA3 | Product::Ascend950)
    }
}

/// What one SoC has, as the vendor's platform configuration (`platform_config/<soc>.ini`) and
/// API reference give it: the figures `aclrtGetDeviceInfo`, the resource limits and the group
/// queries answer. Figures the vendor does not publish are assumptions, marked as such here and
/// in docs/device.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figures {
    /// AI Cores (`ai_core_cnt`): on Atlas A2/A3 and Ascend 950 one Cube Core with its Vector
    /// Cores; elsewhere a core of its own.
    pub ai_cores: u32,
    /// Cube Cores (`cube_core_cnt`); the AI Core count on products without separate ones.
    pub cube_cores: u32,
    /// Vector Cores (`vector_core_cnt`); 0 where the product has none.
    pub vector_cores: u32,
    /// AI CPUs (`ai_cpu_cnt`).
    pub ai_cpus: u32,
    /// L2 cache bytes (`l2_size`).
    pub l2_cache: u64,
    /// The NPU architecture number (`ACL_DEV_ATTR_NPU_ARCH`, the vendor's table).
    pub npu_arch: u32,
}

impl Figures {
    /// The figures of SoC `soc` of `product` (the name picks the variant inside a family).
    pub fn of(soc: &str, product: Product) -> Figures {
        const MIB: u64 = 1 << 20;
        let f = |ai_cores, vector_cores, ai_cpus, l2_mib: u64, npu_arch| Figures {
            ai_cores,
            cube_cores: ai_cores,
            vector_cores,
            ai_cpus,
            l2_cache: l2_mib * MIB,
            npu_arch,
        };
        let s = soc.trim();
        match product {
            // Ascend910B3 and B4 have 20 AI Cores; B4 has half the L2 (the vendor's ini files).
            Product::AtlasA2 if s.starts_with("Ascend910B4") => f(20, 40, 6, 96, 2201),
            Product::AtlasA2 if s.starts_with("Ascend910B3") => f(20, 40, 6, 192, 2201),
            Product::AtlasA2 => f(24, 48, 6, 192, 2201),
            // One die of an A3 part as the runtime sees it (a device).
            Product::AtlasA3 => f(24, 48, 6, 192, 2201),
            // Assumption: the vendor publishes no ini for the 950 here; A3 figures are used.
            Product::Ascend950 => f(24, 48, 6, 192, 3510),
            // Assumption: one AI Core and one Vector Core (a small inference SoC).
            Product::Atlas200I500A2 => f(1, 1, 4, 4, 3002),
            // Ascend310P3: 8 AI Cores, 7 Vector Cores of their own, 16 MiB L2 (its ini); the
            // AI CPU count is an assumption.
            Product::AtlasInference => f(8, 7, 4, 16, 2002),
            // Ascend910A (first generation): 32 AI Cores, no separate Vector Cores, 32 MiB L2;
            // the AI CPU count is an assumption.
            Product::AtlasTraining => f(32, 0, 14, 32, 1001),
        }
    }
}

impl Product {
    /// The SoC names `aclrtCheckArchCompatibility` compares: compatible when both are of one
    /// architecture (`Figures::npu_arch`).
    pub fn npu_arch(self) -> u32 {
        Figures::of("", self).npu_arch
    }

    /// The default floating-point overflow mode (`aclrtGetDeviceSatMode`): Inf/NaN on Atlas
    /// A2/A3 and Ascend 950, saturation on the older products (the only mode they take).
    pub fn default_overflow_mode_is_saturation(self) -> bool {
        !matches!(self, Product::AtlasA2 | Product::AtlasA3 | Product::Ascend950)
    }

    /// The operator time-out figures (`aclrtSetOpExecuteTimeOut` and friends): the step, in
    /// microseconds, a time-out is rounded up to (at most 254 steps), and the default in
    /// milliseconds. Atlas A2/A3, Ascend 950 and Atlas 200I/500 A2: default and maximum 1091 s
    /// (254 steps of 4 294 967 us, the vendor's figures). The vendor gives only the maxima of
    /// the older products (547 s inference, 2176 s training; defaults 547 s and 68 s): their
    /// step is that maximum over 254 (an assumption).
    pub fn op_timeout(self) -> OpTimeout {
        match self {
            Product::AtlasA2 | Product::AtlasA3 | Product::Ascend950 | Product::Atlas200I500A2 => {
                OpTimeout { interval_us: 4_294_967, default_ms: 1_090_921 }
            }
            Product::AtlasInference => OpTimeout { interval_us: 2_153_544, default_ms: 547_000 },
            Product::AtlasTraining => OpTimeout { interval_us: 8_566_930, default_ms: 68_000 },
        }
    }

    /// The limits `aclrtDeviceSetLimit` takes on this product (`aclrtDeviceLimit` values):
    /// every one on Ascend 950, the SIMD ones (2, 3) on Atlas A2/A3, none elsewhere.
    pub fn supports_device_limit(self, limit: u32) -> bool {
        match self {
            Product::Ascend950 => limit <= 4,
            Product::AtlasA2 | Product::AtlasA3 => limit == 2 || limit == 3,
            _ => false,
        }
    }
}

/// Streams one core group schedules at once (`ACL_GROUP_ASQNUM_INT`): the vendor's system-wide
/// maximum, 32.
pub const GROUP_STREAMS: u32 = 32;
/// Asynchronous copy (SDMA) channels of a core group (`ACL_GROUP_SDMANUM_INT`); the vendor does
/// not publish the figure: an assumption.
pub const GROUP_SDMA_CHANNELS: u32 = 4;

/// How operator time-outs are configured on a product ([`Product::op_timeout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpTimeout {
    /// The hardware's step: a time-out is a whole number (1..=254) of it.
    pub interval_us: u64,
    /// The time-out before any is set, in milliseconds.
    pub default_ms: u32,
}

impl OpTimeout {
    /// Steps a time-out may have at most.
    pub const MAX_STEPS: u64 = 254;

    /// The longest time-out, in microseconds.
    pub fn max_us(self) -> u64 {
        self.interval_us * Self::MAX_STEPS
    }

    /// The time-out that takes effect for a request of `us` microseconds: rounded up to whole
    /// steps, at most the maximum; 0 asks for the maximum.
    pub fn effective_us(self, us: u64) -> u64 {
        if us == 0 {
            return self.max_us();
        }
        us.div_ceil(self.interval_us).clamp(1, Self::MAX_STEPS) * self.interval_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soc_names_map_to_their_family() {
        assert_eq!(Product::from_soc("Ascend910B1"), Some(Product::AtlasA2));
        assert_eq!(Product::from_soc("Ascend910B4-1"), Some(Product::AtlasA2));
        assert_eq!(Product::from_soc("Ascend910_9391"), Some(Product::AtlasA3));
        assert_eq!(Product::from_soc("Ascend950PR_9579"), Some(Product::Ascend950));
        assert_eq!(Product::from_soc("Ascend310B1"), Some(Product::Atlas200I500A2));
        assert_eq!(Product::from_soc("Ascend310P3"), Some(Product::AtlasInference));
        assert_eq!(Product::from_soc("Ascend910ProB"), Some(Product::AtlasTraining));
        assert_eq!(Product::from_soc("Ascend910B"), Some(Product::AtlasTraining));
        assert_eq!(Product::from_soc("Ascend999"), None);
    }

    #[test]
    fn figures_follow_the_soc_inside_a_family() {
        let b1 = Figures::of("Ascend910B1", Product::AtlasA2);
        assert_eq!((b1.ai_cores, b1.cube_cores, b1.vector_cores, b1.ai_cpus), (24, 24, 48, 6));
        assert_eq!(b1.l2_cache, 192 << 20);
        assert_eq!(Figures::of("Ascend910B4", Product::AtlasA2).l2_cache, 96 << 20);
        assert_eq!(Figures::of("Ascend910B3", Product::AtlasA2).ai_cores, 20);
        assert_eq!(Product::AtlasTraining.npu_arch(), 1001);
        assert_eq!(Figures::of("Ascend910A", Product::AtlasTraining).vector_cores, 0);
    }

    #[test]
    fn op_timeouts_round_up_to_whole_steps() {
        let t = Product::AtlasA2.op_timeout();
        assert_eq!(t.max_us(), 1_090_921_618);
        assert_eq!(t.effective_us(0), t.max_us());
        assert_eq!(t.effective_us(1), t.interval_us);
        assert_eq!(t.effective_us(t.interval_us + 1), 2 * t.interval_us);
        assert_eq!(t.effective_us(u64::MAX / 2), t.max_us());
        assert_eq!(u64::from(t.default_ms), t.max_us() / 1000);
    }
}
