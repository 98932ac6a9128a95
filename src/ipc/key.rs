//! IPC keys: the text an exporter hands to an importer (`aclrtNotifyGetExportKey`,
//! `aclrtIpcMemGetExportKey`).
//!
//! A key is `{pid:x}-{token:016x}-{secret:032x}` (at most 8 + 1 + 16 + 1 + 32 = 58 characters,
//! within the 64 the vendor's 65-byte buffers allow):
//! - `pid`, the exporter's process id, and `token`, 64 random bits drawn once per exporting
//!   process, name the exporter's broker socket. The token makes a key of a dead process useless
//!   even when its pid is reused by another exporter (the name no longer exists).
//! - `secret`, 128 random bits per export, is what the broker looks the export up by. Knowing
//!   the broker's name gives nothing: without the secret, every request is "unknown key".
//!
//! Parsing is strict (lower-case hex, exact widths, no leading zero) so that [`Key`]'s
//! `Display` is the one spelling of a key and any other text is refused with
//! `ACL_ERROR_RT_PARAM_INVALID`.

use std::fmt;
use std::str::FromStr;

use crate::error::rt_codes::ACL_ERROR_RT_PARAM_INVALID;
use crate::error::{AclError, AclResult};

/// Longest key text; callers' key buffers hold this plus the terminating NUL.
pub const KEY_MAX_LEN: usize = 64;

/// An export's key. `Debug` hides the secret so keys can be logged.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pid: u32,
    token: u64,
    secret: u128,
}

impl Key {
    pub(crate) fn new(pid: u32, token: u64, secret: u128) -> Key {
        Key { pid, token, secret }
    }

    /// Reads a key's text; anything but the exact format is `ACL_ERROR_RT_PARAM_INVALID`.
    pub fn parse(text: &str) -> AclResult<Key> {
        let malformed = |why: &str| {
            // Show the start of the text (not all of it: it may be a long garbage buffer).
            let shown: String = text.chars().take(KEY_MAX_LEN).collect();
            AclError::new(
                ACL_ERROR_RT_PARAM_INVALID,
                format!(
                    "IPC key {shown:?} is malformed ({why}); a key is <pid>-<16 hex digits>-<32 hex digits> \
                     as aclrtNotifyGetExportKey / aclrtIpcMemGetExportKey wrote it"
                ),
            )
        };
        if text.len() > KEY_MAX_LEN {
            return Err(malformed(&format!("{} bytes, at most {KEY_MAX_LEN} allowed", text.len())));
        }
        let mut parts = text.split('-');
        let (Some(pid), Some(token), Some(secret), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed("not three parts separated by '-'"));
        };
        // No leading zero: `Display` writes none, and a key has one spelling.
        if pid.len() > 1 && pid.starts_with('0') {
            return Err(malformed("process id with a leading zero"));
        }
        let pid = hex(pid, 1..=8).ok_or_else(|| malformed("bad process id"))?;
        let token = hex(token, 16..=16).ok_or_else(|| malformed("bad broker token"))?;
        let secret = hex(secret, 32..=32).ok_or_else(|| malformed("bad secret"))?;
        let pid = u32::try_from(pid).map_err(|_| malformed("bad process id"))?;
        if pid == 0 {
            return Err(malformed("process id 0"));
        }
        Ok(Key { pid, token: token as u64, secret })
    }

    /// The exporting process's id (as the exporter sees itself).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The exporting process's broker token.
    pub fn token(&self) -> u64 {
        self.token
    }

    pub(crate) fn secret(&self) -> u128 {
        self.secret
    }

    /// The abstract socket name of the broker that serves this key.
    pub fn broker_name(&self) -> Vec<u8> {
        broker_name(self.pid, self.token)
    }
}

/// The abstract socket name of the broker of process `pid` with token `token`.
pub fn broker_name(pid: u32, token: u64) -> Vec<u8> {
    format!("ascendless-ipc/{pid:x}-{token:016x}").into_bytes()
}

/// Lower-case hex digits only, of a length in `width`.
fn hex(text: &str, width: std::ops::RangeInclusive<usize>) -> Option<u128> {
    let ok =
        width.contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    // from_str_radix alone would also take a sign and upper case.
    if ok { u128::from_str_radix(text, 16).ok() } else { None }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:x}-{:016x}-{:032x}", self.pid, self.token, self.secret)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({:x}-{:016x}-<secret>)", self.pid, self.token)
    }
}

impl FromStr for Key {
    type Err = AclError;

    fn from_str(s: &str) -> AclResult<Key> {
        Key::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_round_trips_and_fits_64_characters() {
        let longest = Key::new(u32::MAX, u64::MAX, u128::MAX);
        let text = longest.to_string();
        assert_eq!(text.len(), 58);
        assert!(text.len() <= KEY_MAX_LEN);
        assert_eq!(Key::parse(&text).unwrap(), longest);
        let small = Key::new(1, 2, 3);
        assert_eq!(small.to_string(), "1-0000000000000002-00000000000000000000000000000003");
        assert_eq!(small.to_string().parse::<Key>().unwrap(), small);
    }

    #[test]
    fn malformed_keys_are_param_invalid_with_a_reason() {
        let good = "4d2-0123456789abcdef-0123456789abcdef0123456789abcdef";
        assert!(Key::parse(good).is_ok());
        for bad in [
            "",
            "garbage",
            "4d2-0123456789abcdef",
            "4d2-0123456789abcdef-0123456789abcdef0123456789abcdef-1",
            "4D2-0123456789abcdef-0123456789abcdef0123456789abcdef",
            "+4d2-0123456789abcdef-0123456789abcdef0123456789abcdef",
            "0-0123456789abcdef-0123456789abcdef0123456789abcdef",
            "04d2-0123456789abcdef-0123456789abcdef0123456789abcdef",
            "123456789-0123456789abcdef-0123456789abcdef0123456789abcdef",
            "4d2-0123456789abcde-0123456789abcdef0123456789abcdef",
            "4d2-0123456789abcdef-0123456789abcdef0123456789abcdeg",
            "4d2-0123456789abcdef-0123456789abcdef0123456789abcdef0",
            " 4d2-0123456789abcdef-0123456789abcdef0123456789abcdef",
            "4d2-0123456789abcdef-0123456789abcdef0123456789abcdé",
        ] {
            let err = Key::parse(bad).unwrap_err();
            assert_eq!(err.code, ACL_ERROR_RT_PARAM_INVALID, "{bad:?}");
            assert!(err.message.contains("malformed"), "{}", err.message);
        }
        let long = "a".repeat(65);
        assert!(Key::parse(&long).unwrap_err().message.contains("65 bytes"));
    }

    #[test]
    fn debug_hides_the_secret() {
        let key = Key::new(0x4d2, 7, 0xfeed_f00d);
        assert!(!format!("{key:?}").contains("feedf00d"));
        assert!(format!("{key:?}").contains("4d2"));
    }

    #[test]
    fn the_broker_name_depends_on_pid_and_token_only() {
        assert_eq!(Key::new(0x10, 1, 2).broker_name(), Key::new(0x10, 1, 3).broker_name());
        assert_ne!(Key::new(0x10, 1, 2).broker_name(), Key::new(0x10, 2, 2).broker_name());
        assert_ne!(Key::new(0x10, 1, 2).broker_name(), Key::new(0x11, 1, 2).broker_name());
        assert!(Key::new(u32::MAX, u64::MAX, 0).broker_name().len() <= crate::sys::socket::MAX_NAME);
    }
}
