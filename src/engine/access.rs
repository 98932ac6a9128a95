//! Access control beyond the vendor's engine (our extensions), as settings:
//!
//! - `adxl.Secret` / `ASCENDLESS_ADXL_SECRET`: a shared secret. When set, every connection
//!   between engines starts with a mutual challenge-response (`engine::auth`); a peer that
//!   cannot prove the secret is refused before it learns anything about this engine's memory.
//! - `adxl.RemoteAccess` / `ASCENDLESS_ADXL_REMOTE_ACCESS`: `any` (the vendor's relay rule: a
//!   peer may name any host address of the serving process) or `registered` (only ranges
//!   inside this engine's registrations may be read or written by peers).
//!
//! The engine option wins over the variable. A value that does not parse is PARAM_INVALID at
//! Initialize, for the variable too: a typo in a security setting must not fall back to the
//! open default silently.

use crate::error::engine_status::ADXL_PARAM_INVALID;
use crate::error::{EngineError, EngineResult};
use crate::logging::TARGET;

pub const SECRET_ENV: &str = "ASCENDLESS_ADXL_SECRET";
pub const REMOTE_ACCESS_ENV: &str = "ASCENDLESS_ADXL_REMOTE_ACCESS";
/// Longest secret accepted (it keys HMAC-SHA256; longer keys add nothing).
pub const MAX_SECRET: usize = 1024;
/// Secrets shorter than this are accepted with a warning: the handshake lets a peer try
/// guesses offline against one answer, so the secret must be hard to guess (random bytes).
pub const SHORT_SECRET: usize = 16;

/// The shared secret: its bytes never appear in `Debug` output or in logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl Secret {
    /// The secret from its text: 1 to [`MAX_SECRET`] bytes, taken exactly as given.
    pub fn parse(what: &str, text: &str) -> EngineResult<Secret> {
        if text.is_empty() || text.len() > MAX_SECRET {
            return Err(EngineError::new(
                ADXL_PARAM_INVALID,
                format!("{what}: a secret must be 1 to {MAX_SECRET} bytes (it is {} bytes)", text.len()),
            ));
        }
        if text.len() < SHORT_SECRET {
            log::warn!(
                target: TARGET,
                "{what}: a secret of {} bytes is easy to guess; use {SHORT_SECRET} or more random bytes",
                text.len()
            );
        }
        Ok(Secret(text.as_bytes().to_vec()))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        // Best effort: the bytes do not linger in freed memory (copies made by the allocator
        // or by the caller's own strings are out of reach).
        self.0.fill(0);
        std::hint::black_box(&self.0);
    }
}

/// What a connected peer may read and write in this engine's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RemoteAccess {
    /// The vendor's rule: registered memory, and (through the relay pool) any other host
    /// address of the process that the peer names.
    #[default]
    Any,
    /// Only ranges inside this engine's registrations; anything else is PARAM_INVALID.
    Registered,
}

impl RemoteAccess {
    pub fn parse(what: &str, text: &str) -> EngineResult<RemoteAccess> {
        match text.to_ascii_lowercase().as_str() {
            "any" => Ok(RemoteAccess::Any),
            "registered" => Ok(RemoteAccess::Registered),
            _ => Err(EngineError::new(
                ADXL_PARAM_INVALID,
                format!("{what}={text:?}: must be \"any\" or \"registered\""),
            )),
        }
    }
}

/// The settings in force for one engine: the option, else the variable, else the default.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Access {
    pub secret: Option<Secret>,
    pub remote_access: RemoteAccess,
}

impl Access {
    /// Combines the engine's options with the variables (`var` looks one up: the environment,
    /// or a table in tests). A variable that is set must be valid, even when empty.
    pub fn resolve(
        secret: Option<Secret>,
        remote_access: Option<RemoteAccess>,
        var: impl Fn(&str) -> Option<String>,
    ) -> EngineResult<Access> {
        let secret = match secret {
            Some(s) => Some(s),
            None => var(SECRET_ENV).map(|v| Secret::parse(SECRET_ENV, &v)).transpose()?,
        };
        let remote_access = match remote_access {
            Some(r) => r,
            None => var(REMOTE_ACCESS_ENV)
                .map(|v| RemoteAccess::parse(REMOTE_ACCESS_ENV, v.trim()))
                .transpose()?
                .unwrap_or_default(),
        };
        Ok(Access { secret, remote_access })
    }

    /// Before resolving with the process environment: a variable of this module that is set
    /// but not UTF-8 is PARAM_INVALID (never taken as unset).
    pub fn check_env() -> EngineResult<()> {
        for name in [SECRET_ENV, REMOTE_ACCESS_ENV] {
            if let Err(std::env::VarError::NotUnicode(_)) = std::env::var(name) {
                return Err(EngineError::new(ADXL_PARAM_INVALID, format!("{name} is not valid UTF-8")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_option_wins_over_the_variable() {
        let vars = table(&[(SECRET_ENV, "from-the-environment"), (REMOTE_ACCESS_ENV, "any")]);
        let option = Secret::parse("adxl.Secret", "from-the-option-123").unwrap();
        let a = Access::resolve(Some(option.clone()), Some(RemoteAccess::Registered), &vars).unwrap();
        assert_eq!(a, Access { secret: Some(option), remote_access: RemoteAccess::Registered });
        let a = Access::resolve(None, None, &vars).unwrap();
        assert_eq!(a.secret.unwrap().bytes(), b"from-the-environment");
        assert_eq!(a.remote_access, RemoteAccess::Any);
    }

    #[test]
    fn defaults_are_open_and_bad_variables_are_refused() {
        assert_eq!(Access::resolve(None, None, table(&[])).unwrap(), Access::default());
        let r = Access::resolve(None, None, table(&[(REMOTE_ACCESS_ENV, " Registered ")])).unwrap();
        assert_eq!(r.remote_access, RemoteAccess::Registered);
        for bad in [&[(SECRET_ENV, "")][..], &[(REMOTE_ACCESS_ENV, "some")], &[(REMOTE_ACCESS_ENV, "")]] {
            let e = Access::resolve(None, None, table(bad)).unwrap_err();
            assert_eq!(e.status, ADXL_PARAM_INVALID, "{bad:?}");
        }
    }

    #[test]
    fn secrets_are_bounded_and_never_printed() {
        assert!(Secret::parse("s", "").is_err());
        assert!(Secret::parse("s", &"x".repeat(MAX_SECRET + 1)).is_err());
        let s = Secret::parse("s", "correct horse battery staple").unwrap();
        assert_eq!(format!("{s:?}"), "Secret(..)");
        assert_eq!(RemoteAccess::parse("r", "ANY").unwrap(), RemoteAccess::Any);
    }
}
