//! `rftune capture`: record a BMC as a sanitized fixture tree (the engine walks and sanitises
//! it; this writes the tree and the summary).

use crate::Exit;
use crate::args::{CaptureArgs, OutputFormat};
use crate::render;
use anyhow::Result;
use rftune_engine::state::StateDirs;
use serde::Serialize;

/// The `rftune.capture/v1` summary.
#[derive(Debug, Serialize)]
struct Summary {
    schema: &'static str,
    host: String,
    out: String,
    manifest: String,
    resources: usize,
    not_served: Vec<String>,
    /// Documents the service marked as made up (an emulator's additions), not written.
    synthesised_left_out: Vec<String>,
    replaced: Vec<Replaced>,
}

#[derive(Debug, Serialize)]
struct Replaced {
    kind: &'static str,
    distinct_values: usize,
    fields: Vec<String>,
}

/// Runs `rftune capture`.
pub async fn run(args: &CaptureArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let entry = rftune_engine::fleet::BmcEntry::from_url(&args.bmc.bmc)?;
    // Refuse a non-empty directory before any request.
    if args.out.exists()
        && std::fs::read_dir(&args.out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        anyhow::bail!(
            "{} exists and is not empty; give a new directory, so no earlier capture is mixed in or overwritten",
            args.out.display()
        );
    }
    let access = crate::config::access_one(&args.bmc.connect, &entry, dirs)?;
    let progress = render::Progress::spinner(output);
    let walk = rftune_engine::capture::Walk {
        progress: |n| progress.message(format!("{}: {n} resources read", entry.name)),
    };
    let captured = access.one(&entry, None, &walk).await;
    progress.finish();
    let captured = captured?;
    let manifest = rftune_engine::capture::write(&args.out, &captured)?;
    let summary = Summary {
        schema: "rftune.capture/v1",
        host: entry.name.clone(),
        out: args.out.display().to_string(),
        manifest: manifest.display().to_string(),
        resources: captured.resources.len(),
        not_served: captured.missing.iter().map(|(p, _)| p.clone()).collect(),
        synthesised_left_out: captured.synthesised.clone(),
        replaced: captured
            .replaced
            .iter()
            .map(|r| Replaced {
                kind: r.kind.as_str(),
                distinct_values: r.distinct,
                fields: r.fields.clone(),
            })
            .collect(),
    };
    match output {
        OutputFormat::Json => render::json(&summary)?,
        OutputFormat::Table | OutputFormat::Junit | OutputFormat::Jsonl => {
            let mut text = format!(
                "{}: {} resources written to {} (see {})\n",
                summary.host, summary.resources, summary.out, summary.manifest
            );
            for r in &summary.replaced {
                text.push_str(&format!(
                    "  replaced {} {}(s) in {}\n",
                    r.distinct_values,
                    r.kind.replace('_', " "),
                    r.fields.join(", ")
                ));
            }
            if !summary.not_served.is_empty() {
                text.push_str(&format!("  linked but not served: {}\n", summary.not_served.join(", ")));
            }
            if !summary.synthesised_left_out.is_empty() {
                text.push_str(&format!(
                    "  left out, marked synthesised by the service: {}\n",
                    summary.synthesised_left_out.join(", ")
                ));
            }
            render::text(&text)?;
        }
    }
    Ok(Exit::Success)
}
