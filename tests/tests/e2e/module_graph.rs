//! Tidy check on the source tree: no module circles in any crate.
//!
//! Modules depend one way. For every crate under `crates/`, the module tree is read from the
//! files under `src/` (and the inline `mod name { ... }` blocks in them), and every path a file
//! names is resolved: `use crate::…`, `use super::…`, `use self::…` (braced groups expanded) and
//! paths written inline in the code (`crate::a::f()`, `super::b::T`). A path from module
//! `x::y::p` to `x::z::q` is an edge between the siblings `y → z` under `x`; a path to an
//! ancestor's own items (`super::T` where `T` is defined in the parent's file) is not counted, as
//! a child may always use its parent. At each node of the tree the edges between its children
//! must form no circle (a strongly connected component of two or more modules); test modules
//! count like any other, since a `#[cfg(test)]` module that reaches a higher module ties the two
//! as much as code does.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path inside one crate, from its root (`[]` is the crate root).
type ModPath = Vec<String>;

/// One token of Rust source, as far as paths need.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other,
}

/// Splits Rust source into the tokens paths are made of, dropping comments, string, byte and
/// char literals (raw strings included) and lifetimes.
fn tokens(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0usize;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                out.push(Tok::Other);
            }
            b'\'' => {
                // A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a, 'static).
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                    i += 1;
                } else if b.get(i + 2) == Some(&b'\'') {
                    i += 3;
                } else {
                    // A lifetime, or a multi-byte char: skip the quote and what follows it up to
                    // the next non-identifier byte, and a closing quote if there is one.
                    i += 1;
                    while i < b.len()
                        && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80)
                    {
                        i += 1;
                    }
                    if b.get(i) == Some(&b'\'') {
                        i += 1;
                    }
                }
                out.push(Tok::Other);
            }
            b'r' | b'b' if raw_string_start(b, i).is_some() => {
                let (hashes, body) = raw_string_start(b, i).unwrap_or((0, i));
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                i = body;
                while i < b.len() && !b[i..].starts_with(&close) {
                    i += 1;
                }
                i += close.len();
                out.push(Tok::Other);
            }
            b':' if b.get(i + 1) == Some(&b':') => {
                out.push(Tok::PathSep);
                i += 2;
            }
            b'{' => {
                out.push(Tok::Open);
                i += 1;
            }
            b'}' => {
                out.push(Tok::Close);
                i += 1;
            }
            b',' => {
                out.push(Tok::Comma);
                i += 1;
            }
            b';' => {
                out.push(Tok::Semi);
                i += 1;
            }
            b'*' => {
                out.push(Tok::Star);
                i += 1;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &text[start..i];
                // `b"…"`, `br"…"` and `b'x'` were handled above only for `r`/`b` starts that
                // open a raw string; a byte string or byte char follows its prefix here.
                if word == "b" && matches!(b.get(i), Some(b'"') | Some(b'\'')) {
                    continue;
                }
                out.push(Tok::Ident(
                    word.strip_prefix("r#").unwrap_or(word).to_owned(),
                ));
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                out.push(Tok::Other);
                i += 1;
            }
        }
    }
    out
}

/// Where a raw string (`r"`, `r#"`, `br##"`) starting at `i` has its body, with its `#` count.
fn raw_string_start(b: &[u8], i: usize) -> Option<(usize, usize)> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if b[j] == b'b' {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while b.get(j) == Some(&b'#') {
        hashes += 1;
        j += 1;
    }
    (b.get(j) == Some(&b'"')).then_some((hashes, j + 1))
}

/// Expands a use tree starting at `toks[*i]` into full paths (each prefixed by `prefix`).
fn use_tree(toks: &[Tok], i: &mut usize, prefix: &ModPath, out: &mut Vec<ModPath>) {
    let mut path = prefix.clone();
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(w)) if w == "as" => {
                *i += 2; // `as name`
                out.push(path);
                return;
            }
            Some(Tok::Ident(w)) => {
                path.push(w.clone());
                *i += 1;
            }
            Some(Tok::PathSep) => *i += 1,
            Some(Tok::Star) => {
                *i += 1;
                out.push(path);
                return;
            }
            Some(Tok::Open) => {
                *i += 1;
                loop {
                    match toks.get(*i) {
                        Some(Tok::Close) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Comma) => *i += 1,
                        None => return,
                        _ => use_tree(toks, i, &path, out),
                    }
                }
            }
            _ => {
                out.push(path);
                return;
            }
        }
    }
}

