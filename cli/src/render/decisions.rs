//! How the data tables' decisions read for people: which row of which table (a CPU layout, a
//! memory population, the SEV ASID split) decided a setting on a host, and why.

use bios_profiles::{AsidSplit, Decision, Outcome};

/// One line for a decision, or `None` for a row that only allows what the setting writes. A CPU
/// or layout the table has no row for says so.
pub fn line(d: &Decision) -> Option<String> {
    let row = format!("{} [{}]", d.table, d.row);
    let cited = format!("({}, {})", d.source, d.confidence.as_str());
    Some(match d.outcome {
        Outcome::RulesOut => {
            let values: Vec<String> = d.rules_out.iter().map(ToString::to_string).collect();
            format!("{row} rules out {}: {} {cited}", values.join(", "), d.reason)
        }
        Outcome::Warning => format!("{row}: warning: {} {cited}", d.reason),
        Outcome::Readback => {
            let fallback = d.fallback.as_ref().map_or_else(String::new, ToString::to_string);
            let means = d.readback.as_deref().unwrap_or(&d.reason);
            format!("if the BIOS reads back {fallback} after another value: {means}")
        }
        // No row: say so, as the table's reason does (the registry decides there).
        Outcome::NoRow => format!("{row}: no row: {} {cited}", d.reason),
        Outcome::Allows => return None,
    })
}

/// The SEV ASID split in one line.
pub fn split(s: &AsidSplit) -> String {
    format!(
        "CpuMinSevAsid = {}: {} ASIDs for SEV-ES/SNP, {} for plain SEV, of {} ({}): {}",
        s.min_sev_asid, s.sev_es_snp, s.plain_sev, s.max_asids, s.max_from, s.reason
    )
}
