//! The C and C++ ABI as a user's compiler and linker see it: every public header compiles on
//! its own, the numbers and layouts are the vendor's, and the shared library exports exactly
//! the functions the headers declare.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "common/ports.rs"]
mod ports;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Cargo's output directory for this build (holds libascendless.so next to `deps/`).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// The shared library cargo built for this test run. `cargo test` alone does not build the
/// cdylib, so `make test` runs `cargo build --lib` first; a library older than the code the
/// tests were built from would make every check here meaningless, so that is an error.
fn shared_library() -> PathBuf {
    let lib = lib_dir().join("libascendless.so");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let built = modified(&lib).unwrap_or_else(|| panic!("{} was not built: run `make test`", lib.display()));
    let rlib = lib_dir().join("libascendless.rlib");
    if let Some(code) = modified(&rlib) {
        // One build writes both within moments; a library from an earlier build is older.
        let lag = code.duration_since(built).unwrap_or_default();
        assert!(lag.as_secs() < 5, "{} is older than the code under test: run `make test`", lib.display());
    }
    lib
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn headers() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "h") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("include"), &mut out);
    out.sort();
    out
}

/// The values of `key=` words in src/cxx/faces.txt, the table of the library's C++ faces.
fn faces(key: &str) -> Vec<String> {
    let prefix = format!("{key}=");
    std::fs::read_to_string(root().join("src/cxx/faces.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(str::split_whitespace)
        .filter_map(|w| w.strip_prefix(&prefix).map(str::to_owned))
        .collect()
}

/// Whether `name` matches a version-script glob (`*` any run, `?` one character).
fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_at_checked(1) {
        None => name.is_empty(),
        Some(("*", rest)) => {
            (0..=name.len()).filter(|&i| name.is_char_boundary(i)).any(|i| glob(rest, &name[i..]))
        }
        Some((first, rest)) => name
            .chars()
            .next()
            .is_some_and(|c| (first == "?" || first.starts_with(c)) && glob(rest, &name[c.len_utf8()..])),
    }
}

#[test]
fn globs_match_as_the_linker_matches_them() {
    assert!(glob("std::hash?ge::AscendString?::*", "std::hash<ge::AscendString>::operator()"));
    assert!(glob("adxl::AdxlEngine::*", "adxl::AdxlEngine::AdxlEngine()"));
    assert!(!glob("adxl::AdxlEngine::*", "adxl::Other::f()"));
    assert!(!glob("ge::?", "ge::"));
}

/// Whether a demangled name belongs to a C++ face: matched by an `export=` glob, not `private=`.
fn is_cxx_face_symbol(name: &str) -> bool {
    faces("export").iter().any(|g| glob(g, name)) && !faces("private").iter().any(|g| glob(g, name))
}

/// C++ headers: the directories of the C++ faces (src/cxx/faces.txt).
fn is_cxx_header(h: &Path) -> bool {
    let rel = h.strip_prefix(root().join("include")).unwrap();
    faces("headers").iter().any(|d| rel.starts_with(d))
}

fn scratch(name: &str) -> PathBuf {
    let dir = lib_dir().join("c-abi-tests").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn every_public_header_compiles_on_its_own() {
    let include = root().join("include");
    let dir = scratch("headers");
    for h in headers() {
        let rel = h.strip_prefix(&include).unwrap().display().to_string();
        let tu = dir.join(rel.replace('/', "_") + ".tu");
        std::fs::write(&tu, format!("#include \"{rel}\"\n#include \"{rel}\"\n")).unwrap();
        let strict = ["-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only"];
        if !is_cxx_header(&h) {
            run(Command::new("cc")
                .args(["-std=c99", "-x", "c"])
                .args(strict)
                .arg("-I")
                .arg(&include)
                .arg(&tu));
        }
        for abi in ["0", "1"] {
            run(Command::new("c++")
                .args(["-std=c++11", "-x", "c++"])
                .args(strict)
                .arg(format!("-D_GLIBCXX_USE_CXX11_ABI={abi}"))
                .arg("-I")
                .arg(&include)
                .arg(&tu));
        }
    }
}

#[test]
fn numbers_and_layouts_are_the_vendors() {
    let include = root().join("include");
    run(Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
        .arg(&include)
        .arg(root().join("tests/c/acl_codes_match_spec.c")));
    run(Command::new("c++")
        .args(["-std=c++11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
        .arg(&include)
        .arg(root().join("tests/c/adxl_codes_agree.cpp")));
    run(Command::new("c++")
        .args(["-std=c++11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
        .arg(&include)
        .arg(root().join("tests/c/flag_types.cpp")));
}

/// Function names declared by the C headers: every top-level statement with a parameter list
/// once comments, preprocessor lines and type definitions are set aside.
fn declared_c_functions() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for h in headers().into_iter().filter(|h| !is_cxx_header(h)) {
        let text = std::fs::read_to_string(&h).unwrap();
        let mut code = String::new();
        let mut rest = text.as_str();
        while let Some(start) = rest.find("/*") {
            code.push_str(&rest[..start]);
            rest = &rest[start + rest[start..].find("*/").unwrap() + 2..];
        }
        code.push_str(rest);
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with('#') && !l.contains("extern \"C\""))
            .map(|l| l.split("//").next().unwrap())
            .collect::<Vec<_>>()
            .join(" ");
        let mut depth = 0;
        let mut statement = String::new();
        for c in code.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ';' if depth == 0 => {
                    let st = std::mem::take(&mut statement);
                    let st = st.trim();
                    if let Some(open) =
                        st.find('(').filter(|_| !st.starts_with("typedef") && !st.contains('}'))
                    {
                        let before = st[..open].trim_end();
                        let name =
                            before.rsplit(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap();
                        assert!(!name.is_empty(), "cannot read a function name from {st:?}");
                        names.insert(name.to_owned());
                    }
                    continue;
                }
                _ => {}
            }
            if depth == 0 && c != '}' {
                statement.push(c);
            } else if c == '}' && depth == 0 {
                statement.clear();
            }
        }
    }
    names
}

fn dynamic_symbols(demangle: bool) -> Vec<(String, String)> {
    let mut cmd = Command::new("nm");
    cmd.args(["-D", "--defined-only"]);
    if demangle {
        cmd.arg("-C");
    }
    run(cmd.arg(shared_library()))
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ' ');
            let (_addr, kind, name) = (parts.next()?, parts.next()?, parts.next()?);
            Some((kind.to_owned(), name.to_owned()))
        })
        .collect()
}

