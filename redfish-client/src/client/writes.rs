//! Writes: `PATCH`, `POST` and `DELETE` (a write that may have been applied is never sent
//! again), staging settings, `ComputerSystem.Reset`, and what a write answers.

use super::Client;
use super::transport::location_path;
use crate::error::{Error, Result, decode_json};
use crate::odata::ODataId;
use crate::request;
use crate::resources::bios::{Attributes, SettingsApplyTime};
use crate::resources::computer_system::{ComputerSystem, ResetType};
use crate::resources::message::Message;
use http::Method;
use serde::Serialize;
use serde_json::Value;

/// The answer to a write (`PATCH`, `POST`, `DELETE`).
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// HTTP status.
    pub status: u16,
    /// The `Location` header, as a path (a created session, task or job).
    pub location: Option<ODataId>,
    /// The JSON body; `Null` when there was none.
    pub body: Value,
}

impl Written {
    /// The `@Message.ExtendedInfo` messages of the body.
    pub fn messages(&self) -> Vec<Message> {
        self.body
            .get("@Message.ExtendedInfo")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }
}

/// The result of staging settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Staged {
    /// The job the service created, when it created one (iDRAC does for `@Redfish.SettingsApplyTime`).
    pub job: Option<ODataId>,
    /// Messages the service returned.
    pub messages: Vec<Message>,
}

impl Client {
    /// `PATCH path` with a JSON body.
    pub async fn patch<B: Serialize + ?Sized>(&self, path: &str, body: &B) -> Result<Written> {
        self.write(Method::PATCH, path, Some(to_value(body)?), None).await
    }

    /// `PATCH path` that applies only while the resource's `ETag` is still `etag` (sent as
    /// `If-Match`); otherwise the service answers 412 ([`Error::precondition_failed`]) and
    /// nothing is changed. Without an `etag`, a plain [`Client::patch`]. Only for resources:
    /// actions take no `If-Match` (iDRAC10 answers 412 there whatever the tag).
    pub async fn patch_if_match<B: Serialize + ?Sized>(
        &self,
        path: &str,
        body: &B,
        etag: Option<&str>,
    ) -> Result<Written> {
        self.write(Method::PATCH, path, Some(to_value(body)?), etag).await
    }

    /// `POST path` with a JSON body.
    pub async fn post<B: Serialize + ?Sized>(&self, path: &str, body: &B) -> Result<Written> {
        self.write(Method::POST, path, Some(to_value(body)?), None).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> Result<Written> {
        self.write(Method::DELETE, path, None, None).await
    }

    /// Stages `attributes` on a settings object (`Bios/Settings`). With `apply_time`, the body
    /// carries `@Redfish.SettingsApplyTime`, and the job the service creates is returned.
    pub async fn stage_settings(
        &self,
        settings_object: &ODataId,
        attributes: &Attributes,
        apply_time: Option<&SettingsApplyTime>,
    ) -> Result<Staged> {
        self.stage_settings_if_match(settings_object, attributes, apply_time, None)
            .await
    }

    /// [`Client::stage_settings`], conditional on the settings object's `ETag` (see
    /// [`Client::patch_if_match`]): staged only while nothing else was staged since `etag` was
    /// read.
    pub async fn stage_settings_if_match(
        &self,
        settings_object: &ODataId,
        attributes: &Attributes,
        apply_time: Option<&SettingsApplyTime>,
        etag: Option<&str>,
    ) -> Result<Staged> {
        let body = request::settings_body(attributes, apply_time);
        let written = self.patch_if_match(settings_object.path(), &body, etag).await?;
        Ok(Staged {
            messages: written.messages(),
            job: written.location,
        })
    }

    /// `ComputerSystem.Reset`.
    pub async fn reset(&self, system: &ComputerSystem, reset: ResetType) -> Result<()> {
        self.post(system.reset_target().path(), &request::reset_body(reset))
            .await
            .map(drop)
    }

    async fn write(&self, method: Method, path: &str, body: Option<Value>, if_match: Option<&str>) -> Result<Written> {
        let (url, raw) = self.execute(method.clone(), path, body.as_ref(), if_match).await?;
        let body = if raw.body.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            decode_json(method.as_str(), url.as_str(), &raw.body)?
        };
        Ok(Written {
            status: raw.status,
            location: raw.location.map(|l| ODataId::new(location_path(&l))),
            body,
        })
    }
}

fn to_value<B: Serialize + ?Sized>(body: &B) -> Result<Value> {
    serde_json::to_value(body).map_err(|e| Error::Config {
        what: "request body is not serialisable as JSON".into(),
        source: Some(Box::new(e)),
    })
}
