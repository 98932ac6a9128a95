//! The seed corpus of each target (`fuzz/corpus/<target>/seed-*`), made here from the encoders
//! so it follows the formats; `tests/fuzz_corpus.rs` checks the checked-in files against it
//! (and rewrites them under `ASCENDLESS_BLESS=1`). Files named otherwise (`regress-*`) are
//! inputs the fuzzers found, kept by hand.

use crate::engine::wire::{
    Desc, HEADER_LEN, Host, MAC_LEN, MAX_BODY, MAX_DESCS, MAX_TEXT, MemKind, Message, NONCE_LEN, Region,
    TICKET_LEN, UcxKey,
};
use crate::ipc::ExportKind;
use crate::ipc::key::Key;
use crate::ipc::wire::{Reply, Request, Status};

/// The seeds of target `name` (none for an unknown name): file name and content.
pub fn seeds(name: &str) -> Vec<(String, Vec<u8>)> {
    let named =
        |list: Vec<(&str, Vec<u8>)>| list.into_iter().map(|(n, b)| (format!("seed-{n}"), b)).collect();
    match name {
        "wire_decode" => named(wire()),
        "engine_name" => named(texts(NAMES)),
        "engine_options" => named(texts(OPTIONS)),
        "ipc_key" => named(texts(KEYS)),
        "ipc_wire" => named(ipc_wire()),
        _ => Vec::new(),
    }
}

/// One message of every kind and shape, valid and within the limits.
pub fn messages() -> Vec<(&'static str, Message)> {
    let regions = vec![
        Region { addr: 0x1000, len: 4096, kind: MemKind::Device, tag: 0 },
        Region { addr: 7, len: 1, kind: MemKind::Host, tag: 0x0102_0304 },
    ];
    let descs = vec![
        Desc { remote_addr: 0x1000, len: 10, local_kind: MemKind::Host },
        Desc { remote_addr: 0x2000, len: 0, local_kind: MemKind::Unregistered },
    ];
    let host = |pid, boot_id: &str, ticket| {
        Some(Host { pid, boot_id: boot_id.into(), ticket: [ticket; TICKET_LEN] })
    };
    vec![
        ("notify", Message::Notify { id: 3, name: "kv".into(), msg: "x".repeat(MAX_TEXT) }),
        ("ping", Message::Ping { id: 9 }),
        ("hello", Message::Hello { name: "127.0.0.1".into(), regions: regions.clone(), host: None }),
        (
            "hello-host",
            Message::Hello { name: "127.0.0.1".into(), regions: regions.clone(), host: host(42, "b", 0) },
        ),
        (
            "hello-ack",
            Message::HelloAck {
                status: 0,
                name: "[::1]:80".into(),
                regions: regions.clone(),
                message: String::new(),
                host: None,
            },
        ),
        (
            "hello-ack-host",
            Message::HelloAck {
                status: 0,
                name: "[::1]:80".into(),
                regions: regions.clone(),
                message: String::new(),
                host: host(7, "x", 9),
            },
        ),
        (
            "hello-ack-refused",
            Message::HelloAck {
                status: 103906,
                name: "1.2.3.4:5".into(),
                regions: vec![],
                message: "already serves".into(),
                host: None,
            },
        ),
        ("mem-add", Message::MemAdd { regions: regions.clone() }),
        ("mem-remove", Message::MemRemove { regions: vec![] }),
        ("write", Message::Write { id: 9, descs: descs.clone() }),
        ("read", Message::Read { id: u64::MAX, descs }),
        ("read-data", Message::ReadData { id: 1, len: 1 << 30 }),
        ("complete", Message::Complete { id: 3, status: 103900, failed: 2, message: "bad address".into() }),
        ("complete-utf8", Message::Complete { id: 4, status: 0, failed: u32::MAX, message: "é€😀".into() }),
        ("bye", Message::Bye),
        ("auth", Message::Auth { name: "127.0.0.1".into(), nonce: [1; NONCE_LEN] }),
        ("auth-challenge", Message::AuthChallenge { name: "127.0.0.1:9".into(), nonce: [2; NONCE_LEN] }),
        ("auth-proof", Message::AuthProof { mac: [3; MAC_LEN] }),
        ("ucx-query", Message::UcxQuery { id: 5 }),
        (
            "ucx-info",
            Message::UcxInfo {
                id: 5,
                status: 0,
                message: String::new(),
                worker: vec![7; 40],
                keys: vec![
                    UcxKey { addr: 0x1000, len: 4096, base: 0x7f00_0000_1000, rkey: vec![1, 2, 3] },
                    UcxKey { addr: 0x9000, len: 1, base: 0x9000, rkey: vec![] },
                ],
            },
        ),
        (
            "ucx-info-refused",
            Message::UcxInfo {
                id: 6,
                status: 103905,
                message: "built without UCX".into(),
                worker: vec![],
                keys: vec![],
            },
        ),
    ]
}

