//! Prints the shipped profiles as a Markdown table: settings written and inherited, by confidence.
//!
//! `cargo run -p bios-profiles --example profile_table`

use bios_profiles::{HostFacts, Library};
use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    let library = Library::shipped()?;
    println!("| profile | extends | own settings | stated | used | inferred | resolved | stated | used | inferred |");
    println!("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    let (mut own_total, mut counts_total) = (0, [0; 3]);
    for profile in library.list() {
        let own = profile.confidence_counts();
        // An unknown host keeps the settings of every generation and no platform override.
        let resolved = library
            .resolve(&profile.name, &HostFacts::default())?
            .confidence_counts();
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
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
        counts_total[0] += own.stated;
        counts_total[1] += own.used;
        counts_total[2] += own.inferred;
    }
    println!(
        "| **all files** | | {own_total} | {} | {} | {} | | | | |",
        counts_total[0], counts_total[1], counts_total[2]
    );
    println!();
    println!("own: settings written in the file (platform overrides included); resolved: with everything inherited,");
    println!("for a host of unknown generation and model (generation-limited settings all count, overrides don't).");
    Ok(())
}
