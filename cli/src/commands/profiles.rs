//! `rftune profiles list|show|validate|new|search|derive`: browse, check and start the
//! recommendations.

use crate::Exit;
use crate::args::{OutputFormat, ProfilesCommand};
use crate::render::{self, Table};
use anyhow::Result;
use bios_profiles::{
    Binding, BoundProfile, Citation, Generation, HostFacts, HostView, KnobOutcome, Library, ResolvedProfile, Setting,
    Severity, Unchecked, ValidateOptions, Vendor,
};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::Attributes;
use rftune_engine::assess::LoadedProfile;
use rftune_engine::derive::{self, Selection};
use rftune_engine::snapshot::Snapshot;
use rftune_engine::state::StateDirs;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Runs a `profiles` subcommand.
pub async fn run(cmd: &ProfilesCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    match cmd {
        ProfilesCommand::List => list(output),
        ProfilesCommand::Show {
            profile,
            model,
            generation,
            cpu,
            sockets,
            cores,
            vendor,
        } => {
            let mut host = facts(model.as_deref(), generation.as_deref())?;
            if let Some(cpu) = cpu {
                let brand = if cpu.to_ascii_uppercase().contains("EPYC") {
                    cpu.trim().to_owned()
                } else {
                    format!("AMD EPYC {}", cpu.trim())
                };
                host.generation = host.generation.or_else(|| Generation::from_cpu_model(&brand));
                host.cores = brand_cores(&brand);
                host.cpu = Some(brand);
            }
            host.sockets = *sockets;
            host.cores = cores.or(host.cores);
            let vendor = vendor.parse::<Vendor>().map_err(|e| anyhow::anyhow!("--vendor: {e}"))?;
            show(profile, &host, vendor, output)
        }
        ProfilesCommand::Search { query } => search(&query.join(" "), output),
        ProfilesCommand::Validate(args) => validate(args, dirs, output).await,
        ProfilesCommand::New {
            name,
            extends,
            description,
            out,
        } => new(name, extends, description.as_deref(), out.as_deref()),
        ProfilesCommand::Derive {
            from_scp: Some(file),
            registry,
            name,
            attributes,
            description,
            ..
        } => derive_from_scp(
            file,
            registry.as_deref(),
            name,
            attributes,
            description.as_deref(),
            output,
        ),
        ProfilesCommand::Derive {
            snapshot,
            name,
            attributes,
            description,
            ..
        } => {
            let Some(snapshot) = snapshot else {
                anyhow::bail!("give --snapshot FILE or --from-scp FILE");
            };
            let snap = Snapshot::load(snapshot)?;
            let selection = if attributes.is_empty() {
                Selection::Catalog
            } else {
                Selection::Named(attributes.clone())
            };
            let text = derive::profile_toml(&snap, name, description.as_deref(), &selection)?;
            // Parse what we wrote, so a derived file is always valid.
            LoadedProfile::from_toml(&text, "derived profile")?;
            render::text(&text)?;
            Ok(Exit::Success)
        }
    }
}

/// `profiles derive --from-scp FILE`: the profile on stdout (TOML; with `-o json` a document
/// carrying it and what was left out), a line per reason on stderr for what was left out.
fn derive_from_scp(
    file: &std::path::Path,
    registry: Option<&std::path::Path>,
    name: &str,
    attributes: &[String],
    description: Option<&str>,
    output: OutputFormat,
) -> Result<Exit> {
    use rftune_engine::scp::profile::{ScpSelection, Typing, derive};
    let scp = rftune_engine::scp::ScpFile::load(file)?;
    let registry: Option<AttributeRegistry> = match registry {
        Some(path) => {
            let text = rftune_engine::state::read_capped(path, rftune_engine::state::MAX_DOCUMENT_BYTES, "registry")?;
            Some(redfish_client::error::decode_json(
                "FILE",
                &path.display().to_string(),
                text.as_bytes(),
            )?)
        }
        None => None,
    };
    let selection = if attributes.is_empty() {
        ScpSelection::Catalog
    } else {
        ScpSelection::CatalogAnd(attributes.to_vec())
    };
    let typing = Typing {
        registry: registry.as_ref(),
        idrac: None,
    };
    let derived = derive(&scp.document, &scp.name, name, description, &selection, typing)?;
    if derived.bios.is_empty() && derived.idrac.values().all(|a| a.is_empty()) {
        let left: Vec<String> = derived
            .dropped_counts()
            .into_iter()
            .map(|(reason, n)| format!("{n} {}", reason.describe()))
            .collect();
        anyhow::bail!(
            "{} holds no BIOS or iDRAC setting a profile can take (left out: {}); name attributes with --attribute to take them",
            scp.name,
            if left.is_empty() {
                "nothing".to_owned()
            } else {
                left.join("; ")
            }
        );
    }
    // Parse what we wrote, so a derived file is always valid.
    LoadedProfile::from_toml(&derived.toml, "derived profile")?;
    if output == OutputFormat::Json {
        render::json(
            &json!({"schema": crate::documents::SCP_DERIVE_SCHEMA, "file": scp.name, "profile": derived.toml,
            "bios": derived.bios, "idrac": derived.idrac, "dropped": derived.dropped,
            "assumed_integers": derived.assumed_integers}),
        )?;
        return Ok(Exit::Success);
    }
    render::text(&derived.toml)?;
    for (reason, n) in derived.dropped_counts() {
        note!(
            "rftune: left out {n} attribute(s) of {}: {}",
            scp.name,
            reason.describe()
        );
    }
    Ok(Exit::Success)
}

