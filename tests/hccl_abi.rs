//! HCCL's C ABI as a user's compiler and linker see it (include/hccl/, lib64/libhccl.so): the
//! installed headers declare the vendor's prototypes, their numbers and layouts are the Rust
//! code's, libhccl.so exports exactly the vendor's functions, and every function answers a call
//! with zero arguments with a code (never a crash or a caught panic), `HCCL_E_NOT_SUPPORT` where
//! docs/compatibility.md says not supported or not yet.
//!
//! Needs target/debug/libascendless.so (`cargo build --lib` first, as `make test-rust` does).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

#[path = "common/build_tree.rs"]
mod build_tree;

use ascendless::error::hccl_codes::*;
use ascendless::ffi::hccl::hccl_types::*;
use build_tree::{root, run, shared_library};

fn scratch(name: &str) -> PathBuf {
    build_tree::scratch("hccl-abi-tests", name)
}

fn lines_of(file: &str) -> Vec<String> {
    std::fs::read_to_string(root().join("tests/c").join(file))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

const LISTS: [&str; 3] =
    ["vendor_hccl_functions.txt", "vendor_hccl_comm_functions.txt", "vendor_hccl_mc2_functions.txt"];

fn vendor_functions() -> BTreeSet<String> {
    LISTS.iter().flat_map(|l| lines_of(l)).collect()
}

/// One vendor declaration: its return type, name and parameter types.
struct Proto {
    ret: String,
    name: String,
    params: Vec<String>,
}

fn vendor_prototypes() -> Vec<Proto> {
    lines_of("vendor_hccl_prototypes.txt")
        .iter()
        .map(|l| {
            let decl = l.trim_start_matches("extern ").trim_end_matches(';');
            let open = decl.find('(').unwrap();
            let head = &decl[..open];
            let at = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap() + 1;
            let params = decl[open + 1..decl.rfind(')').unwrap()].trim();
            let params = if params.is_empty() || params == "void" {
                Vec::new()
            } else {
                params
                    .split(',')
                    .map(|p| {
                        let p = p.trim();
                        let cut = p.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap() + 1;
                        p[..cut].trim().to_owned()
                    })
                    .collect()
            };
            Proto { ret: head[..at].trim().to_owned(), name: head[at..].to_owned(), params }
        })
        .collect()
}

#[test]
fn the_lists_of_names_and_of_declarations_agree() {
    let names: BTreeSet<String> = vendor_prototypes().into_iter().map(|p| p.name).collect();
    assert_eq!(names, vendor_functions());
    assert_eq!(names.len(), 57, "14 of hccl.h, 34 of hccl_comm.h, 9 of hccl_mc2.h");
}

/// The vendor's declarations, compiled after ours in C and in C++: a function declared with
/// other types would be a conflicting declaration.
#[test]
fn the_installed_headers_declare_the_vendors_prototypes() {
    let dir = scratch("prototypes");
    let mut tu = String::from("#include \"hccl/hccl.h\"\n#include \"hccl/hccl_mc2.h\"\n");
    for l in lines_of("vendor_hccl_prototypes.txt") {
        tu.push_str(&l);
        tu.push('\n');
    }
    let file = dir.join("vendor_prototypes.tu");
    std::fs::write(&file, tu).unwrap();
    let strict = ["-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I"];
    run(Command::new("cc").args(["-std=c11", "-x", "c"]).args(strict).arg(root().join("include")).arg(&file));
    run(Command::new("c++")
        .args(["-std=c++11", "-x", "c++"])
        .args(strict)
        .arg(root().join("include"))
        .arg(&file));
}

/// `libhccl.so` exports exactly the vendor's functions (scripts/vendor_libs.sh --list), and the
/// library every one of them.
#[test]
fn libhccl_exports_exactly_the_vendors_functions() {
    let listed = run(Command::new(root().join("scripts/vendor_libs.sh")).arg("--list").arg(shared_library()));
    let ours: BTreeSet<String> = listed
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(lib, _)| *lib == "libhccl.so")
        .map(|(_, sym)| sym.to_owned())
        .collect();
    assert_eq!(ours, vendor_functions(), "libhccl.so's exports differ from the vendor's list");
    let exported = run(Command::new("nm").args(["-D", "--defined-only"]).arg(shared_library()));
    let exported: BTreeSet<&str> = exported.lines().filter_map(|l| l.split_whitespace().nth(2)).collect();
    for name in vendor_functions() {
        assert!(exported.contains(name.as_str()), "{name} is not exported");
    }
}

