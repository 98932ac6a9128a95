//! The broker protocol's messages, byte for byte.
//!
//! One connection carries one import. Each message is one `SOCK_SEQPACKET` packet (so no
//! framing), fixed-size and little-endian; both kinds start with the same header:
//!
//! ```text
//! offset size  field
//!      0    4  magic "AsIP"
//!      4    2  protocol version (1)
//!      6    1  request: op (1 import, 2 release,      reply: status (see `Status`)
//!                  3 import by shareable id)
//!      7    1  request: 0                             reply: kind (0 none, 1 notify, 2 memory,
//!                                                                  3 physical memory)
//! ```
//!
//! Request, importer to exporter (36 bytes):
//! ```text
//! op 1:  8    4  key pid      12    8  key token      20   16  key secret   (all zero for release)
//! op 3:  8    4  exporter pid 12    8  shareable id   20   16  zero
//! ```
//! Op 3 is how a 64-bit shareable handle (`aclrtMemExportToShareableHandle`) is imported: the
//! importer knows only the id, and asks the exporter's directory socket (see `shareable.rs`);
//! the broker finds the export the id was published for and decides as for op 1.
//!
//! Reply, exporter to importer (32 bytes), with the export's descriptor attached iff status is 0
//! (and, for memory, a second: the exporter's page of sleeper counts, see `sys::sleepers`):
//! ```text
//!      8    4  device id (i32)      12    4  notify id (notify), memory attribute (physical)
//!     16    8  offset      24    8  length
//! ```
//!
//! The conversation: the importer sends `Import`; the exporter answers with one reply and, on
//! success, keeps the connection open as the import's lifeline. The importer sends `Release`
//! before closing when it lets go of the import normally; a close without it means the
//! importer died. Nothing else is ever sent. A peer speaking another version gets
//! [`Status::BadVersion`] (or, on the importer's side, an error naming both versions).

use super::key::Key;
use super::offer::ExportKind;

pub const MAGIC: [u8; 4] = *b"AsIP";
pub const VERSION: u16 = 1;
pub const REQUEST_LEN: usize = 36;
pub const REPLY_LEN: usize = 32;
const HEADER_LEN: usize = 8;
const OP_IMPORT: u8 = 1;
const OP_RELEASE: u8 = 2;
const OP_IMPORT_ID: u8 = 3;

/// What an importer asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// "Give me the export with this key."
    Import(Key),
    /// "I am done with the import this connection carries" (sent just before closing).
    Release,
    /// "Give me the export process `pid` published under shareable id `id`."
    ImportId { pid: u32, id: u64 },
}

/// The exporter's verdict on an import request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    Ok = 0,
    /// No export has this key (never had, or the exporter's process is another one).
    UnknownKey = 1,
    /// The export existed but was revoked (its notify destroyed, its memory closed).
    Revoked = 2,
    /// The importer's pid is not on the export's whitelist.
    NotPermitted = 3,
    /// Pid validation is off, but the importer runs as another user.
    OtherUser = 4,
    /// The request was not a well-formed import request.
    BadRequest = 5,
    /// The request spoke another protocol version.
    BadVersion = 6,
    /// The exporter has too many live imports to take another.
    Busy = 7,
}

impl Status {
    fn from_u8(b: u8) -> Option<Status> {
        use Status::*;
        [Ok, UnknownKey, Revoked, NotPermitted, OtherUser, BadRequest, BadVersion, Busy]
            .into_iter()
            .find(|s| *s as u8 == b)
    }
}

/// The exporter's answer. `kind` is `Some` exactly when `status` is `Ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    pub status: Status,
    pub kind: Option<ExportKind>,
    pub device: i32,
    pub notify_id: u32,
    pub offset: u64,
    pub len: u64,
}

impl Reply {
    /// A refusal: no export details.
    pub fn refusal(status: Status) -> Reply {
        Reply { status, kind: None, device: 0, notify_id: 0, offset: 0, len: 0 }
    }
}

