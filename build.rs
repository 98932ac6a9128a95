//! Compiles the C++ layer (`ge::AscendString`, `adxl::AdxlEngine`) into the library and sets
//! the shared library's soname and export list.

use std::path::Path;

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let root = Path::new(&root);
    let cxx = root.join("src/cxx");
    println!("cargo:rerun-if-changed=src/cxx");
    println!("cargo:rerun-if-changed=include");

    let mut sources: Vec<_> = std::fs::read_dir(&cxx)
        .expect("src/cxx exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    sources.sort();
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include(root.join("include"))
        .files(&sources)
        .flag("-fvisibility=hidden")
        .flag("-fvisibility-inlines-hidden")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        // The C++ objects call into Rust, not the other way round: without whole-archive the
        // linker would drop them from the shared library.
        .link_lib_modifier("+whole-archive")
        .compile("ascendless_cxx");

    if std::env::var_os("CARGO_FEATURE_UCX").is_some() {
        ucx_shim();
    }

    // The AVX-512 intrinsics of sys/stream_copy.rs are stable from Rust 1.89; an older compiler
    // (the declared minimum is 1.85) builds the plain copy instead.
    println!("cargo::rustc-check-cfg=cfg(streaming_stores)");
    if rustc_minor().is_some_and(|minor| minor >= 89) {
        println!("cargo:rustc-cfg=streaming_stores");
    }

    // The shared library: a versioned soname, and exports limited to the public API. rustc
    // exports the `#[no_mangle]` C functions itself; this script adds the C++ classes and hides
    // everything else (libstdc++ template instances and the like).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libascendless.so.0");
    let script = version_script(&std::fs::read_to_string(cxx.join("faces.txt")).expect("src/cxx/faces.txt"));
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("exports.map");
    std::fs::write(&out, script).expect("OUT_DIR is writable");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={}", out.display());
    // Every symbol resolved at link time, except in sanitizer builds (`cargo fuzz`): their
    // runtime is part of the executable, so the library leaves its symbols undefined.
    if std::env::var_os("CARGO_CFG_SANITIZE").is_none() {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,defs");
    }
}

/// The minor version of the compiler building this crate (`rustc 1.95.0 (...)`: 95).
fn rustc_minor() -> Option<u32> {
    let out = std::process::Command::new(std::env::var_os("RUSTC")?).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.split_whitespace().nth(1)?.split('.').nth(1)?.parse().ok()
}

/// The GNU ld version script: the `export=` globs of every C++ face in `faces` (src/cxx/faces.txt)
/// and its `export_c=` C names are global, everything else is local. rustc exports the C functions itself, so they need not
/// be listed here; they join the same global list.
fn version_script(faces: &str) -> String {
    let globs: String = face_words(faces, "export=").map(|glob| format!("      {glob};\n")).collect();
    assert!(!globs.is_empty(), "src/cxx/faces.txt lists no export= glob");
    let c_names: String = face_words(faces, "export_c=").map(|name| format!("    {name};\n")).collect();
    format!("{{\n  global:\n{c_names}    extern \"C++\" {{\n{globs}    }};\n  local:\n    *;\n}};\n")
}

/// The values of the `key` words (`key` ends with '=') of src/cxx/faces.txt, comments skipped.
fn face_words<'a>(faces: &'a str, key: &'a str) -> impl Iterator<Item = &'a str> {
    faces
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(str::split_whitespace)
        .filter_map(move |word| word.strip_prefix(key))
}

/// The `ucx` feature: compiles the C shim over the real UCX headers (so no struct layout is
/// copied into Rust) and links ucp/uct/ucs, with the flags pkg-config gives for `ucx`.
fn ucx_shim() {
    println!("cargo:rerun-if-changed=src/sys/ucx_shim.c");
    for var in ["PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let pkg = |arg: &str| -> Vec<String> {
        let out = std::process::Command::new("pkg-config").args([arg, "ucx"]).output();
        match out {
            Ok(out) if out.status.success() => {
                String::from_utf8_lossy(&out.stdout).split_whitespace().map(str::to_owned).collect()
            }
            _ => panic!("the ucx feature needs libucx-dev: `pkg-config {arg} ucx` found no ucx"),
        }
    };
    let mut build = cc::Build::new();
    build.file("src/sys/ucx_shim.c").warnings(true).extra_warnings(true).warnings_into_errors(true);
    for flag in pkg("--cflags") {
        build.flag(&flag);
    }
    build.compile("ascendless_ucx_shim");
    for flag in pkg("--libs") {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={lib}");
        }
    }
}