/// The header's values and layouts, as a C and a C++ compiler see them, against the Rust code.
#[test]
fn values_and_layouts_agree_with_the_rust_code() {
    let values: Vec<(&str, i64)> = vec![
        ("HCCL_SUCCESS", HCCL_SUCCESS.into()),
        ("HCCL_E_PARA", HCCL_E_PARA.into()),
        ("HCCL_E_PTR", HCCL_E_PTR.into()),
        ("HCCL_E_MEMORY", HCCL_E_MEMORY.into()),
        ("HCCL_E_INTERNAL", HCCL_E_INTERNAL.into()),
        ("HCCL_E_NOT_SUPPORT", HCCL_E_NOT_SUPPORT.into()),
        ("HCCL_E_NOT_FOUND", HCCL_E_NOT_FOUND.into()),
        ("HCCL_E_UNAVAIL", HCCL_E_UNAVAIL.into()),
        ("HCCL_E_SYSCALL", HCCL_E_SYSCALL.into()),
        ("HCCL_E_TIMEOUT", HCCL_E_TIMEOUT.into()),
        ("HCCL_E_OPEN_FILE_FAILURE", HCCL_E_OPEN_FILE_FAILURE.into()),
        ("HCCL_E_TCP_CONNECT", HCCL_E_TCP_CONNECT.into()),
        ("HCCL_E_ROCE_CONNECT", HCCL_E_ROCE_CONNECT.into()),
        ("HCCL_E_TCP_TRANSFER", HCCL_E_TCP_TRANSFER.into()),
        ("HCCL_E_ROCE_TRANSFER", HCCL_E_ROCE_TRANSFER.into()),
        ("HCCL_E_RUNTIME", HCCL_E_RUNTIME.into()),
        ("HCCL_E_DRV", HCCL_E_DRV.into()),
        ("HCCL_E_PROFILING", HCCL_E_PROFILING.into()),
        ("HCCL_E_CCE", HCCL_E_CCE.into()),
        ("HCCL_E_NETWORK", HCCL_E_NETWORK.into()),
        ("HCCL_E_AGAIN", HCCL_E_AGAIN.into()),
        ("HCCL_E_REMOTE", HCCL_E_REMOTE.into()),
        ("HCCL_E_SUSPENDING", HCCL_E_SUSPENDING.into()),
        ("HCCL_E_OPRETRY_FAIL", HCCL_E_OPRETRY_FAIL.into()),
        ("HCCL_E_OOM", HCCL_E_OOM.into()),
        ("HCCL_E_IN_STATUS", HCCL_E_IN_STATUS.into()),
        ("HCCL_E_RESERVED", HCCL_E_RESERVED.into()),
        ("HCCL_ROOT_INFO_BYTES", HCCL_ROOT_INFO_BYTES as i64),
        ("COMM_NAME_MAX_LENGTH", COMM_NAME_MAX_LENGTH as i64),
        ("BUFFER_NAME_MAX_LENGTH", BUFFER_NAME_MAX_LENGTH as i64),
        ("UDI_MAX_LENGTH", UDI_MAX_LENGTH as i64),
        ("HCCL_COMM_ALGO_MAX_LENGTH", HCCL_COMM_ALGO_MAX_LENGTH as i64),
        ("HCCL_COMM_RETRY_ENABLE_MAX_LENGTH", HCCL_COMM_RETRY_ENABLE_MAX_LENGTH as i64),
        ("HCCL_COMM_RETRY_PARAMS_MAX_LENGTH", HCCL_COMM_RETRY_PARAMS_MAX_LENGTH as i64),
        ("HCCL_COMM_CONFIG_INFO_BYTES", HCCL_COMM_CONFIG_INFO_BYTES as i64),
        ("HCCL_COMM_CONFIG_MAGIC_WORD", HCCL_COMM_CONFIG_MAGIC_WORD.into()),
        ("HCCL_COMM_CONFIG_VERSION", HCCL_COMM_CONFIG_VERSION.into()),
        ("HCCL_COMM_DEFAULT_BUFFSIZE", HCCL_COMM_DEFAULT_BUFFSIZE.into()),
        ("HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET", HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET.into()),
        ("HCCL_COMM_DEFAULT_DETERMINISTIC", HCCL_COMM_DEFAULT_DETERMINISTIC.into()),
        ("HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET", HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET.into()),
        ("HCCL_COMM_DEFAULT_OP_EXPANSION_MODE", HCCL_COMM_DEFAULT_OP_EXPANSION_MODE.into()),
        ("HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET", HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET.into()),
        ("HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET", HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET.into()),
        ("HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET", HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET.into()),
        ("HCCL_COMM_QOS_CONFIG_NOT_SET", HCCL_COMM_QOS_CONFIG_NOT_SET.into()),
        ("HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE", HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE as i64),
        ("HCCL_SEND", HCCL_SEND.into()),
        ("HCCL_RECV", HCCL_RECV.into()),
        ("HCCL_DETERMINISTIC", HCCL_DETERMINISTIC.into()),
        ("HCCL_COMM_STATUS_READY", HCCL_COMM_STATUS_READY.into()),
        ("HCCL_COMM_CONFIG_OP_EXPANSION_MODE", HCCL_COMM_CONFIG_OP_EXPANSION_MODE.into()),
        ("HCCL_CONFIG_TYPE_OP_EXPANSION_MODE", HCCL_CONFIG_TYPE_OP_EXPANSION_MODE.into()),
        ("HCCL_OP_EXPANSION_MODE_HOST", HCCL_OP_EXPANSION_MODE_HOST.into()),
        // The enums of the operations' arguments, as hccl::types::{DataType,ReduceOp}::from_raw read them.
        ("HCCL_DATA_TYPE_INT8", 0),
        ("HCCL_DATA_TYPE_FP32", 4),
        ("HCCL_DATA_TYPE_BFP16", 11),
        ("HCCL_DATA_TYPE_INT128", 12),
        ("HCCL_DATA_TYPE_HIF8", 14),
        ("HCCL_DATA_TYPE_FP8E8M0", 17),
        ("HCCL_REDUCE_SUM", 0),
        ("HCCL_REDUCE_MIN", 3),
    ];
    macro_rules! layout {
        ($t:ident: $($f:ident),*) => {
            vec![(format!("sizeof({})", stringify!($t)), size_of::<$t>() as i64),
                 $((format!("offsetof({}, {})", stringify!($t), stringify!($f)),
                    std::mem::offset_of!($t, $f) as i64)),*]
        };
    }
    let mut layouts = layout!(HcclRootInfo: internal);
    layouts.extend(layout!(HcclCommConfig: reserved, hcclBufferSize, hcclDeterministic, hcclCommName,
        hcclUdi, hcclOpExpansionMode, hcclRdmaTrafficClass, hcclRdmaServiceLevel, hcclWorldRankID,
        hcclJobID, aclGraphZeroCopyEnable, hcclExecTimeOut, hcclAlgo, hcclRetryEnable,
        hcclRetryParams, hcclBufferName, hcclQos, hcclSymWinMaxMemSizePerRank));
    layouts.extend(layout!(HcclSendRecvItem: sendRecvType, buf, count, dataType, remoteRank));
    layouts.extend(layout!(HcclConfigValue: value));
    layouts.push(("sizeof(HcclResult)".into(), size_of::<HcclResult>() as i64));
    layouts.push(("sizeof(HcclDataType)".into(), size_of::<HcclDataType>() as i64));
    assert_eq!(size_of::<HcclRootInfo>(), 4108);

    let mut want: BTreeMap<String, i64> = values.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    want.extend(layouts.iter().cloned());
    let mut src = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"hccl/hccl.h\"\n#include \"hccl/hccl_mc2.h\"\nint main(void) {\n",
    );
    for name in want.keys() {
        src.push_str(&format!("    printf(\"%s %lld\\n\", \"{name}\", (long long)({name}));\n"));
    }
    src.push_str("    return 0;\n}\n");
    let dir = scratch("values");
    let file = dir.join("values.c");
    std::fs::write(&file, &src).unwrap();
    for (compiler, lang, std) in [("cc", "c", "-std=c99"), ("c++", "c++", "-std=c++11")] {
        let exe = dir.join(format!("values_{lang}"));
        run(Command::new(compiler)
            .args([std, "-x", lang, "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(root().join("include"))
            .arg(&file)
            .arg("-o")
            .arg(&exe));
        let got: BTreeMap<String, i64> = run(&mut Command::new(&exe))
            .lines()
            .filter_map(|l| l.rsplit_once(' '))
            .map(|(n, v)| (n.to_owned(), v.parse().unwrap()))
            .collect();
        let wrong: Vec<String> = want
            .iter()
            .filter(|(n, v)| got.get(*n) != Some(v))
            .map(|(n, v)| format!("{n}: Rust {v}, {lang} {:?}", got.get(n)))
            .collect();
        assert!(wrong.is_empty(), "the header differs from the Rust code:\n{}", wrong.join("\n"));
    }
}

/// The HCCL rows of docs/compatibility.md: name and state.
fn rows() -> BTreeMap<String, String> {
    let page = std::fs::read_to_string(root().join("docs/compatibility.md")).unwrap();
    let mut in_hccl = false;
    let mut out = BTreeMap::new();
    for line in page.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            in_hccl = title.starts_with("HCCL");
        } else if in_hccl && line.starts_with("| `") {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            out.insert(cells[1].trim_matches('`').to_owned(), cells[2].to_owned());
        }
    }
    out
}

