//! `GlobalResourceConfig`: a JSON object with dotted keys (`"connect_pool.thread_num": "4"`),
//! validated entry by entry as the vendor's engine does, so a configuration it refuses is
//! refused here (PARAM_INVALID naming the entry and its range) and one it takes is taken.
//!
//! What the entries do here ([`ENTRIES`] is the list, docs/engine-options.md the table):
//! `connect_pool.*` size the asynchronous connects ([`ConnectPool`]);
//! `comm_resource_config.protocol_desc` picks the transport when nothing of ours does (the
//! facade maps it); `channel_pool.*` close idle links ([`ChannelPool`], applied by the links
//! service); the rest describes
//! NPU hardware (fabric memory windows, device ports, QoS, channel counts) and is checked and
//! reported at debug level. Entries the vendor does not know are ignored, as the vendor does,
//! with a warning (a misspelt key would otherwise silently do nothing).

use serde_json::{Map, Value};

use super::value::{int_in, invalid, invalid_entry, ratio};
use crate::error::EngineResult;
use crate::logging::TARGET;

/// The option's key.
pub const KEY: &str = "GlobalResourceConfig";

/// Every entry the vendor reads, with what it does here.
pub const ENTRIES: &[(&str, &str)] = &[
    ("fabric_memory.max_capacity", "checked ([1, 1024] TB), reported"),
    ("fabric_memory.start_address", "checked ([0, 1024] TB), reported"),
    ("fabric_memory.task_stream_num", "checked ([1, 8]; 1 unless enable_aicpu_unfold is false), reported"),
    ("fabric_memory.enable_aicpu_unfold", "checked (a JSON bool), reported"),
    ("connect_pool.thread_num", "threads of the asynchronous connects ([1, 64], default 2)"),
    ("connect_pool.task_queue_capacity", "queued asynchronous connects ([1, 65535], default 128)"),
    ("comm_resource_config.protocol_desc", "picks the transport (see Protocols)"),
    ("comm_resource_config.listen_port", "checked ([1, 65535]), reported"),
    ("comm_resource_config.max_active_channels", "checked (>= 1), reported"),
    ("comm_resource_config.qos", "checked ([0, 7]), reported"),
    ("local_comm_res_path", "file read as LocalCommRes when that option is empty"),
    (
        "channel_pool.max_channel",
        "checked ((0, 512], needs both waterlines); idle links closed at the high mark",
    ),
    ("channel_pool.high_waterline", "checked ((0, 1), above the low one); the high mark"),
    ("channel_pool.low_waterline", "checked ((0, 1)); the low mark"),
];

/// The vendor's default and largest `channel_pool.max_channel`.
pub const MAX_CHANNELS: u32 = 512;

/// The pool that runs asynchronous connects (`ConnectAsync`/`DisconnectAsync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectPool {
    /// Worker threads (`connect_pool.thread_num`).
    pub threads: usize,
    /// Connects and disconnects queued at most; one more is RESOURCE_EXHAUSTED
    /// (`connect_pool.task_queue_capacity`).
    pub queue_capacity: usize,
}

impl ConnectPool {
    /// The vendor's constants (its documentation's example shows 256 for the queue).
    pub const DEFAULT: ConnectPool = ConnectPool { threads: 2, queue_capacity: 128 };
}

impl Default for ConnectPool {
    fn default() -> Self {
        ConnectPool::DEFAULT
    }
}

/// Idle-link eviction (`channel_pool.*`, both waterlines given): when `high_mark` links exist,
/// idle ones are closed down to `low_mark`. Marks are `max(1, floor(max_channels * ratio))`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelPool {
    pub max_channels: u32,
    pub high_mark: u32,
    pub low_mark: u32,
}

/// A network protocol of `protocol_desc` (and of LocalCommRes endpoints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// RDMA over Converged Ethernet.
    Roce,
    /// The NPUs' own links inside one server.
    Hccs,
    /// Unified Bus transports (Ascend 950).
    UbCtp,
    Uboe,
    UbRtp,
}