fn message(name: &str) -> Message {
    messages().into_iter().find(|(n, _)| *n == name).expect("a sample message of that name").1
}

fn wire() -> Vec<(&'static str, Vec<u8>)> {
    let mut out: Vec<(&str, Vec<u8>)> = messages().into_iter().map(|(n, m)| (n, m.encode())).collect();
    // The bodies alone, behind their type byte (the target's second reading of its input).
    for (n, of) in [("body-hello", "hello-host"), ("body-write", "write"), ("body-complete", "complete")] {
        let frame = message(of).encode();
        let mut b = vec![frame[6]];
        b.extend_from_slice(&frame[HEADER_LEN..]);
        out.push((n, b));
    }
    // A conversation: frames with their payloads between them.
    let mut stream =
        Message::Write { id: 1, descs: vec![Desc { remote_addr: 64, len: 5, local_kind: MemKind::Host }] }
            .encode();
    stream.extend_from_slice(b"hello");
    stream.extend(Message::Complete { id: 1, status: 0, failed: u32::MAX, message: String::new() }.encode());
    stream.extend(Message::ReadData { id: 2, len: 3 }.encode());
    stream.extend_from_slice(b"abc");
    stream.extend(Message::Bye.encode());
    out.push(("stream", stream));
    out.extend(bad_frames());
    out
}

/// Known-bad frames: each breaks one rule of the decoder.
fn bad_frames() -> Vec<(&'static str, Vec<u8>)> {
    let bye = Message::Bye.encode();
    let with = |at: usize, bytes: &[u8]| {
        let mut f = bye.clone();
        f[at..at + bytes.len()].copy_from_slice(bytes);
        f
    };
    let frame = |kind: u16, body: &[u8]| {
        let mut f = with(6, &kind.to_le_bytes());
        f[8..12].copy_from_slice(&(body.len() as u32).to_le_bytes());
        f.extend_from_slice(body);
        f
    };
    let id_and_count = |n: u32| [&7u64.to_le_bytes()[..], &n.to_le_bytes()].concat();
    let one_region = |addr: u64, len: u64, kind: u8| {
        let mut b = 1u32.to_le_bytes().to_vec();
        b.extend_from_slice(&addr.to_le_bytes());
        b.extend_from_slice(&len.to_le_bytes());
        b.push(kind);
        b.extend_from_slice(&[0; 7]);
        b
    };
    let huge_descs = {
        let mut b = id_and_count(2);
        for _ in 0..2 {
            b.extend_from_slice(&1u64.to_le_bytes());
            b.extend_from_slice(&u64::MAX.to_le_bytes());
            b.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        }
        b
    };
    vec![
        ("bad-magic", with(0, b"XDXL")),
        ("bad-version-2", with(4, &2u16.to_le_bytes())),
        ("bad-version-4", with(4, &4u16.to_le_bytes())),
        ("unknown-type", with(6, &77u16.to_le_bytes())),
        ("oversized-length", with(8, &(MAX_BODY as u32 + 1).to_le_bytes())),
        ("huge-length-no-body", with(8, &(MAX_BODY as u32).to_le_bytes())),
        ("max-length-field", with(8, &u32::MAX.to_le_bytes())),
        ("truncated-header", bye[..7].to_vec()),
        ("truncated-hello", message("hello").encode()[..20].to_vec()),
        ("too-many-descs", frame(5, &id_and_count(MAX_DESCS as u32 + 1))),
        ("desc-count-over-body", frame(6, &id_and_count(1000))),
        ("payload-overflow", frame(6, &huge_descs)),
        ("read-data-too-large", frame(7, &[&1u64.to_le_bytes()[..], &u64::MAX.to_le_bytes()].concat())),
        ("bad-mem-kind", frame(3, &one_region(1, 1, 9))),
        ("unregistered-region", frame(3, &one_region(1, 1, 2))),
        ("wrapping-region", frame(3, &one_region(u64::MAX, 2, 1))),
        ("bad-utf8", frame(1, &[2, 0, b'a', 0xff, 0, 0, 0, 0])),
        (
            "text-too-long",
            frame(10, &[&1u64.to_le_bytes()[..], &(MAX_TEXT as u16 + 1).to_le_bytes()].concat()),
        ),
        ("trailing-bytes", frame(11, &[0; 9])),
        ("short-host", frame(1, &[0, 0, 0, 0, 0, 0, 1, 2])),
    ]
}