fn list(output: OutputFormat) -> Result<Exit> {
    let library = Library::shipped()?;
    if output == OutputFormat::Json {
        let profiles: Vec<_> = library
            .list()
            .iter()
            .map(|p| {
                let c = p.confidence_counts();
                json!({"name": p.name, "description": p.description, "extends": p.extends, "targets": p.targets(),
                       "settings": c.total(), "stated": c.stated, "used": c.used, "inferred": c.inferred})
            })
            .collect();
        render::json(&json!({"schema": "rftune.profiles/v1", "profiles": profiles}))?;
        return Ok(Exit::Success);
    }
    let mut t = Table::new(["NAME", "EXTENDS", "SETTINGS", "TARGETS", "DESCRIPTION"]);
    for p in library.list() {
        t.row([
            p.name.clone(),
            p.extends.clone().unwrap_or_else(|| "-".into()),
            p.confidence_counts().total().to_string(),
            p.targets(),
            first_sentence(&p.description),
        ]);
    }
    render::text(&t.render())?;
    Ok(Exit::Success)
}

/// The cores a brand string names (`AMD EPYC 7763 64-Core Processor` → 64).
fn brand_cores(brand: &str) -> Option<u32> {
    let (before, _) = brand.split_once("-Core")?;
    let digits = before.rsplit(' ').next()?;
    digits.parse().ok().filter(|&n| n > 0)
}

fn first_sentence(s: &str) -> String {
    let end = s.find(". ").map_or(s.len(), |i| i + 1);
    s[..end].trim().to_owned()
}

fn facts(model: Option<&str>, generation: Option<&str>) -> Result<HostFacts> {
    let generation = generation
        .map(str::parse::<Generation>)
        .transpose()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(HostFacts {
        model: model.map(str::to_owned),
        generation,
        ..HostFacts::default()
    })
}

fn show(name: &str, host: &HostFacts, vendor: Vendor, output: OutputFormat) -> Result<Exit> {
    let chosen = LoadedProfile::load(name)?;
    let resolved = chosen.resolve(host)?;
    let bound = bios_profiles::bind(&resolved, vendor)?;
    // The binding's own evidence joins the profile's sources.
    let sources = match Binding::shipped(vendor)? {
        Some(binding) => chosen.library().sources().with(binding.sources().iter().cloned()),
        None => chosen.library().sources().clone(),
    };
    let citations = bound.profile.citations(&sources);
    if output == OutputFormat::Json {
        let mut doc = serde_json::to_value(&bound.profile)?;
        if let Some(map) = doc.as_object_mut() {
            map.insert("schema".into(), json!("rftune.profile/v1"));
            map.insert("sources".into(), serde_json::to_value(&citations)?);
            if vendor != Vendor::Dell {
                map.insert("vendor".into(), json!(vendor));
                map.insert("bindings".into(), serde_json::to_value(&bound.knobs)?);
                map.insert("enabling".into(), serde_json::to_value(&bound.enabled)?);
            }
        }
        render::json(&doc)?;
        return Ok(Exit::Success);
    }
    let mut text = show_text(&bound.profile, &citations);
    if vendor != Vendor::Dell {
        text = bound_text(&bound, &text);
    }
    render::text(&text)?;
    Ok(Exit::Success)
}

