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
}
