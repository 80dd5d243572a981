//! The BIOS check shared by the hosts it is the same for.
//!
//! Checking a profile's BIOS settings on a host (choices, the dependency analysis with its
//! unlocks, the violations) is most of what a diff costs, and its answer depends on less than
//! the host's whole state: the registry, the resolved profile, which attributes the host lists
//! (an unlisted one is hidden), and the values of the attributes the registry's rules read or
//! set and the profile names. A fleet of one model and BIOS version shares one registry, and
//! its hosts mostly agree on those values (they differ in service tags, serial numbers, MAC
//! addresses), so [`CheckMemo`] checks once per distinct
//! (registry, profile, listing, values that matter) and hands the same answer to every host
//! that matches. A host that differs in any of them gets its own check, never another's.
//!
//! Registries are told apart by identity (the `Arc` a fleet shares), not content: a host that
//! brought its own registry (one served under System Lockdown, one that does not fit the
//! shared copy) is checked on its own. A host matches a check when its listing and values
//! equal the recorded ones, compared in full.

use crate::diff::{Diff, diff_checked};
use crate::host::HostView;
use crate::library::ResolvedProfile;
use crate::validate::{Checked, ValidateOptions, check_bios};
use crate::verdict::Violation;
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::AttributeValue;
use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

/// Checks kept at once (the oldest goes first; the newest are looked at first): a fleet shows a handful of distinct states;
/// one where every host differs gains nothing from more.
const MAX_CHECKS: usize = 64;

/// Registries whose rule attributes are kept at once.
const MAX_REGISTRIES: usize = 16;

/// BIOS checks made during a run, shared by the hosts they hold for; see the module docs.
#[derive(Default)]
pub struct CheckMemo {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Per registry, the attributes its rules read or set.
    ruled: VecDeque<(Weak<AttributeRegistry>, Arc<HashSet<String>>)>,
    checks: VecDeque<Entry>,
}

struct Entry {
    /// A `Weak`, so the memo keeps no registry alive; it keeps the allocation, so the address
    /// cannot be reused by another registry while the entry exists.
    registry: Weak<AttributeRegistry>,
    profile: ResolvedProfile,
    strict: bool,
    /// Every attribute the host listed, in order, with its value where it matters.
    listing: Vec<(String, Option<AttributeValue>)>,
    /// Filled by the first host of its kind.
    checked: Arc<OnceLock<Arc<Checked>>>,
}

impl std::fmt::Debug for CheckMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckMemo").field("checks", &self.len()).finish()
    }
}

