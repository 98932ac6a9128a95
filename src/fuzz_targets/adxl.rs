//! Targets for the ADXL parsers: frames from a peer, engine names and options from a caller.

use std::net::IpAddr;

use crate::engine::access::RemoteAccess;
use crate::engine::name::EngineName;
use crate::engine::options::Options;
use crate::engine::options::Transport;
use crate::engine::wire::{HEADER_LEN, LAST_KIND, MAX_BODY, Message, parse_header};
use crate::error::engine_status::ADXL_PARAM_INVALID;

/// The bytes as a connection would deliver them (frames, each WRITE or READ_DATA followed by
/// its payload), then as the body of each message type. Whatever decodes must encode to a
/// frame of the same type and length that decodes to the same message.
pub fn wire_decode(data: &[u8]) {
    let mut stream = data;
    while let Ok(m) = Message::read_from(&mut stream) {
        round_trip(&m, None);
        // The receiver streams the payload into memory; here it is skipped.
        let payload = usize::try_from(m.payload_len()).unwrap_or(usize::MAX);
        stream = &stream[payload.min(stream.len())..];
    }
    if let Some(Ok((_, len))) = data.first_chunk::<HEADER_LEN>().map(parse_header) {
        assert!(len <= MAX_BODY, "parse_header let a {len}-byte body through");
    }
    // The first byte picks the message type (0 and LAST_KIND + 1 are no type), the rest is
    // the body.
    if let Some((&kind, body)) = data.split_first() {
        let kind = u16::from(kind) % (LAST_KIND + 2);
        if let Ok(m) = Message::decode(kind, body) {
            round_trip(&m, Some((kind, body.len())));
        }
    }
}

/// `m` encodes (without breaking a limit: `encode` panics on that) to a frame that reads back
/// as `m`; when it was decoded from a body, the frame has that body's type and length.
fn round_trip(m: &Message, decoded_from: Option<(u16, usize)>) {
    let frame = m.encode();
    let header = frame.first_chunk::<HEADER_LEN>().expect("a frame has a header");
    let (kind, len) = parse_header(header).expect("an encoded header parses");
    assert_eq!(len, frame.len() - HEADER_LEN, "the header's length is the body's");
    if let Some(from) = decoded_from {
        assert_eq!((kind, len), from, "{m:?} re-encodes to another type or length");
    }
    let again = Message::read_from(&mut frame.as_slice()).expect("an encoded frame decodes");
    assert_eq!(&again, m, "a message changes when encoded and decoded again");
    assert_eq!(again.payload_len(), m.payload_len());
}

/// The input as an engine name. An accepted name keeps its exact text, parses again to the
/// same value, and spelled again from its address and port means the same address and port.
pub fn engine_name(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let name = match EngineName::parse(&text) {
        Ok(name) => name,
        Err(e) => return assert_eq!(e.status, ADXL_PARAM_INVALID, "{}", e.message),
    };
    assert_eq!(name.text, text);
    assert_eq!(EngineName::parse(&name.text).expect("an accepted name parses again"), name);
    if let Some(addr) = name.listen_addr() {
        assert_eq!((addr.ip(), Some(addr.port())), (name.ip, name.port));
        assert!(addr.port() > 0, "port 0 does not listen");
    }
    let spelled = match (name.ip, name.port) {
        (IpAddr::V4(ip), Some(port)) => format!("{ip}:{port}"),
        (IpAddr::V6(ip), Some(port)) => format!("[{ip}]:{port}"),
        (ip, None) => ip.to_string(),
    };
    let again = EngineName::parse(&spelled).expect("a name spelled from its parts parses");
    assert_eq!((again.ip, again.port), (name.ip, name.port), "{spelled:?}");
}

/// The input as option pairs: one `key=value` per line (a line without `=` is a key with an
/// empty value). Refusals are `PARAM_INVALID`; accepted options are within their ranges, and
/// written back as pairs they parse to the same options.
pub fn engine_options(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let pairs = text.split('\n').map(|line| line.split_once('=').unwrap_or((line, "")));
    let o = match Options::parse(pairs) {
        Ok(o) => o,
        Err(e) => return assert_eq!(e.status, ADXL_PARAM_INVALID, "{}", e.message),
    };
    let pool = o.buffer_pool;
    assert!(
        (pool.buffers, pool.buffer_mib) == (0, 0)
            || ((1..=1024).contains(&pool.buffers) && (1..=4096).contains(&pool.buffer_mib)),
        "{pool:?}"
    );
    assert!(o.rdma_traffic_class.is_none_or(|tc| tc % 4 == 0), "{o:?}");
    assert!(o.rdma_service_level.is_none_or(|sl| sl <= 7), "{o:?}");
    let mut written = vec![("adxl.AutoConnect", u8::from(o.auto_connect).to_string())];
    if let Some(p) = o.buffer_pool_option {
        written.push(("adxl.BufferPool", format!("{}:{}", p.buffers, p.buffer_mib)));
    }
    if let Some(tc) = o.rdma_traffic_class {
        written.push(("adxl.RdmaTrafficClass", tc.to_string()));
    }
    if let Some(sl) = o.rdma_service_level {
        written.push(("adxl.RdmaServiceLevel", sl.to_string()));
    }
    if o.fabric_mem {
        written.push(("EnableUseFabricMem", "1".to_owned()));
    }
    if let Some(l) = &o.local_comm_res {
        written.push(("LocalCommRes", l.text.clone()));
    }
    if let Some(g) = &o.global_resource {
        written.push(("GlobalResourceConfig", g.text.clone()));
    }
    if let Some(t) = o.transport {
        let t = match t {
            Transport::Auto => "auto",
            Transport::Shm => "shm",
            Transport::Tcp => "tcp",
            Transport::Ucx => "ucx",
        };
        written.push(("adxl.Transport", t.to_owned()));
    }
    if let Some(secret) = &o.secret {
        let text = std::str::from_utf8(secret.bytes()).expect("a secret is taken from text");
        written.push(("adxl.Secret", text.to_owned()));
    }
    if let Some(access) = o.remote_access {
        let access = match access {
            RemoteAccess::Any => "any",
            RemoteAccess::Registered => "registered",
        };
        written.push(("adxl.RemoteAccess", access.to_owned()));
    }
    let again = Options::parse(written.iter().map(|(k, v)| (*k, v.as_str())));
    assert_eq!(again.expect("written options parse"), o);
}
