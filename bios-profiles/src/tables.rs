//! The shipped data tables resolution reads (`profiles/dell/tables.toml`), and what they decide
//! for a host: generation rules, NPS options by CPU layout and by memory population, CPU layouts
//! by model, and the SEV ASID split.
//!
//! The iDRAC reports neither DIMM channels nor CCD counts, so the tables are keyed on what it
//! does report: the CPU model and core count (`Proc1Brand`, `Proc1NumCores`), the sockets, and
//! the enabled DIMMs per socket (the `Memory` collection). A table decides only where a row
//! matches; where none does, or a generation's rules are not documented, the decision says so
//! and the host's registry decides as before. Every row names its source and confidence.

use crate::error::{Error, Result};
use crate::host::{Generation, HostFacts};
use crate::setting::{AsidSplit, Confidence, DataTable, Decision, Excluded, Outcome, Parameters, Setting};
use crate::sources::Sources;
use redfish_client::resources::bios::AttributeValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The shipped tables file.
pub const SHIPPED_TABLES: &str = include_str!("../profiles/dell/tables.toml");

/// The shipped tables, parsed once. The file is checked against the shipped sources by the
/// tests; a file that fails to parse gives empty tables here, so nothing is decided from it.
pub fn shipped() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| Tables::from_toml(SHIPPED_TABLES, "profiles/dell/tables.toml").unwrap_or_default())
}

/// How one generation's settings are found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenerationRule {
    /// Settings written for this generation apply here too (same BIOS family).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inherits: Option<Generation>,
    /// No source or payload covers this generation: only settings that name it apply; the
    /// others are not applicable with this reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_evidence: Option<String>,
    /// Why, in one line.
    pub why: String,
    /// The source id.
    pub source: String,
    /// How sure we are.
    pub confidence: Confidence,
}

/// A CPU model's layout (`[[cpu]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuLayout {
    /// The generation.
    pub generation: Generation,
    /// Model numbers (`7552`, `7702P`; case-insensitive).
    pub models: Vec<String>,
    /// Cores per processor.
    pub cores: u32,
    /// Core dies (CCDs).
    pub ccds: u32,
    /// Core complexes (CCXs, each with its own L3) per CCD.
    pub ccxs_per_ccd: u32,
    /// The source id.
    pub source: String,
    /// How sure the row is.
    pub confidence: Confidence,
    /// The source's words, where quoted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
}

impl CpuLayout {
    /// Cores per CCX.
    pub fn cores_per_ccx(&self) -> u32 {
        self.cores / (self.ccds * self.ccxs_per_ccd).max(1)
    }

    /// `6x2x4`: CCDs x CCXs per CCD x cores per CCX, as Dell's table writes it.
    pub fn notation(&self) -> String {
        format!("{}x{}x{}", self.ccds, self.ccxs_per_ccd, self.cores_per_ccx())
    }
}

/// The NPS values a CPU layout offers (`[[nps.layout]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NpsLayoutRow {
    /// The generations the row is for.
    pub generations: Vec<Generation>,
    /// Cores per processor.
    pub cores: u32,
    /// The layout, CCDs x CCXs per CCD x cores per CCX (`6x2x4`).
    pub layout: String,
    /// NPS values offered on one socket.
    pub one_socket: Vec<String>,
    /// NPS values offered on two sockets.
    pub two_sockets: Vec<String>,
    /// The source id.
    pub source: String,
    /// How sure the row is.
    pub confidence: Confidence,
    /// The source's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
}

/// What a number of enabled DIMMs per socket does to NPS (`[[nps.population]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PopulationRow {
    /// The generations the row is for.
    pub generations: Vec<Generation>,
    /// The enabled DIMMs per socket it covers; empty for a generation-wide row.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dimms_per_socket: Vec<u32>,
    /// NPS values whose interleave the population cannot form: ruled out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub falls_back: Vec<String>,
    /// The row warns instead of deciding (rules not documented, or they depend on which
    /// channels hold the DIMMs, which the iDRAC does not report).
    #[serde(default)]
    pub warning: bool,
    /// Why, in one line.
    pub why: String,
    /// The source id.
    pub source: String,
    /// How sure the row is.
    pub confidence: Confidence,
    /// The source's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
}

