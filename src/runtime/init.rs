//! `aclInit` / `aclFinalize` / `aclFinalizeReference`: the process-wide initialisation count.
//!
//! The vendor counts every `aclInit` (a repeated one still returns 100002, which callers treat
//! as success); `aclFinalizeReference` takes one count away and finalises at zero, `aclFinalize`
//! finalises at once. Finalising releases every device still in use (their streams and
//! memory). After finalising, `aclInit` may be called again.

use std::path::Path;
use std::sync::Mutex;

use crate::error::acl_codes::*;
use crate::error::{AclError, AclResult};
use crate::sync;

/// Deepest nesting of `{`/`[` the vendor accepts in the configuration file.
const MAX_CONFIG_DEPTH: usize = 10;
/// Largest configuration file we read; real ones are a few hundred bytes.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Never,
    Initialized,
    Finalized,
}

struct State {
    phase: Phase,
    count: u64,
}

static STATE: Mutex<State> = Mutex::new(State { phase: Phase::Never, count: 0 });

/// The text of the configuration file of the `aclInit` in effect ("" without one): what init
/// callbacks registered later are given.
static CONFIG: Mutex<Vec<u8>> = Mutex::new(Vec::new());

fn state() -> std::sync::MutexGuard<'static, State> {
    sync::lock(&STATE)
}

/// `aclInit`: validates the optional JSON configuration file, counts one initialisation, then
/// runs the init callbacks (`aclInitCallbackRegister`) with the file's text; a callback's
/// failure is `aclInit`'s, and leaves AscendCL uninitialised.
pub fn init(config: Option<&Path>) -> AclResult<()> {
    let mut s = state();
    if s.phase == Phase::Initialized {
        s.count += 1;
        return Err(AclError::benign(
            ACL_ERROR_REPEAT_INITIALIZE,
            format!("already initialised (initialisation count now {})", s.count),
        ));
    }
    let text = match config {
        Some(path) => check_config(path)?,
        None => String::new(),
    };
    let before = s.phase;
    s.phase = Phase::Initialized;
    s.count = 1;
    drop(s);
    *sync::lock(&CONFIG) = text.clone().into_bytes();
    if let Err(e) = super::lifecycle_callbacks::run_init(text.as_bytes()) {
        let mut s = state();
        s.phase = before;
        s.count = 0;
        return Err(e);
    }
    log::info!(target: crate::logging::TARGET, "aclInit: initialised");
    Ok(())
}

/// The configuration text of the `aclInit` in effect, `None` when AscendCL is not initialised.
pub fn config_if_initialized() -> Option<Vec<u8>> {
    is_initialized().then(|| sync::lock(&CONFIG).clone())
}

/// `aclFinalize`: runs the finalize callbacks, then finalises whatever the count.
pub fn finalize() -> AclResult<()> {
    not_finalized(&state())?;
    super::lifecycle_callbacks::run_finalize();
    let mut s = state();
    not_finalized(&s)?;
    s.phase = Phase::Finalized;
    s.count = 0;
    drop(s);
    super::device::release_all();
    log::info!(target: crate::logging::TARGET, "aclFinalize: finalised");
    Ok(())
}

/// `aclFinalizeReference`: takes one count away, finalising at zero; returns the count left.
pub fn finalize_reference() -> AclResult<u64> {
    let mut s = state();
    not_finalized(&s)?;
    if s.count == 1 {
        drop(s);
        super::lifecycle_callbacks::run_finalize();
        s = state();
        not_finalized(&s)?;
    }
    s.count -= 1;
    let left = s.count;
    if left == 0 {
        s.phase = Phase::Finalized;
        drop(s);
        super::device::release_all();
        log::info!(target: crate::logging::TARGET, "aclFinalizeReference: finalised");
    }
    Ok(left)
}

/// Whether `aclInit` is in effect.
pub fn is_initialized() -> bool {
    state().phase == Phase::Initialized
}

fn not_finalized(s: &State) -> AclResult<()> {
    match s.phase {
        Phase::Initialized => Ok(()),
        Phase::Finalized => Err(AclError::benign(ACL_ERROR_REPEAT_FINALIZE, "already finalised".to_owned())),
        Phase::Never => Err(AclError::new(ACL_ERROR_UNINITIALIZE, "aclInit has not been called".to_owned())),
    }
}

/// The vendor's configuration file is JSON (dump, profiling and operator-cache settings, none of
/// which apply here); we insist that it exists and parses, so a wrong path is caught as it
/// would be on the real toolkit, and otherwise ignore its content.
fn check_config(path: &Path) -> AclResult<String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| {
        AclError::new(ACL_ERROR_INVALID_FILE, format!("cannot read config file {shown}: {e}"))
    })?;
    if !meta.is_file() || meta.len() > MAX_CONFIG_BYTES {
        return Err(AclError::new(
            ACL_ERROR_INVALID_FILE,
            format!("config file {shown} is not a regular file of at most 1 MiB"),
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        AclError::new(ACL_ERROR_INVALID_FILE, format!("cannot read config file {shown}: {e}"))
    })?;
    if text.trim().is_empty() {
        return Ok(text);
    }
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| AclError::new(ACL_ERROR_PARSE_FILE, format!("config file {shown} is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(AclError::new(
            ACL_ERROR_PARSE_FILE,
            format!("config file {shown} must hold a JSON object"),
        ));
    }
    if depth(&value) > MAX_CONFIG_DEPTH {
        return Err(AclError::new(
            ACL_ERROR_PARSE_FILE,
            format!("config file {shown} nests deeper than {MAX_CONFIG_DEPTH} levels"),
        ));
    }
    if let Some(obj) = value.as_object().filter(|o| !o.is_empty()) {
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        log::debug!(target: crate::logging::TARGET, "aclInit: config keys {keys:?} have no effect here");
    }
    Ok(text)
}

fn depth(v: &serde_json::Value) -> usize {
    match v {
        serde_json::Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        serde_json::Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_nesting() {
        let v: serde_json::Value = serde_json::from_str(r#"{"a":[{"b":1}],"c":2}"#).unwrap();
        assert_eq!(depth(&v), 3);
    }
}
