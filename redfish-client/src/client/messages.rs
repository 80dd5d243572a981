//! Error messages a service sent without their text, filled in from its message registries.
//!
//! HPE's iLO answers an error with MessageIds and arguments only (HPE's "iLO RESTful API"
//! documentation, "Redfish error responses and messages"): the text and the resolution are in
//! the registry each id names, which the service lists in `/redfish/v1/Registries` (DSP0266
//! "Redfish Specification"). When an [`Error::Status`] carries such a message, the registry is
//! looked up and the message filled in, so the error names what happened and what to do, not
//! only an id. A service that sends the text inline (Dell's iDRAC) costs nothing: nothing is
//! looked up for a message that has its text.
//!
//! What it costs: the `Registries` collection once per client (members inline with
//! `$expand=.`; members the service still gives as links are read one at a time, those whose
//! name starts with the wanted prefix first, each once), and each registry file once per client.
//! A lookup that failed is not tried again by the same client.
//!
//! Not looked up: answers whose status says it all and that callers probe with (401, 404, 405,
//! 412, 501), and those of a busy service (429, 503; retries that ran out): a lookup there
//! would cost requests for no news, or load a service that asked for less. A failed lookup
//! never replaces the error: the original is returned as it was, and the failure logged at
//! debug level.

use super::Client;
use super::registries::{Listing, Lookup};
use super::transport::RawResponse;
use crate::error::{Error, Result, decode_json};
use crate::odata::Collection;
use crate::resources::message::{Message, RedfishError};
use crate::resources::message_registry::{self, MessageIdParts, MessageRegistry, MessageRegistryFile, RegistryMessage};
use http::Method;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use url::Url;

/// Where a service lists its registries.
const REGISTRIES: &str = "/redfish/v1/Registries";

/// The language of the texts rftune prints.
const LANGUAGE: &str = "en";

/// Pages of the `Registries` collection read at most.
const MAX_PAGES: usize = 16;

/// Statuses whose answers are not explained (see the module documentation).
const UNEXPLAINED: [u16; 7] = [401, 404, 405, 412, 429, 501, 503];

impl Client {
    /// Sends with authentication ([`Client::send_authenticated`]); an error whose messages lack
    /// their text comes back with the text its registries give.
    pub(super) async fn execute(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        if_match: Option<&str>,
    ) -> Result<(Url, RawResponse)> {
        match self.send_authenticated(method, path, body, if_match).await {
            // On the heap: only a failure pays for the lookup's state.
            Err(e) => Err(Box::pin(self.explained(e)).await),
            ok => ok,
        }
    }

    /// `err` with every message that lacks its text filled in from the service's registries,
    /// where they have it; `err` unchanged otherwise.
    async fn explained(&self, err: Error) -> Error {
        let Error::Status {
            status,
            body: Some(body),
            ..
        } = &err
        else {
            return err;
        };
        if UNEXPLAINED.contains(status) || !body.extended_info.iter().any(|m| m.lacks_text()) {
            return err;
        }
        let mut filled: RedfishError = body.clone();
        let changed = self.fill_messages(&mut filled.extended_info).await;
        match err {
            Error::Status {
                method, url, status, ..
            } if changed => Error::Status {
                method,
                url,
                status,
                body: Some(filled),
            },
            unchanged => unchanged,
        }
    }

    /// Fills in the text, resolution and severity of each of `messages` that lacks its text
    /// (HPE's iLO sends ids and arguments only, in errors and in `@Redfish.Settings.Messages`
    /// alike) from the service's registries, read once per client; whether any was filled. A
    /// message whose lookup fails stays as it was.
    pub async fn fill_messages(&self, messages: &mut [Message]) -> bool {
        if !messages.iter().any(Message::lacks_text) {
            return false;
        }
        let mut lookup = self.inner.messages.lock().await;
        let mut changed = false;
        for message in messages.iter_mut().filter(|m| m.lacks_text()) {
            let Some(id) = MessageIdParts::parse(&message.message_id) else {
                continue;
            };
            match self.registry_entry(&mut lookup, id).await {
                Some(entry) => {
                    message.fill_from(&entry);
                    changed = true;
                }
                None => tracing::debug!(
                    url = %self.base_url(),
                    "no registry entry for {}; the message stays without its text",
                    message.message_id
                ),
            }
        }
        changed
    }