/// The paths one file names, each resolved to a module path from the crate root, attributed to
/// the module (file module plus inline modules) it is written in; also the inline modules the
/// file declares.
fn file_refs(file_mod: &ModPath, text: &str) -> (Vec<(ModPath, ModPath)>, Vec<ModPath>) {
    let toks = tokens(text);
    let mut refs = Vec::new();
    let mut inline = Vec::new();
    // Inline module stack: (name, brace depth inside it).
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let here = |stack: &[(String, usize)]| -> ModPath {
        let mut m = file_mod.clone();
        m.extend(stack.iter().map(|(n, _)| n.clone()));
        m
    };
    let resolve = |from: &ModPath, raw: &ModPath| -> Option<ModPath> {
        let first = raw.first()?;
        if first == "crate" {
            return Some(raw[1..].to_vec());
        }
        if first != "super" && first != "self" {
            return None;
        }
        let mut cur = from.clone();
        let mut k = 0;
        while let Some(seg) = raw.get(k) {
            match seg.as_str() {
                "super" => {
                    cur.pop();
                }
                "self" => {}
                _ => break,
            }
            k += 1;
        }
        cur.extend(raw[k..].iter().cloned());
        Some(cur)
    };
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Open => {
                depth += 1;
                i += 1;
            }
            Tok::Close => {
                if stack.last().is_some_and(|(_, d)| *d == depth) {
                    stack.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some(Tok::Ident(name)), Some(Tok::Open)) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    depth += 1;
                    stack.push((name.clone(), depth));
                    inline.push(here(&stack));
                    i += 3;
                } else {
                    i += 1;
                }
            }
            Tok::Ident(w) if w == "use" => {
                i += 1;
                let mut paths = Vec::new();
                use_tree(&toks, &mut i, &Vec::new(), &mut paths);
                let from = here(&stack);
                for p in paths {
                    if let Some(to) = resolve(&from, &p) {
                        refs.push((from.clone(), to));
                    }
                }
            }
            Tok::Ident(w)
                if (w == "crate" || w == "super" || w == "self")
                    && toks.get(i + 1) == Some(&Tok::PathSep)
                    && !(i > 0 && toks[i - 1] == Tok::Ident("in".into())) =>
            {
                let mut raw = vec![w.clone()];
                let mut j = i + 1;
                while toks.get(j) == Some(&Tok::PathSep) {
                    match toks.get(j + 1) {
                        Some(Tok::Ident(seg)) => {
                            raw.push(seg.clone());
                            j += 2;
                        }
                        _ => break,
                    }
                }
                let from = here(&stack);
                if let Some(to) = resolve(&from, &raw) {
                    refs.push((from, to));
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    (refs, inline)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under `src`.
fn file_module(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    parts
}

/// Every module circle in the crate whose sources are under `src`: the node of the tree it is
/// under (`crate` for the root) and the sibling modules in it.
fn circles(src: &Path) -> Vec<(String, Vec<String>)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut modules: BTreeSet<ModPath> = BTreeSet::new();
    let mut all_refs = Vec::new();
    for f in &files {
        let m = file_module(src, f);
        let text = std::fs::read_to_string(f).expect("source file");
        let (refs, inline) = file_refs(&m, &text);
        modules.insert(m);
        modules.extend(inline);
        all_refs.extend(refs);
    }
    // Edges between siblings, per parent node.
    let mut edges: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (from, to) in all_refs {
        let l = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if l < from.len() && l < to.len() && modules.contains(&to[..=l]) {
            edges
                .entry(from[..l].to_vec())
                .or_default()
                .entry(from[l].clone())
                .or_default()
                .insert(to[l].clone());
        }
    }
    let mut found = Vec::new();
    for (node, graph) in edges {
        for scc in strongly_connected(&graph) {
            if scc.len() > 1 {
                let name = if node.is_empty() {
                    "crate".to_owned()
                } else {
                    node.join("::")
                };
                found.push((name, scc));
            }
        }
    }
    found
}

/// Tarjan's strongly connected components, each sorted.
fn strongly_connected(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(ws) = s.graph.get(v) {
            for w in ws {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if s.on_stack.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                scc.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            scc.sort();
            s.out.push(scc);
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_crate_has_a_module_circle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&crates)
        .expect("crates/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 15,
        "expected the workspace's crates, found {dirs:?}"
    );
    let mut report = Vec::new();
    for dir in dirs {
        for (node, scc) in circles(&dir.join("src")) {
            report.push(format!(
                "{}: under {node}: {}",
                dir.file_name().unwrap_or_default().to_string_lossy(),
                scc.join(", ")
            ));
        }
    }
    assert!(
        report.is_empty(),
        "module circles (modules that reach each other through use crate::/super:: paths; \
         move what they share into a lower module):\n{}",
        report.join("\n")
    );
}

/// A scratch crate for the checker's own tests.
fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sb-modgraph-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("dir");
        std::fs::write(p, text).expect("write");
    }
    dir
}

#[test]
fn the_checker_sees_circles_through_uses_groups_inline_paths_and_super() {
    let dir = scratch(
        "circle",
        &[
            ("lib.rs", "mod a; mod b; mod c; mod d;\n"),
            // a → b through a braced group, b → c inline, c → a through `super`.
            ("a.rs", "use crate::{x::Y, b::{self, B}};\n"),
            ("b.rs", "fn f() { crate::c::g(); }\n"),
            ("c.rs", "pub(crate) fn g() { let _ = super::a::A; }\n"),
            // d only uses others: outside the circle.
            ("d.rs", "use crate::a::A; // use crate::d::X in a comment\n"),
            // Nested: the children of `n` form a circle of their own.
            ("n/mod.rs", "mod p; mod q;\n"),
            ("n/p.rs", "use super::q::Q;\n"),
            ("n/q.rs", "mod tests { use super::super::p::P; }\n"),
        ],
    );
    let mut found = circles(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    found.sort();
    assert_eq!(
        found,
        vec![
            ("crate".to_owned(), vec!["a".into(), "b".into(), "c".into()]),
            ("n".to_owned(), vec!["p".into(), "q".into()]),
        ]
    );
}

#[test]
fn the_checker_ignores_parents_strings_comments_and_one_way_uses() {
    let dir = scratch(
        "clean",
        &[
            ("lib.rs", "mod a; mod b; pub(crate) struct Root;\n"),
            // b uses a, a uses only its parent's item and names b in text only.
            (
                "a.rs",
                "use crate::Root; const S: &str = \"crate::b::B\"; /* crate::b::B */\nfn f<'a>(c: char) -> bool { c == 'b' }\n",
            ),
            (
                "b.rs",
                "use crate::a; use super::Root; mod tests { use super::*; }\n",
            ),
            ("c/mod.rs", "mod d; pub(in crate::c) fn e() {}\n"),
            ("c/d.rs", "use super::e; use crate::b;\n"),
        ],
    );
    let found = circles(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(found.is_empty(), "{found:?}");
}