/// `profiles show --vendor hpe`: the vendor named in the heading, and after the settings what
/// each managed knob became (bound with its evidence, carried, left to the profile's own
/// naming) and the enabling writes, before the sources.
fn bound_text(bound: &BoundProfile, shown: &str) -> String {
    let vendor = bound.vendor.name();
    let mut lines = String::new();
    for k in &bound.knobs {
        let _ = match &k.outcome {
            KnobOutcome::Bound {
                attributes,
                wanted,
                inverted,
                evidence,
                seen,
                ..
            } => writeln!(
                lines,
                "  bound {} → {} = {wanted}{}: {evidence}{}",
                k.knob,
                attributes.join(", "),
                if *inverted { " (inverted)" } else { "" },
                if seen.is_empty() {
                    " (not seen on a real host)".to_owned()
                } else {
                    format!(" (seen on a real host: {})", seen.join(", "))
                }
            ),
            KnobOutcome::Carried { by, attributes } => {
                writeln!(lines, "  carried {} → {} by {by}", k.knob, attributes.join(", "))
            }
            KnobOutcome::Overridden { attributes } => writeln!(
                lines,
                "  overridden {} → {}: the profile names it itself",
                k.knob,
                attributes.join(", ")
            ),
            // Skipped with the reason, which the settings part already prints.
            KnobOutcome::NotApplicable { .. } => Ok(()),
        };
    }
    for e in &bound.enabled {
        let _ = writeln!(
            lines,
            "  enabling {} = {} ({}) for {}{}",
            e.attribute,
            e.value,
            e.id,
            e.for_knobs.join(", "),
            if e.added {
                ""
            } else {
                ": already written by the profile"
            }
        );
    }
    let (head, rest) = shown.split_once('\n').unwrap_or((shown, ""));
    let (settings, sources) = rest
        .split_once("\nSources")
        .map_or((rest, String::new()), |(a, b)| (a, format!("\nSources{b}")));
    format!("{head} (bound to {vendor}: {vendor}'s attribute names and tokens)\n{settings}{lines}{sources}")
}

/// `4 | 2 | 1 (4 ruled out here) when sockets = 2`: what a setting asks for on this host.
fn wanted(s: &Setting) -> String {
    let mut out = s.wanted.to_string();
    if !s.excluded.is_empty() {
        let ruled: Vec<String> = s.excluded.iter().map(|e| e.value.to_string()).collect();
        let _ = write!(out, " ({} ruled out here)", ruled.join(", "));
    }
    if !s.when.is_empty() {
        let _ = write!(out, " when {}", s.when);
    }
    out
}

