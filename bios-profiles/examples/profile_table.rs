//! Prints the shipped profiles as a Markdown table: settings written and inherited, by
//! confidence, and how many of a file's settings the host's registry decides. With `settings`,
//! lists each file's own settings by confidence instead (platform overrides and generation
//! limits marked), as the README's per-profile lists are written; with `stated`, every stated
//! setting with the words it quotes.
//!
//! `cargo run -p bios-profiles --example profile_table [settings | stated]`

use bios_profiles::{Confidence, HostFacts, Library, Profile, Setting};
use std::error::Error;

/// `Name` or `Name (rome, milan)` or `Name [platform rome]`.
fn label(s: &Setting, platform: Option<&str>) -> String {
    let mut out = s.attribute.clone();
    if !s.generations.is_empty() {
        let g: Vec<&str> = s.generations.iter().map(|g| g.as_str()).collect();
        out.push_str(&format!(" ({})", g.join(", ")));
    }
    if let Some(p) = platform {
        out.push_str(&format!(" [{p}]"));
    }
    out
}

fn own(profile: &Profile) -> Vec<(String, &Setting)> {
    let plain = profile
        .bios
        .values()
        .chain(profile.idrac.values().map(|s| &s.setting))
        .map(|s| (label(s, None), s));
    let platforms = profile.platforms.values().flat_map(|pl| {
        pl.bios
            .values()
            .chain(pl.idrac.values().map(|s| &s.setting))
            .map(move |s| (label(s, Some(&format!("platform {}", pl.describe()))), s))
    });
    plain.chain(platforms).collect()
}

fn settings(library: &Library) {
    for profile in library.list() {
        println!("**{}**", profile.name);
        for confidence in [Confidence::Stated, Confidence::Used, Confidence::Inferred] {
            let names: Vec<String> = own(profile)
                .into_iter()
                .filter(|(_, s)| s.confidence == confidence)
                .map(|(l, _)| l)
                .collect();
            if !names.is_empty() {
                println!("- {confidence}: {}", names.join(", "));
            }
        }
        println!();
    }
}

fn stated(library: &Library) {
    for profile in library.list() {
        for (label, s) in own(profile)
            .into_iter()
            .filter(|(_, s)| s.confidence == Confidence::Stated)
        {
            println!(
                "- {} {label} = {} ({}): \"{}\"",
                profile.name,
                s.wanted,
                s.source,
                s.quote.as_deref().unwrap_or_default()
            );
        }
        for pl in profile.platforms.values() {
            for u in pl.unsupported.values().filter(|u| u.confidence == Confidence::Stated) {
                let values: Vec<String> = u.values.iter().map(ToString::to_string).collect();
                println!(
                    "- {} limit {} not {} [platform {}] ({}): \"{}\"",
                    profile.name,
                    u.attribute,
                    values.join(", "),
                    pl.describe(),
                    u.source,
                    u.quote.as_deref().unwrap_or_default()
                );
            }
        }
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let library = Library::shipped()?;
    match std::env::args().nth(1).as_deref() {
        Some("settings") => {
            settings(&library);
            return Ok(());
        }
        Some("stated") => {
            stated(&library);
            return Ok(());
        }
        _ => {}
    }
    println!(
        "| profile | extends | own settings | stated | used | inferred | per host | resolved | stated | used | inferred |"
    );
    println!("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    let (mut own_total, mut counts_total, mut per_host_total) = (0, [0; 3], 0);
    for profile in library.list() {
        let own = profile.confidence_counts();
        let per_host = profile.settings().filter(|s| s.wanted.is_chosen_per_host()).count();
        // An unknown host keeps the settings of every generation and no platform override.
        let resolved = library
            .resolve(&profile.name, &HostFacts::default())?
            .confidence_counts();
        println!(
            "| {} | {} | {} | {} | {} | {} | {per_host} | {} | {} | {} | {} |",
            profile.name,
            profile.extends.as_deref().unwrap_or("-"),
            own.total(),
            own.stated,
            own.used,
            own.inferred,
            resolved.total(),
            resolved.stated,
            resolved.used,
            resolved.inferred
        );
        own_total += own.total();
        per_host_total += per_host;
        counts_total[0] += own.stated;
        counts_total[1] += own.used;
        counts_total[2] += own.inferred;
    }
    println!(
        "| **all files** | | {own_total} | {} | {} | {} | {per_host_total} | | | | |",
        counts_total[0], counts_total[1], counts_total[2]
    );
    println!();
    println!("own: settings written in the file (platform overrides included); per host: own settings whose value");
    println!("the host's registry decides (prefer, accept, derive); resolved: with everything inherited, for a host");
    println!("of unknown generation and model (generation-limited settings all count, overrides don't).");
    Ok(())
}
