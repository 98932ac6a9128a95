//! The C and C++ ABI as a user's compiler and linker see it: every public header compiles on
//! its own, the numbers and layouts are the vendor's, and the shared library exports exactly
//! the functions the headers declare.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "common/build_tree.rs"]
mod build_tree;
#[path = "common/ports.rs"]
mod ports;

use build_tree::{root, run, shared_library};

fn scratch(name: &str) -> PathBuf {
    build_tree::scratch("c-abi-tests", name)
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
    // The C++ checks: static_asserts on the headers, compiled, not run.
    for check in ["adxl_codes_agree", "hixl_codes_agree", "flag_types", "data_types", "llm_codes_agree"] {
        run(Command::new("c++")
            .args(["-std=c++11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"])
            .arg(&include)
            .arg(root().join(format!("tests/c/{check}.cpp"))));
    }
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

/// Builds the C++ test program `source` (under tests/c) against the library as installed (its
/// file under the soname the executable asks for), once per string ABI, runs it with the
/// arguments `args` makes for each run and checks it reports "0 failures".
fn cxx_program_passes_under_both_string_abis(source: &str, std: &str, args: impl Fn() -> Vec<String>) {
    let stem = Path::new(source).file_stem().unwrap().to_str().unwrap().to_owned();
    let dir = scratch(&stem);
    let so = dir.join("libascendless.so.0");
    let _ = std::fs::remove_file(&so);
    std::os::unix::fs::symlink(shared_library(), &so).unwrap();
    for abi in ["0", "1"] {
        let exe = dir.join(format!("{stem}_abi{abi}"));
        run(Command::new("c++")
            .args([std, "-Wall", "-Wextra", "-Werror"])
            .arg(format!("-D_GLIBCXX_USE_CXX11_ABI={abi}"))
            .arg("-I")
            .arg(root().join("include"))
            .arg(root().join("tests/c").join(source))
            .arg("-o")
            .arg(&exe)
            .arg(shared_library())
            .arg(format!("-Wl,-rpath,{}", dir.display())));
        let out = run(Command::new(&exe).args(args()).env("ASCEND_GLOBAL_LOG_LEVEL", "4"));
        assert!(out.contains("0 failures"), "{out}");
    }
}

#[test]
fn cxx_members_link_and_behave_under_both_string_abis() {
    // A port below the ephemeral range for each run, so no concurrent connection takes it first.
    cxx_program_passes_under_both_string_abis("cxx_api.cpp", "-std=c++17", || {
        vec![ports::free_port().to_string()]
    });
}

/// The C++ overloads of `acl/acl_rt_api.h` (typed pointers, defaults, the time-out forms),
/// called as code written against the vendor's header calls them, under both string ABIs.
#[test]
fn the_cxx_overloads_of_acl_rt_api_forward_to_the_c_functions() {
    cxx_program_passes_under_both_string_abis("acl_rt_api_overloads.cpp", "-std=c++11", Vec::new);
}

/// The HIXL sample (examples-c/hixl-vendor-style) between two processes, and against the ADXL
/// sample both ways: a hixl::Hixl and an adxl::AdxlEngine are one engine on the wire. The
/// client connects with ConnectAsync, writes with TransferAsync + user_data and collects with
/// the batched GetTransferStatus.
#[test]
fn hixl_and_adxl_engines_in_two_processes_transfer_to_each_other() {
    let dir = scratch("hixl-interop");
    let so = dir.join("libascendless.so.0");
    let _ = std::fs::remove_file(&so);
    std::os::unix::fs::symlink(shared_library(), &so).unwrap();
    let build = |src: &str, abi: &str| {
        let exe = dir.join(format!("{}{abi}", Path::new(src).file_stem().unwrap().to_str().unwrap()));
        run(Command::new("c++")
            .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror"])
            .arg(format!("-D_GLIBCXX_USE_CXX11_ABI={abi}"))
            .arg("-I")
            .arg(root().join("include"))
            .arg("-I")
            .arg(root().join("include/external/ge_common"))
            .arg("-I")
            .arg(root().join("examples-c/vendor-style"))
            .arg(root().join("examples-c").join(src))
            .arg("-o")
            .arg(&exe)
            .arg(shared_library())
            .arg(format!("-Wl,-rpath,{}", dir.display())));
        exe
    };
    let hixl_server = build("hixl-vendor-style/hixl_server.cpp", "0");
    let hixl_client = build("hixl-vendor-style/hixl_client.cpp", "1");
    let adxl_server = build("vendor-style/adxl_server.cpp", "1");
    let adxl_client = build("vendor-style/adxl_client.cpp", "0");
    let script = root().join("examples-c/hixl-vendor-style/run.sh");
    for (server, client) in
        [(&hixl_server, &hixl_client), (&adxl_server, &hixl_client), (&hixl_server, &adxl_client)]
    {
        let port = ports::free_port();
        let out = run(Command::new(&script)
            .arg(server)
            .arg(client)
            .arg(port.to_string())
            .env("ASCEND_GLOBAL_LOG_LEVEL", "4"));
        assert!(
            out.contains("verified") && out.contains("server: the client's WRITE arrived intact"),
            "{server:?} with {client:?}: {out}"
        );
    }
}

/// Mooncake's shared-segment sequence across two processes (tests/c/shared_segment.cpp):
/// MallocMem + ExportToShareableHandle in one, granularity + reserve + fabric import + map +
/// set access in the other, bytes both ways, and the export withdrawn by FreeMem.
#[test]
fn a_shared_segment_moves_bytes_between_two_processes_as_mooncake_uses_it() {
    let dir = scratch("segment");
    let so = dir.join("libascendless.so.0");
    let _ = std::fs::remove_file(&so);
    std::os::unix::fs::symlink(shared_library(), &so).unwrap();
    let exe = dir.join("shared_segment");
    run(Command::new("c++")
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(root().join("include"))
        .arg(root().join("tests/c/shared_segment.cpp"))
        .arg("-o")
        .arg(&exe)
        .arg(shared_library())
        .arg(format!("-Wl,-rpath,{}", dir.display())));
    let out = run(Command::new(&exe).env("ASCEND_GLOBAL_LOG_LEVEL", "4"));
    assert!(out.contains("peer: 0 failures") && out.contains("owner: 0 failures"), "{out}");
}

/// LLM-DataDist between two processes as the vendor's C++ samples use it
/// (tests/c/llm_datadist_pair.cpp): the decoder listens and registers, the prompt links, pulls
/// and pushes blocks and batches with layer ranges (bytes checked on both sides), gets the
/// documented codes for bad calls, and unlinks by force after the decoder is killed.
#[test]
fn llm_datadist_prompt_and_decoder_move_kv_blocks_between_two_processes() {
    // The prompt's exit status includes its decoders' (it waits for each it did not kill).
    cxx_program_passes_under_both_string_abis("llm_datadist_pair.cpp", "-std=c++17", || {
        vec![ports::free_port().to_string()]
    });
}

/// Every number of the vendor's `acl/error_codes/rt_error_codes.h` (hicann/runtime; names and
/// values listed in tests/c/vendor_rt_error_codes.txt) is defined by ours with the same value:
/// a caller's `case ACL_ERROR_RT_...:` must compile whichever codes the runtime returns.
#[test]
fn every_vendor_runtime_error_code_is_defined_with_its_value() {
    let ours = std::fs::read_to_string(root().join("include/acl/error_codes/rt_error_codes.h")).unwrap();
    let defined: std::collections::BTreeMap<&str, &str> = ours
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter_map(|l| l.split_once(' '))
        .map(|(n, v)| (n, v.trim()))
        .collect();
    let vendor = std::fs::read_to_string(root().join("tests/c/vendor_rt_error_codes.txt")).unwrap();
    let wrong: Vec<String> = vendor
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(n, v)| defined.get(n) != Some(v))
        .map(|(n, v)| format!("{n} should be {v}, ours: {:?}", defined.get(n)))
        .collect();
    assert!(wrong.is_empty(), "rt_error_codes.h differs from the vendor's:\n{}", wrong.join("\n"));
}