/// The text of `profiles show`: the settings, what was skipped, the platform limits, and the
/// words each quoting setting takes from its source.
fn show_text(resolved: &ResolvedProfile, citations: &[Citation]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", resolved.name, resolved.description);
    let _ = writeln!(out, "extends: {}", resolved.chain.join(" → "));
    if !resolved.platforms.is_empty() {
        let _ = writeln!(out, "platform overrides: {}", resolved.platforms.join(", "));
    }
    out.push('\n');
    let mut t = Table::new(["SETTING", "VALUE", "CONFIDENCE", "SOURCE", "WHY"]);
    let settings = resolved.bios.iter().map(|(name, s)| (name.clone(), s)).chain(
        resolved
            .idrac
            .iter()
            .map(|((group, name), s)| (format!("{name} (iDRAC {group})"), &s.setting)),
    );
    for (label, s) in settings {
        t.row([
            label.clone(),
            wanted(s),
            s.confidence.as_str().to_owned(),
            s.source.clone(),
            s.why.clone(),
        ]);
    }
    // The [boot] entries, resolved per host into BIOS values when applied.
    for (label, e) in resolved.boot.entries() {
        t.row([
            label.to_owned(),
            e.value,
            e.confidence.as_str().to_owned(),
            e.source,
            e.why,
        ]);
    }
    out.push_str(&t.render());
    let labelled = resolved
        .bios
        .iter()
        .map(|(name, s)| (name.clone(), s))
        .chain(resolved.idrac.iter().map(|((_, name), s)| (name.clone(), &s.setting)));
    for (label, s) in labelled {
        for line in s.decisions.iter().filter_map(crate::render::decisions::line) {
            let _ = writeln!(out, "  decided {label}: {line}");
        }
        if let Some(split) = &s.asid_split {
            let _ = writeln!(out, "  split {}", crate::render::decisions::split(split));
        }
    }
    // Settings without evidence for the generation are many and share one reason: one line
    // names them all, and says what that makes of a host.
    let mut unproven: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in &resolved.skipped {
        if s.kind == Unchecked::NoEvidence {
            unproven.entry(&s.reason).or_default().push(&s.setting.attribute);
        } else {
            let _ = writeln!(out, "  skipped {}: {}", s.setting.attribute, s.reason);
        }
    }
    for (reason, names) in unproven {
        let _ = writeln!(
            out,
            "  not checked ({}; a host with these is reported unverified, not in sync): {}\n    why: {reason}",
            names.len(),
            names.join(", ")
        );
    }
    for l in &resolved.left {
        let _ = writeln!(out, "  left alone {} ({}): {}", l.attribute, l.origin, l.why);
    }
    let noted = resolved
        .bios
        .values()
        .chain(resolved.idrac.values().map(|s| &s.setting))
        .filter_map(|s| Some((&s.attribute, s.confidence_note.as_deref()?)));
    for (attribute, note) in noted {
        let _ = writeln!(out, "  inferred here {attribute}: {note}");
    }
    for limit in &resolved.limits {
        let values: Vec<String> = limit.values.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "  limit {}: {} not possible ({}, {} from {}): {}",
            limit.attribute,
            values.join(", "),
            limit.origin,
            limit.confidence,
            limit.source,
            limit.why
        );
    }
    let _ = writeln!(
        out,
        "\nSources (every stated setting quotes its source's words; used and inferred ones cite it):"
    );
    for c in citations {
        let _ = writeln!(
            out,
            "\n  {}{}",
            c.id,
            if c.declared_by_profile {
                " (declared by the profile file)"
            } else {
                ""
            }
        );
        match (&c.title, &c.publisher) {
            (Some(title), Some(publisher)) => {
                let _ = writeln!(out, "    title: {title} ({publisher})");
            }
            _ => {
                let _ = writeln!(out, "    title: unknown source");
            }
        }
        if let Some(scope) = &c.scope {
            let _ = writeln!(out, "    scope: {scope}");
        }
        if let Some(url) = &c.url {
            let _ = writeln!(out, "    url: {url}");
        }
        let _ = writeln!(out, "    cited by: {}", c.cited_by.join(", "));
        for q in &c.quotes {
            let _ = writeln!(out, "    quote ({}): \"{}\"", q.setting, q.quote);
        }
    }
    out
}

/// `profiles validate FILE` without a host: the file's own names and tokens against the shipped
/// catalog and the emulator's registries.
fn validate_offline(chosen: &LoadedProfile, output: OutputFormat) -> Result<Exit> {
    let mut trees = Vec::new();
    for model in idrac_sim::fixture::builtin_models() {
        let tree = idrac_sim::fixture::Fixture::builtin(model)?;
        // Profiles are written in Dell's names; the HPE tree's registry is HPE's vocabulary,
        // reached through the binding (`profiles show --vendor hpe`), not checked here.
        if tree.bmc != idrac_sim::generation::Bmc::Ilo {
            trees.push((model, tree));
        }
    }
    let bios: Vec<(&str, &AttributeRegistry)> = trees.iter().map(|(m, t)| (*m, &t.bios_registry)).collect();
    let idrac: Vec<(&str, &AttributeRegistry)> = trees
        .iter()
        .filter_map(|(m, t)| Some((*m, t.manager_registry.as_ref()?)))
        .collect();
    let known = bios_profiles::offline::Known {
        bios: &bios,
        idrac: &idrac,
        catalog: bios_profiles::catalog::shipped()?,
    };
    let profile = chosen.definition();
    let violations = bios_profiles::offline::check(profile, &known);
    let models: Vec<&str> = bios.iter().map(|(m, _)| *m).collect();
    let heading = format!(
        "{}: {} setting(s) of its own, checked offline against the shipped catalog and the registries of {} (a host's own registry may still differ: give --registry FILE or --bmc URL to check against it)",
        profile.name,
        profile.settings().count(),
        models.join(", ")
    );
    let doc = json!({"schema": "rftune.validate/v1", "profile": profile.name, "checked_against_registry": false,
                     "checked_offline": models});
    validation_report(&heading, doc, &violations, output)
}

