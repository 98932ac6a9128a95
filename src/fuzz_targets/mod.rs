//! The bodies of the fuzz targets, shared by the cargo-fuzz binaries in `fuzz/` and the stable
//! replay test `tests/fuzz_corpus.rs`, so the checks are written once.
//!
//! Each target takes arbitrary bytes and feeds them to one parser of untrusted input: the
//! ADXL frame decoder (what a peer sends), the engine-name and option parsers (what a caller
//! passes to `Initialize`), and the IPC key parser and broker messages (what another process
//! hands over). A target panics only when the parser breaks a rule it promises: it must never
//! panic itself, and whatever it accepts must come out the same when written and read again.
//!
//! [`seeds`] builds the seed corpus (`fuzz/corpus/<target>/`): valid inputs of every kind made
//! by the encoders, near-valid ones and known-bad ones.
//!
//! The parsers that take `&str` get the input through `String::from_utf8_lossy`: invalid UTF-8
//! is replaced, so every input reaches the parser (the C boundary hands over whatever bytes the
//! caller had, checked for UTF-8 first; replacement characters stand in for the bytes it would
//! refuse).

mod adxl;
mod ipc;
pub mod mutate;
pub mod seeds;

pub use adxl::{engine_name, engine_options, wire_decode};
pub use ipc::{ipc_key, ipc_wire};

/// One fuzz target: its name (the cargo-fuzz target and corpus folder) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, in the order the corpus folders are listed.
pub const TARGETS: &[Target] = &[
    ("wire_decode", wire_decode),
    ("engine_name", engine_name),
    ("engine_options", engine_options),
    ("ipc_key", ipc_key),
    ("ipc_wire", ipc_wire),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every target on its seeds and on mutations of them: few under Miri, which checks each
    /// memory access of the parsers as they run.
    #[test]
    fn every_target_takes_its_seeds_and_their_mutations() {
        let rounds = if cfg!(miri) { 60 } else { 5_000 };
        for (i, &(name, target)) in TARGETS.iter().enumerate() {
            let corpus: Vec<Vec<u8>> = seeds::seeds(name).into_iter().map(|(_, b)| b).collect();
            assert!(!corpus.is_empty(), "no seeds for {name}");
            corpus.iter().for_each(|input| target(input));
            mutate::run(target, &corpus, rounds, i as u64 + 1);
        }
    }
}
