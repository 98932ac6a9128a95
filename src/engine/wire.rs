//! The engine-to-engine protocol over TCP, byte for byte (`docs/protocol.md` is the prose).
//!
//! Every message is a frame: a 12-byte header then a body of at most [`MAX_BODY`] bytes,
//! little-endian throughout:
//!
//! ```text
//! offset size  field
//!      0    4  magic "ADXL"
//!      4    2  protocol version (4)
//!      6    2  message type (see `Message`)
//!      8    4  body length
//! ```
//!
//! `Write` and `ReadData` are followed by a raw payload (the sum of the descriptors' lengths,
//! or `len`) that is not part of the body: the receiver streams it straight into the
//! destination memory. Every decoding error ([`WireError`]) means the connection is closed;
//! nothing else happens to the engine.

use std::io::{self, Read};

pub const MAGIC: [u8; 4] = *b"ADXL";
pub const VERSION: u16 = 4;
pub const HEADER_LEN: usize = 12;
/// Largest body of any frame (a HELLO with [`MAX_REGIONS`] regions fits).
pub const MAX_BODY: usize = 1 << 20;
/// Most descriptors in one WRITE or READ request; a call with more sends several requests.
pub const MAX_DESCS: usize = 16384;
/// Most regions in one HELLO, HELLO_ACK, MEM_ADD or MEM_REMOVE.
pub const MAX_REGIONS: usize = 16384;
/// Longest engine name or status message.
pub const MAX_TEXT: usize = 1024;
/// Largest payload of one request (1 TiB): anything larger is a malformed request.
pub const MAX_PAYLOAD: u64 = 1 << 40;
/// Bytes of a handshake nonce (AUTH, AUTH_CHALLENGE).
pub const NONCE_LEN: usize = 32;
/// Bytes of a handshake proof (HMAC-SHA256).
pub const MAC_LEN: usize = 32;
/// Bytes of a same-host ticket (see [`Host`]).
pub const TICKET_LEN: usize = 16;
/// Largest UCX worker address or packed remote key (UCX_INFO).
pub const MAX_BLOB: usize = 64 * 1024;
/// The last message type.
pub const LAST_KIND: u16 = 16;

/// First allocation for a frame body read by [`Message::read_from`]; more as bytes arrive.
const BODY_CHUNK: usize = 4096;
const REGION_LEN: usize = 24;
const DESC_LEN: usize = 24;

/// Kind of one side of memory, as announced or as a descriptor's local side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MemKind {
    Device = 0,
    Host = 1,
    /// Not registered: relayed, and taken to be host memory (the seed's rule).
    Unregistered = 2,
}

impl MemKind {
    fn from_u8(v: u8) -> Result<MemKind, WireError> {
        match v {
            0 => Ok(MemKind::Device),
            1 => Ok(MemKind::Host),
            2 => Ok(MemKind::Unregistered),
            _ => Err(WireError::Malformed("unknown memory kind")),
        }
    }
}

/// A registered range, as announced to peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub addr: u64,
    pub len: u64,
    pub kind: MemKind,
    /// A number the registering face gave the range, for a peer's face to find it by
    /// ([`NO_TAG`]: none). LLM-DataDist names a cache's tensors this way, so a peer can pull
    /// from a cache it knows only by id. Sent in what were reserved bytes: an older engine
    /// sends zeros ([`NO_TAG`]) and ignores it.
    pub tag: u32,
}

/// The tag of a region registered without one.
pub const NO_TAG: u32 = 0;

/// One descriptor of a request: the serving engine's range and what the initiator's side is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Desc {
    pub remote_addr: u64,
    pub len: u64,
    pub local_kind: MemKind,
}

/// Where an engine runs, sent at the end of HELLO and HELLO_ACK by an engine that may share
/// memory with a peer on its host: its pid and the kernel's boot id. Absent (no bytes) from an
/// engine forced to TCP. In HELLO_ACK, `ticket` is the one-time ticket the initiator must
/// present on the server's same-host socket (all zeros: none; HELLO always sends zeros).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub pid: u32,
    pub boot_id: String,
    pub ticket: [u8; TICKET_LEN],
}

