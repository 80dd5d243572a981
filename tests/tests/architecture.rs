//! The architecture's import rules, checked on the source: no two files of a crate import each
//! other in a loop (through any number of files), a child never imports a sibling through its
//! parent's re-export, and no CLI command imports another command.
//!
//! The rule for parents and children: a parent's `mod` declarations and its re-exports of its
//! own children (`pub use child::X`) are not imports; any other use of a child's item by the
//! parent is. A child may use its parent's own items (defined in the parent's file); a name the
//! parent only re-exports from a sibling is the sibling's, and the child imports the sibling
//! directly. The crate root is the exception: it is the crate's front door, so `crate::Error`
//! counts as an import of the module that defines `Error`.
//!
//! Imports are read as text: `use` declarations (braces expanded), inline `crate::`/`super::`
//! paths and paths through a child's bare name, each resolved to the module file that defines
//! what it names; test modules and comments are left out.
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

/// The text of `file` without line comments and without a trailing `#[cfg(test)] mod tests`
/// (other attributes may stand between the two).
fn code(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let mut end = text.len();
    let mut from = 0;
    while let Some(i) = text[from..].find("#[cfg(test)]") {
        let at = from + i;
        let after = text[at + "#[cfg(test)]".len()..]
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("#["));
        if after.is_some_and(|l| l.starts_with("mod tests")) {
            end = at;
            break;
        }
        from = at + 1;
    }
    text[..end]
        .lines()
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

/// How a path is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    /// A `use` declaration (or a path in code).
    Use,
    /// A `pub use` (of any visibility): a re-export.
    ReExport,
}

/// The `mod` declarations of `code`: its children's names.
fn children(code: &str) -> BTreeSet<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("mod ") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + 4..];
        if before.is_some_and(ident) {
            continue;
        }
        let name: String = rest.chars().take_while(|&c| ident(c)).collect();
        if rest[name.len()..].trim_start().starts_with(';') {
            out.insert(name);
        }
    }
    out
}

/// Every path `code` names that starts at `crate`, `super`, `self` or one of `kids` (the
/// module's children), with how it is written.
fn paths(code: &str, kids: &BTreeSet<String>) -> Vec<(Vec<String>, Written)> {
    let mut out = Vec::new();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let ours = |p: &[String]| {
        p.first()
            .is_some_and(|f| ["crate", "super", "self"].contains(&f.as_str()) || kids.contains(f))
    };
    // `use` declarations, up to their `;`.
    let mut rest = code;
    let mut consumed = 0;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().next_back();
        let line_start = code[..consumed + i].rfind('\n').map_or(0, |n| n + 1);
        let written = if code[line_start..consumed + i].trim_start().starts_with("pub") {
            Written::ReExport
        } else {
            Written::Use
        };
        consumed += i + 4;
        rest = &rest[i + 4..];
        if before.is_some_and(ident) {
            continue;
        }
        let Some(end) = rest.find(';') else { break };
        for p in expand(&rest[..end]) {
            let p: Vec<String> = p
                .split("::")
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect();
            if ours(&p) {
                out.push((p, written));
            }
        }
        consumed += end;
        rest = &rest[end..];
    }
    // Paths written inline (`crate::marker::read(...)`, `steps::Judged`).
    let starts: Vec<String> = ["crate", "super"]
        .into_iter()
        .map(str::to_owned)
        .chain(kids.iter().cloned())
        .map(|s| format!("{s}::"))
        .collect();
    for start in &starts {
        let mut at = 0;
        while let Some(i) = code[at..].find(start.as_str()) {
            let i = at + i;
            at = i + start.len();
            if code[..i].chars().next_back().is_some_and(|c| ident(c) || c == ':') {
                continue;
            }
            // A `use` declaration's own path was read above.
            let line_start = code[..i].rfind('\n').map_or(0, |n| n + 1);
            let line = code[line_start..i].trim_start();
            if line.starts_with("use ") || line.starts_with("pub use ") || line.starts_with("pub(") {
                continue;
            }
            let tail: String = code[i..].chars().take_while(|&c| ident(c) || c == ':').collect();
            out.push((
                tail.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect(),
                Written::Use,
            ));
        }
    }
    out
}

/// The module `path`, written in `from`, names before any re-export is followed: the deepest
/// module it reaches, and the item named after it (if any).
fn module_of(from: &Module, path: &[String], known: &BTreeMap<Module, PathBuf>) -> Option<(Module, Option<String>)> {
    let (mut base, mut rest) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some(_) => (from.clone(), path),
        None => return None,
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
    (0..=full.len()).rev().find_map(|n| {
        let m = full[..n].to_vec();
        known.contains_key(&m).then(|| (m, full.get(n).cloned()))
    })
}

/// What each module re-exports from its own descendants: name → the module that defines it.
fn reexports(known: &BTreeMap<Module, PathBuf>) -> BTreeMap<Module, BTreeMap<String, Module>> {
    let mut out: BTreeMap<Module, BTreeMap<String, Module>> = BTreeMap::new();
    for (module, file) in known {
        let text = code(file);
        for (path, written) in paths(&text, &children(&text)) {
            if written != Written::ReExport {
                continue;
            }
            if let Some((to, Some(item))) = module_of(module, &path, known)
                && to.len() > module.len()
                && to.starts_with(module)
            {
                out.entry(module.clone()).or_default().insert(item, to);
            }
        }
    }
    out
}

