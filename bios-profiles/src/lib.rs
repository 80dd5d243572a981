//! Dell's and AMD's BIOS and iDRAC recommendations for PowerEdge with AMD EPYC, as checked data.
//!
//! The recommendations are profiles (TOML) that are checked against a server's attribute
//! registry and turned into the writes that apply them.
//!
//! - [`profile`]: the TOML profile format. Each setting carries a value, a one-line `why`, a
//!   `source` id ([`sources`]) and a [`Confidence`] (stated, used, inferred).
//! - [`library`]: the shipped profiles (`profiles/dell/*.toml`, embedded), user files, and
//!   resolution for a host ([`HostFacts`]): `extends` chains (the child wins), settings limited
//!   to some CPU [`Generation`]s or host facts (`when = { sockets = 2 }`), per-model and per-CPU
//!   platform overrides, and platform limits that take values out of every profile's choices.
//! - [`boot`]: a profile's `[boot]` section (mode, order as device classes or FQDDs, disabled
//!   devices), the one grammar of device references, and their resolution against a host's
//!   boot devices into the BIOS attributes that stage them in the profile's one job.
//! - [`choose`](mod@choose): values the host decides — ordered preferences, accepted tokens,
//!   integers derived from the registry's bounds — picked from the host's registry, with the
//!   reason; a setting the host offers nothing for is unavailable, never guessed.
//! - [`HostView`]: what a host shows — its BIOS registry, current and pending values, and
//!   iDRAC attribute groups — borrowed from whoever read it; validation, diff, plan and
//!   simulation judge a resolved profile against it.
//! - [`validate`](mod@validate): every problem of a resolved profile on a host at once —
//!   unknown attributes (with the closest names), wrong types, values not allowed, attributes
//!   read-only or hidden *in the planned state* (the registry's dependencies re-evaluated with
//!   the profile's values), values a preset would force differently, attributes absent on the
//!   host.
//! - [`diff`](mod@diff): desired vs current vs pending per attribute, with the statuses
//!   `in_sync`, `drift`, `pending`, `pending_conflict`, `not_applicable`, `forced`.
//! - [`plan`](mod@plan): the minimal BIOS and iDRAC writes, including automatic unlocks such
//!   as `SysProfile = Custom`, after which the diff is clean; [`simulate`] shows what the BIOS
//!   reports after the job.
//! - [`verdict`]: the words those judgements share, below all of them — [`Target`],
//!   [`Violation`] and its [`Severity`], the [`Condition`]s and [`Fix`]es behind a block, and
//!   the plan's [`Unlock`]s.
//! - [`offline`]: a profile file's names and tokens checked without a host, against the catalog
//!   and known registries.
//! - [`memo`]: the BIOS check made once for every host of a fleet it holds for (same registry,
//!   profile, and values that matter to it).
//! - [`catalog`]: human setting names mapped to attribute names, searchable, with the value
//!   tokens seen on real hosts.
//! - [`managed`]: the managed set — every knob the shipped workload profiles set, per
//!   generation — that makes a host's state independent of the shipped profile it had before,
//!   and that a vendor binding maps to its own attributes.
//! - [`tables`]: the shipped data tables resolution reads — which generations inherit settings
//!   or have no evidence, NPS options by CPU layout and by memory population, CPU layouts by
//!   model, the SEV ASID split — and the [`Decision`]s and [`AsidSplit`] they leave on a
//!   resolved setting.
//!
//! The crate does no network IO: it uses `redfish-client`'s models and its dependency
//! evaluator without the HTTP client.
//!
//! ```
//! use bios_profiles::{HostFacts, HostView, Library, ValidateOptions, diff, plan, simulate, validate};
//! use redfish_client::resources::attribute_registry::AttributeRegistry;
//! use redfish_client::resources::bios::Attributes;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A tiny registry: ProcCStates is read-only unless SysProfile is Custom.
//! let registry: AttributeRegistry = serde_json::from_str(r#"{"RegistryEntries": {
//!   "Attributes": [
//!     {"AttributeName": "SysProfile", "Type": "Enumeration",
//!      "Value": [{"ValueName": "PerfOptimized"}, {"ValueName": "Custom"}]},
//!     {"AttributeName": "ProcCStates", "Type": "Enumeration", "ReadOnly": true,
//!      "Value": [{"ValueName": "Enabled"}, {"ValueName": "Disabled"}]}],
//!   "Dependencies": [{"DependencyFor": "ProcCStates", "Type": "Map", "Dependency": {
//!     "MapFrom": [{"MapFromAttribute": "SysProfile", "MapFromCondition": "NEQ",
//!                  "MapFromProperty": "CurrentValue", "MapFromValue": "Custom"}],
//!     "MapToAttribute": "ProcCStates", "MapToProperty": "ReadOnly", "MapToValue": true}}]}}"#)?;
//! let current: Attributes = serde_json::from_str(r#"{"SysProfile": "PerfOptimized", "ProcCStates": "Disabled"}"#)?;
//!
//! let mut library = Library::shipped()?;
//! library.add_toml(r#"
//!     name = "idle-friendly"
//!     description = "C-states on"
//!     [bios.ProcCStates]
//!     value = "Enabled"
//!     why = "Let idle cores sleep."
//!     source = "amd-instinct-host"
//!     confidence = "inferred"
//! "#, "idle-friendly.toml")?;
//! let profile = library.resolve("idle-friendly", &HostFacts::from_bios(&current))?;
//!
//! let host = HostView::new(&registry, &current);
//! assert!(validate(&profile, &host, &ValidateOptions::default()).is_empty());
//! let plan = plan(&profile, &host)?;
//! // ProcCStates is locked by SysProfile, which the profile leaves alone: the plan unlocks it.
//! assert_eq!(plan.bios["SysProfile"], "Custom".into());
//! assert_eq!(plan.unlocks[0].attribute, "SysProfile");
//! let after = simulate(&host, &plan);
//! assert!(diff(&profile, &HostView { bios: &after, ..host }).is_clean());
//! # Ok(()) }
//! ```