/// The rule for sockets whose DIMM counts differ (`[nps.unequal_sockets]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnequalSockets {
    /// The generations it is for.
    pub generations: Vec<Generation>,
    /// NPS values that need every socket populated alike.
    pub falls_back: Vec<String>,
    /// Why.
    pub why: String,
    /// The source id.
    pub source: String,
    /// How sure.
    pub confidence: Confidence,
    /// The source's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
}

/// What the BIOS does with an NPS it cannot apply (`[[nps.fallback]]`, one row per set of
/// generations).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fallback {
    /// The generations it is documented for.
    pub generations: Vec<Generation>,
    /// The value the BIOS takes instead.
    pub value: String,
    /// What the BIOS does, in one line.
    pub why: String,
    /// What reading the value back after another was written means, in one line.
    pub readback: String,
    /// The source id.
    pub source: String,
    /// How sure.
    pub confidence: Confidence,
    /// The source's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
}

/// The NPS tables.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NpsTables {
    /// The attribute they decide (`NumaNodesPerSocket`).
    #[serde(default)]
    pub attribute: String,
    /// Options per CPU layout.
    #[serde(default)]
    pub layout: Vec<NpsLayoutRow>,
    /// Options per memory population.
    #[serde(default)]
    pub population: Vec<PopulationRow>,
    /// Sockets populated differently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unequal_sockets: Option<UnequalSockets>,
    /// The BIOS's fallback, by generation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback: Vec<Fallback>,
}

/// A CPU's maximum SEV ASID count (`[[sev.cpu]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SevRow {
    /// Model numbers.
    pub models: Vec<String>,
    /// The maximum ASID count.
    pub max_asids: u32,
    /// The maximum depends on the memory configuration (Dell's glossary says it does).
    #[serde(default)]
    pub memory_dependent: bool,
    /// The source id.
    pub source: String,
    /// How sure.
    pub confidence: Confidence,
    /// The source's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
}

/// The SEV ASID table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SevTable {
    /// What the maximum depends on, in one line, for messages.
    #[serde(default)]
    pub note: String,
    /// The source of the note.
    #[serde(default)]
    pub source: String,
    /// Its words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// Maxima by CPU model.
    #[serde(default)]
    pub cpu: Vec<SevRow>,
}

/// All shipped tables.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tables {
    /// Generation rules, by generation.
    #[serde(default)]
    pub generation: BTreeMap<Generation, GenerationRule>,
    /// CPU layouts by model.
    #[serde(default)]
    pub cpu: Vec<CpuLayout>,
    /// The NPS tables.
    #[serde(default)]
    pub nps: NpsTables,
    /// The SEV ASID table.
    #[serde(default)]
    pub sev: SevTable,
}

impl Tables {
    /// Why `setting` does not apply to a host of `generation` under these generation rules, or
    /// `None` when it does (unknown generations: it applies). A generation that inherits
    /// another's settings takes those written for it; on a generation without evidence only
    /// settings that name it apply.
    pub fn generation_exclusion(&self, setting: &Setting, generation: Option<Generation>) -> Option<String> {
        let g = generation?;
        if setting.generations.contains(&g) {
            return None;
        }
        if let Some(rule) = self.unproven(g) {
            return Some(rule);
        }
        self.listed_exclusion(setting, g)
    }

    /// Why `setting` does not apply to a host of generation `g` by its own `generations` list
    /// alone (a generation without evidence is not ruled out: the setting's author vouches for
    /// it). For settings the operator wrote, where the shipped recommendations' want of evidence
    /// says nothing.
    pub fn listed_exclusion(&self, setting: &Setting, g: Generation) -> Option<String> {
        if setting.generations.is_empty() || setting.generations.iter().any(|&listed| self.counts_as(g, listed)) {
            return None;
        }
        Some(format!(
            "applies to {} only; this host is {g}",
            crate::host::list(&setting.generations)
        ))
    }

