//! `rftune merge`: the outputs of sharded runs (`--shard K/N`, `-o json` or `-o jsonl`) of one
//! command and profile combined into one result, with the exit code of the whole fleet.
//!
//! Every input is checked before anything is printed: one kind of output (diff or apply), one
//! profile (and for apply, dry runs only with dry runs), each stream complete (its summary line
//! present and counting its host lines), no host twice, and with `--shard` outputs every shard
//! of the same N present once. The summary is recounted from the hosts, so the exit code
//! follows the same rules as the commands' own.

use crate::Exit;
use crate::args::{MergeArgs, OutputFormat};
use crate::documents::{ApplyStatus, ApplySummary, DiffStatus, DiffSummary, DocumentKind};
use crate::render::{self, Line, SummaryBody};
use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::io::Read;
use std::path::Path;

/// Largest input accepted: a 10,000-host diff with every attribute listed stays well below.
const MAX_INPUT_BYTES: u64 = 1 << 30;

/// One input, read and checked on its own.
#[derive(Debug)]
struct Input {
    file: String,
    kind: DocumentKind,
    profile: String,
    dry_run: Option<bool>,
    shard: Option<rftune_engine::fleet::Shard>,
    audit_log: Option<String>,
    hosts: Vec<Value>,
}

/// Where a merged result came from.
#[derive(Debug, Serialize)]
struct Source {
    file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<String>,
    hosts: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    audit_log: Option<String>,
}

/// A summary of either kind.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Counts {
    Diff(DiffSummary),
    Apply(ApplySummary),
}

/// The counts as the command that wrote them prints them.
impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Diff(s) => std::fmt::Display::fmt(s, f),
            Self::Apply(s) => std::fmt::Display::fmt(s, f),
        }
    }
}

/// The merged document: `rftune.diff/v1` or `rftune.apply/v1`, hosts by name, plus where they
/// came from.
#[derive(Debug, Serialize)]
struct Merged {
    #[serde(skip)]
    kind: DocumentKind,
    schema: &'static str,
    profile: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    dry_run: Option<bool>,
    hosts: Vec<Value>,
    summary: Counts,
    /// The audit log, when every input names the same one.
    #[serde(skip_serializing_if = "Option::is_none")]
    audit_log: Option<String>,
    merged_from: Vec<Source>,
}

/// Runs `rftune merge`.
pub fn run(args: &MergeArgs, output: OutputFormat) -> Result<Exit> {
    let texts = args
        .files
        .iter()
        .map(|f| Ok((f.display().to_string(), read_text(f)?)))
        .collect::<Result<Vec<_>>>()?;
    if texts.iter().any(|(_, t)| is_plan(t)) {
        return merge_plans(texts, output);
    }
    let inputs = texts
        .into_iter()
        .map(|(file, text)| parse(file, &text))
        .collect::<Result<Vec<_>>>()?;
    let merged = merge(inputs)?;
    let kind = merged.kind;
    match output {
        OutputFormat::Json => render::json(&merged)?,
        OutputFormat::Jsonl => {
            let mut lines = render::JsonLines::default();
            for host in &merged.hosts {
                lines.line(&Line {
                    schema: kind.host_schema(),
                    profile: &merged.profile,
                    dry_run: merged.dry_run,
                    shard: None,
                    body: host,
                });
            }
            lines.line(&Line {
                schema: kind.summary_schema(),
                profile: &merged.profile,
                dry_run: merged.dry_run,
                shard: None,
                body: SummaryBody {
                    summary: &merged.summary,
                    audit_log: merged.audit_log.as_deref(),
                },
            });
            lines.finish()?;
        }
        OutputFormat::Table | OutputFormat::Junit => render::text(&table(&merged, kind))?,
    }
    match &merged.summary {
        Counts::Diff(s) => s.exit(),
        Counts::Apply(s) => s.exit(merged.audit_log.as_deref().unwrap_or("each shard's audit log")),
    }
}

/// Whether `text` is a plan file (`rftune.plan/v1`).
fn is_plan(text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|v| v["schema"] == rftune_engine::plan::SCHEMA)
}