impl Protocol {
    pub fn parse(text: &str) -> Option<Protocol> {
        Some(match text {
            "roce" => Protocol::Roce,
            "hccs" => Protocol::Hccs,
            "ub_ctp" => Protocol::UbCtp,
            "uboe" => Protocol::Uboe,
            "ub_rtp" => Protocol::UbRtp,
            _ => return None,
        })
    }
}

/// Where a protocol's endpoint sits: the host's NIC or the device's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Host,
    Device,
}

impl Placement {
    pub fn parse(text: &str) -> Option<Placement> {
        match text {
            "host" => Some(Placement::Host),
            "device" => Some(Placement::Device),
            _ => None,
        }
    }
}

/// One `protocol:placement` of `comm_resource_config.protocol_desc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtocolDesc {
    pub protocol: Protocol,
    pub placement: Placement,
}

const PROTOCOL_RULE: &str = "must be \"protocol:placement\" with protocol roce, hccs, ub_ctp, uboe or ub_rtp and \
                             placement host or device (uboe and ub_rtp: device only)";

impl ProtocolDesc {
    /// `roce:device` etc.; the vendor also takes `hccs:host` and `ub_ctp:host`, and
    /// `uboe`/`ub_rtp` only on the device.
    pub fn parse(text: &str) -> Option<ProtocolDesc> {
        let (p, at) = text.split_once(':')?;
        let d = ProtocolDesc { protocol: Protocol::parse(p)?, placement: Placement::parse(at)? };
        let device_only = matches!(d.protocol, Protocol::Uboe | Protocol::UbRtp);
        (!device_only || d.placement == Placement::Device).then_some(d)
    }
}

/// `fabric_memory.*`: the window of the vendor's fabric-memory engine (NPU virtual addresses);
/// nothing here maps memory by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FabricMemory {
    pub max_capacity_tb: Option<u32>,
    pub start_address_tb: Option<u32>,
    pub task_stream_num: Option<u32>,
    pub enable_aicpu_unfold: Option<bool>,
}

/// A validated `GlobalResourceConfig`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GlobalResource {
    /// The option's text, as given.
    pub text: String,
    pub connect_pool: ConnectPool,
    pub channel_pool: Option<ChannelPool>,
    /// `comm_resource_config.protocol_desc` (empty: not given).
    pub protocols: Vec<ProtocolDesc>,
    pub listen_port: Option<u16>,
    pub max_active_channels: Option<u32>,
    pub qos: Option<u8>,
    pub fabric_memory: FabricMemory,
    pub local_comm_res_path: Option<String>,
}

/// The entries of one level: `fabric_memory` may also be a nested object (the vendor reads
/// both; the dotted key wins).
fn fabric_memory(key: &str, root: &Map<String, Value>) -> EngineResult<FabricMemory> {
    let mut f = FabricMemory::default();
    let nested = root.get("fabric_memory").and_then(Value::as_object);
    let levels = [(nested, ""), (Some(root), "fabric_memory.")];
    for (level, prefix) in levels {
        let Some(level) = level else { continue };
        let get =
            |name: &str| level.get(&format!("{prefix}{name}")).map(|v| (format!("fabric_memory.{name}"), v));
        if let Some((e, v)) = get("max_capacity") {
            f.max_capacity_tb = Some(int_in(key, &e, v, 1, 1024, " TB")? as u32);
        }
        if let Some((e, v)) = get("start_address") {
            f.start_address_tb = Some(int_in(key, &e, v, 0, 1024, " TB")? as u32);
        }
        if let Some((e, v)) = get("task_stream_num") {
            f.task_stream_num = Some(int_in(key, &e, v, 1, 8, "")? as u32);
        }
        if let Some((e, v)) = get("enable_aicpu_unfold") {
            let b = v
                .as_bool()
                .ok_or_else(|| invalid_entry(key, &e, v, "must be a JSON bool (true or false)"))?;
            f.enable_aicpu_unfold = Some(b);
        }
    }
    if f.enable_aicpu_unfold.unwrap_or(true) && f.task_stream_num.is_some_and(|n| n != 1) {
        let n = f.task_stream_num.unwrap_or_default();
        let e = "fabric_memory.task_stream_num";
        return Err(invalid_entry(
            key,
            e,
            &Value::from(n),
            "must be 1 unless fabric_memory.enable_aicpu_unfold is false",
        ));
    }
    Ok(f)
}

