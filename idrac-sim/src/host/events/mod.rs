//! The event service's subscriptions: created by `POST EventService/Subscriptions` (201 with
//! `Location`, DSP0266), read, and deleted; `SubmitTestEvent` checked against them. Events are
//! not delivered: the emulator never opens a connection of its own.
//!
//! Shapes: the R750's `EventService` and its empty `Subscriptions` collection (6.00 and 7.10);
//! a subscription carries what was asked (`Destination`, `EventTypes`, `Context`, `Protocol`,
//! `SubscriptionType`). SYS423 (no subscriptions for a test event) is the iDRAC registry's.
//! Assumed: the subscription limit (8) and which bodies are refused (no `Destination`, one
//! not `http://` or `https://`, a `Protocol` other than Redfish).

pub(crate) mod state;

use super::core::Host;
use super::reply::Reply;
use crate::messages::{self, idrac};
use crate::route::{Route, exact, prefix};
use crate::synth::{EVENT_SERVICE, SUBSCRIPTIONS};
use serde_json::{Value, json};

/// Subscriptions one host keeps.
const LIMIT: usize = 8;

/// The subscriptions, one subscription, and the test event.
pub(crate) fn routes() -> Vec<Route> {
    let exists: crate::route::Guard = |h, r| h.subscription(r.path).is_some();
    vec![
        Route::get(exact(SUBSCRIPTIONS), |h, _| Reply::ok(h.subscriptions())),
        Route::post(exact(SUBSCRIPTIONS), |h, r| r.with_json(|b| h.subscribe(b))),
        Route::get(prefix(SUBSCRIPTIONS), |h, r| {
            Reply::ok(h.subscription(r.path).unwrap_or_default())
        })
        .when(exists),
        Route::delete(prefix(SUBSCRIPTIONS), |h, r| h.unsubscribe(r.path)).when(exists),
        Route::post(
            exact(format!("{EVENT_SERVICE}/Actions/EventService.SubmitTestEvent")),
            |h, _| h.submit_test_event(),
        ),
    ]
}

impl Host {
    /// The subscriptions collection.
    pub fn subscriptions(&self) -> Value {
        let s = self.lock();
        let members: Vec<Value> = s
            .events
            .subscriptions
            .keys()
            .map(|id| json!({"@odata.id": format!("{SUBSCRIPTIONS}/{id}")}))
            .collect();
        json!({
            "@odata.context": "/redfish/v1/$metadata#EventDestinationCollection.EventDestinationCollection",
            "@odata.id": SUBSCRIPTIONS,
            "@odata.type": "#EventDestinationCollection.EventDestinationCollection",
            "Description": "List of Event subscriptions",
            "Members@odata.count": members.len(),
            "Members": members,
            "Name": "Event Subscriptions Collection",
        })
    }

    /// One subscription, or `None`.
    pub fn subscription(&self, path: &str) -> Option<Value> {
        let id = path.strip_prefix(SUBSCRIPTIONS)?.strip_prefix('/')?;
        self.lock().events.subscriptions.get(id).cloned()
    }

    /// `POST EventService/Subscriptions`.
    pub fn subscribe(&self, body: &Value) -> Reply {
        let destination = body["Destination"].as_str().unwrap_or_default();
        if destination.is_empty() {
            return Reply::error(400, vec![messages::property_missing("Destination")]);
        }
        let scheme_ok = destination.starts_with("https://") || destination.starts_with("http://");
        let protocol = body["Protocol"].as_str().unwrap_or("Redfish");
        if !scheme_ok || protocol != "Redfish" {
            let (name, value) = if scheme_ok {
                ("Protocol", protocol)
            } else {
                ("Destination", destination)
            };
            return Reply::error(
                400,
                vec![messages::base(
                    "PropertyValueFormatError",
                    &format!(
                        "The value '{value}' for the property {name} is of a different format than the property can accept."
                    ),
                    &[value, name],
                    "Correct the value for the property in the request body and resubmit the request if the operation failed.",
                    Some(&format!("#/{name}")),
                )],
            );
        }
        let mut s = self.change();
        if s.events.subscriptions.len() >= LIMIT {
            return Reply::error(
                400,
                vec![messages::base(
                    "EventSubscriptionLimitExceeded",
                    "The event subscription failed due to the number of simultaneous subscriptions exceeding the limit of the implementation.",
                    &[],
                    "Reduce the number of other subscriptions before trying to establish the event subscription or increase the limit of simultaneous subscriptions (if supported).",
                    None,
                )],
            );
        }
        s.events.seq += 1;
        // Real subscription ids are opaque hex strings (the R750 capture's is 32 characters).
        let id = format!(
            "{:032x}",
            u128::from(s.events.seq) ^ (u128::from(self.index as u64) << 64)
        );
        let path = format!("{SUBSCRIPTIONS}/{id}");
        let event_types = body.get("EventTypes").cloned().unwrap_or_else(|| json!(["Alert"]));
        let doc = json!({
            "@odata.context": "/redfish/v1/$metadata#EventDestination.EventDestination",
            "@odata.id": path,
            "@odata.type": "#EventDestination.v1_11_0.EventDestination",
            "Context": body["Context"].as_str().unwrap_or_default(),
            "Description": "Event Subscription Details",
            "Destination": destination,
            "EventFormatType": body["EventFormatType"].as_str().unwrap_or("Event"),
            "EventTypes": event_types,
            "EventTypes@odata.count": event_types.as_array().map_or(0, Vec::len),
            "Id": id,
            "Name": "EventSubscription",
            "Protocol": "Redfish",
            "Status": {"Health": "OK", "HealthRollup": "OK", "State": "Enabled"},
            "SubscriptionType": "RedfishEvent",
        });
        s.events.subscriptions.insert(id, doc.clone());
        Reply::with_body(201, Some(doc)).header("Location", path)
    }

    /// `DELETE EventService/Subscriptions/<id>`.
    pub fn unsubscribe(&self, path: &str) -> Reply {
        let removed = path
            .strip_prefix(SUBSCRIPTIONS)
            .and_then(|r| r.strip_prefix('/'))
            .and_then(|id| self.change().events.subscriptions.remove(id));
        match removed {
            Some(_) => Reply::ok(messages::success_body(vec![messages::success()])),
            None => Reply::error(404, vec![messages::not_found(path)]),
        }
    }

    /// `EventService.SubmitTestEvent`: accepted when someone subscribes, SYS423 otherwise.
    pub fn submit_test_event(&self) -> Reply {
        if self.lock().events.subscriptions.is_empty() {
            return Reply::error(
                400,
                vec![idrac(
                    "SYS423",
                    "Unable to send the test event because there are no subscriptions.",
                    &[],
                    "Create an event subscription and retry the operation.",
                    None,
                )],
            );
        }
        Reply::with_body(204, None)
    }
}