mod analysis;
pub mod boot;
pub mod catalog;
pub mod choose;
pub mod diff;
pub mod error;
pub mod host;
pub mod library;
pub mod managed;
pub mod memo;
pub mod offline;
pub mod os;
pub mod plan;
pub mod profile;
pub mod reference;
pub mod setting;
pub mod sources;
pub mod suggest;
pub mod tables;
pub mod validate;
pub mod verdict;

pub use boot::{BootDevice, BootDevices, BootEntry, BootSection, DeviceClass, DeviceRef, Pick};
pub use catalog::{Catalog, CatalogEntry, SeenToken};
pub use choose::Choice;
pub use diff::{Change, Diff, HostVerdict, Status, StatusCounts, diff};
pub use error::{Error, Position, Result};
pub use host::{Generation, HostFacts, HostView, MemoryPopulation};
pub use library::{Citation, Library, Quote, ResolvedProfile, Skipped};
pub use managed::{Gate, Knob, ManagedSet};
pub use memo::CheckMemo;
pub use plan::{Plan, plan, simulate, simulate_idrac};
pub use profile::{Cpu, IdracSetting, Left, Platform, Profile, Unsupported};
pub use reference::ProfileRef;
pub use setting::{
    AsidSplit, Bound, Confidence, ConfidenceCounts, DataTable, Decision, Excluded, MemoryCondition, Outcome,
    Parameters, Setting, Unchecked, Wanted, When,
};
pub use sources::{Source, Sources};
pub use tables::Tables;
pub use validate::{ValidateOptions, validate, validate_idrac};
pub use verdict::{Condition, Fix, Severity, Target, Unlock, ValueOrigin, Violation, ViolationKind};