fn protocols(key: &str, value: &Value) -> EngineResult<Vec<ProtocolDesc>> {
    let entry = "comm_resource_config.protocol_desc";
    let texts: Vec<&Value> = match value {
        Value::String(_) => vec![value],
        Value::Array(items) => items.iter().collect(),
        _ => return Err(invalid_entry(key, entry, value, "must be a string or an array of strings")),
    };
    texts
        .into_iter()
        .map(|v| {
            v.as_str()
                .and_then(ProtocolDesc::parse)
                .ok_or_else(|| invalid_entry(key, entry, v, PROTOCOL_RULE))
        })
        .collect()
}

fn channel_pool(key: &str, root: &Map<String, Value>) -> EngineResult<Option<ChannelPool>> {
    let max = root.get("channel_pool.max_channel");
    let max_channels = match max {
        Some(v) => int_in(key, "channel_pool.max_channel", v, 1, MAX_CHANNELS as i64, "")? as u32,
        None => MAX_CHANNELS,
    };
    let high = root
        .get("channel_pool.high_waterline")
        .map(|v| ratio(key, "channel_pool.high_waterline", v))
        .transpose()?;
    let low = root
        .get("channel_pool.low_waterline")
        .map(|v| ratio(key, "channel_pool.low_waterline", v))
        .transpose()?;
    let (Some(high), Some(low)) = (high, low) else {
        if let Some(v) = max {
            return Err(invalid_entry(
                key,
                "channel_pool.max_channel",
                v,
                "needs channel_pool.high_waterline and channel_pool.low_waterline, both in (0, 1)",
            ));
        }
        if high.is_some() || low.is_some() {
            log::warn!(target: TARGET, "{KEY}: a channel_pool waterline without the other has no effect");
        }
        return Ok(None);
    };
    let mark = |r: f64| ((max_channels as f64 * r).floor() as u32).max(1);
    let (high_mark, low_mark) = (mark(high), mark(low));
    if high_mark < low_mark + 1 {
        return Err(invalid(
            key,
            &format!("high_waterline {high}, low_waterline {low}"),
            &format!(
                "channel_pool: the high mark ({high_mark} links) must exceed the low mark ({low_mark}) by at least 1 \
                 with max_channel {max_channels}"
            ),
        ));
    }
    Ok(Some(ChannelPool { max_channels, high_mark, low_mark }))
}

