//! `AdxlEngine::GetCapability`: which optional engine features this build has.
//!
//! Answers must be true of the code as it stands: a caller that sees `FEATURE_SUPPORTED` will
//! rely on the feature.

use crate::error::engine_status::ADXL_PARAM_INVALID;
use crate::error::{EngineError, EngineResult};

/// `adxl::FEATURE_SUPPORTED`.
pub const FEATURE_SUPPORTED: i32 = 1;
/// `adxl::FEATURE_NOT_SUPPORTED`.
pub const FEATURE_NOT_SUPPORTED: i32 = 0;

/// `adxl::FeatureType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// A transfer or notify to an unconnected engine connects first.
    AutoConnect,
    /// Engines without a listening port (clients) talk to engines with one (servers).
    ClientServerComm,
}

impl Feature {
    /// `Ok(None)` for a value this build does not know (a newer caller): answered "not
    /// supported", as the vendor does.
    pub fn from_raw(raw: i32) -> EngineResult<Option<Feature>> {
        match raw {
            r if r < 0 => Err(EngineError::new(ADXL_PARAM_INVALID, format!("feature type {r} is negative"))),
            0 => Ok(Some(Feature::AutoConnect)),
            1 => Ok(Some(Feature::ClientServerComm)),
            _ => Ok(None),
        }
    }

    pub fn supported(self) -> bool {
        match self {
            // Engines without a port connect to engines with one and transfer both ways.
            Feature::ClientServerComm => true,
            // `AutoConnect=1`: transfers and notifies connect on demand; a heartbeat drops
            // links of dead peers.
            Feature::AutoConnect => true,
        }
    }
}

/// The value `GetCapability` reports for the raw feature number.
pub fn capability(raw: i32) -> EngineResult<i32> {
    Ok(match Feature::from_raw(raw)? {
        Some(f) if f.supported() => FEATURE_SUPPORTED,
        _ => FEATURE_NOT_SUPPORTED,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_features_are_invalid_and_unknown_ones_unsupported() {
        assert_eq!(capability(-1).unwrap_err().status, ADXL_PARAM_INVALID);
        assert_eq!(capability(2), Ok(FEATURE_NOT_SUPPORTED));
        assert_eq!(capability(i32::MAX), Ok(FEATURE_NOT_SUPPORTED));
    }

    #[test]
    fn known_features_answer_what_the_build_has() {
        for raw in [0, 1] {
            let f = Feature::from_raw(raw).unwrap().unwrap();
            let expected = if f.supported() { FEATURE_SUPPORTED } else { FEATURE_NOT_SUPPORTED };
            assert_eq!(capability(raw), Ok(expected));
        }
    }
}