    /// The registry entry of `id`, read from the service (or this client's copy of what it
    /// read). A failure on the way is logged and answers `None`.
    async fn registry_entry(&self, lookup: &mut Lookup, id: MessageIdParts<'_>) -> Option<RegistryMessage> {
        if lookup.listing.is_none() {
            lookup.listing = Some(self.list_registries().await);
        }
        let listing = lookup.listing.as_mut()?;
        let member = match message_registry::choose(&listing.known, id.prefix, id.major, id.minor) {
            Some(member) => member.clone(),
            None => self.read_unread(listing, id).await?,
        };
        let Some(uri) = member.uri(LANGUAGE).map(str::to_owned) else {
            tracing::debug!(
                registry = member.registry.as_deref().or(member.id.as_deref()).unwrap_or("?"),
                "the registry names no file on the service"
            );
            return None;
        };
        if !lookup.files.contains_key(&uri) {
            let file = match self.read_plain::<MessageRegistry>(&uri).await {
                Ok(file) => Some(Arc::new(file)),
                Err(e) => {
                    tracing::debug!("reading the message registry failed: {e}");
                    None
                }
            };
            lookup.files.insert(uri.clone(), file);
        }
        let file = lookup.files.get(&uri)?.as_ref()?;
        file.messages.get(id.key).cloned()
    }

    /// Reads the members `listing` gave as links until one holds `id`'s registry, those whose
    /// name starts with its prefix first; each is read once per client.
    async fn read_unread(&self, listing: &mut Listing, id: MessageIdParts<'_>) -> Option<MessageRegistryFile> {
        let mut queue = listing.take_unread(id.prefix).into_iter();
        while let Some(link) = queue.next() {
            match self.read_plain::<MessageRegistryFile>(&link).await {
                Ok(member) => listing.known.push(member),
                Err(e) => tracing::debug!("reading the registry member {link} failed: {e}"),
            }
            if let Some(found) = message_registry::choose(&listing.known, id.prefix, id.major, id.minor) {
                let found = found.clone();
                listing.unread = queue.collect();
                return Some(found);
            }
        }
        None
    }

    /// The `Registries` collection, its members inline where the service expands them; empty
    /// (and logged) when it cannot be read.
    async fn list_registries(&self) -> Listing {
        let mut listing = Listing::default();
        let expanded = format!("{REGISTRIES}?$expand=.($levels=1)");
        let mut next = Some(expanded);
        let mut pages = 0;
        while let Some(page) = next.take() {
            pages += 1;
            if pages > MAX_PAGES {
                tracing::debug!("more than {MAX_PAGES} pages of registries; reading no further");
                break;
            }
            let read = match self.read_plain::<Collection<Value>>(&page).await {
                // A service that refuses the query is asked without it.
                Err(e) if pages == 1 && matches!(e.status(), Some(400 | 501)) => {
                    self.read_plain::<Collection<Value>>(REGISTRIES).await
                }
                other => other,
            };
            let collection = match read {
                Ok(c) => c,
                Err(e) => {
                    tracing::debug!("listing the message registries failed: {e}");
                    break;
                }
            };
            listing.add(collection.members);
            next = collection.next_link;
        }
        listing
    }

    /// `GET path` decoded as `T`, authenticated, without explaining its own failure (a lookup
    /// must not start another) and without reading a garbled answer again.
    async fn read_plain<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        let (url, raw) = self.send_authenticated(Method::GET, path, None, None).await?;
        decode_json("GET", url.as_str(), &raw.body)
    }
}
