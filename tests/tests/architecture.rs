//! The architecture's import rules, checked on the source: no two files of a crate import each
//! other in a loop (through any number of files), and no CLI command imports another command.
//! Imports are read as text: `use` declarations (braces expanded) and inline `crate::`/`super::`
//! paths, each resolved to the deepest module file it names; test modules and comments are
//! left out.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates whose `src/` is checked.
const CRATES: [&str; 7] = [
    "redfish-client",
    "bios-profiles",
    "idrac-sim",
    "host-bench",
    "engine",
    "experiment",
    "cli",
];

/// A module's path inside its crate (`["host", "accounts"]`); the crate root is empty.
type Module = Vec<String>;

/// The modules of `src` and the file each lives in.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src).unwrap().with_extension("");
                let mut parts: Module = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
                if parts
                    .last()
                    .is_some_and(|l| ["mod", "lib", "main"].contains(&l.as_str()))
                {
                    parts.pop();
                }
                out.insert(parts, path);
            }
        }
    }
    out
}

/// The text of `file` without line comments and without a trailing `#[cfg(test)] mod tests`.
fn code(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e` (an `as` rename dropped).
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap_or_default().trim().to_owned()];
    };
    let (prefix, rest) = tree.split_at(open);
    let inner = rest[1..].strip_suffix('}').unwrap_or(&rest[1..]);
    let (mut items, mut depth, mut cur) = (Vec::new(), 0, String::new());
    for ch in inner.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    items.push(cur);
    items
        .iter()
        .filter(|i| !i.trim().is_empty())
        .flat_map(|i| expand(i).into_iter().map(|e| format!("{prefix}{e}")))
        .collect()
}

/// Every `crate::`, `super::` or `self::` path `code` names.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    // `use` declarations, up to their `;`.
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + 4..];
        if before.is_some_and(ident) {
            continue;
        }
        let Some(end) = rest.find(';') else { break };
        for p in expand(&rest[..end]) {
            out.push(
                p.split("::")
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect(),
            );
        }
        rest = &rest[end..];
    }
    // Paths written inline (`crate::marker::read(...)`).
    for start in ["crate::", "super::"] {
        let mut at = 0;
        while let Some(i) = code[at..].find(start) {
            let i = at + i;
            at = i + start.len();
            if code[..i].chars().next_back().is_some_and(ident) {
                continue;
            }
            let tail: String = code[i..].chars().take_while(|&c| ident(c) || c == ':').collect();
            out.push(tail.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect());
        }
    }
    out
}

/// The module a path from `from` names: the deepest module it reaches.
fn resolve(from: &Module, path: &[String], known: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let (mut base, mut rest) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("super" | "self") => (from.clone(), path),
        _ => return None,
    };
    while let Some(first) = rest.first() {
        match first.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    let full: Module = base.into_iter().chain(rest.iter().cloned()).collect();
    (0..=full.len())
        .rev()
        .map(|n| full[..n].to_vec())
        .find(|m| known.contains_key(m))
}

/// Each module's imports of other modules of its crate (the crate root left out: it only
/// declares and re-exports).
fn graph(src: &Path) -> (BTreeMap<Module, PathBuf>, BTreeMap<Module, BTreeSet<Module>>) {
    let known = modules(src);
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, file) in &known {
        let targets = edges.entry(module.clone()).or_default();
        for path in paths(&code(file)) {
            if let Some(to) = resolve(module, &path, &known)
                && !to.is_empty()
                && &to != module
            {
                targets.insert(to);
            }
        }
    }
    (known, edges)
}

/// The groups of modules that import each other in a loop (Tarjan's strongly connected
/// components of more than one module).
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        found: Vec<Vec<Module>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Module) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut group = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    group.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    self.found.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn no_two_files_of_a_crate_import_each_other_in_a_loop() {
    let mut report = Vec::new();
    for krate in CRATES {
        let (known, edges) = graph(&root().join(krate).join("src"));
        for group in circles(&edges) {
            let members: BTreeSet<&Module> = group.iter().collect();
            let file = |m: &Module| known[m].strip_prefix(root()).unwrap().display().to_string();
            let mut lines = vec![format!("{krate}: {} files import each other in a loop:", group.len())];
            for m in &group {
                for to in edges[m].iter().filter(|t| members.contains(t)) {
                    lines.push(format!("  {} -> {}", file(m), file(to)));
                }
            }
            report.push(lines.join("\n"));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn no_cli_command_imports_another_command() {
    let (known, edges) = graph(&root().join("cli/src"));
    let command = |m: &Module| m.len() == 2 && m[0] == "commands";
    let crossing: Vec<String> = edges
        .iter()
        .filter(|(from, _)| command(from))
        .flat_map(|(from, to)| to.iter().filter(|t| command(t)).map(move |t| (from, t)))
        .map(|(from, to)| format!("{} -> {}", known[from].display(), known[to].display()))
        .collect();
    assert!(crossing.is_empty(), "{crossing:#?}");
}

#[test]
fn the_reader_finds_a_loop_written_as_rust_writes_imports() {
    // Two modules that import each other through a braced `use` and an inline path, and a
    // third that only looks like an import (in a comment and inside a test module).
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("host")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod host;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::{host::{jobs::Job, other}, x};\n").unwrap();
    std::fs::write(src.join("host/mod.rs"), "mod jobs;\n// use crate::a;\n").unwrap();
    std::fs::write(
        src.join("host/jobs.rs"),
        "pub struct Job;\nfn f() { super::super::a::g(); }\n#[cfg(test)]\nmod tests { use crate::host; }\n",
    )
    .unwrap();
    let (_, edges) = graph(src);
    let a: Module = vec!["a".into()];
    let jobs: Module = vec!["host".into(), "jobs".into()];
    assert!(edges[&a].contains(&jobs), "{edges:?}");
    assert!(edges[&jobs].contains(&a), "{edges:?}");
    assert!(!edges[&vec!["host".to_owned()]].contains(&a), "a comment is no import");
    let found = circles(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].len(), 2);
}