/// The plans of sharded `rftune plan` runs as one plan, resealed: every input must be a plan,
/// intact, of one rftune version, profile and options, without a host twice, and, when made
/// with `--shard`, every shard of one N present once. `-o json` prints the merged plan (to
/// save and apply); the table shows it.
fn merge_plans(texts: Vec<(String, String)>, output: OutputFormat) -> Result<Exit> {
    let mut plans = Vec::with_capacity(texts.len());
    for (file, text) in texts {
        if !is_plan(&text) {
            bail!("{file} is not a plan file, but other inputs are: merge plans only with plans");
        }
        plans.push((file.clone(), rftune_engine::plan::PlanDocument::parse(&text, &file)?));
    }
    let shards: Vec<Input> = plans
        .iter()
        .map(|(file, p)| {
            Ok(Input {
                file: file.clone(),
                kind: DocumentKind::Apply,
                profile: p.profile.clone(),
                dry_run: Some(true),
                shard: p.shard.as_deref().map(str::parse).transpose()?,
                audit_log: None,
                hosts: Vec::new(),
            })
        })
        .collect::<Result<_>>()?;
    check_shards(&shards)?;
    let merged = rftune_engine::plan::merge(plans)?;
    match output {
        OutputFormat::Json | OutputFormat::Jsonl => render::json(&merged)?,
        OutputFormat::Table | OutputFormat::Junit => {
            let mut out = render::plan::table(&merged, false, render::group::Blocks::Grouped);
            out.push_str(&format!(
                "(merged and resealed, {}; -o json prints the merged plan to save and apply)\n",
                merged.integrity
            ));
            render::text(&out)?;
        }
    }
    if merged.summary.error > 0 {
        bail!(
            "{} of {} host(s) could not be planned; the plan's apply refuses them",
            merged.summary.error,
            merged.summary.hosts
        );
    }
    Ok(if merged.summary.change > 0 {
        Exit::Drift
    } else {
        Exit::Success
    })
}

/// Reads one output's text (`-` is standard input).
fn read_text(path: &Path) -> Result<String> {
    let file = path.display().to_string();
    let text = if file == "-" {
        let mut text = String::new();
        std::io::stdin()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_string(&mut text)
            .context("reading standard input")?;
        if text.len() as u64 > MAX_INPUT_BYTES {
            bail!(
                "standard input is over {} MiB; give the outputs as files",
                MAX_INPUT_BYTES >> 20
            );
        }
        text
    } else {
        rftune_engine::state::read_capped(path, MAX_INPUT_BYTES, "result")?
    };
    Ok(text)
}

/// One output: a JSON document, or JSON lines.
fn parse(file: String, text: &str) -> Result<Input> {
    if let Ok(doc) = serde_json::from_str::<Value>(text)
        && let Some(kind) = doc["schema"]
            .as_str()
            .and_then(|s| DocumentKind::of(s, DocumentKind::schema))
    {
        return document(file, kind, doc);
    }
    lines(file, text)
}

fn string(v: &Value, field: &str, at: &str) -> Result<String> {
    v[field]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("{at}: no {field:?} string"))
}

fn shard(v: &Value, at: &str) -> Result<Option<rftune_engine::fleet::Shard>> {
    match &v["shard"] {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.parse().with_context(|| format!("{at}: shard"))?)),
        other => bail!("{at}: shard {other} is not K/N"),
    }
}

fn dry_run(kind: DocumentKind, v: &Value, at: &str) -> Result<Option<bool>> {
    match kind {
        DocumentKind::Diff => Ok(None),
        DocumentKind::Apply => v["dry_run"]
            .as_bool()
            .map(Some)
            .with_context(|| format!("{at}: no \"dry_run\" true/false")),
    }
}

/// Checks that a host entry has a name, a status this kind knows and, when it failed, an error
/// kind rftune writes (kept as it is in the merged output).
fn check_host(kind: DocumentKind, host: &Value, at: &str) -> Result<()> {
    let name = string(host, "host", at)?;
    if let Some(error_kind) = host.get("error_kind")
        && serde_json::from_value::<rftune_engine::HostErrorKind>(error_kind.clone()).is_err()
    {
        bail!(
            "{at}: host {name} has error_kind {error_kind}, which rftune does not write ({})",
            rftune_engine::HostErrorKind::ALL
                .map(rftune_engine::HostErrorKind::as_str)
                .join(", ")
        );
    }
    let field = kind.status_field();
    match host[field].as_str() {
        Some(s) if kind.statuses().contains(&s) => Ok(()),
        Some(s) => bail!(
            "{at}: host {name} has {field} {s:?}, which rftune {} does not write ({})",
            kind.name(),
            kind.statuses().join(", ")
        ),
        None => bail!("{at}: host {name} has no {field:?}"),
    }
}

