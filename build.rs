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

    // The shared library: a versioned soname, and exports limited to the public API. rustc
    // exports the `#[no_mangle]` C functions itself; this script adds the C++ classes and hides
    // everything else (libstdc++ template instances and the like).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libascendless.so.0");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={}", cxx.join("exports.map").display());
    // Every symbol resolved at link time, except in sanitizer builds (`cargo fuzz`): their
    // runtime is part of the executable, so the library leaves its symbols undefined.
    if std::env::var_os("CARGO_CFG_SANITIZE").is_none() {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,defs");
    }
}
