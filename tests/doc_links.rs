//! The documentation's links hold: every relative link in README.md, docs/*.md and
//! python/README.md names a file that exists (and, for `page.md#anchor`, a heading of that page),
//! and every `docs/<page>.md` named in the documentation or in a source comment exists. Pages
//! move (the README sends its reference material to docs/); this says which link to fix.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, docs/*.md and python/README.md.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md"), root().join("python/README.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push(p);
        }
    }
    pages.sort();
    pages
}

/// The text outside fenced code blocks, line by line (numbered from 1).
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// The targets of the inline links `[text](target)` of a line.
fn links(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let Some(end) = after.find(')') else { break };
        out.push(after[..end].split_whitespace().next().unwrap_or(""));
        rest = &after[end..];
    }
    out
}

/// GitHub's anchor of a heading: lower case, spaces to dashes, other punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(page: &Path) -> HashSet<String> {
    let text = std::fs::read_to_string(page).unwrap();
    prose(&text)
        .iter()
        .filter_map(|(_, l)| l.strip_prefix('#'))
        .map(|h| slug(h.trim_start_matches('#')))
        .collect()
}

fn shown(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

#[test]
fn relative_links_point_at_existing_files_and_headings() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (n, line) in prose(&text) {
            for target in links(line) {
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                let file = if path.is_empty() { page.clone() } else { page.parent().unwrap().join(path) };
                if !file.exists() {
                    broken.push(format!("{}:{n}: {target}: no file {}", shown(&page), shown(&file)));
                } else if !anchor.is_empty()
                    && file.extension().is_some_and(|x| x == "md")
                    && !anchors(&file).contains(anchor)
                {
                    broken.push(format!(
                        "{}:{n}: {target}: {} has no heading #{anchor}",
                        shown(&page),
                        shown(&file)
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 15, "only {checked} relative links found: is the parser still right?");
}

/// Every `docs/<name>.md` named in a file's text: (line number, the name).
fn named_docs(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("docs/") {
            let after = &rest[at + 5..];
            let len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .unwrap_or(after.len());
            if after[len..].starts_with(".md") {
                out.push((i + 1, format!("docs/{}.md", &after[..len])));
            }
            rest = &after[len..];
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_named_docs_page_exists() {
    let mut files = pages();
    for dir in ["src", "tests", "benches"] {
        rust_files(&root().join(dir), &mut files);
    }
    files.extend(["Makefile", "Cargo.toml", "build.rs"].map(|f| root().join(f)));
    let mut missing = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, name) in named_docs(&text) {
            if !root().join(&name).exists() {
                missing.push(format!("{}:{n}: {name}", shown(&f)));
            }
        }
    }
    assert!(missing.is_empty(), "named pages that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn the_helpers() {
    assert_eq!(links("see [a](docs/ipc.md) and [b](b.md#x \"title\")."), ["docs/ipc.md", "b.md#x"]);
    assert_eq!(slug("The ADXL engine"), "the-adxl-engine");
    assert_eq!(
        slug("Authentication (`adxl.Secret`, `ASCENDLESS_ADXL_SECRET`)"),
        "authentication-adxlsecret-ascendless_adxl_secret"
    );
    assert_eq!(
        named_docs("x `docs/ipc.md`, docs/engine-options.md; docs/"),
        [(1, "docs/ipc.md".into()), (1, "docs/engine-options.md".into())]
    );
}