#[test]
fn shared_library_exports_exactly_the_public_api() {
    let declared = declared_c_functions();
    assert!(declared.contains("aclInit") && declared.contains("ascendless_get_capability"), "{declared:?}");
    let mangled: BTreeSet<String> = dynamic_symbols(false).into_iter().map(|(_, n)| n).collect();
    for name in &declared {
        assert!(mangled.contains(name), "{name} is declared in a public header but not exported");
    }
    let stray: Vec<String> = dynamic_symbols(true)
        .into_iter()
        .filter(|(_, name)| !declared.contains(name) && !is_cxx_face_symbol(name))
        .map(|(kind, name)| format!("{kind} {name}"))
        .collect();
    assert!(stray.is_empty(), "symbols exported beyond the public API: {stray:#?}");
}

#[test]
fn shared_library_has_a_versioned_soname() {
    let dynamic = run(Command::new("readelf").arg("-d").arg(shared_library()));
    assert!(dynamic.contains("Library soname: [libascendless.so.0]"), "{dynamic}");
}

#[test]
fn cxx_members_link_and_behave_under_both_string_abis() {
    let dir = scratch("cxx");
    // The library as installed: its file under the soname the executable will ask for.
    let so = dir.join("libascendless.so.0");
    let _ = std::fs::remove_file(&so);
    std::os::unix::fs::symlink(shared_library(), &so).unwrap();
    for abi in ["0", "1"] {
        let exe = dir.join(format!("cxx_api_abi{abi}"));
        run(Command::new("c++")
            .args(["-std=c++17", "-Wall", "-Wextra", "-Werror"])
            .arg(format!("-D_GLIBCXX_USE_CXX11_ABI={abi}"))
            .arg("-I")
            .arg(root().join("include"))
            .arg(root().join("tests/c/cxx_api.cpp"))
            .arg("-o")
            .arg(&exe)
            .arg(shared_library())
            .arg(format!("-Wl,-rpath,{}", dir.display())));
        // Below the ephemeral range, so no concurrent connection takes it first.
        let port = ports::free_port();
        let out = run(Command::new(&exe).arg(port.to_string()).env("ASCEND_GLOBAL_LOG_LEVEL", "4"));
        assert!(out.contains("0 failures"), "{out}");
    }
}