/// One registered region as UCX reaches it (UCX_INFO): the range peers name (`addr`, `len`),
/// where its bytes are mapped in the serving process (`base`; differs from `addr` for device
/// memory in strict mode), and the packed UCP remote key of that mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UcxKey {
    pub addr: u64,
    pub len: u64,
    pub base: u64,
    pub rkey: Vec<u8>,
}

/// Every message of the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// First frame on a connection, from the connecting engine: its name and its memory.
    Hello { name: String, regions: Vec<Region>, host: Option<Host> },
    /// The answer to HELLO: `status` 0 accepts (then the name and memory of the server).
    HelloAck { status: u32, name: String, regions: Vec<Region>, message: String, host: Option<Host> },
    /// Memory registered after HELLO.
    MemAdd { regions: Vec<Region> },
    /// Memory deregistered after HELLO.
    MemRemove { regions: Vec<Region> },
    /// Write the payload that follows (sum of `len`s) into the descriptors' ranges.
    Write { id: u64, descs: Vec<Desc> },
    /// Send back the descriptors' ranges (as READ_DATA).
    Read { id: u64, descs: Vec<Desc> },
    /// `len` bytes of a READ's data follow.
    ReadData { id: u64, len: u64 },
    /// The end of request `id`: status 0 or an ADXL status, the first failing descriptor
    /// (`u32::MAX` for none) and why.
    Complete { id: u64, status: u32, failed: u32, message: String },
    /// The sender closes the connection next.
    Bye,
    /// SendNotify: a name and a message (each at most [`MAX_TEXT`] bytes) for the peer's
    /// GetNotifies; answered by COMPLETE with the same id (status 0: queued).
    Notify { id: u64, name: String, msg: String },
    /// Heartbeat (AutoConnect): answered by COMPLETE with the same id and status 0.
    Ping { id: u64 },
    /// First frame of an initiator that has a secret (before HELLO): its name and its nonce.
    Auth { name: String, nonce: [u8; NONCE_LEN] },
    /// The server's answer to AUTH: its name and its nonce.
    AuthChallenge { name: String, nonce: [u8; NONCE_LEN] },
    /// HMAC-SHA256 of the handshake (see `engine::auth`): the initiator's after
    /// AUTH_CHALLENGE, the server's in answer to it.
    AuthProof { mac: [u8; MAC_LEN] },
    /// The initiator asks for the server's UCX worker address and the remote keys of its
    /// registered memory (the UCX transport; sent after HELLO, answered by UCX_INFO).
    UcxQuery { id: u64 },
    /// The answer to UCX_QUERY: status 0 with the worker address and keys (as many as fit one
    /// frame), or an ADXL status and why UCX is not offered.
    UcxInfo { id: u64, status: u32, message: String, worker: Vec<u8>, keys: Vec<UcxKey> },
}