const COMPATIBILITY: &str = "docs/compatibility.md";

/// One row of a table of docs/compatibility.md: the names in backticks of its first cell, its
/// state, and the section it is in.
struct Row {
    names: Vec<String>,
    state: String,
    section: String,
    notes: String,
}

/// Every table row of docs/compatibility.md whose first cell names an API in backticks.
fn compatibility_rows() -> Vec<Row> {
    let page = std::fs::read_to_string(root().join(COMPATIBILITY)).unwrap();
    let mut section = String::new();
    let mut rows = Vec::new();
    for line in page.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            section = title.to_owned();
        } else if line.starts_with("| `") {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            assert!(cells.len() >= 4, "{COMPATIBILITY}: a row needs three cells: {line}");
            rows.push(Row {
                names: cells[1].split('`').skip(1).step_by(2).map(str::to_owned).collect(),
                state: cells[2].to_owned(),
                section: section.clone(),
                notes: cells[3].to_owned(),
            });
        }
    }
    rows
}

/// The functions a vendor header declares (`tests/c/vendor_<list>.txt`, made by
/// scripts/vendor_acl_rt_functions.py from the vendor's header).
fn vendor_list(list: &str) -> Vec<String> {
    std::fs::read_to_string(root().join(format!("tests/c/{list}.txt")))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Each vendor header with its list of functions and the section of docs/compatibility.md that
/// has one row per function.
const VENDOR_HEADERS: [(&str, &str, &str); 7] = [
    ("acl/acl_rt.h", "vendor_acl_rt_functions", "AscendCL runtime: every function of `acl/acl_rt.h`"),
    (
        "acl/acl_base_rt.h",
        "vendor_acl_base_rt_functions",
        "AscendCL base: every function of `acl/acl_base_rt.h`",
    ),
    (
        "acl/acl_rt_allocator.h",
        "vendor_acl_rt_allocator_functions",
        "AscendCL allocators: every function of `acl/acl_rt_allocator.h`",
    ),
    ("acl/acl_tdt.h", "vendor_acl_tdt_functions", "TDT channels: every function of `acl/acl_tdt.h`"),
    (
        "acl/acl_tdt_queue.h",
        "vendor_acl_tdt_queue_functions",
        "TDT queues: every function of `acl/acl_tdt_queue.h`",
    ),
    ("acl/acl_prof.h", "vendor_acl_prof_functions", "Profiling: every function of `acl/acl_prof.h`"),
    ("acl/acl_dump.h", "vendor_acl_dump_functions", "Dump: every function of `acl/acl_dump.h`"),
];

const STATES: [&str; 3] = ["works", "not yet", "not supported"];

/// docs/compatibility.md against the library: every failure says which row to change and how,
/// so that adding a function ends with flipping its row. A row's state is one of [`STATES`]:
/// - works: the function is exported (a C++ name: some member of that name is);
/// - not yet: a vendor C function (acl*) is NOT exported (absent rather than a stub); a C++
///   member or a native `ascendless_*` function may be (it backs a member that must exist);
/// - not supported: the notes say why; exported or not.
///
/// Every exported C function has a row, and a vendor one says works or not supported; every
/// function of the vendor's acl_rt.h has a row (one row per function in that table).
#[test]
fn compatibility_table_matches_the_exports() {
    let c_exports: BTreeSet<String> = dynamic_symbols(false).into_iter().map(|(_, n)| n).collect();
    let cxx_exports: Vec<String> = dynamic_symbols(true).into_iter().map(|(_, n)| n).collect();
    let rows = compatibility_rows();
    assert!(rows.len() > 300, "{COMPATIBILITY} has only {} rows", rows.len());
    let mut problems = Vec::new();
    let mut state_of = std::collections::BTreeMap::new();
    for row in &rows {
        let state = row.state.as_str();
        if !STATES.contains(&state) {
            problems.push(format!(
                "the row of `{}` ({}) has the state {state:?}: write one of {STATES:?}",
                row.names.join("`, `"),
                row.section
            ));
            for name in &row.names {
                state_of.insert(name.clone(), state);
            }
            continue;
        }
        if state == "not supported" && row.notes.is_empty() {
            problems.push(format!(
                "the row of `{}` says not supported: say why in its notes",
                row.names.join("`, `")
            ));
        }
        for name in &row.names {
            if state_of.insert(name.clone(), state).is_some() {
                problems.push(format!("`{name}` has more than one row: keep one"));
            }
            let plain_c = name.chars().all(|c| c.is_alphanumeric() || c == '_');
            let exported = if plain_c {
                c_exports.contains(name)
            } else {
                // A member is `ns::Class::Member(args)`; a class's row (`ns::Class`) covers
                // `ns::Class::anything`.
                let prefix =
                    if name.matches("::").count() >= 2 { format!("{name}(") } else { format!("{name}::") };
                cxx_exports.iter().any(|s| s.starts_with(&prefix))
            };
            let vendor_c = plain_c && name.starts_with("acl");
            match state {
                "works" if !exported => problems.push(format!(
                    "the row of `{name}` says works, but the library does not export {name}: export it, \
                     or change that row's state to `not yet`"
                )),
                "not yet" if exported && vendor_c => problems.push(format!(
                    "the row of `{name}` says not yet, but the library exports {name}: change that row's \
                     state to `works` (or `not supported` if every call answers 207000) and describe it \
                     in its notes"
                )),
                _ => {}
            }
        }
    }
    // Every member of hixl::Hixl has a row of its own (the HIXL table).
    for member in cxx_exports.iter().filter(|s| s.starts_with("hixl::Hixl::")) {
        let name = member.split('(').next().unwrap().to_owned();
        if !state_of.contains_key(&name) {
            problems.push(format!(
                "{name} is exported but has no row: add `| `{name}` | works | ... |` to the HIXL table"
            ));
        }
    }
    for name in declared_c_functions() {
        if !state_of.contains_key(&name) {
            problems.push(format!(
                "{name} is exported but has no row: add `| `{name}` | works | ... |` to the table of \
                 its header"
            ));
        }
    }
    for (header, list, section) in VENDOR_HEADERS {
        for name in vendor_list(list) {
            let row = rows.iter().find(|r| r.names.contains(&name));
            match row {
                None => problems.push(format!(
                    "{name}, declared by the vendor's {header}, has no row: add `| `{name}` | not yet | |` \
                     (or its state) to the section \"{section}\""
                )),
                Some(r) if r.section != section || r.names.len() != 1 => problems.push(format!(
                    "{name} belongs in a row of its own in the section \"{section}\", not in \"{}\"",
                    r.section
                )),
                Some(_) => {}
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{COMPATIBILITY} is out of step with the library:\n  {}",
        problems.join("\n  ")
    );
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

/// The names a face's header makes a caller link against (tests/c/<members>.cpp takes the
/// address of every member), under both string ABIs, are that face's names of the vendor's list
/// (C2/D2 are the library's own, not a caller's).
fn header_declares_the_vendors_names(prefix: &str, count: usize, members: &str) {
    let vendor: BTreeSet<String> = vendor_cxx_symbols()
        .into_iter()
        .filter(|s| s.starts_with(prefix) && !s.contains("C2E") && !s.contains("D2E"))
        .collect();
    assert_eq!(vendor.len(), count, "the list holds the spec's {count} caller-side names of {prefix}");
    let dir = scratch(members);
    for abi in ["0", "1"] {
        let obj = dir.join(format!("members{abi}.o"));
        run(Command::new("c++")
            .args(["-std=c++17", "-O0", "-c", "-Wall", "-Wextra", "-Werror"])
            .arg(format!("-D_GLIBCXX_USE_CXX11_ABI={abi}"))
            .arg("-I")
            .arg(root().join("include"))
            .arg("-o")
            .arg(&obj)
            .arg(root().join(format!("tests/c/{members}.cpp"))));
        let undefined: BTreeSet<String> = run(Command::new("nm").arg("-u").arg(&obj))
            .lines()
            .filter_map(|l| l.split_whitespace().last())
            .filter(|n| n.starts_with(prefix))
            .map(str::to_owned)
            .collect();
        assert_eq!(undefined, vendor, "ABI {abi}: the header's names differ from the vendor's");
    }
}

#[test]
fn hixl_header_declares_the_vendors_names() {
    header_declares_the_vendors_names("_ZN4hixl", 19, "hixl_members");
}

#[test]
fn llm_datadist_header_declares_the_vendors_names() {
    header_declares_the_vendors_names("_ZN12llm_datadist", 17, "llm_datadist_members");
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

/// The vendor's functions (all three headers) the library does not export yet, with their rows'
/// states; rows in any other state, or exported functions whose row is not `works` or `not
/// supported`, are problems.
fn vendor_functions_left() -> (Vec<String>, Vec<String>) {
    let exports: BTreeSet<String> = dynamic_symbols(false).into_iter().map(|(_, n)| n).collect();
    let rows = compatibility_rows();
    let (mut left, mut problems) = (Vec::new(), Vec::new());
    for (header, list, _) in VENDOR_HEADERS {
        for name in vendor_list(list) {
            let Some(row) = rows.iter().find(|r| r.names.contains(&name)) else {
                problems.push(format!("{name} ({header}) has no row in {COMPATIBILITY}"));
                continue;
            };
            let exported = exports.contains(&name);
            match (row.state.as_str(), exported) {
                ("works" | "not supported", true) => {}
                ("not yet" | "not supported", false) => {
                    left.push(format!("{name} ({}, {header})", row.state))
                }
                (state, _) => {
                    problems.push(format!("{name} ({header}): row says {state}, exported: {exported}"))
                }
            }
        }
    }
    (left, problems)
}

/// Every function of the vendor's acl/acl_rt.h, acl/acl_base_rt.h and acl/acl_rt_allocator.h is
/// exported, and its row says `works` or `not supported` (an NPU-only function answers 207000).
#[test]
fn every_vendor_function_is_exported() {
    let (left, problems) = vendor_functions_left();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    if !left.is_empty() {
        eprintln!("{} vendor functions are not exported yet:\n  {}", left.len(), left.join("\n  "));
    }
    assert!(
        left.is_empty(),
        "{} vendor functions are not exported: write them (or export them answering 207000)",
        left.len()
    );
}

/// One declaration of tests/c/vendor_acl_prototypes.txt or of a generated header: return type,
/// name, parameters as (type, name).
struct Proto {
    ret: String,
    name: String,
    params: Vec<(String, String)>,
}

/// A C type written one way: no `struct`/`enum`/`union` keywords, `*` next to its type, and a
/// parameter's own constness (`const T` of a value, `T* const`) dropped, as it is no part of the
/// function's type.
fn normal_type(t: &str) -> String {
    let t = t.replace('*', " * ");
    let words: Vec<&str> =
        t.split_whitespace().filter(|w| !matches!(*w, "struct" | "enum" | "union")).collect();
    let mut t = words.join(" ").replace(" *", "*");
    while let Some(stripped) = t.strip_suffix(" const") {
        t = stripped.to_owned();
    }
    if !t.contains('*') {
        t = t.trim_start_matches("const ").to_owned();
    }
    t
}

fn parse_proto(decl: &str) -> Option<Proto> {
    let decl = decl.trim().trim_end_matches(';').trim();
    let decl = decl.strip_prefix("ACL_FUNC_VISIBILITY").unwrap_or(decl).trim();
    let decl = decl.strip_prefix("MSVP_PROF_API").unwrap_or(decl).trim();
    let open = decl.find('(')?;
    let close = decl.rfind(')')?;
    let head = decl[..open].trim_end();
    let split = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    let (ret, name) = (head[..=split].trim(), head[split + 1..].trim());
    let params = decl[open + 1..close].trim();
    let params = if params.is_empty() || params == "void" {
        Vec::new()
    } else {
        params
            .split(',')
            .map(|p| {
                let p = p.trim();
                if p == "..." {
                    return ("...".to_owned(), String::new());
                }
                let at = p.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
                (normal_type(&p[..at]), p[at..].to_owned())
            })
            .collect()
    };
    Some(Proto { ret: normal_type(ret), name: name.to_owned(), params })
}

fn vendor_prototypes() -> Vec<Proto> {
    std::fs::read_to_string(root().join("tests/c/vendor_acl_prototypes.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| parse_proto(l).unwrap_or_else(|| panic!("cannot read {l:?}")))
        .collect()
}

/// The function declarations of the generated `acl/*.h` headers.
fn generated_prototypes() -> Vec<Proto> {
    let mut out = Vec::new();
    for h in [
        "acl/acl.h",
        "acl/acl_base.h",
        "acl/acl_rt.h",
        "acl/acl_rt_allocator.h",
        "acl/acl_tdt.h",
        "acl/acl_tdt_queue.h",
        "acl/acl_prof.h",
        "acl/acl_dump.h",
    ] {
        let text = std::fs::read_to_string(root().join("include").join(h)).unwrap();
        let mut code = String::new();
        let mut rest = text.as_str();
        while let Some(start) = rest.find("/*") {
            code.push_str(&rest[..start]);
            rest = &rest[start + rest[start..].find("*/").unwrap() + 2..];
        }
        code.push_str(rest);
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .map(|l| l.split("//").next().unwrap())
            .collect::<Vec<_>>()
            .join(" ");
        for st in code.split(';') {
            if let Some(at) = st.find("ACL_FUNC_VISIBILITY").or_else(|| st.find("MSVP_PROF_API")) {
                out.extend(parse_proto(&st[at..]));
            }
        }
    }
    out
}

/// Every function the generated headers declare that the vendor's do too has the vendor's
/// return and parameter types (names aside; the vendor's `T name[]` is not used).
#[test]
fn generated_prototypes_match_the_vendors() {
    let ours: std::collections::BTreeMap<String, Proto> =
        generated_prototypes().into_iter().map(|p| (p.name.clone(), p)).collect();
    let vendor = vendor_prototypes();
    assert!(vendor.len() > 380, "tests/c/vendor_acl_prototypes.txt has only {} lines", vendor.len());
    let show = |p: &Proto| {
        let params: Vec<&str> = p.params.iter().map(|(t, _)| t.as_str()).collect();
        format!("{} {}({})", p.ret, p.name, params.join(", "))
    };
    let mut compared = 0;
    let mut wrong = Vec::new();
    for v in &vendor {
        let Some(o) = ours.get(&v.name) else { continue };
        compared += 1;
        let types = |p: &Proto| p.params.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>();
        if o.ret != v.ret || types(o) != types(v) {
            wrong.push(format!("vendor: {}\n    ours: {}", show(v), show(o)));
        }
    }
    assert!(compared > 200, "only {compared} declarations compared");
    assert!(
        wrong.is_empty(),
        "{} prototypes differ from the vendor's:\n  {}",
        wrong.len(),
        wrong.join("\n  ")
    );
}

/// A C program, generated from the vendor's declarations, calls every vendor function the
/// library exports with zero arguments (NULL pointers, 0 sizes and handles) and links against
/// the shared library: each call returns (no crash, no panic: never 500000, the code a caught
/// panic gives) through the installed headers alone.
#[test]
fn a_c_program_calls_every_vendor_function_with_zero_arguments() {
    let exports: BTreeSet<String> = dynamic_symbols(false).into_iter().map(|(_, n)| n).collect();
    let mut src = String::from(
        "#include <stdio.h>\n#include \"acl/acl.h\"\n#include \"acl/acl_base_rt.h\"\n\
         #include \"acl/acl_rt_allocator.h\"\n\
         #include \"acl/acl_tdt.h\"\n#include \"acl/acl_tdt_queue.h\"\n\
         #include \"acl/acl_prof.h\"\n#include \"acl/acl_dump.h\"\n\
         int main(void) {\n    int panics = 0, calls = 0;\n",
    );
    let mut called = Vec::new();
    let mut skipped = 0;
    for p in vendor_prototypes() {
        if !exports.contains(&p.name) || called.contains(&p.name) {
            skipped += usize::from(!exports.contains(&p.name));
            continue;
        }
        let mut block = String::from("    {\n");
        let mut args = Vec::new();
        for (i, (t, _)) in p.params.iter().enumerate() {
            if t == "..." {
                continue;
            }
            block.push_str(&format!("        {t} a{i} = {{0}};\n"));
            args.push(format!("a{i}"));
        }
        let call = format!("{}({})", p.name, args.join(", "));
        match p.ret.as_str() {
            "aclError" => block.push_str(&format!(
                "        aclError r = {call};\n        printf(\"%s %d\\n\", \"{}\", (int)r);\n        \
                 if (r == 500000) panics++;\n",
                p.name
            )),
            "void" => {
                block.push_str(&format!("        {call};\n        printf(\"%s -\\n\", \"{}\");\n", p.name))
            }
            _ => block.push_str(&format!(
                "        __auto_type r = {call};\n        (void)r;\n        printf(\"%s -\\n\", \"{}\");\n",
                p.name
            )),
        }
        block.push_str("        fflush(stdout);\n        calls++;\n    }\n");
        src.push_str(&block);
        called.push(p.name.clone());
    }
    src.push_str("    printf(\"calls %d panics %d\\n\", calls, panics);\n    return panics != 0;\n}\n");
    let dir = scratch("every-function");
    // The library under the soname the executable asks for.
    let so = dir.join("libascendless.so.0");
    let _ = std::fs::remove_file(&so);
    std::os::unix::fs::symlink(shared_library(), &so).unwrap();
    let file = dir.join("every_function.c");
    std::fs::write(&file, src).unwrap();
    let exe = dir.join("every_function");
    run(Command::new("cc")
        .args(["-std=gnu11", "-Wall", "-Wno-missing-braces", "-Werror", "-I"])
        .arg(root().join("include"))
        .arg(&file)
        .arg("-o")
        .arg(&exe)
        .arg(shared_library())
        .arg(format!("-Wl,-rpath,{}", dir.display())));
    let out = Command::new("timeout")
        .arg("120")
        .arg(&exe)
        .env("ASCEND_GLOBAL_LOG_LEVEL", "4")
        .env("ASCENDLESS_DEVICE_MEMORY", "1073741824")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("");
    assert!(
        out.status.success(),
        "the program ended with {:?} after the line {last:?}:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    for name in &called {
        assert!(stdout.lines().any(|l| l.split(' ').next() == Some(name.as_str())), "{name} was not called");
    }
    assert_eq!(last, format!("calls {} panics 0", called.len()));
    // A function whose row says not supported answers 207000 whatever its arguments.
    let unsupported: BTreeSet<String> = compatibility_rows()
        .into_iter()
        .filter(|r| r.state == "not supported")
        .flat_map(|r| r.names)
        .collect();
    let wrong: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            let mut words = l.split(' ');
            let (name, code) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
            unsupported.contains(name) && code != "-" && code != "207000"
        })
        .collect();
    assert!(wrong.is_empty(), "rows say not supported, but these answered otherwise: {wrong:?}");
    if skipped > 0 {
        eprintln!("{skipped} vendor functions are not exported yet and were not called");
    }
    assert!(skipped == 0, "{skipped} vendor functions are not exported");
}