/// Engine names: the four forms, their edges, and near misses.
const NAMES: &[(&str, &str)] = &[
    ("v4", "127.0.0.1"),
    ("v4-port", "10.0.0.2:26000"),
    ("v4-port-0", "1.2.3.4:0"),
    ("v6", "[::1]"),
    ("v6-port", "[::1]:65535"),
    ("v6-bare", "fe80::1"),
    ("v6-mapped", "[::ffff:1.2.3.4]:7"),
    ("empty", ""),
    ("hostname", "localhost"),
    ("short-v4", "1.2.3"),
    ("octet-256", "1.2.3.256"),
    ("empty-port", "1.2.3.4:"),
    ("port-65536", "1.2.3.4:65536"),
    ("port-sign", "1.2.3.4:+5"),
    ("two-ports", "1.2.3.4:80:1"),
    ("long-port", "1.2.3.4:000000000000000000080"),
    ("unclosed", "[::1"),
    ("after-bracket", "[::1]x"),
    ("v4-in-brackets", "[1.2.3.4]"),
    ("space", " 1.2.3.4"),
    ("zone", "[fe80::1%eth0]:1"),
];

/// Option maps, one `key=value` per line.
const OPTIONS: &[(&str, &str)] = &[
    (
        "all",
        "adxl.BufferPool=4:8\nadxl.RdmaTrafficClass=132\nadxl.RdmaServiceLevel=4\nadxl.AutoConnect=1\nadxl.Transport=tcp",
    ),
    ("short-keys", "BufferPool=0:0\nRdmaTrafficClass=0\nRdmaServiceLevel=7\nAutoConnect=0\nTransport=SHM"),
    ("pool-max", "adxl.BufferPool=1024:4096"),
    ("pool-over", "adxl.BufferPool=1025:1"),
    ("pool-half-off", "adxl.BufferPool=0:8"),
    ("pool-one-number", "adxl.BufferPool=4"),
    ("pool-three", "adxl.BufferPool=4:8:1"),
    ("pool-huge", "adxl.BufferPool=99999999999999999999:1"),
    ("class-odd", "adxl.RdmaTrafficClass=130"),
    ("class-256", "adxl.RdmaTrafficClass=256"),
    ("level-8", "adxl.RdmaServiceLevel=8"),
    ("auto-true", "adxl.AutoConnect=true"),
    ("transport-rdma", "adxl.Transport=rdma"),
    ("comm-res", "adxl.LocalCommRes={\"devices\":[{\"id\":0}]}"),
    ("comm-res-empty", "adxl.LocalCommRes="),
    ("comm-res-bad", "adxl.LocalCommRes={not json"),
    (
        "comm-res-deep",
        "adxl.LocalCommRes=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]",
    ),
    ("unknown", "adxl.Whatever=1"),
    ("lower-case", "adxl.bufferpool=4:8"),
    ("secret", "adxl.Secret=a shared secret of the group\nadxl.RemoteAccess=registered"),
    ("secret-empty", "adxl.Secret="),
    ("remote-access-bad", "adxl.RemoteAccess=some"),
    ("both-spellings", "adxl.BufferPool=2:2\nBufferPool=1:1\nadxl.RdmaTrafficClass=bad\nRdmaTrafficClass=8"),
    ("fabric", "EnableUseFabricMem=1\nadxl.BufferPool=0:0\nAutoConnect=1"),
    ("fabric-with-pool", "EnableUseFabricMem=1\nBufferPool=4:8"),
    (
        "comm-res-13",
        "adxl.LocalCommRes={\"version\":\"1.3\",\"net_instance_id\":\"p\",\"endpoint_list\":[{\"protocol\":\"roce\",\"comm_id\":\"10.0.0.1\",\"placement\":\"device\"}]}",
    ),
    (
        "global-resource",
        "GlobalResourceConfig={\"connect_pool.thread_num\":\"4\",\"connect_pool.task_queue_capacity\":256,\"comm_resource_config.protocol_desc\":[\"roce:device\",\"hccs:device\"],\"fabric_memory\":{\"max_capacity\":\"32\"},\"channel_pool.max_channel\":\"100\",\"channel_pool.high_waterline\":\"0.8\",\"channel_pool.low_waterline\":0.5,\"local_comm_res_path\":\"/nonexistent\"}",
    ),
    ("global-resource-bad", "GlobalResourceConfig={\"connect_pool.thread_num\":0}"),
    ("global-resource-array", "GlobalResourceConfig=[1]"),
    ("no-value", "adxl.AutoConnect"),
    ("empty", ""),
];