/// Why a frame was refused; the connection is then closed.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("connection: {0}")]
    Io(#[from] io::Error),
    #[error("bad magic (not an ascendless engine)")]
    BadMagic,
    #[error("protocol version {0}, this engine speaks {VERSION}")]
    BadVersion(u16),
    #[error("unknown message type {0}")]
    UnknownType(u16),
    #[error("frame body of {0} bytes is over the limit")]
    Oversized(usize),
    #[error("malformed message: {0}")]
    Malformed(&'static str),
}

impl Message {
    fn kind(&self) -> u16 {
        match self {
            Message::Hello { .. } => 1,
            Message::HelloAck { .. } => 2,
            Message::MemAdd { .. } => 3,
            Message::MemRemove { .. } => 4,
            Message::Write { .. } => 5,
            Message::Read { .. } => 6,
            Message::ReadData { .. } => 7,
            Message::Complete { .. } => 8,
            Message::Bye => 9,
            Message::Notify { .. } => 10,
            Message::Ping { .. } => 11,
            Message::Auth { .. } => 12,
            Message::AuthChallenge { .. } => 13,
            Message::AuthProof { .. } => 14,
            Message::UcxQuery { .. } => 15,
            Message::UcxInfo { .. } => 16,
        }
    }

    /// Bytes of raw payload that follow this frame.
    pub fn payload_len(&self) -> u64 {
        match self {
            Message::Write { descs, .. } => descs.iter().map(|d| d.len).sum(),
            Message::ReadData { len, .. } => *len,
            _ => 0,
        }
    }

    /// The whole frame (header and body). Panics if the message breaks a limit (the engine
    /// never builds such a message).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(64);
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&self.kind().to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        match self {
            Message::Hello { name, regions, host } => {
                text(&mut b, name);
                put_regions(&mut b, regions);
                put_host(&mut b, host);
            }
            Message::HelloAck { status, name, regions, message, host } => {
                b.extend_from_slice(&status.to_le_bytes());
                text(&mut b, name);
                put_regions(&mut b, regions);
                text(&mut b, message);
                put_host(&mut b, host);
            }
            Message::MemAdd { regions } | Message::MemRemove { regions } => put_regions(&mut b, regions),
            Message::Write { id, descs } | Message::Read { id, descs } => {
                assert!(descs.len() <= MAX_DESCS, "too many descriptors for one request");
                b.extend_from_slice(&id.to_le_bytes());
                b.extend_from_slice(&(descs.len() as u32).to_le_bytes());
                for d in descs {
                    b.extend_from_slice(&d.remote_addr.to_le_bytes());
                    b.extend_from_slice(&d.len.to_le_bytes());
                    b.push(d.local_kind as u8);
                    b.extend_from_slice(&[0; 7]);
                }
            }
            Message::ReadData { id, len } => {
                b.extend_from_slice(&id.to_le_bytes());
                b.extend_from_slice(&len.to_le_bytes());
            }
            Message::Complete { id, status, failed, message } => {
                b.extend_from_slice(&id.to_le_bytes());
                b.extend_from_slice(&status.to_le_bytes());
                b.extend_from_slice(&failed.to_le_bytes());
                text(&mut b, message);
            }
            Message::Bye => {}
            Message::Notify { id, name, msg } => {
                b.extend_from_slice(&id.to_le_bytes());
                text(&mut b, name);
                text(&mut b, msg);
            }
            Message::Ping { id } => b.extend_from_slice(&id.to_le_bytes()),
            Message::Auth { name, nonce } | Message::AuthChallenge { name, nonce } => {
                text(&mut b, name);
                b.extend_from_slice(nonce);
            }
            Message::AuthProof { mac } => b.extend_from_slice(mac),
            Message::UcxQuery { id } => b.extend_from_slice(&id.to_le_bytes()),
            Message::UcxInfo { id, status, message, worker, keys } => {
                b.extend_from_slice(&id.to_le_bytes());
                b.extend_from_slice(&status.to_le_bytes());
                text(&mut b, message);
                blob(&mut b, worker);
                assert!(keys.len() <= MAX_REGIONS, "too many keys for one message");
                b.extend_from_slice(&(keys.len() as u32).to_le_bytes());
                for k in keys {
                    b.extend_from_slice(&k.addr.to_le_bytes());
                    b.extend_from_slice(&k.len.to_le_bytes());
                    b.extend_from_slice(&k.base.to_le_bytes());
                    blob(&mut b, &k.rkey);
                }
            }
        }
        let body = b.len() - HEADER_LEN;
        assert!(body <= MAX_BODY, "frame body over the limit");
        b[8..12].copy_from_slice(&(body as u32).to_le_bytes());
        b
    }

    /// Reads one frame. The payload after WRITE/READ_DATA is left in the stream.
    ///
    /// The body buffer grows with the bytes that arrive, not with the length the header
    /// claims: a peer that sends a 12-byte header announcing [`MAX_BODY`] and then nothing
    /// costs [`BODY_CHUNK`] bytes, not a megabyte.
    pub fn read_from(r: &mut impl Read) -> Result<Message, WireError> {
        let mut h = [0u8; HEADER_LEN];
        r.read_exact(&mut h)?;
        let (kind, len) = parse_header(&h)?;
        let mut body = Vec::with_capacity(len.min(BODY_CHUNK));
        r.take(len as u64).read_to_end(&mut body)?;
        if body.len() < len {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
        }
        Self::decode(kind, &body)
    }

    /// Decodes a body of message type `kind`; the whole body must be used.
    pub fn decode(kind: u16, body: &[u8]) -> Result<Message, WireError> {
        let mut c = Cursor { b: body };
        let m = match kind {
            1 => Message::Hello { name: c.text()?, regions: c.regions()?, host: c.host()? },
            2 => Message::HelloAck {
                status: c.u32()?,
                name: c.text()?,
                regions: c.regions()?,
                message: c.text()?,
                host: c.host()?,
            },
            3 => Message::MemAdd { regions: c.regions()? },
            4 => Message::MemRemove { regions: c.regions()? },
            5 | 6 => {
                let id = c.u64()?;
                let n = c.u32()? as usize;
                if n > MAX_DESCS {
                    return Err(WireError::Malformed("too many descriptors"));
                }
                let mut descs = Vec::with_capacity(n.min(body.len() / DESC_LEN));
                let mut total = 0u64;
                for _ in 0..n {
                    let d =
                        Desc { remote_addr: c.u64()?, len: c.u64()?, local_kind: MemKind::from_u8(c.u8()?)? };
                    c.take(7)?;
                    total = total
                        .checked_add(d.len)
                        .filter(|&t| t <= MAX_PAYLOAD)
                        .ok_or(WireError::Malformed("payload too large"))?;
                    descs.push(d);
                }
                if kind == 5 { Message::Write { id, descs } } else { Message::Read { id, descs } }
            }
            7 => {
                let id = c.u64()?;
                let len = c.u64()?;
                if len > MAX_PAYLOAD {
                    return Err(WireError::Malformed("payload too large"));
                }
                Message::ReadData { id, len }
            }
            8 => Message::Complete { id: c.u64()?, status: c.u32()?, failed: c.u32()?, message: c.text()? },
            9 => Message::Bye,
            10 => Message::Notify { id: c.u64()?, name: c.text()?, msg: c.text()? },
            11 => Message::Ping { id: c.u64()? },
            12 => Message::Auth { name: c.text()?, nonce: c.array()? },
            13 => Message::AuthChallenge { name: c.text()?, nonce: c.array()? },
            14 => Message::AuthProof { mac: c.array()? },
            15 => Message::UcxQuery { id: c.u64()? },
            16 => {
                let (id, status, message, worker) = (c.u64()?, c.u32()?, c.text()?, c.blob()?);
                let n = c.u32()? as usize;
                if n > MAX_REGIONS {
                    return Err(WireError::Malformed("too many keys"));
                }
                let mut keys = Vec::with_capacity(n.min(c.b.len() / 28));
                for _ in 0..n {
                    let k = UcxKey { addr: c.u64()?, len: c.u64()?, base: c.u64()?, rkey: c.blob()? };
                    if k.addr.checked_add(k.len).is_none() || k.base.checked_add(k.len).is_none() {
                        return Err(WireError::Malformed("bad UCX key range"));
                    }
                    keys.push(k);
                }
                Message::UcxInfo { id, status, message, worker, keys }
            }
            k => return Err(WireError::UnknownType(k)),
        };
        if !c.b.is_empty() {
            return Err(WireError::Malformed("trailing bytes"));
        }
        Ok(m)
    }
}