/// `profiles new NAME --extends PROFILE`: a commented starting file that parses as it is.
fn new(name: &str, extends: &str, description: Option<&str>, out: Option<&std::path::Path>) -> Result<Exit> {
    let library = Library::shipped()?;
    let parent = library.resolve(extends, &HostFacts::default())?;
    let text = starting_file(name, description, &parent);
    // What is written must load: a bad name is refused here, with the format's message.
    LoadedProfile::from_toml(&text, "the new profile")?;
    match out {
        None => render::text(&text)?,
        Some(path) => {
            use std::io::Write as _;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| {
                    anyhow::anyhow!(
                        "cannot create {}: {e} (an existing file is never replaced)",
                        path.display()
                    )
                })?;
            file.write_all(text.as_bytes())
                .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
            note!(
                "rftune: wrote {}; edit it, then `rftune profiles validate {}`",
                path.display(),
                path.display()
            );
        }
    }
    Ok(Exit::Success)
}

/// The commented starting file for `profiles new`.
fn starting_file(name: &str, description: Option<&str>, parent: &ResolvedProfile) -> String {
    let p = &parent.name;
    let description = description.map_or_else(|| format!("{p}, with our own changes"), str::to_owned);
    let head = [
        format!("# {name}: starts from the shipped profile `{p}` and changes only what is written below."),
        format!("# `rftune profiles show {p}` lists every setting it inherits, with why, source and confidence."),
        "# `rftune profiles validate FILE` checks this file offline; add --bmc URL to check it on a host.".to_owned(),
        "#".to_owned(),
        "# Switching: every shipped workload profile sets the same knobs (the managed set), so a host".to_owned(),
        "# moved between them ends the same whichever it had before. A knob only this file sets is".to_owned(),
        "# yours: moving the host to another profile leaves it as this one wrote it.".to_owned(),
        format!("name = {}", toml_string(name)),
        format!("description = {}", toml_string(&description)),
        format!("extends = {}", toml_string(p)),
    ];
    let guide = [
        "",
        "# Change a setting: a value (or `prefer = [...]`, or `accept = [...]` with `intent`), a one-line",
        "# `why`, a `source` id (from `rftune profiles show`'s sources, or your own [sources.ID] below)",
        "# and a `confidence`: stated (the source says so; then `quote` its words), used (Dell or AMD",
        "# shipped it in a published configuration) or inferred (your reasoning).",
        "#",
        "# [bios.LogicalProc]",
        "# value = \"Enabled\"",
        "# why = \"Our codes scale with threads.\"",
        "# source = \"our-runbook\"",
        "# confidence = \"inferred\"",
        "#",
        "# Leave a knob as each host has it: what the parent sets for it is dropped, and rftune",
        "# neither writes nor judges it.",
        "#",
        "# [bios.NumaNodesPerSocket]",
        "# leave = true",
        "# why = \"Our nodes choose NPS per job class.\"",
        "#",
        "# [sources.our-runbook]",
        "# title = \"Cluster runbook, node BIOS\"",
        "# publisher = \"Our HPC team\"",
        "",
    ];
    let mut out = String::new();
    for line in head.iter().map(String::as_str).chain(guide) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "# What `{p}` sets today, on a host of any generation:");
    for s in parent.settings() {
        let _ = writeln!(
            out,
            "#   {} = {} ({}, {})",
            s.attribute, s.wanted, s.confidence, s.source
        );
    }
    for l in &parent.left {
        let _ = writeln!(out, "#   {} is left alone: {}", l.attribute, l.why);
    }
    out
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn search(query: &str, output: OutputFormat) -> Result<Exit> {
    let hits = bios_profiles::catalog::search(query);
    if output == OutputFormat::Json {
        render::json(&json!({"schema": "rftune.catalog/v1", "query": query, "settings": hits}))?;
    } else if hits.is_empty() {
        render::text(&format!("No setting matches {query:?}.\n"))?;
    } else {
        let mut t = Table::new(["SETTING", "ATTRIBUTE", "MENU", "DESCRIPTION"]);
        for h in &hits {
            t.row([
                h.name.clone(),
                h.attributes.join(", "),
                h.menu.clone(),
                h.description.clone(),
            ]);
        }
        render::text(&t.render())?;
    }
    Ok(Exit::Success)
}

