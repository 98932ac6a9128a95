//! The library's modules must not import each other in a circle. Each file under `src/` (but
//! `src/bin/`) is one node; an edge is a `use` of another file's module, or a path to it
//! (`crate::...`, `super::...`, or a child module's name) in the code. A path ends at the
//! deepest file it names, so `crate::engine::Core` is an edge to `src/engine/mod.rs`: a child
//! that reaches its parent's facade while the facade imports it is a cycle. Comments and the
//! inline `#[cfg(test)] mod tests { .. }` at the end of a file are not looked at (test code
//! may reach anything). There is no list of tolerated cycles: the graph has none, and a new
//! one is broken by moving what both sides need into a leaf below them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path.ends_with("src/bin") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/engine/conn/link.rs` is `engine::conn::link`; `mod.rs` and `lib.rs` name their folder.
fn module_of(rel: &Path) -> Module {
    let mut parts: Module = rel.iter().skip(1).map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (stem == "lib" && parts.is_empty())) {
        parts.push(stem.to_owned());
    }
    parts
}

/// The code without comments, and without an inline test module.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let rest = &text[i..];
        if in_string {
            if rest.starts_with("\\\\") || rest.starts_with("\\\"") {
                i += 2;
                continue;
            }
            if bytes[i] == b'"' {
                in_string = false;
            }
            out.push(' ');
            i += rest.chars().next().unwrap().len_utf8();
            continue;
        }
        if rest.starts_with("'\"'") || rest.starts_with("'\\\"'") {
            // A quote as a character literal.
            i += rest.find("\"'").unwrap() + 2;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let end = if rest.starts_with("r#") { "\"#" } else { "\"" };
            let body = rest.find('"').unwrap() + 1;
            i += body + rest[body..].find(end).map_or(rest.len() - body, |e| e + end.len());
        } else if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if bytes[i] == b'"' {
            in_string = true;
            out.push(' ');
            i += 1;
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    // `#[cfg(test)] mod NAME {`: the rest of the file is test code.
    let mut from = 0;
    while let Some(at) = out[from..].find("#[cfg(test)]") {
        let start = from + at;
        let after = out[start + "#[cfg(test)]".len()..].trim_start();
        if let Some(m) = after.strip_prefix("mod ") {
            let m = m.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_').trim_start();
            if m.starts_with('{') {
                out.truncate(start);
                break;
            }
        }
        from = start + 1;
    }
    out
}

/// The paths of a use tree: `a::{b, c::{d, e as f}, self}` is `a::b`, `a::c::d`, `a::c::e`, `a`.
fn expand(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap()];
        let prefix = join(prefix, head);
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..i], &prefix, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], &prefix, out);
    } else if !tree.is_empty() {
        let path = tree.split(" as ").next().unwrap().trim();
        let path = path.trim_end_matches("::*").trim_end_matches("::self");
        if path != "self" && path != "*" {
            out.push(join(prefix, path));
        } else {
            out.push(prefix.to_owned());
        }
    }
}

fn join(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_owned(),
        (_, true) => prefix.to_owned(),
        _ => format!("{prefix}::{path}"),
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every module path the code names: use trees (taken out of the text) and inline paths.
fn paths_of(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = String::with_capacity(code.len());
    let mut i = 0;
    while i < code.len() {
        let at_word = i == 0 || !code[..i].ends_with(is_ident);
        if at_word && code[i..].starts_with("use ") {
            let end = i + code[i..].find(';').unwrap();
            expand(&code[i + 4..end], "", &mut paths);
            i = end + 1;
            continue;
        }
        let c = code[i..].chars().next().unwrap();
        rest.push(c);
        i += c.len_utf8();
    }
    let mut i = 0;
    while i < rest.len() {
        let at_word = i == 0 || !rest[..i].ends_with(|c: char| is_ident(c) || c == ':');
        let len = rest[i..].find(|c: char| !(is_ident(c) || c == ':')).unwrap_or(rest.len() - i);
        if at_word && len > 0 {
            let path = rest[i..i + len].trim_end_matches(':');
            if path.contains("::") {
                paths.push(path.to_owned());
            }
            i += len;
        } else {
            i += rest[i..].chars().next().unwrap().len_utf8();
        }
    }
    paths
}

/// The file a path leads to from `module`: the deepest known module it names, or `None` (another
/// crate, or an item of `module` itself).
fn resolve(path: &str, module: &Module, known: &BTreeMap<Module, String>) -> Option<Module> {
    let segments: Vec<&str> = path.split("::").collect();
    let mut base: Module = match segments[0] {
        "crate" => Vec::new(),
        "super" | "self" => module.clone(),
        first => {
            let mut child = module.clone();
            child.push(first.to_owned());
            if !known.contains_key(&child) {
                return None;
            }
            module.clone()
        }
    };
    let mut rest = &segments[..];
    if segments[0] == "crate" || segments[0] == "self" {
        rest = &segments[1..];
    }
    while let Some((&"super", tail)) = rest.split_first() {
        base.pop()?;
        rest = tail;
    }
    let mut deepest = known.contains_key(&base).then(|| base.clone());
    for s in rest {
        base.push((*s).to_owned());
        if known.contains_key(&base) {
            deepest = Some(base.clone());
        } else {
            break;
        }
    }
    deepest.filter(|m| m != module)
}

/// Strongly connected components with more than one file (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let l = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, l);
                } else if self.on_stack.contains(w.as_str()) {
                    let l = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack.remove(w);
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

/// One circle through `component`, for the message: `a -> b -> c -> a`.
fn one_circle(graph: &BTreeMap<String, BTreeSet<String>>, component: &[String]) -> String {
    let start = &component[0];
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.as_str()]);
    while let Some(v) = queue.pop_front() {
        for w in graph.get(v).into_iter().flatten() {
            if !component.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![start.as_str(), v];
                let mut at = v;
                while at != start {
                    at = came_from[at];
                    path.push(at);
                }
                path.reverse();
                return path.join(" -> ");
            }
            if !came_from.contains_key(w.as_str()) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    component.join(", ")
}