/// Checks a frame header: the message type and the body length that follows.
pub fn parse_header(h: &[u8; HEADER_LEN]) -> Result<(u16, usize), WireError> {
    if h[0..4] != MAGIC {
        return Err(WireError::BadMagic);
    }
    let version = u16::from_le_bytes([h[4], h[5]]);
    if version != VERSION {
        return Err(WireError::BadVersion(version));
    }
    let kind = u16::from_le_bytes([h[6], h[7]]);
    if !(1..=LAST_KIND).contains(&kind) {
        return Err(WireError::UnknownType(kind));
    }
    let len = u32::from_le_bytes([h[8], h[9], h[10], h[11]]) as usize;
    if len > MAX_BODY {
        return Err(WireError::Oversized(len));
    }
    Ok((kind, len))
}

/// Writes `s`, cut to [`MAX_TEXT`] bytes at a character boundary (so it stays UTF-8).
fn text(b: &mut Vec<u8>, s: &str) {
    let mut end = s.len().min(MAX_TEXT);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let bytes = &s.as_bytes()[..end];
    b.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    b.extend_from_slice(bytes);
}

/// Writes opaque bytes (at most [`MAX_BLOB`]) with a 32-bit length.
fn blob(b: &mut Vec<u8>, bytes: &[u8]) {
    assert!(bytes.len() <= MAX_BLOB, "blob over the limit");
    b.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    b.extend_from_slice(bytes);
}

