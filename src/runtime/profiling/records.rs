//! The records kept between a start and the stop that writes them: one list for the process,
//! bounded (a record past [`MAX_RECORDS`] is counted, not kept), written as JSON lines.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::sync;

/// Most records held at once; a long run without a stop loses the later ones (counted).
pub const MAX_RECORDS: usize = 1 << 20;

/// One observation.
#[derive(Debug, Clone)]
pub enum Record {
    /// A stream task ran.
    Task {
        device: u32,
        stream: u32,
        /// The n-th task submitted to the stream.
        index: u64,
        kind: &'static str,
        start_ns: u64,
        end_ns: u64,
        thread: u32,
    },
    /// A host event: a msproftx mark, push/pop or range, a step timestamp, a string's id.
    Host {
        event: &'static str,
        message: String,
        start_ns: u64,
        end_ns: u64,
        thread: u32,
        /// A range's, mark's, step's or string's id, where it has one.
        id: Option<u64>,
        /// What more the event carries (a step's tag and stream, a range's tensors).
        extra: Value,
    },
}

impl Record {
    pub fn to_json(&self) -> Value {
        match self {
            Record::Task { device, stream, index, kind, start_ns, end_ns, thread } => json!({
                "type": "task", "device": device, "stream": stream, "task": index, "kind": kind,
                "start_ns": start_ns, "end_ns": end_ns, "duration_ns": end_ns.saturating_sub(*start_ns),
                "thread": thread,
            }),
            Record::Host { event, message, start_ns, end_ns, thread, id, extra } => {
                let mut v = json!({
                    "type": event, "message": message, "start_ns": start_ns, "end_ns": end_ns,
                    "thread": thread, "pid": std::process::id(),
                });
                if let Some(id) = id {
                    v["id"] = json!(id);
                }
                if let (Value::Object(o), Value::Object(more)) = (&mut v, extra) {
                    o.extend(more.clone());
                }
                v
            }
        }
    }
}

struct Buffer {
    records: Vec<Record>,
    dropped: u64,
}

static BUFFER: Mutex<Buffer> = Mutex::new(Buffer { records: Vec::new(), dropped: 0 });

pub fn push(r: Record) {
    let mut b = sync::lock(&BUFFER);
    if b.records.len() >= MAX_RECORDS {
        b.dropped += 1;
    } else {
        b.records.push(r);
    }
}

/// Takes the task records of `devices` (the rest stay).
pub fn take_tasks(devices: &[u32]) -> Vec<Record> {
    take(|r| matches!(r, Record::Task { device, .. } if devices.contains(device)))
}

/// Takes the host records.
pub fn take_host() -> Vec<Record> {
    take(|r| matches!(r, Record::Host { .. }))
}

fn take(pred: impl Fn(&Record) -> bool) -> Vec<Record> {
    let mut b = sync::lock(&BUFFER);
    let (taken, kept) = std::mem::take(&mut b.records).into_iter().partition(pred);
    b.records = kept;
    taken
}

/// Forgets every record; returns how many were dropped for want of room since the last call.
pub fn clear() -> u64 {
    let mut b = sync::lock(&BUFFER);
    b.records.clear();
    std::mem::take(&mut b.dropped)
}

/// Records dropped for want of room so far.
pub fn dropped() -> u64 {
    sync::lock(&BUFFER).dropped
}

/// Appends `records` to `path` (made with its directory), one JSON object a line.
pub fn append(path: &Path, records: &[Record]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::io::BufWriter::new(std::fs::OpenOptions::new().create(true).append(true).open(path)?);
    for r in records {
        serde_json::to_writer(&mut f, &r.to_json())?;
        f.write_all(b"\n")?;
    }
    f.flush()
}
