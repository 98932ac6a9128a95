//! `LocalCommRes`: the NPU's communication resources as JSON (a rank table of version 1.0 or
//! 1.2, or a version 1.3 endpoint list), given as the option or read from the file that
//! `GlobalResourceConfig`'s `local_comm_res_path` names. Checked for its shape so a broken
//! configuration is refused as the vendor refuses it; the engine reaches peers by their names,
//! so nothing here is used beyond choosing the vendor's engine kind (version 1.3).

use std::io::Read;

use serde_json::Value;

use super::global_resource::{Placement, Protocol};
use super::value::{invalid, invalid_entry};
use crate::error::EngineResult;
use crate::logging::TARGET;

/// Largest file `local_comm_res_path` may name (the vendor's limit).
pub const MAX_FILE: u64 = 1 << 20;

/// A checked LocalCommRes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalCommRes {
    /// The text, as given.
    pub text: String,
    /// `version`, when given: "1.0", "1.2" or "1.3".
    pub version: Option<String>,
}

impl LocalCommRes {
    /// Version 1.3 selects the vendor's client-server engine (no relay pool).
    pub fn is_v13(&self) -> bool {
        self.version.as_deref() == Some("1.3")
    }

    /// Parses and checks `text` (not blank) given as `key`.
    pub fn parse(key: &str, text: &str) -> EngineResult<LocalCommRes> {
        let root: Value =
            serde_json::from_str(text).map_err(|e| invalid(key, text, &format!("is not JSON: {e}")))?;
        let Value::Object(root) = root else {
            return Err(invalid(
                key,
                text,
                "must be a JSON object (a rank table or {\"version\":\"1.3\", ...})",
            ));
        };
        let version = match root.get("version") {
            None => None,
            Some(Value::String(v)) if ["1.0", "1.2", "1.3"].contains(&v.as_str()) => Some(v.clone()),
            Some(v) => return Err(invalid_entry(key, "version", v, "must be \"1.0\", \"1.2\" or \"1.3\"")),
        };
        if version.as_deref() == Some("1.3") {
            if let Some(v) = root.get("net_instance_id").filter(|v| !v.is_string()) {
                return Err(invalid_entry(key, "net_instance_id", v, "must be a string"));
            }
            match root.get("endpoint_list") {
                None => {}
                Some(Value::Array(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        endpoint(key, i, item)?;
                    }
                }
                Some(v) => {
                    return Err(invalid_entry(key, "endpoint_list", v, "must be an array of endpoints"));
                }
            }
        }
        log::debug!(
            target: TARGET,
            "{key}: version {} taken; engines here reach peers by name, so it is not used further",
            version.as_deref().unwrap_or("(none)")
        );
        Ok(LocalCommRes { text: text.to_owned(), version })
    }

    /// The text of the file `path` (`local_comm_res_path`): a regular file, not a symbolic
    /// link, of 1 byte to 1 MiB, in UTF-8.
    pub fn read_file(key: &str, path: &str) -> EngineResult<String> {
        let bad = |why: String| invalid(key, path, &format!("local_comm_res_path: {why}"));
        let meta = std::fs::symlink_metadata(path).map_err(|e| bad(format!("cannot be read: {e}")))?;
        if !meta.file_type().is_file() {
            return Err(bad("must name a regular file (not a link, directory or device)".into()));
        }
        if meta.len() == 0 || meta.len() > MAX_FILE {
            return Err(bad(format!("the file has {} bytes; it must have 1 to {MAX_FILE}", meta.len())));
        }
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_FILE + 1).read_to_string(&mut text))
            .map_err(|e| bad(format!("cannot be read as UTF-8 text: {e}")))?;
        Ok(text)
    }
}