/// An `rftune.<kind>/v1` document.
fn document(file: String, kind: DocumentKind, mut doc: Value) -> Result<Input> {
    let profile = string(&doc, "profile", &file)?;
    let dry_run = dry_run(kind, &doc, &file)?;
    let Some(Value::Array(hosts)) = doc.get_mut("hosts").map(Value::take) else {
        bail!("{file}: no \"hosts\" list");
    };
    for (i, h) in hosts.iter().enumerate() {
        check_host(kind, h, &format!("{file}: hosts[{i}]"))?;
    }
    let head = Head {
        file,
        kind,
        profile,
        dry_run,
    };
    input(head, hosts, &doc, |file, n, counted| {
        format!("{file}: lists {n} host(s) but its summary counts {counted}: the document is damaged")
    })
}

/// An `-o jsonl` stream: host lines, then one summary line.
fn lines(file: String, text: &str) -> Result<Input> {
    let mut kind = None;
    let mut head: Option<(String, Option<bool>)> = None;
    let mut hosts = Vec::new();
    let mut summary: Option<(usize, Value)> = None;
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = format!("{file}:{}", n + 1);
        let mut v: Value = serde_json::from_str(line)
            .with_context(|| format!("{at}: neither a JSON document of rftune diff/apply nor a line of -o jsonl"))?;
        if let Some((line_no, _)) = summary {
            bail!("{at}: a line after the summary line ({file}:{line_no})");
        }
        let schema = v["schema"].as_str().unwrap_or_default().to_owned();
        let (this, is_summary) = match (
            DocumentKind::of(&schema, DocumentKind::host_schema),
            DocumentKind::of(&schema, DocumentKind::summary_schema),
        ) {
            (Some(k), _) => (k, false),
            (None, Some(k)) => (k, true),
            (None, None) => bail!(
                "{at}: schema {schema:?} is not an output of rftune diff or apply (rftune.diff.host/v1, rftune.apply.summary/v1, ...)"
            ),
        };
        if *kind.get_or_insert(this) != this {
            bail!(
                "{at}: an rftune {} line in a stream of rftune {}",
                this.name(),
                kind.map_or("", DocumentKind::name)
            );
        }
        let profile = string(&v, "profile", &at)?;
        let dry = dry_run(this, &v, &at)?;
        match &head {
            None => head = Some((profile, dry)),
            Some((p, d)) if *p != profile || *d != dry => {
                bail!("{at}: profile {profile} (dry run {dry:?}) in a stream of profile {p} (dry run {d:?})")
            }
            Some(_) => {}
        }
        if is_summary {
            summary = Some((n + 1, v));
        } else {
            check_host(this, &v, &at)?;
            if let Value::Object(fields) = &mut v {
                for k in ["schema", "profile", "dry_run"] {
                    fields.remove(k);
                }
            }
            hosts.push(v);
        }
    }
    let (Some(kind), Some((profile, dry_run))) = (kind, head) else {
        bail!("{file}: empty: no output of rftune diff or apply");
    };
    let Some((_, summary)) = summary else {
        bail!(
            "{file}: the stream ends after {} host line(s) without its {} line: the run that wrote it did not finish; run that shard again",
            hosts.len(),
            kind.summary_schema()
        );
    };
    let head = Head {
        file,
        kind,
        profile,
        dry_run,
    };
    input(head, hosts, &summary, |file, n, counted| {
        format!("{file}: {n} host line(s) but the summary line counts {counted}: lines are missing")
    })
}

/// What an input's first part says: where it is, which command, profile and dry run.
struct Head {
    file: String,
    kind: DocumentKind,
    profile: String,
    dry_run: Option<bool>,
}

/// The end of reading an input, alike for a document and a stream: `tail` (the document, or the
/// stream's summary line) must count `hosts` in its `summary` (else the error is `damaged(file,
/// hosts, what it counts)`), and gives the shard and audit log.
fn input(
    head: Head,
    hosts: Vec<Value>,
    tail: &Value,
    damaged: impl FnOnce(&str, usize, String) -> String,
) -> Result<Input> {
    let Head {
        file,
        kind,
        profile,
        dry_run,
    } = head;
    let counted = tail["summary"]["hosts"].as_u64();
    if counted != Some(hosts.len() as u64) {
        let counted = counted.map_or_else(|| "none".to_owned(), |n| n.to_string());
        bail!("{}", damaged(&file, hosts.len(), counted));
    }
    Ok(Input {
        shard: shard(tail, &file)?,
        audit_log: tail["audit_log"].as_str().map(str::to_owned),
        file,
        kind,
        profile,
        dry_run,
        hosts,
    })
}