/// IPC key texts.
const KEYS: &[(&str, &str)] = &[
    ("good", "4d2-0123456789abcdef-0123456789abcdef0123456789abcdef"),
    ("longest", "ffffffff-ffffffffffffffff-ffffffffffffffffffffffffffffffff"),
    ("smallest", "1-0000000000000002-00000000000000000000000000000003"),
    ("empty", ""),
    ("two-parts", "4d2-0123456789abcdef"),
    ("four-parts", "4d2-0123456789abcdef-0123456789abcdef0123456789abcdef-1"),
    ("upper-case", "4D2-0123456789abcdef-0123456789abcdef0123456789abcdef"),
    ("sign", "+4d2-0123456789abcdef-0123456789abcdef0123456789abcdef"),
    ("pid-0", "0-0123456789abcdef-0123456789abcdef0123456789abcdef"),
    ("pid-9-digits", "123456789-0123456789abcdef-0123456789abcdef0123456789abcdef"),
    ("short-token", "4d2-0123456789abcde-0123456789abcdef0123456789abcdef"),
    ("bad-digit", "4d2-0123456789abcdef-0123456789abcdef0123456789abcdeg"),
    ("non-ascii", "4d2-0123456789abcdef-0123456789abcdef0123456789abcdé"),
    ("too-long", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
];

fn texts(list: &'static [(&'static str, &'static str)]) -> Vec<(&'static str, Vec<u8>)> {
    list.iter().map(|&(n, t)| (n, t.as_bytes().to_vec())).collect()
}

fn ipc_wire() -> Vec<(&'static str, Vec<u8>)> {
    let key = Key::new(0x1234, 0x0123_4567_89ab_cdef, 0xfeed_face_cafe_beef_0011_2233_4455_6677);
    let granted = |kind| Reply {
        status: Status::Ok,
        kind: Some(kind),
        device: 3,
        notify_id: 77,
        offset: 4096,
        len: 1 << 20,
    };
    let import = Request::Import(key).encode();
    let with = |at: usize, byte: u8| {
        let mut b = import;
        b[at] = byte;
        b.to_vec()
    };
    vec![
        ("import", import.to_vec()),
        ("release", Request::Release.encode().to_vec()),
        ("grant-notify", granted(ExportKind::Notify).encode().to_vec()),
        ("grant-memory", granted(ExportKind::Memory).encode().to_vec()),
        ("import-id", Request::ImportId { pid: 0x1234, id: 0x1234 << 42 | 0x2a }.encode().to_vec()),
        ("grant-physical", granted(ExportKind::Physical).encode().to_vec()),
        ("grant-event", granted(ExportKind::Event).encode().to_vec()),
        ("refused-unknown", Reply::refusal(Status::UnknownKey).encode().to_vec()),
        ("refused-busy", Reply::refusal(Status::Busy).encode().to_vec()),
        ("bad-magic", with(0, b'X')),
        ("bad-version", with(4, 2)),
        ("bad-op", with(6, 9)),
        ("short", import[..20].to_vec()),
        ("long", [&import[..], &[0]].concat()),
        ("ok-without-kind", Reply::refusal(Status::Ok).encode().to_vec()),
    ]
}