/// Why bytes are not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("message of {0} bytes, expected {1}")]
    Length(usize, usize),
    #[error("not an ascendless IPC message (bad magic)")]
    Magic,
    #[error("protocol version {0}, this library speaks version {VERSION}")]
    Version(u16),
    #[error("unknown request op {0}")]
    Op(u8),
    #[error("unknown reply status {0}")]
    Status(u8),
    #[error("unknown export kind {0}")]
    Kind(u8),
    #[error("a {0} reply that contradicts its status")]
    Inconsistent(&'static str),
}

impl Request {
    pub fn encode(&self) -> [u8; REQUEST_LEN] {
        let mut b = [0u8; REQUEST_LEN];
        let op = match self {
            Request::Import(_) => OP_IMPORT,
            Request::Release => OP_RELEASE,
            Request::ImportId { .. } => OP_IMPORT_ID,
        };
        header(&mut b, op, 0);
        match self {
            Request::Import(key) => {
                b[8..12].copy_from_slice(&key.pid().to_le_bytes());
                b[12..20].copy_from_slice(&key.token().to_le_bytes());
                b[20..36].copy_from_slice(&key.secret().to_le_bytes());
            }
            Request::ImportId { pid, id } => {
                b[8..12].copy_from_slice(&pid.to_le_bytes());
                b[12..20].copy_from_slice(&id.to_le_bytes());
            }
            Request::Release => {}
        }
        b
    }

    pub fn decode(b: &[u8]) -> Result<Request, WireError> {
        check_header(b, REQUEST_LEN)?;
        match b[6] {
            OP_IMPORT if b[7] == 0 => {
                Ok(Request::Import(Key::new(le_u32(&b[8..12]), le_u64(&b[12..20]), le_u128(&b[20..36]))))
            }
            OP_RELEASE if b[7..].iter().all(|&x| x == 0) => Ok(Request::Release),
            OP_IMPORT_ID if b[7] == 0 && b[20..].iter().all(|&x| x == 0) => {
                Ok(Request::ImportId { pid: le_u32(&b[8..12]), id: le_u64(&b[12..20]) })
            }
            op => Err(WireError::Op(op)),
        }
    }
}

impl Reply {
    pub fn encode(&self) -> [u8; REPLY_LEN] {
        let mut b = [0u8; REPLY_LEN];
        header(&mut b, self.status as u8, self.kind.map_or(0, kind_byte));
        b[8..12].copy_from_slice(&self.device.to_le_bytes());
        b[12..16].copy_from_slice(&self.notify_id.to_le_bytes());
        b[16..24].copy_from_slice(&self.offset.to_le_bytes());
        b[24..32].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Result<Reply, WireError> {
        check_header(b, REPLY_LEN)?;
        let status = Status::from_u8(b[6]).ok_or(WireError::Status(b[6]))?;
        let kind = match b[7] {
            0 => None,
            1 => Some(ExportKind::Notify),
            2 => Some(ExportKind::Memory),
            3 => Some(ExportKind::Physical),
            4 => Some(ExportKind::Event),
            k => return Err(WireError::Kind(k)),
        };
        match (status, kind) {
            (Status::Ok, None) => return Err(WireError::Inconsistent("successful")),
            (s, Some(_)) if s != Status::Ok => return Err(WireError::Inconsistent("refusing")),
            _ => {}
        }
        Ok(Reply {
            status,
            kind,
            device: le_u32(&b[8..12]) as i32,
            notify_id: le_u32(&b[12..16]),
            offset: le_u64(&b[16..24]),
            len: le_u64(&b[24..32]),
        })
    }
}

fn kind_byte(kind: ExportKind) -> u8 {
    match kind {
        ExportKind::Notify => 1,
        ExportKind::Memory => 2,
        ExportKind::Physical => 3,
        ExportKind::Event => 4,
    }
}

fn header(b: &mut [u8], byte6: u8, byte7: u8) {
    b[0..4].copy_from_slice(&MAGIC);
    b[4..6].copy_from_slice(&VERSION.to_le_bytes());
    b[6] = byte6;
    b[7] = byte7;
}

/// Magic first, then version (so a peer of another version is told so, whatever its message
/// length), then the exact length of this version's message.
fn check_header(b: &[u8], len: usize) -> Result<(), WireError> {
    if b.len() < HEADER_LEN {
        return Err(WireError::Length(b.len(), len));
    }
    if b[0..4] != MAGIC {
        return Err(WireError::Magic);
    }
    let version = u16::from_le_bytes([b[4], b[5]]);
    if version != VERSION {
        return Err(WireError::Version(version));
    }
    if b.len() != len {
        return Err(WireError::Length(b.len(), len));
    }
    Ok(())
}

fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes(b.try_into().expect("4 bytes"))
}

fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8 bytes"))
}

fn le_u128(b: &[u8]) -> u128 {
    u128::from_le_bytes(b.try_into().expect("16 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key {
        Key::new(0x1234, 0x0123_4567_89ab_cdef, 0xfeed_face_cafe_beef_0011_2233_4455_6677)
    }

    #[test]
    fn requests_round_trip() {
        for r in [Request::Import(key()), Request::Release, Request::ImportId { pid: 77, id: u64::MAX - 1 }] {
            let bytes = r.encode();
            assert_eq!(bytes.len(), REQUEST_LEN);
            assert_eq!(Request::decode(&bytes).unwrap(), r);
        }
        let b = Request::Import(key()).encode();
        assert_eq!(&b[0..8], b"AsIP\x01\x00\x01\x00", "the documented header");
        assert_eq!(&b[8..12], &0x1234u32.to_le_bytes());
    }

    #[test]
    fn replies_round_trip() {
        let ok = Reply {
            status: Status::Ok,
            kind: Some(ExportKind::Memory),
            device: -1,
            notify_id: 77,
            offset: 1 << 40,
            len: 4096,
        };
        assert_eq!(Reply::decode(&ok.encode()).unwrap(), ok);
        for s in [Status::UnknownKey, Status::Revoked, Status::NotPermitted, Status::OtherUser, Status::Busy]
        {
            let r = Reply::refusal(s);
            assert_eq!(Reply::decode(&r.encode()).unwrap(), r);
        }
    }

    #[test]
    fn truncated_and_padded_messages_are_rejected() {
        let b = Request::Import(key()).encode();
        for n in [0, 3, 7, 8, REQUEST_LEN - 1] {
            assert!(matches!(Request::decode(&b[..n]), Err(WireError::Length(..))), "{n} bytes");
        }
        let mut long = b.to_vec();
        long.push(0);
        assert!(matches!(Request::decode(&long), Err(WireError::Length(..))));
        let r = Reply::refusal(Status::Revoked).encode();
        assert!(matches!(Reply::decode(&r[..REPLY_LEN - 1]), Err(WireError::Length(..))));
    }

    #[test]
    fn wrong_magic_version_op_status_or_kind_are_rejected() {
        let mut b = Request::Import(key()).encode();
        b[0] = b'X';
        assert_eq!(Request::decode(&b), Err(WireError::Magic));
        let mut b = Request::Import(key()).encode();
        b[4] = 2;
        assert_eq!(Request::decode(&b), Err(WireError::Version(2)));
        // A newer version is recognised as such even with another message length.
        assert_eq!(Request::decode(&b[..20]), Err(WireError::Version(2)));
        let mut b = Request::Import(key()).encode();
        b[6] = 9;
        assert_eq!(Request::decode(&b), Err(WireError::Op(9)));
        let mut b = Request::Release.encode();
        b[30] = 1;
        assert_eq!(Request::decode(&b), Err(WireError::Op(OP_RELEASE)), "release carries no key");
        let mut b = Request::ImportId { pid: 1, id: 2 }.encode();
        b[35] = 1;
        assert_eq!(Request::decode(&b), Err(WireError::Op(OP_IMPORT_ID)), "an id request has no secret");

        let mut r = Reply::refusal(Status::Revoked).encode();
        r[6] = 200;
        assert_eq!(Reply::decode(&r), Err(WireError::Status(200)));
        let mut r = Reply::refusal(Status::Revoked).encode();
        r[7] = 5;
        assert_eq!(Reply::decode(&r), Err(WireError::Kind(5)));
        r[7] = 1;
        assert_eq!(Reply::decode(&r), Err(WireError::Inconsistent("refusing")));
        let mut r = Reply::refusal(Status::Ok).encode();
        r[7] = 0;
        assert_eq!(Reply::decode(&r), Err(WireError::Inconsistent("successful")));
    }
}
