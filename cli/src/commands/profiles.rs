//! `rftune profiles list|show|validate|search|derive`: browse and check the recommendations.

use crate::Exit;
use crate::args::{OutputFormat, ProfilesCommand};
use crate::render::{self, Table};
use anyhow::Result;
use bios_profiles::{
    Citation, Generation, HostFacts, HostView, Library, ResolvedProfile, Setting, Severity, ValidateOptions,
};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::Attributes;
use rftune_engine::assess::LoadedProfile;
use rftune_engine::derive::{self, Selection};
use rftune_engine::snapshot::Snapshot;
use rftune_engine::state::StateDirs;
use serde_json::json;
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
            show(profile, &host, output)
        }
        ProfilesCommand::Search { query } => search(&query.join(" "), output),
        ProfilesCommand::Validate(args) => validate(args, dirs, output).await,
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
    use rftune_engine::scp::profile::{Selection, Typing, derive};
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
        Selection::Catalog
    } else {
        Selection::CatalogAnd(attributes.to_vec())
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

fn show(name: &str, host: &HostFacts, output: OutputFormat) -> Result<Exit> {
    let chosen = LoadedProfile::load(name)?;
    let resolved = chosen.resolve(host)?;
    let citations = resolved.citations(chosen.library().sources());
    if output == OutputFormat::Json {
        let mut doc = serde_json::to_value(&resolved)?;
        if let Some(map) = doc.as_object_mut() {
            map.insert("schema".into(), json!("rftune.profile/v1"));
            map.insert("sources".into(), serde_json::to_value(&citations)?);
        }
        render::json(&doc)?;
        return Ok(Exit::Success);
    }
    render::text(&show_text(&resolved, &citations))?;
    Ok(Exit::Success)
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
    for s in &resolved.skipped {
        let _ = writeln!(out, "  skipped {}: {}", s.setting.attribute, s.reason);
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
    let (registry, current, mut host): (Option<AttributeRegistry>, Attributes, HostFacts) =
        match (&args.registry, &args.bmc) {
            (Some(path), _) => {
                let text =
                    rftune_engine::state::read_capped(path, rftune_engine::state::MAX_DOCUMENT_BYTES, "registry")?;
                let registry: AttributeRegistry =
                    redfish_client::error::decode_json("FILE", &path.display().to_string(), text.as_bytes())?;
                let model = registry.product_names().next().map(str::to_owned);
                (
                    Some(registry),
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
                (Some(std::sync::Arc::unwrap_or_clone(state.registry)), state.bios, facts)
            }
            (None, None) => (None, Attributes::new(), HostFacts::default()),
        };
    let given = facts(args.model.as_deref(), args.generation.as_deref())?;
    host.model = given.model.or(host.model);
    host.generation = given.generation.or(host.generation);
    let resolved = chosen.resolve(&host)?;
    let violations = match &registry {
        Some(r) => bios_profiles::validate(
            &resolved,
            &HostView::new(r, &current),
            &ValidateOptions { strict: args.strict },
        ),
        None => Vec::new(),
    };
    let errors = violations.iter().filter(|v| v.severity == Severity::Error).count();
    if output == OutputFormat::Json {
        render::json(
            &json!({"schema": "rftune.validate/v1", "profile": resolved.name, "checked_against_registry": registry.is_some(),
                             "errors": errors, "violations": violations}),
        )?;
    } else {
        let mut out = String::new();
        let against = if registry.is_some() {
            "against the registry"
        } else {
            "format only (give --registry FILE or --bmc URL to check values)"
        };
        let _ = writeln!(
            out,
            "{}: {} setting(s), checked {against}",
            resolved.name,
            resolved.bios.len() + resolved.idrac.len()
        );
        for v in &violations {
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