    /// Parses a tables file; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<Self> {
        let tables: Self = toml::from_str(text).map_err(|e| Error::toml(file, text, &e))?;
        let bad = |message: String| Error::Format {
            file: file.to_owned(),
            position: None,
            message,
        };
        for c in &tables.cpu {
            if c.ccds == 0 || c.ccxs_per_ccd == 0 || c.cores % (c.ccds * c.ccxs_per_ccd) != 0 {
                return Err(bad(format!(
                    "cpu {}: {} cores do not split evenly into {} CCDs of {} CCXs",
                    c.models.join(", "),
                    c.cores,
                    c.ccds,
                    c.ccxs_per_ccd
                )));
            }
        }
        for (g, rule) in &tables.generation {
            if rule.inherits == Some(*g) {
                return Err(bad(format!("generation {g} cannot inherit from itself")));
            }
        }
        Ok(tables)
    }

    /// Every source id the tables cite, with where.
    pub fn citations(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (g, r) in &self.generation {
            out.push((format!("generation {g}"), r.source.clone()));
        }
        for c in &self.cpu {
            out.push((format!("cpu {}", c.models.join(", ")), c.source.clone()));
        }
        for r in &self.nps.layout {
            out.push((format!("nps layout {} cores {}", r.cores, r.layout), r.source.clone()));
        }
        for r in &self.nps.population {
            out.push((format!("nps population {:?}", r.dimms_per_socket), r.source.clone()));
        }
        if let Some(u) = &self.nps.unequal_sockets {
            out.push(("nps unequal_sockets".to_owned(), u.source.clone()));
        }
        for f in &self.nps.fallback {
            out.push(("nps fallback".to_owned(), f.source.clone()));
        }
        if !self.sev.source.is_empty() {
            out.push(("sev".to_owned(), self.sev.source.clone()));
        }
        for r in &self.sev.cpu {
            out.push((format!("sev cpu {}", r.models.join(", ")), r.source.clone()));
        }
        out
    }

    /// Checks that every source the tables cite is in `sources`.
    pub fn check_sources(&self, sources: &Sources) -> Result<()> {
        for (what, id) in self.citations() {
            if !sources.contains(&id) {
                return Err(Error::Format {
                    file: "profiles/dell/tables.toml".to_owned(),
                    position: None,
                    message: format!("{what} cites unknown source `{id}`"),
                });
            }
        }
        Ok(())
    }

    /// Whether a setting written for `listed` applies to a host of generation `host`: the same
    /// generation, or one `host` inherits from.
    pub fn counts_as(&self, host: Generation, listed: Generation) -> bool {
        host == listed || self.generation.get(&host).and_then(|r| r.inherits) == Some(listed)
    }

    /// The reason settings that do not name `g` are not applicable there, when no source or
    /// payload covers `g`.
    pub fn unproven(&self, g: Generation) -> Option<String> {
        self.generation.get(&g).and_then(|r| r.no_evidence.clone())
    }

    /// The layout of `host`'s CPU, from its model number.
    pub fn cpu_layout(&self, host: &HostFacts) -> Option<&CpuLayout> {
        let number = host.cpu_model_number()?;
        self.cpu
            .iter()
            .find(|c| Some(c.generation) == host.generation && c.models.iter().any(|m| m.eq_ignore_ascii_case(number)))
    }

    /// Whether `falls_back` values of a population row could rule out a value of `setting`:
    /// a profile with such a setting needs the host's DIMMs read.
    pub fn population_may_rule_out(&self, setting: &Setting) -> bool {
        if setting.attribute != self.nps.attribute {
            return false;
        }
        let Some(candidates) = setting.wanted.candidates() else {
            return false;
        };
        let ruled = self
            .nps
            .population
            .iter()
            .flat_map(|r| r.falls_back.iter())
            .chain(self.nps.unequal_sockets.iter().flat_map(|u| u.falls_back.iter()));
        ruled
            .into_iter()
            .any(|v| candidates.contains(&AttributeValue::String(v.clone())))
    }

    /// The NPS decisions for `setting` on `host`, whose resolved BIOS settings are `bios`; rules
    /// the values out (recorded in `setting.excluded`) and records the rows consulted in
    /// `setting.decisions`. Returns whether a value is left.
    pub(crate) fn decide_nps(&self, setting: &mut Setting, host: &HostFacts, bios: &BTreeMap<String, Setting>) -> bool {
        if self.nps.attribute.is_empty() || setting.attribute != self.nps.attribute {
            return true;
        }
        let Some(candidates) = setting.wanted.candidates() else {
            return true;
        };
        let may_write_other_than_one = candidates.iter().any(|v| v.as_str() != Some("1"));
        let all = |name: &str| {
            bios.get(name)
                .is_some_and(|s| s.wanted.fixed() == Some(&AttributeValue::String("All".to_owned())))
        };
        let mut decisions = Vec::new();
        if let Some(d) = self.layout_decision(host, all("ProcCcds") && all("CcdCores"), &candidates) {
            decisions.push(d);
        }
        decisions.extend(self.population_decisions(host, &candidates, may_write_other_than_one));
        if may_write_other_than_one
            && let Some(f) = self.nps.fallback.iter().find(|f| {
                host.generation
                    .is_none_or(|g| f.generations.iter().any(|&l| self.counts_as(g, l)))
            })
        {
            decisions.push(Decision {
                table: DataTable::NpsPopulation,
                row: format!("NPS {} read back after another value was written", f.value),
                outcome: Outcome::Readback,
                rules_out: Vec::new(),
                reason: f.why.clone(),
                source: f.source.clone(),
                confidence: f.confidence,
                quote: f.quote.clone(),
                fallback: Some(AttributeValue::String(f.value.clone())),
                readback: Some(f.readback.clone()),
                ccds: None,
            });
        }
        for d in &decisions {
            for value in &d.rules_out {
                if !setting.excluded.iter().any(|e| &e.value == value) {
                    setting.excluded.push(Excluded {
                        value: value.clone(),
                        reason: format!(
                            "{value} is not possible on this host ({}: {}): {}",
                            d.table, d.row, d.reason
                        ),
                        table: Some(d.table),
                    });
                }
            }
        }
        setting.decisions.extend(decisions);
        candidates
            .iter()
            .any(|v| !setting.excluded.iter().any(|e| &e.value == v))
    }

    /// What the BIOS of `host` does at POST with NPS `written`, when the tables know it cannot
    /// take it: the value it falls back to (NPS 1) and the row that rules `written` out, with
    /// the reason. `None` when no row rules it out (the BIOS keeps it, as far as the tables
    /// know) or the generation's fallback is not documented. Judged with every CCD and core
    /// enabled. For an emulator that models the fallback, and for the verify step.
    pub fn nps_after_post(&self, host: &HostFacts, written: &str) -> Option<(AttributeValue, Decision)> {
        let generation = host.generation?;
        let fallback = self
            .nps
            .fallback
            .iter()
            .find(|f| f.generations.iter().any(|&l| self.counts_as(generation, l)))?;
        if written == fallback.value {
            return None;
        }
        let candidates = [AttributeValue::String(written.to_owned())];
        let decisions = self
            .layout_decision(host, true, &candidates)
            .into_iter()
            .chain(self.population_decisions(host, &candidates, true));
        decisions
            .into_iter()
            .find(|d| d.rules_out.iter().any(|v| v.as_str() == Some(written)))
            .map(|mut d| {
                d.fallback = Some(AttributeValue::String(fallback.value.clone()));
                d.readback = Some(fallback.readback.clone());
                (AttributeValue::String(fallback.value.clone()), d)
            })
    }

    /// The layout row's decision; `all_enabled`: the profile keeps every CCD and core on.
    fn layout_decision(&self, host: &HostFacts, all_enabled: bool, candidates: &[AttributeValue]) -> Option<Decision> {
        let generation = host.generation?;
        let documented = self
            .nps
            .layout
            .iter()
            .any(|r| r.generations.iter().any(|&l| self.counts_as(generation, l)));
        if !documented {
            return None;
        }
        let number = host.cpu_model_number()?;
        let note = |outcome, row: String, reason: String, source: &str, confidence, quote: Option<String>| Decision {
            table: DataTable::NpsLayout,
            row,
            outcome,
            rules_out: Vec::new(),
            reason,
            source: source.to_owned(),
            confidence,
            quote,
            fallback: None,
            readback: None,
            ccds: None,
        };
        let Some(cpu) = self.cpu_layout(host) else {
            return Some(note(
                Outcome::NoRow,
                format!("EPYC {number}"),
                format!(
                    "the EPYC {number} is not in the CPU layout table, so Dell's per-layout NPS table is not applied; the host's registry decides"
                ),
                self.nps.layout.first().map_or("", |r| r.source.as_str()),
                Confidence::Inferred,
                None,
            ));
        };
        if !all_enabled {
            return Some(note(
                Outcome::Warning,
                format!("EPYC {number}, {} cores {}", cpu.cores, cpu.notation()),
                "the profile does not keep every CCD and core enabled (ProcCcds and CcdCores All), so the layout after the job is unknown; the host's registry decides".to_owned(),
                &cpu.source,
                cpu.confidence,
                None,
            ));
        }
        let mut decision = self.layout_row_decision(host, cpu, generation, candidates)?;
        if let Some(reported) = host.cores.filter(|&c| c != cpu.cores) {
            decision.reason.push_str(&format!(
                "; the host reports {reported} cores now (a down-core setting), and the profile enables them all again"
            ));
        }
        Some(decision)
    }

    fn layout_row_decision(
        &self,
        host: &HostFacts,
        cpu: &CpuLayout,
        generation: Generation,
        candidates: &[AttributeValue],
    ) -> Option<Decision> {
        let notation = cpu.notation();
        let row = self.nps.layout.iter().find(|r| {
            r.generations.iter().any(|&l| self.counts_as(generation, l)) && r.cores == cpu.cores && r.layout == notation
        });
        let sockets = host.sockets;
        let Some(row) = row else {
            return Some(Decision {
                table: DataTable::NpsLayout,
                row: format!("{} cores, {notation}", cpu.cores),
                outcome: Outcome::NoRow,
                rules_out: Vec::new(),
                reason: format!(
                    "Dell's per-layout NPS table has no row for {} cores in {notation} (CCDs x CCXs x cores per CCX), so it rules nothing out; the host's registry decides",
                    cpu.cores
                ),
                source: self.nps.layout.first().map_or(String::new(), |r| r.source.clone()),
                confidence: Confidence::Inferred,
                quote: None,
                fallback: None,
                readback: None,
                ccds: Some(cpu.ccds),
            });
        };
        // One socket offers the one-socket column; two (or an unknown count) the two-socket one,
        // which adds only NPS 0.
        let (offered, column) = match sockets {
            Some(1) => (&row.one_socket, "one socket"),
            _ => (&row.two_sockets, "two sockets"),
        };
        if offered.is_empty() {
            return Some(Decision {
                table: DataTable::NpsLayout,
                row: format!("{} cores, {notation}, {column}", cpu.cores),
                outcome: Outcome::NoRow,
                rules_out: Vec::new(),
                reason: format!(
                    "Dell's table gives the options of {} cores in {notation} for one socket only, so it rules nothing out here; the host's registry decides",
                    cpu.cores
                ),
                source: row.source.clone(),
                confidence: row.confidence,
                quote: row.quote.clone(),
                fallback: None,
                readback: None,
                ccds: Some(cpu.ccds),
            });
        }
        let rules_out: Vec<AttributeValue> = candidates
            .iter()
            .filter(|v| v.as_str().is_some_and(|t| !offered.iter().any(|o| o == t)))
            .cloned()
            .collect();
        let reason = format!(
            "Dell's table gives the EPYC {} ({} cores, {notation}) NPS {} on {column}",
            host.cpu_model_number().unwrap_or_default(),
            cpu.cores,
            offered.join(", ")
        );
        Some(Decision {
            table: DataTable::NpsLayout,
            row: format!("{} cores, {notation}, {column}", cpu.cores),
            outcome: if rules_out.is_empty() {
                Outcome::Allows
            } else {
                Outcome::RulesOut
            },
            rules_out,
            reason,
            source: row.source.clone(),
            confidence: row.confidence.weaker(cpu.confidence),
            quote: row.quote.clone(),
            fallback: None,
            readback: None,
            ccds: Some(cpu.ccds),
        })
    }

    fn population_decisions(&self, host: &HostFacts, candidates: &[AttributeValue], warn: bool) -> Vec<Decision> {
        let Some(generation) = host.generation else {
            return Vec::new();
        };
        let rows: Vec<&PopulationRow> = self
            .nps
            .population
            .iter()
            .filter(|r| r.generations.iter().any(|&l| self.counts_as(generation, l)))
            .collect();
        let mut out = Vec::new();
        // A generation-wide row: its rules are not documented here.
        if let Some(row) = rows.iter().find(|r| r.dimms_per_socket.is_empty()) {
            if warn {
                out.push(population(row, format!("{generation}, any population"), Vec::new()));
            }
            return out;
        }
        let Some(memory) = &host.memory else {
            return out;
        };
        let counts: Vec<u32> = memory.dimms_per_socket.values().copied().collect();
        let mut distinct = counts.clone();
        distinct.sort_unstable();
        distinct.dedup();
        for n in &distinct {
            let Some(row) = rows.iter().find(|r| r.dimms_per_socket.contains(n)) else {
                continue;
            };
            if row.warning && !warn {
                continue;
            }
            let rules_out = ruled(candidates, &row.falls_back);
            out.push(population(row, format!("{n} DIMMs per socket"), rules_out));
        }
        if distinct.len() > 1
            && let Some(u) = &self.nps.unequal_sockets
            && u.generations.iter().any(|&l| self.counts_as(generation, l))
        {
            let rules_out = ruled(candidates, &u.falls_back);
            let joined: Vec<String> = counts.iter().map(u32::to_string).collect();
            out.push(Decision {
                table: DataTable::NpsPopulation,
                row: format!("{} DIMMs on the sockets", joined.join(" + ")),
                outcome: if rules_out.is_empty() {
                    Outcome::Allows
                } else {
                    Outcome::RulesOut
                },
                rules_out,
                reason: u.why.clone(),
                source: u.source.clone(),
                confidence: u.confidence,
                quote: u.quote.clone(),
                fallback: None,
                readback: None,
                ccds: None,
            });
        }
        out
    }

    /// The ASID split of a `sev_asids` setting on `host`, or why there is none: the CPU's
    /// maximum comes from the operator's `cpu_max_sev_asids` parameter, else from the table by
    /// CPU model; it is never taken from the registry's bound.
    pub(crate) fn asid_split(
        &self,
        plain_sev: u32,
        host: &HostFacts,
        parameters: &Parameters,
        given_by: Option<&str>,
    ) -> std::result::Result<AsidSplit, String> {
        let from_table = host.cpu_model_number().and_then(|number| {
            self.sev
                .cpu
                .iter()
                .find(|r| r.models.iter().any(|m| m.eq_ignore_ascii_case(number)))
                .map(|r| (number, r))
        });
        let (max, max_from) = match (parameters.cpu_max_sev_asids, from_table) {
            (Some(max), _) => (
                max,
                format!(
                    "parameter cpu_max_sev_asids = {max}{}",
                    given_by.map(|p| format!(" of profile {p}")).unwrap_or_default()
                ),
            ),
            (None, Some((number, row))) => (
                row.max_asids,
                format!(
                    "the SEV ASID table's row for the EPYC {number} ({}{})",
                    row.source,
                    if row.memory_dependent {
                        "; it depends on the memory configuration"
                    } else {
                        ""
                    }
                ),
            ),
            (None, None) => {
                let cpu = host
                    .cpu_model_number()
                    .map_or("this host's CPU".to_owned(), |n| format!("the EPYC {n}"));
                return Err(format!(
                    "the maximum SEV ASID count of {cpu} is not known here ({}), and the registry's bound is the same on every CPU; give it as `cpu_max_sev_asids` under [parameters] in a profile that extends this one (Linux reports it as \"SEV supported: N ASIDs\" while CpuMinSevAsid is 1), or set CpuMinSevAsid yourself",
                    self.sev.note
                ));
            }
        };
        if max <= plain_sev {
            return Err(format!(
                "the CPU's {max} ASIDs (from the {max_from}) leave none for SEV-ES and SEV-SNP guests once {plain_sev} are kept for plain SEV; set CpuMinSevAsid yourself"
            ));
        }
        let min_sev_asid = max - plain_sev + 1;
        let sev_es_snp = min_sev_asid - 1;
        Ok(AsidSplit {
            max_asids: max,
            max_from: max_from.clone(),
            plain_sev,
            sev_es_snp,
            min_sev_asid,
            reason: format!(
                "ASIDs 1-{sev_es_snp} ({sev_es_snp}) for SEV-ES and SEV-SNP guests, {min_sev_asid}-{max} ({plain_sev}) for plain SEV guests: at most {plain_sev} plain SEV guests run at once; the maximum {max} comes from the {max_from}"
            ),
        })
    }
}

fn ruled(candidates: &[AttributeValue], falls_back: &[String]) -> Vec<AttributeValue> {
    candidates
        .iter()
        .filter(|v| v.as_str().is_some_and(|t| falls_back.iter().any(|f| f == t)))
        .cloned()
        .collect()
}

fn population(row: &PopulationRow, label: String, rules_out: Vec<AttributeValue>) -> Decision {
    Decision {
        table: DataTable::NpsPopulation,
        row: label,
        // A row that rules a value out says so first; its warning stays in the reason.
        outcome: if !rules_out.is_empty() {
            Outcome::RulesOut
        } else if row.warning {
            Outcome::Warning
        } else {
            Outcome::Allows
        },
        rules_out,
        reason: row.why.clone(),
        source: row.source.clone(),
        confidence: row.confidence,
        quote: row.quote.clone(),
        fallback: None,
        readback: None,
        ccds: None,
    }
}
