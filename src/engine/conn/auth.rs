//! The shared-secret handshake (`adxl.Secret`), run on every TCP connection before HELLO.
//!
//! ```text
//! initiator                                   server
//!   AUTH { name_i, nonce_i }            ->
//!                                       <-    AUTH_CHALLENGE { name_s, nonce_s }
//!   AUTH_PROOF { mac(1, ...) }          ->    checks it; wrong: HELLO_ACK FAILED, close
//!                                       <-    AUTH_PROOF { mac(2, ...) }
//!   checks it; then HELLO               ->
//!                                       <-    HELLO_ACK (the server's name and memory)
//! ```
//!
//! `mac(d, ...)` is HMAC-SHA256 keyed with the secret over [`LABEL`], the direction byte `d`
//! (1: the initiator proves, 2: the server proves), both nonces and both names (see [`mac`]).
//! The secret never goes on the wire; fresh nonces on both sides make a recorded proof useless
//! on another connection, and the direction byte makes the server's proof useless as an
//! initiator's (no reflection). The initiator proves first, so a listening engine never
//! answers an unauthenticated stranger with something it could test guesses against; and it
//! sends HELLO only after the server proved itself, so neither side reveals its memory, its
//! host or anything else to a peer that has not proved the secret.
//!
//! Without a secret on either side, HELLO is the first frame, as before. A server with a secret
//! refuses a HELLO that comes first; a server without one refuses AUTH; an initiator with a
//! secret refuses a server that answers AUTH with anything but AUTH_CHALLENGE and a correct
//! proof. Every refusal is FAILED.

use std::io::{self, Read};
use std::net::TcpStream;

use hmac::{KeyInit, Mac};
use sha2::Sha256;

use crate::engine::access::Secret;
use crate::engine::conn::redial::{self, Attempt};
use crate::engine::wire::{Host, MAC_LEN, Message, NONCE_LEN};
use crate::error::EngineError;
use crate::error::engine_status::ADXL_FAILED;
use crate::logging::TARGET;
use crate::sys::random;
use crate::sys::stream_io::send_all;

/// The first bytes of every MAC input: the purpose and the protocol generation.
pub const LABEL: &[u8] = b"ascendless-adxl-auth-v3";
/// Direction byte of the initiator's proof.
pub const INITIATOR: u8 = 1;
/// Direction byte of the server's proof.
pub const SERVER: u8 = 2;

type HmacSha256 = hmac::Hmac<Sha256>;

/// The handshake as both sides saw it.
pub struct Transcript<'a> {
    pub initiator: &'a str,
    pub server: &'a str,
    pub initiator_nonce: &'a [u8; NONCE_LEN],
    pub server_nonce: &'a [u8; NONCE_LEN],
}

fn keyed(secret: &Secret, direction: u8, t: &Transcript<'_>) -> HmacSha256 {
    let mut m = HmacSha256::new_from_slice(secret.bytes()).expect("HMAC takes keys of any length");
    m.update(LABEL);
    m.update(&[direction]);
    m.update(t.initiator_nonce);
    m.update(t.server_nonce);
    for name in [t.initiator, t.server] {
        m.update(&(name.len() as u16).to_le_bytes());
        m.update(name.as_bytes());
    }
    m
}

/// HMAC-SHA256(secret, LABEL || direction || initiator nonce || server nonce || u16 length and
/// bytes of the initiator's name || u16 length and bytes of the server's name).
pub fn mac(secret: &Secret, direction: u8, t: &Transcript<'_>) -> [u8; MAC_LEN] {
    keyed(secret, direction, t).finalize().into_bytes().into()
}

/// Whether `proof` is the MAC of `direction` over `t`, compared in constant time.
pub fn verify(secret: &Secret, direction: u8, t: &Transcript<'_>, proof: &[u8; MAC_LEN]) -> bool {
    keyed(secret, direction, t).verify_slice(proof).is_ok()
}

