//! Prints the shipped profiles as a Markdown table: settings written and inherited, by
//! confidence, and how many of a file's settings the host's registry decides.
//!
//! `cargo run -p bios-profiles --example profile_table`

use bios_profiles::{HostFacts, Library};
use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    let library = Library::shipped()?;
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