async fn validate(args: &crate::args::ValidateArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let chosen = LoadedProfile::load(&args.profile)?;
    let (registry, current, mut host): (AttributeRegistry, Attributes, HostFacts) = match (&args.registry, &args.bmc) {
        (Some(path), _) => {
            let text = rftune_engine::state::read_capped(path, rftune_engine::state::MAX_DOCUMENT_BYTES, "registry")?;
            let registry: AttributeRegistry =
                redfish_client::error::decode_json("FILE", &path.display().to_string(), text.as_bytes())?;
            let model = registry.product_names().next().map(str::to_owned);
            (
                registry,
                Attributes::new(),
                HostFacts {
                    model,
                    ..HostFacts::default()
                },
            )
        }
        (None, Some(url)) => {
            let entry = rftune_engine::fleet::BmcEntry::from_url(url)?;
            let access = crate::config::access_one(&args.connect, &entry, dirs)?;
            let read = rftune_engine::read::ReadState {
                cache: std::sync::Arc::new(dirs.registry_cache()),
                groups: Default::default(),
                jobs: false,
            };
            let state = access.one(&entry, None, &read).await?;
            let facts = HostFacts::from_bios(&state.bios);
            (std::sync::Arc::unwrap_or_clone(state.registry), state.bios, facts)
        }
        (None, None) => return validate_offline(&chosen, output),
    };
    let given = facts(args.model.as_deref(), args.generation.as_deref())?;
    host.model = given.model.or(host.model);
    host.generation = given.generation.or(host.generation);
    let resolved = chosen.resolve(&host)?;
    let violations = bios_profiles::validate(
        &resolved,
        &HostView::new(&registry, &current),
        &ValidateOptions { strict: args.strict },
    );
    let heading = format!(
        "{}: {} setting(s), checked against the registry",
        resolved.name,
        resolved.bios.len() + resolved.idrac.len()
    );
    let doc = json!({"schema": "rftune.validate/v1", "profile": resolved.name, "checked_against_registry": true});
    validation_report(&heading, doc, &violations, output)
}

/// The end of `profiles validate`: the JSON document `doc` with the error count and the
/// violations, or `heading`, a line per violation and the counts. Exit 2 on errors.
fn validation_report(
    heading: &str,
    mut doc: serde_json::Value,
    violations: &[bios_profiles::Violation],
    output: OutputFormat,
) -> Result<Exit> {
    let errors = violations.iter().filter(|v| v.severity == Severity::Error).count();
    if output == OutputFormat::Json {
        if let Some(map) = doc.as_object_mut() {
            map.insert("errors".into(), json!(errors));
            map.insert("violations".into(), serde_json::to_value(violations)?);
        }
        render::json(&doc)?;
    } else {
        let mut out = format!("{heading}\n");
        for v in violations {
            let level = if v.severity == Severity::Error {
                "error"
            } else {
                "warning"
            };
            let _ = writeln!(out, "  {level}: {v}");
        }
        let _ = writeln!(out, "{errors} error(s), {} warning(s)", violations.len() - errors);
        render::text(&out)?;
    }
    Ok(if errors > 0 { Exit::Drift } else { Exit::Success })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `profiles show hpc --vendor hpe` for a two-socket Milan host: HPE's names in the
    /// heading and table, each knob's binding with its evidence, and the enabling writes,
    /// before the sources.
    #[test]
    fn a_profile_shown_for_hpe_names_hpes_attributes_and_says_how_each_knob_was_bound() {
        let host = HostFacts {
            generation: Some(Generation::Milan),
            sockets: Some(2),
            ..HostFacts::default()
        };
        let resolved = Library::shipped().unwrap().resolve("hpc", &host).unwrap();
        let bound = bios_profiles::bind(&resolved, Vendor::Hpe).unwrap();
        let text = bound_text(&bound, &show_text(&bound.profile, &[]));
        let line = |start: &str| {
            text.lines()
                .position(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no line starting {start:?} in:\n{text}"))
        };
        assert!(
            text.lines()
                .next()
                .unwrap()
                .ends_with("(bound to HPE: HPE's attribute names and tokens)")
        );
        line("ApplicationPowerBoost ");
        line("  bound ApbDis → ApplicationPowerBoost = Disabled (inverted): A42 v2.60 registry:");
        line("  carried DynamicLinkWidthManagement → XGMIForceLinkWidth by DlwmForcedWidth");
        line("  skipped PcieAspmL1: no HPE equivalent:");
        let enabling =
            line("  enabling DeterminismControl = DeterminismCtrlManual (determinism-manual) for DeterminismSlider");
        assert!(enabling < line("Sources"), "the bindings come before the sources");
    }
}