/// One endpoint of a version 1.3 `endpoint_list`.
fn endpoint(key: &str, i: usize, item: &Value) -> EngineResult<()> {
    let entry = |name: &str| format!("endpoint_list[{i}].{name}");
    let Value::Object(ep) = item else {
        return Err(invalid_entry(key, &format!("endpoint_list[{i}]"), item, "must be an object"));
    };
    let text = |name: &str, required: bool| -> EngineResult<Option<&str>> {
        match ep.get(name) {
            None if !required => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            v => Err(invalid_entry(key, &entry(name), v.unwrap_or(&Value::Null), "must be a string")),
        }
    };
    let protocol = text("protocol", true)?.unwrap_or_default();
    if Protocol::parse(protocol).is_none() {
        return Err(invalid_entry(
            key,
            &entry("protocol"),
            &ep["protocol"],
            "must be roce, hccs, ub_ctp, uboe or ub_rtp",
        ));
    }
    if text("comm_id", true)?.is_some_and(str::is_empty) {
        return Err(invalid_entry(
            key,
            &entry("comm_id"),
            &ep["comm_id"],
            "must name the endpoint (an EID or an IP)",
        ));
    }
    if Placement::parse(text("placement", true)?.unwrap_or_default()).is_none() {
        return Err(invalid_entry(key, &entry("placement"), &ep["placement"], "must be host or device"));
    }
    for optional in ["plane", "dst_eid", "server_id", "net_instance_id"] {
        text(optional, false)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::engine_status::ADXL_PARAM_INVALID;

    fn refused(text: &str, needle: &str) {
        let e = LocalCommRes::parse("LocalCommRes", text).unwrap_err();
        assert_eq!(e.status, ADXL_PARAM_INVALID);
        assert!(e.message.contains(needle), "{text}: {}", e.message);
    }

    #[test]
    fn versions_and_endpoints() {
        let p = |t| LocalCommRes::parse("LocalCommRes", t).unwrap();
        assert!(p(r#"{"version":"1.3"}"#).is_v13());
        assert!(!p(r#"{"version":"1.0","server_list":[]}"#).is_v13());
        assert_eq!(p(r#"{"status":"completed","version":"1.2"}"#).version.as_deref(), Some("1.2"));
        assert_eq!(p(r#"{"devices":[]}"#).version, None);
        let v13 = r#"{"version":"1.3","net_instance_id":"sp0","endpoint_list":[
            {"protocol":"roce","comm_id":"10.0.0.2","placement":"device"},
            {"protocol":"ub_ctp","comm_id":"eid1","placement":"host","plane":"p0","dst_eid":"e2","server_id":"s"}]}"#;
        assert!(p(v13).is_v13());
        refused("[]", "JSON object");
        refused("{x", "not JSON");
        refused(r#"{"version":"2.0"}"#, "\"1.0\", \"1.2\" or \"1.3\"");
        refused(r#"{"version":1.3}"#, "version");
        refused(r#"{"version":"1.3","net_instance_id":1}"#, "net_instance_id");
        refused(r#"{"version":"1.3","endpoint_list":{}}"#, "array of endpoints");
        refused(r#"{"version":"1.3","endpoint_list":[1]}"#, "endpoint_list[0]");
        refused(
            r#"{"version":"1.3","endpoint_list":[{"protocol":"ib","comm_id":"a","placement":"host"}]}"#,
            "roce",
        );
        refused(r#"{"version":"1.3","endpoint_list":[{"protocol":"roce","placement":"host"}]}"#, "comm_id");
        refused(
            r#"{"version":"1.3","endpoint_list":[{"protocol":"roce","comm_id":"","placement":"host"}]}"#,
            "EID",
        );
        refused(
            r#"{"version":"1.3","endpoint_list":[{"protocol":"roce","comm_id":"a","placement":"nic"}]}"#,
            "host or device",
        );
        refused(
            r#"{"version":"1.3","endpoint_list":[{"protocol":"roce","comm_id":"a","placement":"host","plane":0}]}"#,
            "plane",
        );
    }

    #[test]
    fn files_are_regular_small_and_not_links() {
        let dir = std::env::temp_dir().join(format!("asl-lcr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("res.json");
        std::fs::write(&file, r#"{"version":"1.3"}"#).unwrap();
        let read = |p: &std::path::Path| LocalCommRes::read_file("GlobalResourceConfig", p.to_str().unwrap());
        assert_eq!(read(&file).unwrap(), r#"{"version":"1.3"}"#);
        let link = dir.join("link.json");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(read(&link).unwrap_err().message.contains("regular file"));
        assert!(read(&dir).unwrap_err().message.contains("regular file"));
        assert!(read(&dir.join("missing")).unwrap_err().message.contains("cannot be read"));
        let empty = dir.join("empty.json");
        std::fs::write(&empty, "").unwrap();
        assert!(read(&empty).unwrap_err().message.contains("1 to 1048576"));
        let big = dir.join("big.json");
        std::fs::write(&big, vec![b' '; (MAX_FILE + 1) as usize]).unwrap();
        assert!(read(&big).unwrap_err().message.contains("1 to 1048576"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