impl CheckMemo {
    /// An empty memo.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many distinct checks it holds.
    pub fn len(&self) -> usize {
        self.lock().checks.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The validation findings and the diff of `profile` on `host`, exactly as
    /// [`crate::validate()`] and [`crate::diff()`] give them, with the BIOS check made once for
    /// every host it holds for. `registry` is the shared registry `host.registry` borrows;
    /// when it is another, nothing is shared.
    pub fn assess(
        &self,
        registry: &Arc<AttributeRegistry>,
        profile: &ResolvedProfile,
        host: &HostView<'_>,
        options: &ValidateOptions,
    ) -> (Vec<Violation>, Diff) {
        let checked = self.check(registry, profile, host, false);
        let violations = if options.strict {
            self.check(registry, profile, host, true).violations.clone()
        } else {
            checked.violations.clone()
        };
        (violations, diff_checked(profile, host, &checked))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn check(
        &self,
        registry: &Arc<AttributeRegistry>,
        profile: &ResolvedProfile,
        host: &HostView<'_>,
        strict: bool,
    ) -> Arc<Checked> {
        let options = ValidateOptions { strict };
        if !std::ptr::eq(host.registry, Arc::as_ptr(registry)) {
            return Arc::new(check_bios(profile, host, &options));
        }
        let weak = Arc::downgrade(registry);
        let found = self.lock().checks.iter().find_map(|e| {
            (e.strict == strict
                && Weak::ptr_eq(&e.registry, &weak)
                && e.listing.len() == host.bios.len()
                && e.listing
                    .iter()
                    .zip(host.bios)
                    .all(|((n, v), (name, value))| n == name && v.as_ref().is_none_or(|v| v == value))
                && e.profile == *profile)
                .then(|| e.checked.clone())
        });
        let cell = match found {
            Some(cell) => cell,
            None => {
                let ruled = self.ruled(registry);
                let matters = |name: &str| ruled.contains(name) || profile.bios.contains_key(name);
                let listing = host
                    .bios
                    .iter()
                    .map(|(name, value)| (name.clone(), matters(name).then(|| value.clone())))
                    .collect();
                let cell = Arc::new(OnceLock::new());
                let mut inner = self.lock();
                if inner.checks.len() >= MAX_CHECKS {
                    inner.checks.pop_back();
                }
                inner.checks.push_front(Entry {
                    registry: weak,
                    profile: profile.clone(),
                    strict,
                    listing,
                    checked: cell.clone(),
                });
                cell
            }
        };
        // Hosts that arrive while the first of their kind is being checked wait for that check
        // (a fleet's first hosts arrive together) instead of each making its own.
        cell.get_or_init(|| Arc::new(check_bios(profile, host, &options)))
            .clone()
    }

    /// The attributes `registry`'s rules read or set (computed once per registry).
    fn ruled(&self, registry: &Arc<AttributeRegistry>) -> Arc<HashSet<String>> {
        let weak = Arc::downgrade(registry);
        if let Some((_, names)) = self.lock().ruled.iter().find(|(r, _)| Weak::ptr_eq(r, &weak)) {
            return names.clone();
        }
        let mut names = HashSet::new();
        for dependency in &registry.registry_entries.dependencies {
            names.insert(dependency.dependency_for.clone());
            if let Some(rule) = &dependency.dependency {
                names.insert(rule.map_to_attribute.clone());
                names.extend(rule.map_from.iter().map(|c| c.map_from_attribute.clone()));
            }
        }
        let names = Arc::new(names);
        let mut inner = self.lock();
        if inner.ruled.len() >= MAX_REGISTRIES {
            inner.ruled.pop_front();
        }
        inner.ruled.push_back((weak, names.clone()));
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::Status;
    use crate::host::HostFacts;
    use crate::library::Library;
    use crate::validate::validate;
    use redfish_client::resources::bios::Attributes;

    /// ProcCStates is read-only unless SysProfile is Custom; SystemServiceTag is in no rule.
    fn registry() -> Arc<AttributeRegistry> {
        let registry = serde_json::from_str(
            r#"{"Id": "T", "RegistryEntries": {
              "Attributes": [
                {"AttributeName": "SysProfile", "Type": "Enumeration",
                 "Value": [{"ValueName": "PerfOptimized"}, {"ValueName": "Custom"}]},
                {"AttributeName": "ProcCStates", "Type": "Enumeration", "ReadOnly": true,
                 "Value": [{"ValueName": "Enabled"}, {"ValueName": "Disabled"}]},
                {"AttributeName": "SystemServiceTag", "Type": "String", "ReadOnly": true}],
              "Dependencies": [{"DependencyFor": "ProcCStates", "Type": "Map", "Dependency": {
                "MapFrom": [{"MapFromAttribute": "SysProfile", "MapFromCondition": "NEQ",
                             "MapFromProperty": "CurrentValue", "MapFromValue": "Custom"}],
                "MapToAttribute": "ProcCStates", "MapToProperty": "ReadOnly", "MapToValue": true}}]}}"#,
        )
        .unwrap();
        Arc::new(registry)
    }

    fn profile(current: &Attributes) -> ResolvedProfile {
        let mut library = Library::shipped().unwrap();
        library
            .add_toml(
                r#"
                name = "idle-friendly"
                description = "C-states on"
                [bios.ProcCStates]
                value = "Enabled"
                why = "Let idle cores sleep."
                source = "amd-instinct-host"
                confidence = "inferred"
                "#,
                "idle-friendly.toml",
            )
            .unwrap();
        library
            .resolve("idle-friendly", &HostFacts::from_bios(current))
            .unwrap()
    }

    fn host(pairs: &[(&str, &str)]) -> Attributes {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).into())).collect()
    }

    /// The memo's answer, checked against the one computed for this host alone.
    fn assess(memo: &CheckMemo, registry: &Arc<AttributeRegistry>, bios: &Attributes) -> (Vec<Violation>, Diff) {
        let profile = profile(bios);
        let state = HostView::new(registry, bios);
        let options = ValidateOptions::default();
        let shared = memo.assess(registry, &profile, &state, &options);
        assert_eq!(shared.0, validate(&profile, &state, &options));
        assert_eq!(shared.1, crate::diff(&profile, &state));
        shared
    }

    #[test]
    fn hosts_differing_only_in_values_no_rule_reads_share_one_check() {
        let (memo, registry) = (CheckMemo::new(), registry());
        let a = host(&[
            ("SysProfile", "PerfOptimized"),
            ("ProcCStates", "Disabled"),
            ("SystemServiceTag", "AAA1111"),
        ]);
        let b = host(&[
            ("SysProfile", "PerfOptimized"),
            ("ProcCStates", "Disabled"),
            ("SystemServiceTag", "BBB2222"),
        ]);
        assert_eq!(assess(&memo, &registry, &a), assess(&memo, &registry, &b));
        assert_eq!(memo.len(), 1);
    }

    #[test]
    fn a_host_with_other_values_that_matter_gets_its_own_check() {
        let (memo, registry) = (CheckMemo::new(), registry());
        let drifted = host(&[
            ("SysProfile", "PerfOptimized"),
            ("ProcCStates", "Disabled"),
            ("SystemServiceTag", "A"),
        ]);
        let (_, diff) = assess(&memo, &registry, &drifted);
        assert_eq!(diff.changes[0].status, Status::Drift);
        // The profile's own attribute differs: in sync, not the drift checked before.
        let in_sync = host(&[
            ("SysProfile", "PerfOptimized"),
            ("ProcCStates", "Enabled"),
            ("SystemServiceTag", "A"),
        ]);
        let (_, diff) = assess(&memo, &registry, &in_sync);
        assert_eq!(diff.changes[0].status, Status::InSync);
        // An attribute a rule reads differs: no unlock is needed, so the note differs.
        let custom = host(&[
            ("SysProfile", "Custom"),
            ("ProcCStates", "Disabled"),
            ("SystemServiceTag", "A"),
        ]);
        assess(&memo, &registry, &custom);
        // The listing differs (ProcCStates unlisted, so hidden): not applicable.
        let unlisted = host(&[("SysProfile", "PerfOptimized"), ("SystemServiceTag", "A")]);
        let (_, diff) = assess(&memo, &registry, &unlisted);
        assert_eq!(diff.changes[0].status, Status::NotApplicable);
        assert_eq!(memo.len(), 4);
    }

    #[test]
    fn another_registry_with_the_same_content_is_checked_on_its_own() {
        let memo = CheckMemo::new();
        let bios = host(&[
            ("SysProfile", "PerfOptimized"),
            ("ProcCStates", "Disabled"),
            ("SystemServiceTag", "A"),
        ]);
        assess(&memo, &registry(), &bios);
        assess(&memo, &registry(), &bios);
        assert_eq!(memo.len(), 2);
    }

    #[test]
    fn strict_findings_are_not_taken_for_lenient_ones() {
        let (memo, registry) = (CheckMemo::new(), registry());
        // ProcCStates absent from the registry's listing and the host: strict makes it an error.
        let bios = host(&[("SysProfile", "PerfOptimized"), ("SystemServiceTag", "A")]);
        let profile = profile(&bios);
        let state = HostView::new(&registry, &bios);
        for strict in [false, true, false] {
            let options = ValidateOptions { strict };
            let (violations, _) = memo.assess(&registry, &profile, &state, &options);
            assert_eq!(violations, validate(&profile, &state, &options));
        }
    }
}