/// The README's compatibility table, as (names, status) rows.
fn compatibility_rows() -> Vec<(Vec<String>, String)> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme.split("## Compatibility").nth(1).expect("README has a Compatibility section");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let names = cells[1].split('`').skip(1).step_by(2).map(str::to_owned).collect();
            (names, cells[2].to_owned())
        })
        .collect()
}

#[test]
fn readme_compatibility_table_matches_the_exports() {
    let c_exports: BTreeSet<String> = dynamic_symbols(false).into_iter().map(|(_, n)| n).collect();
    let cxx_exports: Vec<String> = dynamic_symbols(true).into_iter().map(|(_, n)| n).collect();
    let rows = compatibility_rows();
    assert!(!rows.is_empty());
    let mut listed = BTreeSet::new();
    for (names, status) in &rows {
        for name in names {
            let plain_c = name.chars().all(|c| c.is_alphanumeric() || c == '_');
            if plain_c {
                listed.insert(name.clone());
            }
            match status.as_str() {
                "implemented" if plain_c => {
                    assert!(c_exports.contains(name), "README says {name} is implemented; it is not exported")
                }
                "implemented" => {
                    let prefix = if name.contains("::AdxlEngine::") {
                        format!("{name}(")
                    } else {
                        format!("{name}::")
                    };
                    assert!(
                        cxx_exports.iter().any(|s| s.starts_with(&prefix)),
                        "README says {name} is implemented; no {prefix} symbol is exported"
                    );
                }
                s if s.starts_with("planned") && plain_c => {
                    assert!(
                        !c_exports.contains(name),
                        "{name} is exported; mark it implemented in the README"
                    )
                }
                s => assert!(s.starts_with("planned") || s == "not supported", "unknown status {s:?}"),
            }
        }
    }
    for name in declared_c_functions() {
        assert!(
            listed.contains(&name),
            "{name} is exported but missing from the README's compatibility table"
        );
    }
}

/// The vendor's mangled C++ names (tests/c/vendor_cxx_symbols.txt, which says how it was made).
fn vendor_cxx_symbols() -> BTreeSet<String> {
    std::fs::read_to_string(root().join("tests/c/vendor_cxx_symbols.txt"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn cxx_exports_are_exactly_the_vendors_names() {
    let vendor = vendor_cxx_symbols();
    assert!(
        vendor.contains(
            "_ZN4adxl10AdxlEngine12TransferSyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EEi"
        ),
        "the list lacks the spec's TransferSync name"
    );
    let exported: BTreeSet<String> = dynamic_symbols(false)
        .into_iter()
        .filter(|(kind, _)| kind != "A")
        .map(|(_, n)| n.split('@').next().unwrap().to_owned())
        .filter(|n| n.starts_with("_Z"))
        .collect();
    let missing: Vec<&String> = vendor.difference(&exported).collect();
    assert!(missing.is_empty(), "vendor C++ symbols not exported: {missing:#?}");
    let extra: Vec<&String> = exported.difference(&vendor).collect();
    assert!(extra.is_empty(), "C++ symbols exported that the vendor's library does not have: {extra:#?}");
}