#[test]
fn every_vendor_function_has_one_row_in_the_hccl_table() {
    let rows = rows();
    let names: BTreeSet<String> = rows.keys().cloned().collect();
    assert_eq!(names, vendor_functions(), "the HCCL table of docs/compatibility.md and the vendor's lists");
}

/// A C program calls every vendor function with zero arguments (NULL pointers, 0 values)
/// through the installed headers: each returns; none answers HCCL_E_INTERNAL (a caught panic,
/// or the core reached with arguments the C layer should have refused); the functions whose
/// rows say not supported or not yet answer HCCL_E_NOT_SUPPORT.
#[test]
fn every_function_answers_zero_arguments_with_a_code() {
    let mut src = String::from(
        "#include <stdio.h>\n#include \"hccl/hccl.h\"\n#include \"hccl/hccl_mc2.h\"\nint main(void) {\n",
    );
    for p in vendor_prototypes() {
        src.push_str("    {\n");
        let mut args = Vec::new();
        for (i, t) in p.params.iter().enumerate() {
            src.push_str(&format!("        {t} a{i};\n        memset(&a{i}, 0, sizeof a{i});\n"));
            args.push(format!("a{i}"));
        }
        let call = format!("{}({})", p.name, args.join(", "));
        match p.ret.as_str() {
            "HcclResult" => src.push_str(&format!("        printf(\"{} %d\\n\", (int){call});\n", p.name)),
            "const char *" => src.push_str(&format!(
                "        const char *s = {call};\n        printf(\"{} %s\\n\", s ? \"text\" : \"NULL\");\n",
                p.name
            )),
            _ => src.push_str(&format!("        (void){call};\n        printf(\"{} -\\n\");\n", p.name)),
        }
        src.push_str("        fflush(stdout);\n    }\n");
    }
    src.push_str("    return 0;\n}\n");
    let dir = scratch("zero-arguments");
    let so = dir.join("libascendless.so.0");
    let _ = std::fs::remove_file(&so);
    std::os::unix::fs::symlink(shared_library(), &so).unwrap();
    let file = dir.join("zero.c");
    std::fs::write(&file, src).unwrap();
    let exe = dir.join("zero");
    run(Command::new("cc")
        .args(["-std=gnu11", "-Wall", "-Werror", "-I"])
        .arg(root().join("include"))
        .arg(&file)
        .arg("-o")
        .arg(&exe)
        .arg(shared_library())
        .arg(format!("-Wl,-rpath,{}", dir.display())));
    let out = run(Command::new("timeout").arg("60").arg(&exe).env("ASCEND_GLOBAL_LOG_LEVEL", "4"));
    let answers: BTreeMap<&str, &str> = out.lines().filter_map(|l| l.split_once(' ')).collect();
    let rows = rows();
    let mut wrong = Vec::new();
    for name in vendor_functions() {
        let got = answers.get(name.as_str()).copied();
        let state = rows.get(&name).map(String::as_str).unwrap_or("");
        let ok = match (state, got) {
            (_, None) => false,
            ("not supported" | "not yet", Some(code)) => code == "5",
            (_, Some(code)) => code != "4" && code != "NULL",
        };
        if !ok {
            wrong.push(format!("{name} ({state}): {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "unexpected answers:\n{}", wrong.join("\n"));
    assert_eq!(answers.get("HcclGetErrorString"), Some(&"text"));
    assert_eq!(answers.get("HcclGetRootInfo"), Some(&"2"), "NULL rootInfo is HCCL_E_PTR");
}

/// The header's own form: the functions the vendor declares weak (`HCOMM_WEAK_SYMBOL`) are
/// weak here too, and the others are not.
#[test]
fn functions_the_vendor_declares_weak_are_weak() {
    const NOT_WEAK: [&str; 10] = [
        "HcclCommGetHandleWithName",
        "HcclCommRegCommStateCallback",
        "HcclCommGetStatus",
        "HcclGroupStart",
        "HcclGroupEnd",
        "HcclGroupStatusGet",
        "HcclCommSymWinRegister",
        "HcclCommSymWinDeregister",
        "HcclCommSymWinGet",
        "HcclConfigGetInfo",
    ];
    let text = std::fs::read_to_string(root().join("include/hccl/hccl_comm.h")).unwrap();
    for name in lines_of("vendor_hccl_comm_functions.txt") {
        let at = text
            .match_indices(&format!("{name}("))
            .map(|(i, _)| i)
            .find(|&i| text[..i].ends_with([' ', '*']))
            .unwrap_or_else(|| panic!("{name} is not declared"));
        let decl = &text[at..at + text[at..].find(';').unwrap()];
        assert_eq!(decl.contains("HCOMM_WEAK_SYMBOL"), !NOT_WEAK.contains(&name.as_str()), "{name}: {decl}");
    }
}
