//! The SCP actions over a [`Client`]: where the Manager says they are (matched by the end of
//! their name, since the `#OemManager.v1_N_0.OemManager` part varies with firmware and is gone
//! on 7.10), starting one (`202` and the task in `Location`), and reading its task until the
//! task's URL answers with the profile itself (an export) or the job ends.

use super::task::ScpTask;
use crate::client::Client;
use crate::error::Result;
use crate::oem::dell::MANAGER;
use serde_json::Value;

/// Where the Manager's SCP actions are, and the targets each accepts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Actions {
    /// `…ExportSystemConfiguration`'s target.
    pub export: Option<String>,
    /// `…ImportSystemConfiguration`'s target.
    pub import: Option<String>,
    /// `…ImportSystemConfigurationPreview`'s target.
    pub preview: Option<String>,
    /// `ShareParameters.Target@Redfish.AllowableValues` of the export.
    pub export_targets: Vec<String>,
    /// The same of the import.
    pub import_targets: Vec<String>,
}

impl Actions {
    /// Reads them from a Manager document's `Actions.Oem`: each key is matched by its end
    /// (`OemManager.ExportSystemConfiguration`, whatever comes before), and its `target` used.
    pub fn from_manager(manager: &Value) -> Self {
        let mut out = Self::default();
        let Some(oem) = manager.pointer("/Actions/Oem").and_then(Value::as_object) else {
            return out;
        };
        let targets = |v: &Value| -> Vec<String> {
            v.pointer("/ShareParameters/Target@Redfish.AllowableValues")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default()
        };
        for (key, action) in oem {
            let target = action.get("target").and_then(Value::as_str).map(str::to_owned);
            if key.ends_with("OemManager.ExportSystemConfiguration") {
                out.export = target;
                out.export_targets = targets(action);
            } else if key.ends_with("OemManager.ImportSystemConfiguration") {
                out.import = target;
                out.import_targets = targets(action);
            } else if key.ends_with("OemManager.ImportSystemConfigurationPreview") {
                out.preview = target;
            }
        }
        out
    }
}

/// The Manager's SCP actions (one `GET` of the Manager).
pub async fn get_actions(client: &Client) -> Result<Actions> {
    let manager: Value = client.get(MANAGER).await?;
    Ok(Actions::from_manager(&manager))
}

/// Starts the action at `target` with `body`; returns the task's path from `Location`.
pub async fn start(client: &Client, target: &str, body: &Value) -> Result<String> {
    let written = client.post(target, body).await?;
    match written.location {
        Some(l) => Ok(l.path().to_owned()),
        None => Err(client.protocol_error(
            "POST",
            target,
            format!("the action answered HTTP {} without a Location header", written.status),
        )),
    }
}

/// What the task's URL answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Polled {
    /// The task, still at work or done.
    Task(Box<ScpTask>),
    /// An export's profile, as the iDRAC sent it (JSON or XML).
    Profile(Vec<u8>),
}

/// Reads the task at `task` once.
pub async fn poll(client: &Client, task: &str) -> Result<Polled> {
    let (_, body) = client.get_bytes(task).await?;
    let text = String::from_utf8_lossy(&body);
    let start = text.trim_start();
    if start.starts_with('<') {
        return Ok(Polled::Profile(body));
    }
    let value: Value = crate::error::decode_json("GET", task, &body)?;
    if value.get("SystemConfiguration").is_some() {
        return Ok(Polled::Profile(body));
    }
    let task_doc: ScpTask =
        serde_json::from_value(value).map_err(|e| client.protocol_error("GET", task, format!("not a task: {e}")))?;
    Ok(Polled::Task(Box::new(task_doc)))
}
