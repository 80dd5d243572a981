//! What the current values make of the BIOS registry: which attributes are hidden and
//! read-only (the dependency evaluator over the host's known values), System Lockdown, and the
//! registry served with those flags, rendered once per state.

use super::state::View;
use crate::fixture::EntryFlags;
use crate::host::core::{Host, State};
use crate::host::reply::Reply;
use redfish_client::dependencies::{DependencyEvaluator, Evaluation};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::Attributes;

impl Host {
    pub(crate) fn registry(&self) -> &AttributeRegistry {
        &self.fixture.bios_registry
    }

    /// The registry's rules on `candidate`. As on a real iDRAC's `GET …/Bios`, an attribute the
    /// candidate lacks is hidden unless a `Hidden` rule decides otherwise, and a rule that reads
    /// a value the candidate lacks leaves the registry's recorded flag standing.
    pub(crate) fn evaluate(&self, candidate: &Attributes) -> Evaluation<'_> {
        DependencyEvaluator::new(self.registry())
            .with_listing(candidate.keys())
            .evaluate(candidate)
    }

    /// The view of the current values, computed if the state changed since the last one.
    pub(crate) fn view<'s>(&self, s: &'s mut State) -> &'s mut View {
        if s.bios.view.is_none() {
            let evaluation = self.evaluate(&s.bios.known());
            let mut view = View::default();
            for attr in &self.registry().registry_entries.attributes {
                let name = attr.attribute_name.as_str();
                if evaluation.is_hidden(name) {
                    view.hidden.insert(name.to_owned());
                }
                if evaluation.is_read_only(name) {
                    view.read_only.insert(name.to_owned());
                }
            }
            s.bios.view = Some(view);
        }
        s.bios.view.get_or_insert_with(View::default)
    }

    /// The BIOS registry with `ReadOnly`/`Hidden` evaluated for this host's current values, as a
    /// real iDRAC reports them. Under System Lockdown every attribute that would be writable is
    /// `ReadOnly` and `Immutable`, as on a real locked R750 (iDRAC 7.10). Rendered once per
    /// state change.
    pub fn bios_registry(&self) -> Reply {
        let mut s = self.now();
        let lockdown = s.dell_attributes.lockdown();
        let view = self.view(&mut s);
        if let Some(body) = &view.registry {
            return Reply::ok_rendered(body.clone());
        }
        let index = self.registry().index();
        let flags = |name: &str| {
            let read_only = view.read_only.contains(name);
            let immutable = index.get(name).is_some_and(|a| a.immutable.unwrap_or(false));
            EntryFlags {
                read_only: read_only || lockdown,
                hidden: view.hidden.contains(name),
                immutable: immutable || (lockdown && !read_only),
            }
        };
        let body = self.fixture.render_bios_registry(&flags);
        view.registry = Some(body.clone());
        Reply::ok_rendered(body)
    }
}