impl GlobalResource {
    /// Parses and checks `text` (the option `key`'s value; not empty).
    pub fn parse(key: &str, text: &str) -> EngineResult<GlobalResource> {
        let root: Value =
            serde_json::from_str(text).map_err(|e| invalid(key, text, &format!("is not JSON: {e}")))?;
        let Value::Object(root) = root else {
            return Err(invalid(key, text, "must be a JSON object of \"section.entry\": value pairs"));
        };
        let mut g = GlobalResource {
            text: text.to_owned(),
            fabric_memory: fabric_memory(key, &root)?,
            channel_pool: channel_pool(key, &root)?,
            ..GlobalResource::default()
        };
        let int = |entry: &str, min: i64, max: i64| -> EngineResult<Option<i64>> {
            root.get(entry).map(|v| int_in(key, entry, v, min, max, "")).transpose()
        };
        if let Some(n) = int("connect_pool.thread_num", 1, 64)? {
            g.connect_pool.threads = n as usize;
        }
        if let Some(n) = int("connect_pool.task_queue_capacity", 1, 65535)? {
            g.connect_pool.queue_capacity = n as usize;
        }
        g.listen_port = int("comm_resource_config.listen_port", 1, 65535)?.map(|n| n as u16);
        g.qos = int("comm_resource_config.qos", 0, 7)?.map(|n| n as u8);
        g.max_active_channels =
            int("comm_resource_config.max_active_channels", 1, u32::MAX as i64)?.map(|n| n as u32);
        if let Some(v) = root.get("comm_resource_config.protocol_desc") {
            g.protocols = protocols(key, v)?;
        }
        if let Some(v) = root.get("local_comm_res_path") {
            match v.as_str() {
                Some(p) if !p.is_empty() => g.local_comm_res_path = Some(p.to_owned()),
                _ => {
                    return Err(invalid_entry(
                        key,
                        "local_comm_res_path",
                        v,
                        "must be a non-empty file path (a string)",
                    ));
                }
            }
        }
        for name in root.keys() {
            let known =
                ENTRIES.iter().any(|(e, _)| e == name) || (name == "fabric_memory" && root[name].is_object());
            if !known {
                log::warn!(target: TARGET, "{KEY}: entry {name:?} is not one the engine knows; ignored");
            }
        }
        log::debug!(target: TARGET, "{KEY}: {g:?} (fabric_memory, listen_port, qos and max_active_channels describe NPU resources and are not used here)");
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::engine_status::ADXL_PARAM_INVALID;

    fn parse(text: &str) -> EngineResult<GlobalResource> {
        GlobalResource::parse(KEY, text)
    }

    fn refused(text: &str, needle: &str) {
        let e = parse(text).unwrap_err();
        assert_eq!(e.status, ADXL_PARAM_INVALID, "{text}");
        assert!(e.message.contains(needle), "{text}: {}", e.message);
    }

    #[test]
    fn defaults_and_every_entry() {
        let g = parse("{}").unwrap();
        assert_eq!((g.connect_pool, g.channel_pool, g.protocols.len()), (ConnectPool::DEFAULT, None, 0));
        let g = parse(
            r#"{"fabric_memory.max_capacity":"32","fabric_memory.start_address":40,"fabric_memory.task_stream_num":"1",
                "fabric_memory.enable_aicpu_unfold":true,"connect_pool.thread_num":"4","connect_pool.task_queue_capacity":256,
                "comm_resource_config.listen_port":16666,"comm_resource_config.max_active_channels":"128",
                "comm_resource_config.qos":"3","comm_resource_config.protocol_desc":["roce:device","hccs:device"],
                "local_comm_res_path":"/tmp/x.json","channel_pool.max_channel":"100",
                "channel_pool.high_waterline":"0.8","channel_pool.low_waterline":0.5}"#,
        )
        .unwrap();
        assert_eq!(g.connect_pool, ConnectPool { threads: 4, queue_capacity: 256 });
        assert_eq!(g.channel_pool, Some(ChannelPool { max_channels: 100, high_mark: 80, low_mark: 50 }));
        assert_eq!((g.listen_port, g.max_active_channels, g.qos), (Some(16666), Some(128), Some(3)));
        assert_eq!(
            g.fabric_memory,
            FabricMemory {
                max_capacity_tb: Some(32),
                start_address_tb: Some(40),
                task_stream_num: Some(1),
                enable_aicpu_unfold: Some(true)
            }
        );
        assert_eq!(g.protocols[0], ProtocolDesc { protocol: Protocol::Roce, placement: Placement::Device });
        assert_eq!(g.local_comm_res_path.as_deref(), Some("/tmp/x.json"));
        // Unknown entries are ignored, as the vendor does.
        assert!(parse(r#"{"store":{"x":1},"no.such":"1"}"#).is_ok());
    }

    #[test]
    fn nested_fabric_memory_and_one_protocol_string() {
        let g =
            parse(r#"{"fabric_memory":{"max_capacity":8,"enable_aicpu_unfold":false,"task_stream_num":4}}"#)
                .unwrap();
        assert_eq!((g.fabric_memory.max_capacity_tb, g.fabric_memory.task_stream_num), (Some(8), Some(4)));
        let g = parse(r#"{"comm_resource_config.protocol_desc":"ub_rtp:device"}"#).unwrap();
        assert_eq!(g.protocols, [ProtocolDesc { protocol: Protocol::UbRtp, placement: Placement::Device }]);
        assert!(parse(r#"{"comm_resource_config.protocol_desc":"hccs:host"}"#).is_ok());
        assert!(parse(r#"{"comm_resource_config.protocol_desc":[]}"#).unwrap().protocols.is_empty());
    }

    #[test]
    fn every_range_and_type_is_checked() {
        refused("[1]", "JSON object");
        refused("{", "not JSON");
        refused(r#"{"fabric_memory.max_capacity":0}"#, "[1, 1024] TB");
        refused(r#"{"fabric_memory":{"max_capacity":1025}}"#, "fabric_memory.max_capacity");
        refused(r#"{"fabric_memory.start_address":"-1"}"#, "[0, 1024] TB");
        refused(r#"{"fabric_memory.task_stream_num":9,"fabric_memory.enable_aicpu_unfold":false}"#, "[1, 8]");
        refused(r#"{"fabric_memory.task_stream_num":2}"#, "enable_aicpu_unfold is false");
        refused(r#"{"fabric_memory.enable_aicpu_unfold":"true"}"#, "JSON bool");
        refused(r#"{"connect_pool.thread_num":65}"#, "connect_pool.thread_num");
        refused(r#"{"connect_pool.thread_num":"0"}"#, "[1, 64]");
        refused(r#"{"connect_pool.task_queue_capacity":65536}"#, "[1, 65535]");
        refused(r#"{"connect_pool.task_queue_capacity":1.5}"#, "integer");
        refused(r#"{"comm_resource_config.listen_port":0}"#, "[1, 65535]");
        refused(r#"{"comm_resource_config.qos":8}"#, "[0, 7]");
        refused(r#"{"comm_resource_config.max_active_channels":0}"#, "max_active_channels");
        refused(r#"{"comm_resource_config.protocol_desc":"rdma:device"}"#, "protocol:placement");
        refused(r#"{"comm_resource_config.protocol_desc":["roce:device","uboe:host"]}"#, "device only");
        refused(r#"{"comm_resource_config.protocol_desc":"roce"}"#, "protocol_desc");
        refused(r#"{"comm_resource_config.protocol_desc":5}"#, "array of strings");
        refused(r#"{"local_comm_res_path":""}"#, "non-empty");
        refused(r#"{"local_comm_res_path":3}"#, "local_comm_res_path");
        refused(
            r#"{"channel_pool.max_channel":513,"channel_pool.high_waterline":0.8,"channel_pool.low_waterline":0.5}"#,
            "[1, 512]",
        );
        refused(r#"{"channel_pool.max_channel":100}"#, "needs channel_pool.high_waterline");
        refused(r#"{"channel_pool.high_waterline":1,"channel_pool.low_waterline":0.5}"#, "(0, 1)");
        refused(r#"{"channel_pool.high_waterline":0.5,"channel_pool.low_waterline":0.5}"#, "at least 1");
        refused(
            r#"{"channel_pool.max_channel":2,"channel_pool.high_waterline":0.6,"channel_pool.low_waterline":0.1}"#,
            "high mark (1 links)",
        );
        // One waterline alone has no effect (the vendor takes it silently; we warn).
        assert_eq!(parse(r#"{"channel_pool.high_waterline":0.9}"#).unwrap().channel_pool, None);
    }
}
