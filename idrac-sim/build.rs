//! Embeds the fixture trees, so the emulator (and `rftune demo`) works from a lone binary.

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn main() {
    // Read when the script runs, not baked in when it compiles: one compiled build script may
    // serve checkouts at other paths that share a target directory.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    let root = manifest_dir.join("../fixtures");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files: Vec<(String, String, PathBuf)> = Vec::new();
    let mut models: Vec<_> = std::fs::read_dir(&root)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("redfish").is_dir())
                .collect()
        })
        .unwrap_or_default();
    models.sort();
    for model_dir in models {
        let model = model_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut stack = vec![model_dir.clone()];
        while let Some(dir) = stack.pop() {
            println!("cargo:rerun-if-changed={}", dir.display());
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = entry.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.file_name().is_some_and(|n| n == "index.json") {
                    let rel = p
                        .parent()
                        .and_then(|d| d.strip_prefix(&model_dir).ok())
                        .map(|r| r.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    files.push((model.clone(), format!("/{rel}"), p));
                }
            }
        }
    }
    files.sort();
    let mut out = String::from(
        "/// (model, resource path, JSON) for every embedded fixture file.\npub(crate) static EMBEDDED: &[(&str, &str, &str)] = &[\n",
    );
    for (model, path, file) in &files {
        let abs = file.canonicalize().unwrap_or_else(|_| file.clone());
        let _ = writeln!(
            out,
            "    ({model:?}, {path:?}, include_str!({:?})),",
            abs.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("fixtures.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        panic!("writing {}: {e}", dest.display());
    }
}