/// The import graph of `src/`, file to file.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let known: BTreeMap<Module, String> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(root).unwrap();
            (module_of(rel), rel.to_string_lossy().into_owned())
        })
        .collect();
    let mut graph = BTreeMap::new();
    for (module, file) in &known {
        let code = code_of(&std::fs::read_to_string(root.join(file)).unwrap());
        let edges: BTreeSet<String> = paths_of(&code)
            .iter()
            .filter_map(|p| resolve(p, module, &known))
            .map(|m| known[&m].clone())
            .collect();
        graph.insert(file.clone(), edges);
    }
    graph
}

#[test]
fn the_parser_reads_use_trees_and_paths() {
    let mut out = Vec::new();
    expand("crate::engine::{access::{Access, Secret}, conn::link as l, self}", "", &mut out);
    assert_eq!(
        out,
        [
            "crate::engine::access::Access",
            "crate::engine::access::Secret",
            "crate::engine::conn::link",
            "crate::engine"
        ]
    );
    let code = code_of(
        "use a::b; // crate::x::y\nfn f() { crate::c::d(\"crate::s::t\"); }\n#[cfg(test)]\nmod tests { use crate::z; }",
    );
    assert_eq!(paths_of(&code), ["a::b", "crate::c::d"]);
    let known: BTreeMap<Module, String> = [vec![], vec!["e".into()], vec!["e".into(), "c".into()]]
        .into_iter()
        .map(|m| (m, String::new()))
        .collect();
    let c: Module = vec!["e".into(), "c".into()];
    assert_eq!(resolve("super::X", &c, &known), Some(vec!["e".to_string()]));
    assert_eq!(resolve("crate::e::c::Y", &vec![], &known), Some(c.clone()));
    assert_eq!(resolve("c::Y", &vec!["e".to_string()], &known), Some(c.clone()));
    assert_eq!(resolve("std::io::Read", &c, &known), None);
}

#[test]
fn no_module_imports_itself_through_others() {
    let graph = graph();
    let found: Vec<String> = cycles(&graph).iter().map(|c| one_circle(&graph, c)).collect();
    assert!(
        found.is_empty(),
        "import cycles between files of src/ (break each, e.g. by moving what both need into a leaf):\n{}",
        found.join("\n")
    );
}

/// The process settings are read at the edge and passed to the core: no core file (outside
/// `ffi/`, `cxx/` and `config.rs` itself) calls `config::settings()`, so the core runs with
/// whatever settings a caller or a test hands it.
#[test]
fn only_the_edge_reads_the_process_settings() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let readers: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(root).unwrap().to_string_lossy().into_owned())
        .filter(|rel| !rel.starts_with("src/ffi/") && !rel.starts_with("src/cxx/") && rel != "src/config.rs")
        .filter(|rel| {
            let code = code_of(&std::fs::read_to_string(root.join(rel)).unwrap());
            code.contains("settings()") && (code.contains("config::settings") || code.contains("config::{"))
        })
        .collect();
    assert!(
        readers.is_empty(),
        "core files read config::settings(); take the settings as an argument:\n{readers:?}"
    );
}