/// An import that names a sibling's item through the parent that re-exports it.
#[derive(Debug)]
struct Through {
    from: Module,
    parent: Module,
    item: String,
    defined_in: Module,
}

/// The module file that defines what `path` names from `from`, following the crate root's and
/// any parent's re-exports; and, where the path went through a parent's re-export of a
/// sibling, that fact.
fn resolve(
    from: &Module,
    path: &[String],
    known: &BTreeMap<Module, PathBuf>,
    re: &BTreeMap<Module, BTreeMap<String, Module>>,
) -> Option<(Module, Option<Through>)> {
    let (module, item) = module_of(from, path, known)?;
    let Some(item) = item else {
        return Some((module, None));
    };
    match re.get(&module).and_then(|names| names.get(&item)) {
        Some(defined_in) => {
            let through = (!module.is_empty() && from.starts_with(&module) && from != &module).then(|| Through {
                from: from.clone(),
                parent: module.clone(),
                item: item.clone(),
                defined_in: defined_in.clone(),
            });
            Some((defined_in.clone(), through))
        }
        None => Some((module, None)),
    }
}

/// A crate's modules (and their files), each module's imports of others, and the imports that
/// go through a parent's re-export of a sibling.
type Graph = (
    BTreeMap<Module, PathBuf>,
    BTreeMap<Module, BTreeSet<Module>>,
    Vec<Through>,
);

/// Each module's imports of other modules of its crate, by the rule in the module docs, and
/// the imports that go through a parent's re-export of a sibling.
fn graph(src: &Path) -> Graph {
    let known = modules(src);
    let re = reexports(&known);
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    let mut through = Vec::new();
    for (module, file) in &known {
        let text = code(file);
        let kids = children(&text);
        let targets = edges.entry(module.clone()).or_default();
        for (path, written) in paths(&text, &kids) {
            let Some((to, via)) = resolve(module, &path, &known, &re) else {
                continue;
            };
            // A parent's declaration and re-export of its own descendants is no import.
            if written == Written::ReExport && to.len() > module.len() && to.starts_with(module) {
                continue;
            }
            if to.is_empty() || &to == module {
                continue;
            }
            targets.insert(to);
            through.extend(via);
        }
    }
    (known, edges, through)
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
        let (known, edges, _) = graph(&root().join(krate).join("src"));
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
fn no_child_imports_a_sibling_through_its_parent() {
    let mut report = Vec::new();
    for krate in CRATES {
        let src = root().join(krate).join("src");
        let (known, _, through) = graph(&src);
        for t in through {
            let file = |m: &Module| known[m].strip_prefix(root()).unwrap().display().to_string();
            report.push(format!(
                "{} imports {} through {}: import it from {}",
                file(&t.from),
                t.item,
                file(&t.parent),
                file(&t.defined_in)
            ));
        }
    }
    report.sort();
    report.dedup();
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn no_cli_command_imports_another_command() {
    let (known, edges, _) = graph(&root().join("cli/src"));
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
    let (_, edges, _) = graph(src);
    let a: Module = vec!["a".into()];
    let jobs: Module = vec!["host".into(), "jobs".into()];
    assert!(edges[&a].contains(&jobs), "{edges:?}");
    assert!(edges[&jobs].contains(&a), "{edges:?}");
    assert!(!edges[&vec!["host".to_owned()]].contains(&a), "a comment is no import");
    let found = circles(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].len(), 2);
}

#[test]
fn a_parent_that_uses_its_childs_items_and_a_child_that_uses_the_parents_are_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("apply")).unwrap();
    std::fs::create_dir_all(src.join("sim")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod apply;\nmod sim;\npub use apply::Run;\n").unwrap();
    // A parent calling into its child by the child's bare name; the child using the parent's
    // own item: a loop, whatever the parent also re-exports.
    std::fs::write(
        src.join("apply/mod.rs"),
        "mod steps;\npub use steps::Next;\npub struct Run;\nfn go() { steps::first(); }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("apply/steps.rs"),
        "use super::Run;\npub struct Next;\npub fn first() {}\n",
    )
    .unwrap();
    // A parent that only declares and re-exports; children that use its own items, and one
    // that reaches a sibling's item through the parent's re-export.
    std::fs::write(
        src.join("sim/mod.rs"),
        "mod host;\nmod jobs;\npub use host::Host;\npub struct State;\n",
    )
    .unwrap();
    std::fs::write(src.join("sim/host.rs"), "use super::State;\npub struct Host;\n").unwrap();
    std::fs::write(src.join("sim/jobs.rs"), "use super::{Host, State};\n").unwrap();
    let (_, edges, through) = graph(src);
    let m = |s: &str| -> Module { s.split('/').map(str::to_owned).collect() };
    let found = circles(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    let mut looped = found[0].clone();
    looped.sort();
    assert_eq!(looped, [m("apply"), m("apply/steps")]);
    assert!(!edges[&m("sim")].contains(&m("sim/host")), "a re-export is no import");
    assert!(
        edges[&m("sim/jobs")].contains(&m("sim/host")),
        "resolved to the sibling"
    );
    assert_eq!(through.len(), 1, "{through:?}");
    assert_eq!(
        (through[0].from.clone(), through[0].item.as_str()),
        (m("sim/jobs"), "Host")
    );
    assert!(edges[&Vec::new()].is_empty(), "the root's re-exports are no imports");
}