/// Combines checked inputs.
fn merge(inputs: Vec<Input>) -> Result<Merged> {
    let Some(first) = inputs.first() else {
        bail!("give at least one file to merge");
    };
    let (kind, profile, dry_run) = (first.kind, first.profile.clone(), first.dry_run);
    for i in &inputs[1..] {
        if i.kind != kind {
            bail!(
                "cannot merge {} (rftune {}) with {} (rftune {}): merge the outputs of one command",
                first.file,
                kind.name(),
                i.file,
                i.kind.name()
            );
        }
        if i.profile != profile {
            bail!(
                "cannot merge {} (profile {profile}) with {} (profile {}): merge the outputs of one profile",
                first.file,
                i.file,
                i.profile
            );
        }
        if i.dry_run != dry_run {
            bail!(
                "cannot merge {} with {}: one is a dry run and the other is not",
                first.file,
                i.file
            );
        }
    }
    check_shards(&inputs)?;
    let audit_logs: std::collections::BTreeSet<&str> = inputs.iter().filter_map(|i| i.audit_log.as_deref()).collect();
    let audit_log = match audit_logs.into_iter().collect::<Vec<_>>()[..] {
        [one] => Some(one.to_owned()),
        _ => None,
    };
    let mut sources = Vec::with_capacity(inputs.len());
    let mut hosts: BTreeMap<String, (Value, String)> = BTreeMap::new();
    for input in inputs {
        sources.push(Source {
            file: input.file.clone(),
            shard: input.shard.map(|s| s.to_string()),
            hosts: input.hosts.len(),
            audit_log: input.audit_log,
        });
        for h in input.hosts {
            let name = h["host"].as_str().unwrap_or_default().to_owned();
            if let Some((_, other)) = hosts.get(&name) {
                bail!(
                    "host {name} is in both {other} and {}: the outputs overlap (the same file twice, or shards of different inventories)",
                    input.file
                );
            }
            hosts.insert(name, (h, input.file.clone()));
        }
    }
    let hosts: Vec<Value> = hosts.into_values().map(|(h, _)| h).collect();
    // Every status was checked when its input was read (check_host).
    let field = kind.status_field();
    let unknown = |h: &Value| anyhow::anyhow!("host {}: unknown {field} {:?}", h["host"], h[field]);
    let summary = match kind {
        DocumentKind::Diff => {
            let mut s = DiffSummary {
                hosts: hosts.len(),
                ..DiffSummary::default()
            };
            for h in &hosts {
                s.count(
                    h[field]
                        .as_str()
                        .and_then(DiffStatus::parse)
                        .ok_or_else(|| unknown(h))?,
                );
            }
            Counts::Diff(s)
        }
        DocumentKind::Apply => {
            let mut s = ApplySummary {
                hosts: hosts.len(),
                ..ApplySummary::default()
            };
            for h in &hosts {
                s.count(
                    h[field]
                        .as_str()
                        .and_then(ApplyStatus::parse)
                        .ok_or_else(|| unknown(h))?,
                );
            }
            Counts::Apply(s)
        }
    };
    Ok(Merged {
        kind,
        schema: kind.schema(),
        profile,
        dry_run,
        hosts,
        summary,
        audit_log,
        merged_from: sources,
    })
}

/// With `--shard` outputs: every one sharded, one N, each K once, none missing.
fn check_shards(inputs: &[Input]) -> Result<()> {
    let Some(sharded) = inputs.iter().find(|i| i.shard.is_some()) else {
        return Ok(());
    };
    let n = sharded.shard.map_or(1, |s| s.count());
    let mut seen: BTreeMap<u32, &str> = BTreeMap::new();
    for i in inputs {
        let Some(shard) = i.shard else {
            bail!(
                "{} was not run with --shard but {} was (shard {}): merge the shards of one run",
                i.file,
                sharded.file,
                sharded.shard.map(|s| s.to_string()).unwrap_or_default()
            );
        };
        if shard.count() != n {
            bail!(
                "{} is shard {shard} but {} is shard {}: merge the shards of one run (one N)",
                i.file,
                sharded.file,
                sharded.shard.map(|s| s.to_string()).unwrap_or_default()
            );
        }
        if let Some(other) = seen.insert(shard.index(), &i.file) {
            bail!("shard {shard} appears twice: {other} and {}", i.file);
        }
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        bail!(
            "shard(s) {} missing: merge the outputs of all {n} shards, or the result would leave their hosts out",
            missing.join(", ")
        );
    }
    Ok(())
}

