//! The fuzz targets under `cargo test`, without libFuzzer: every checked-in corpus file
//! (`fuzz/corpus/<target>/`) replayed through its target, then a seeded mutation run of each
//! target, bounded by count. `make test-fuzz` runs the same targets under libFuzzer.
//!
//! The `seed-*` files are made by `ascendless::fuzz_targets::seeds`; a test fails while they
//! differ from it, and `ASCENDLESS_BLESS=1 cargo test --test fuzz_corpus` rewrites them.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Instant;

use ascendless::fuzz_targets::{TARGETS, mutate, seeds::seeds};

/// Mutated inputs per target: a few seconds for all targets in a debug build.
const ROUNDS: usize = 200_000;

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target)
}

/// The files of a target's corpus, sorted by name.
fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir(target);
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        // A file gone since the listing (a concurrent bless removing a stale seed) is skipped.
        .filter_map(|e| {
            let e = e.unwrap();
            Some((e.file_name().into_string().unwrap(), fs::read(e.path()).ok()?))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_seed_files_are_what_the_encoders_make() {
    let bless = std::env::var_os("ASCENDLESS_BLESS").is_some();
    for &(target, _) in TARGETS {
        let want = seeds(target);
        assert!(!want.is_empty(), "no seeds for {target}");
        let dir = corpus_dir(target);
        fs::create_dir_all(&dir).unwrap();
        let have: Vec<_> = corpus(target).into_iter().filter(|(n, _)| n.starts_with("seed-")).collect();
        if bless {
            // Only what changed, so the tests replaying the corpus meanwhile find what they listed.
            for (name, _) in have.iter().filter(|(n, _)| !want.iter().any(|(w, _)| w == n)) {
                fs::remove_file(dir.join(name)).unwrap();
            }
            for (name, bytes) in want.iter().filter(|w| !have.contains(w)) {
                fs::write(dir.join(name), bytes).unwrap();
            }
            continue;
        }
        let mut want = want;
        want.sort();
        assert!(
            have == want,
            "fuzz/corpus/{target}/seed-* differ from the seeds the code makes; \
             run `ASCENDLESS_BLESS=1 cargo test --test fuzz_corpus` and commit the files"
        );
    }
}

#[test]
fn every_corpus_file_replays_through_its_target() {
    for &(target, body) in TARGETS {
        let files = corpus(target);
        assert!(files.len() >= 5, "{target}: only {} corpus files", files.len());
        for (name, bytes) in files {
            assert!(bytes.len() <= 16 << 10, "fuzz/corpus/{target}/{name}: keep corpus files small");
            if catch_unwind(AssertUnwindSafe(|| body(&bytes))).is_err() {
                panic!("fuzz/corpus/{target}/{name} breaks the target (message above)");
            }
        }
    }
}

#[test]
fn seeded_mutations_break_no_target() {
    for (i, &(target, body)) in TARGETS.iter().enumerate() {
        let inputs: Vec<Vec<u8>> = corpus(target).into_iter().map(|(_, b)| b).collect();
        let started = Instant::now();
        mutate::run(body, &inputs, ROUNDS, 0x5eed_0000 + i as u64);
        eprintln!("{target}: {ROUNDS} mutated inputs in {:?}", started.elapsed());
    }
}