fn nonce() -> io::Result<[u8; NONCE_LEN]> {
    let mut n = [0u8; NONCE_LEN];
    random::fill(&mut n)?;
    Ok(n)
}

// ---------------------------------------------------------------------------------------
// The initiator's side.

/// Proves the secret to the server on `stream` and checks the server's proof; nothing when
/// this engine has no secret (HELLO then goes first). Reads and writes are bounded by the
/// stream's time-outs (set by the caller from the Connect deadline). A connection the server
/// closed or reset is [`Attempt::Dropped`] (the caller may dial again).
pub fn initiate(stream: &TcpStream, secret: Option<&Secret>, me: &str, remote: &str) -> Result<(), Attempt> {
    let Some(secret) = secret else { return Ok(()) };
    let what = "connect to";
    let io = |e: io::Error| redial::io(remote, what, &e);
    let wire = |e| redial::wire(remote, what, e);
    let failed = |why: String| EngineError::new(ADXL_FAILED, format!("connect to {remote}: {why}"));
    let mine = nonce().map_err(|e| failed(format!("no random nonce: {e}")))?;
    send_all(stream, &Message::Auth { name: me.to_owned(), nonce: mine }.encode()).map_err(io)?;
    let (server, theirs) = match Message::read_from(&mut &*stream).map_err(wire)? {
        Message::AuthChallenge { name, nonce } => (name, nonce),
        other => return Err(refused(remote, other, "did not answer the authentication").into()),
    };
    let t = Transcript { initiator: me, server: &server, initiator_nonce: &mine, server_nonce: &theirs };
    send_all(stream, &Message::AuthProof { mac: mac(secret, INITIATOR, &t) }.encode()).map_err(io)?;
    match Message::read_from(&mut &*stream).map_err(wire)? {
        Message::AuthProof { mac } if verify(secret, SERVER, &t, &mac) => Ok(()),
        Message::AuthProof { .. } => {
            log::warn!(target: TARGET, "{remote} could not prove the shared secret: connection refused");
            Err(failed("the peer could not prove the shared secret (adxl.Secret differs)".into()).into())
        }
        other => Err(refused(remote, other, "did not prove the shared secret").into()),
    }
}

/// The error for an answer that is not the next step of the handshake: the server's own
/// refusal (HELLO_ACK with a status), or `why`.
fn refused(remote: &str, answer: Message, why: &str) -> EngineError {
    match answer {
        Message::HelloAck { status, message, .. } if status != 0 => {
            EngineError::new(status, format!("{remote} refused the connection: {message}"))
        }
        _ => EngineError::new(
            ADXL_FAILED,
            format!("connect to {remote}: the peer {why} (an engine without adxl.Secret?)"),
        ),
    }
}

// ---------------------------------------------------------------------------------------
// The server's side.

/// The HELLO of a peer that may be served.
pub struct Greeting {
    pub name: String,
    pub host: Option<Host>,
}