fn put_host(b: &mut Vec<u8>, host: &Option<Host>) {
    if let Some(h) = host {
        b.extend_from_slice(&h.pid.to_le_bytes());
        text(b, &h.boot_id);
        b.extend_from_slice(&h.ticket);
    }
}

fn put_regions(b: &mut Vec<u8>, regions: &[Region]) {
    assert!(regions.len() <= MAX_REGIONS, "too many regions for one message");
    b.extend_from_slice(&(regions.len() as u32).to_le_bytes());
    for r in regions {
        b.extend_from_slice(&r.addr.to_le_bytes());
        b.extend_from_slice(&r.len.to_le_bytes());
        b.push(r.kind as u8);
        b.extend_from_slice(&[0; 3]);
        b.extend_from_slice(&r.tag.to_le_bytes());
    }
}

struct Cursor<'a> {
    b: &'a [u8],
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], WireError> {
        if self.b.len() < n {
            return Err(WireError::Malformed("truncated body"));
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }
    fn text(&mut self) -> Result<String, WireError> {
        let n = self.u16()? as usize;
        if n > MAX_TEXT {
            return Err(WireError::Malformed("text too long"));
        }
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| WireError::Malformed("text is not UTF-8"))
    }
    fn blob(&mut self) -> Result<Vec<u8>, WireError> {
        let n = self.u32()? as usize;
        if n > MAX_BLOB {
            return Err(WireError::Malformed("blob too long"));
        }
        Ok(self.take(n)?.to_vec())
    }
    /// The optional trailing [`Host`]: present when bytes are left.
    fn host(&mut self) -> Result<Option<Host>, WireError> {
        if self.b.is_empty() {
            return Ok(None);
        }
        Ok(Some(Host { pid: self.u32()?, boot_id: self.text()?, ticket: self.array()? }))
    }
    fn regions(&mut self) -> Result<Vec<Region>, WireError> {
        let n = self.u32()? as usize;
        if n > MAX_REGIONS {
            return Err(WireError::Malformed("too many regions"));
        }
        let mut out = Vec::with_capacity(n.min(self.b.len() / REGION_LEN));
        for _ in 0..n {
            let (addr, len, kind) = (self.u64()?, self.u64()?, MemKind::from_u8(self.u8()?)?);
            self.take(3)?;
            let r = Region { addr, len, kind, tag: self.u32()? };
            if r.kind == MemKind::Unregistered || r.addr.checked_add(r.len).is_none() {
                return Err(WireError::Malformed("bad region"));
            }
            out.push(r);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One message of every kind (the fuzz targets' seeds).
    fn samples() -> Vec<Message> {
        crate::fuzz_targets::seeds::messages().into_iter().map(|(_, m)| m).collect()
    }

    #[test]
    fn every_message_round_trips() {
        for m in samples() {
            let frame = m.encode();
            assert_eq!(Message::read_from(&mut frame.as_slice()).unwrap(), m);
        }
        let write = samples().into_iter().find(|m| matches!(m, Message::Write { .. })).unwrap();
        assert_eq!(write.payload_len(), 10);
    }

    /// A small fuzz run: valid frames with random bytes changed, cut or extended, and random
    /// garbage, must decode or be refused, never panic; what decodes must encode again.
    #[test]
    fn mutated_and_random_frames_never_panic() {
        let frames: Vec<Vec<u8>> = samples().iter().map(Message::encode).collect();
        let rounds = if cfg!(miri) { 200 } else { 20_000 };
        crate::fuzz_targets::mutate::run(
            crate::fuzz_targets::wire_decode,
            &frames,
            rounds,
            0x2545_f491_4f6c_dd1d,
        );
    }

    #[test]
    fn long_texts_are_cut_at_a_character_boundary() {
        let m = Message::Complete { id: 1, status: 0, failed: 0, message: "é".repeat(600) };
        match Message::read_from(&mut m.encode().as_slice()).unwrap() {
            Message::Complete { message, .. } => assert_eq!(message, "é".repeat(512)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn truncated_frames_are_refused() {
        for m in samples() {
            let frame = m.encode();
            for cut in 0..frame.len() {
                assert!(Message::read_from(&mut &frame[..cut]).is_err(), "{m:?} cut at {cut}");
            }
        }
    }

    #[test]
    fn a_claimed_body_costs_memory_only_as_it_arrives() {
        /// Hands out a header announcing the largest body, then ends; records the largest
        /// buffer it was asked to fill.
        struct Liar {
            header: Vec<u8>,
            largest: usize,
        }
        impl Read for Liar {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.largest = self.largest.max(buf.len());
                let n = buf.len().min(self.header.len());
                buf[..n].copy_from_slice(&self.header.drain(..n).collect::<Vec<_>>());
                Ok(n)
            }
        }
        let mut header = Message::Bye.encode();
        header[8..12].copy_from_slice(&(MAX_BODY as u32).to_le_bytes());
        let mut r = Liar { header, largest: 0 };
        assert!(matches!(Message::read_from(&mut r), Err(WireError::Io(_))));
        assert!(r.largest <= BODY_CHUNK, "asked to fill {} bytes", r.largest);
    }

    #[test]
    fn bad_headers_are_refused() {
        let good = Message::Bye.encode();
        let mut f = good.clone();
        f[0] = b'X';
        assert!(matches!(Message::read_from(&mut f.as_slice()), Err(WireError::BadMagic)));
        let mut f = good.clone();
        f[4] = 2;
        assert!(matches!(Message::read_from(&mut f.as_slice()), Err(WireError::BadVersion(2))));
        let mut f = good.clone();
        f[6] = 77;
        assert!(matches!(Message::read_from(&mut f.as_slice()), Err(WireError::UnknownType(77))));
        let mut f = good;
        f[8..12].copy_from_slice(&((MAX_BODY + 1) as u32).to_le_bytes());
        assert!(matches!(Message::read_from(&mut f.as_slice()), Err(WireError::Oversized(_))));
    }

    #[test]
    fn malformed_bodies_are_refused() {
        let body = |m: &Message| m.encode()[HEADER_LEN..].to_vec();
        // Trailing bytes.
        let mut b = body(&Message::ReadData { id: 1, len: 2 });
        b.push(0);
        assert!(Message::decode(7, &b).is_err());
        // A descriptor count over the limit.
        let mut b = 1u64.to_le_bytes().to_vec();
        b.extend_from_slice(&((MAX_DESCS + 1) as u32).to_le_bytes());
        assert!(matches!(Message::decode(5, &b), Err(WireError::Malformed("too many descriptors"))));
        // A count larger than the descriptors present.
        let mut b = 1u64.to_le_bytes().to_vec();
        b.extend_from_slice(&1000u32.to_le_bytes());
        assert!(Message::decode(6, &b).is_err());
        // A payload that overflows.
        let huge = Desc { remote_addr: 1, len: u64::MAX, local_kind: MemKind::Host };
        let m = Message::Read { id: 1, descs: vec![huge, huge] };
        assert!(Message::decode(6, &body(&m)).is_err());
        // An unknown memory kind, a region wrapping the address space, bad UTF-8.
        let mut b = body(&Message::MemAdd {
            regions: vec![Region { addr: 1, len: 1, kind: MemKind::Host, tag: NO_TAG }],
        });
        b[4 + 16] = 9;
        assert!(Message::decode(3, &b).is_err());
        let b = body(&Message::MemAdd {
            regions: vec![Region { addr: u64::MAX, len: 2, kind: MemKind::Host, tag: NO_TAG }],
        });
        assert!(Message::decode(3, &b).is_err());
        let mut b = body(&Message::Hello { name: "ab".into(), regions: vec![], host: None });
        b[2] = 0xff;
        assert!(Message::decode(1, &b).is_err());
    }
}
