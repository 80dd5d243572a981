//! Plain DMTF Redfish, for a service no backend recognises: the system, its BIOS and its
//! settings object are found by following links, a settings object may mirror every value (so
//! only a value that differs is pending), staging is a PATCH of that object and discarding
//! writes the current values back. rftune reads such a service; it does not write to one (the
//! backend's refusal says why), so the writes here serve the backends built on it.

use super::concern::PendingValues;
use futures_util::future::BoxFuture;
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use redfish_client::{Client, ODataId, Result, Staged, Written};

/// A settings object that may hold every value, changed or not.
pub(super) struct MirroredSettings {
    /// Whether a staged PATCH carries the apply time asked for: an HPE iLO offers none (its
    /// settings object applies at the next system reset, whatever the body says).
    pub(super) sends_apply_time: bool,
}

impl PendingValues for MirroredSettings {
    fn pending(&self, current: &Attributes, settings: Attributes) -> Attributes {
        pending_changes(current, settings)
    }

    fn stage<'a>(
        &'a self,
        client: &'a Client,
        settings: &'a ODataId,
        values: &'a Attributes,
        apply_time: Option<&'a SettingsApplyTime>,
        etag: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Staged>> {
        let apply_time = apply_time.filter(|_| self.sends_apply_time);
        Box::pin(client.stage_settings_if_match(settings, values, apply_time, etag))
    }

    /// No standard action discards pending values: each pending attribute gets its current
    /// value back.
    fn clear<'a>(
        &'a self,
        client: &'a Client,
        settings: &'a ODataId,
        current: &'a Attributes,
        pending: &'a Attributes,
    ) -> BoxFuture<'a, Result<Written>> {
        let back: Attributes = pending
            .keys()
            .filter_map(|k| Some((k.clone(), current.get(k)?.clone())))
            .collect();
        Box::pin(async move {
            let body = redfish_client::request::settings_body(&back, None);
            client.patch(settings.path(), &body).await
        })
    }
}

/// The entries of a settings object that differ from the current values.
pub(super) fn pending_changes(current: &Attributes, settings: Attributes) -> Attributes {
    settings
        .into_iter()
        .filter(|(k, v)| current.get(k) != Some(v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_object_mirroring_current_values_has_nothing_pending() {
        let current: Attributes = [("A".to_owned(), "x".into()), ("B".to_owned(), 1.into())]
            .into_iter()
            .collect();
        let mirror = current.clone();
        assert!(pending_changes(&current, mirror).is_empty());
        let mut changed = current.clone();
        changed.insert("B".into(), 2.into());
        changed.insert("New".into(), "y".into());
        let pending = pending_changes(&current, changed);
        assert_eq!(pending.keys().collect::<Vec<_>>(), ["B", "New"]);
    }
}