/// Runs the server's side up to and including the peer's HELLO: `Some` when the peer may be
/// answered with HELLO_ACK, `None` when the connection is to be closed (a refusal has then been
/// sent where the protocol has one, and logged as a warning naming the peer's address).
/// Frames are read from `input` (the stream, or the stream under the caller's deadline) and
/// answers written to `stream`.
pub fn accept(
    stream: &TcpStream,
    input: &mut impl Read,
    secret: Option<&Secret>,
    me: &str,
) -> Option<Greeting> {
    let first = match Message::read_from(input) {
        Ok(m) => m,
        Err(e) => {
            log::debug!(target: TARGET, "a new connection did not say HELLO ({e}); closed");
            return None;
        }
    };
    let (secret, initiator, theirs) = match (first, secret) {
        (Message::Hello { name, host, .. }, None) => return Some(Greeting { name, host }),
        (Message::Hello { name, .. }, Some(_)) => {
            return refuse(
                stream,
                me,
                &name,
                "the peer did not authenticate, and this engine requires the shared secret (adxl.Secret)",
            );
        }
        (Message::Auth { name, .. }, None) => {
            return refuse(
                stream,
                me,
                &name,
                "the peer asked to authenticate, but this engine has no shared secret (adxl.Secret)",
            );
        }
        (Message::Auth { name, nonce }, Some(secret)) => (secret, name, nonce),
        (other, _) => {
            log::debug!(target: TARGET, "a new connection sent {other:?} before HELLO; closed");
            return None;
        }
    };
    let mine = nonce().ok()?;
    send_all(stream, &Message::AuthChallenge { name: me.to_owned(), nonce: mine }.encode()).ok()?;
    let t = Transcript { initiator: &initiator, server: me, initiator_nonce: &theirs, server_nonce: &mine };
    match Message::read_from(input).ok()? {
        Message::AuthProof { mac } if verify(secret, INITIATOR, &t, &mac) => {}
        Message::AuthProof { .. } => {
            return refuse(
                stream,
                me,
                &initiator,
                "the peer's proof of the shared secret is wrong (adxl.Secret differs)",
            );
        }
        _ => return None,
    }
    send_all(stream, &Message::AuthProof { mac: mac(secret, SERVER, &t) }.encode()).ok()?;
    match Message::read_from(input).ok()? {
        // The name was authenticated: HELLO must not change it.
        Message::Hello { name, host, .. } if name == initiator => Some(Greeting { name, host }),
        _ => None,
    }
}

/// Answers HELLO_ACK FAILED with `why` and logs it; always `None`.
fn refuse(stream: &TcpStream, me: &str, peer: &str, why: &str) -> Option<Greeting> {
    let addr = stream.peer_addr().map_or_else(|_| "an unknown address".to_owned(), |a| a.to_string());
    log::warn!(target: TARGET, "{me}: connection from {addr} (engine {peer:?}) refused: {why}");
    let ack = Message::HelloAck {
        status: ADXL_FAILED,
        name: me.to_owned(),
        regions: vec![],
        message: format!("authentication failed: {why}"),
        host: None,
    };
    let _ = send_all(stream, &ack.encode());
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(s: &str) -> Secret {
        Secret::parse("test", s).unwrap()
    }

    #[test]
    fn proofs_depend_on_the_secret_the_direction_the_nonces_and_the_names() {
        let (a, b) = ([1u8; NONCE_LEN], [2u8; NONCE_LEN]);
        let t = Transcript {
            initiator: "127.0.0.1",
            server: "127.0.0.1:5000",
            initiator_nonce: &a,
            server_nonce: &b,
        };
        let s = secret("a shared secret of some length");
        let proof = mac(&s, INITIATOR, &t);
        assert!(verify(&s, INITIATOR, &t, &proof));
        assert!(!verify(&s, SERVER, &t, &proof), "a reflected proof must fail");
        assert!(!verify(&secret("another secret of some length"), INITIATOR, &t, &proof));
        let swapped = Transcript { initiator_nonce: &b, server_nonce: &a, ..t };
        assert!(!verify(&s, INITIATOR, &swapped, &proof));
        let renamed = Transcript { initiator: "127.0.0.2", ..t };
        assert!(!verify(&s, INITIATOR, &renamed, &proof));
        // Names are length-prefixed: moving a byte from one name to the other changes the MAC.
        let (x, y) = (
            Transcript { initiator: "ab", server: "c", ..t },
            Transcript { initiator: "a", server: "bc", ..t },
        );
        assert_ne!(mac(&s, INITIATOR, &x), mac(&s, INITIATOR, &y));
    }

    /// RFC 4231 test case 2, through the same HMAC the handshake uses.
    #[test]
    fn hmac_sha256_is_the_standard_one() {
        let mut m = HmacSha256::new_from_slice(b"Jefe").unwrap();
        m.update(b"what do ya want for nothing?");
        let hex: String = m.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }
}