/// For people: the hosts that need attention, then the counts.
fn table(merged: &Merged, kind: DocumentKind) -> String {
    let mut out = String::new();
    let field = kind.status_field();
    for h in &merged.hosts {
        let status = h[field].as_str().unwrap_or_default();
        if matches!(status, "in_sync" | "converged") {
            continue;
        }
        let _ = write!(
            out,
            "{}: {}",
            h["host"].as_str().unwrap_or_default(),
            status.replace('_', " ")
        );
        if let Some(kind) = h["error_kind"].as_str() {
            let _ = write!(out, " ({})", kind.replace('_', " "));
        }
        if let Some(e) = h["error"].as_str() {
            let _ = write!(out, ": {e}");
        }
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    let _ = writeln!(out, "{}", merged.summary);
    let _ = writeln!(out, "(merged from {} file(s))", merged.merged_from.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(text: &str) -> Result<Input> {
        let doc = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|d| Some((DocumentKind::of(d["schema"].as_str()?, DocumentKind::schema)?, d)));
        match doc {
            Some((kind, d)) => document("doc.json".into(), kind, d),
            None => lines("run.jsonl".into(), text),
        }
    }

    const HOST: &str = r#"{"schema":"rftune.diff.host/v1","profile":"hpc","host":"a","status":"drift","changes":[]}"#;

    #[test]
    fn a_stream_without_its_summary_or_with_lines_missing_is_refused() {
        let err = input(HOST).unwrap_err().to_string();
        assert!(err.contains("without its rftune.diff.summary/v1 line"), "{err}");
        let short = format!(
            "{HOST}\n{}",
            r#"{"schema":"rftune.diff.summary/v1","profile":"hpc","summary":{"hosts":2,"in_sync":0,"drift":2,"error":0}}"#
        );
        let err = input(&short).unwrap_err().to_string();
        assert!(err.contains("1 host line(s) but the summary line counts 2"), "{err}");
        let mixed = format!("{HOST}\n{}", HOST.replace("hpc", "performance"));
        let err = input(&mixed).unwrap_err().to_string();
        assert!(err.contains("run.jsonl:2: profile performance"), "{err}");
        let err = input("{\"schema\":\"rftune.power/v1\"}").unwrap_err().to_string();
        assert!(err.contains("not an output of rftune diff or apply"), "{err}");
        let err = input("not json").unwrap_err().to_string();
        assert!(err.contains("run.jsonl:1: neither a JSON document"), "{err}");
    }

    #[test]
    fn a_failed_host_keeps_its_error_kind_and_an_unknown_kind_is_refused() {
        let failed = r#"{"schema":"rftune.diff.host/v1","profile":"hpc","host":"b","status":"error","changes":[],"error":"b: logging in as root: …","error_kind":"credentials"}"#;
        let summary = r#"{"schema":"rftune.diff.summary/v1","profile":"hpc","summary":{"hosts":2,"in_sync":0,"drift":1,"error":1}}"#;
        let merged = merge(vec![input(&format!("{HOST}\n{failed}\n{summary}")).unwrap()]).unwrap();
        let b = merged.hosts.iter().find(|h| h["host"] == "b").unwrap();
        assert_eq!(b["error_kind"], "credentials", "{b}");
        assert!(table(&merged, DocumentKind::Diff).contains("b: error (credentials): b: logging in"));
        let odd = failed.replace("credentials", "gremlins");
        let err = input(&format!("{odd}\n{summary}")).unwrap_err().to_string();
        assert!(
            err.contains("error_kind \"gremlins\", which rftune does not write"),
            "{err}"
        );
    }

    #[test]
    fn shards_must_be_one_complete_set() {
        let with = |k: u32, n: u32| Input {
            file: format!("s{k}"),
            kind: DocumentKind::Diff,
            profile: "hpc".into(),
            dry_run: None,
            shard: Some(rftune_engine::fleet::Shard::new(k, n).unwrap()),
            audit_log: None,
            hosts: Vec::new(),
        };
        assert!(check_shards(&[with(1, 2), with(2, 2)]).is_ok());
        let err = check_shards(&[with(1, 3), with(3, 3)]).unwrap_err().to_string();
        assert!(err.contains("shard(s) 2/3 missing"), "{err}");
        let err = check_shards(&[with(1, 2), with(1, 2)]).unwrap_err().to_string();
        assert!(err.contains("shard 1/2 appears twice"), "{err}");
        let err = check_shards(&[with(1, 2), with(2, 3)]).unwrap_err().to_string();
        assert!(err.contains("one N"), "{err}");
        let mut plain = with(2, 2);
        plain.shard = None;
        let err = check_shards(&[with(1, 2), plain]).unwrap_err().to_string();
        assert!(err.contains("s2 was not run with --shard"), "{err}");
    }
}
