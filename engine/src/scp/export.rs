//! Exporting each host's SCP through the iDRAC's local export (no share): the Manager's
//! `…ExportSystemConfiguration` action (found by the end of its name), then the task polled
//! until its URL answers with the profile, written as `<dir>/<host>.<json|xml>` readable only
//! by the user (an export can hold password hashes and SNMP or LDAP secrets). Raw by default,
//! byte for byte what the iDRAC sent, so it imports again; sanitized on request with capture's
//! sanitizer (identifiers replaced by placeholders, consistently) and every secret emptied and
//! marked not to be set on import.

use super::sensitive::{self, Sensitive};
use super::{Format, ScpDocument};
use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result, bad_input};
use crate::lifecycle::Operation;
use crate::observe::{Event, Observer, Phase};
use crate::sanitize::{Replaced, Sanitizer};
use crate::wait::{Look, watch};
use redfish_client::oem::dell::JobState;
use redfish_client::oem::dell::scp::{self as dell_scp, Polled};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// What to export, and where.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// `ShareParameters.Target`, as the iDRAC spells them ([`super::parse_targets`]).
    pub targets: Vec<String>,
    /// JSON or XML.
    pub format: Format,
    /// Replace identifiers and empty secrets for sharing (the file no longer imports as the
    /// host's own).
    pub sanitize: bool,
    /// The directory for the files (created private when missing).
    pub dir: PathBuf,
    /// How long the export may take.
    pub timeout: Duration,
}

/// One host's export.
#[derive(Debug, Clone, Serialize)]
pub struct Exported {
    /// The file written.
    pub file: PathBuf,
    /// Its format.
    #[serde(serialize_with = "format_name")]
    pub format: Format,
    /// Bytes written.
    pub bytes: usize,
    /// The export job.
    pub job: String,
    /// Components in it.
    pub components: usize,
    /// Attributes in it.
    pub attributes: usize,
    /// Whether it was sanitized.
    pub sanitized: bool,
    /// Secrets emptied (sanitized exports).
    #[serde(skip_serializing_if = "is_zero")]
    pub secrets_emptied: usize,
    /// Identifiers replaced, by kind (sanitized exports).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<ReplacedKind>,
}

/// Identifiers of one kind replaced.
#[derive(Debug, Clone, Serialize)]
pub struct ReplacedKind {
    /// The kind (`ipv4_address`, `host_name`, ...).
    pub kind: &'static str,
    /// Distinct originals replaced.
    pub distinct: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn format_name<S: serde::Serializer>(f: &Format, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(f.extension())
}

/// Exporting as a fleet [`Operation`].
#[derive(Debug, Clone)]
pub struct Export(pub std::sync::Arc<ExportOptions>);

impl Operation for Export {
    type Output = Exported;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<Exported> {
        let opts = &*self.0;
        let file = opts.dir.join(format!(
            "{}.{}",
            crate::state::path_component(&bmc.name),
            opts.format.extension()
        ));
        if file.exists() {
            bad_input!(
                "{}: {} exists; remove it or export into another directory, so no earlier export is overwritten",
                bmc.name,
                file.display()
            );
        }
        let (body, job) = export_raw(bmc, &opts.targets, opts.format, opts.timeout, observer).await?;
        bmc.close().await;
        let text = String::from_utf8_lossy(&body).into_owned();
        let (mut doc, format) = match ScpDocument::parse(&text) {
            Ok(d) => d,
            Err(e) => {
                return Err(HostError::new(
                    &bmc.name,
                    HostErrorKind::Redfish,
                    format!("the export job {job} answered a profile that does not read: {e}"),
                )
                .into());
            }
        };
        let mut out = Exported {
            file: file.clone(),
            format,
            bytes: 0,
            job,
            components: doc.components.len(),
            attributes: doc.all_attributes().len(),
            sanitized: opts.sanitize,
            secrets_emptied: 0,
            replaced: Vec::new(),
        };
        let bytes = if opts.sanitize {
            let (emptied, replaced) = sanitize(&mut doc);
            out.secrets_emptied = emptied;
            out.replaced = replaced
                .into_iter()
                .map(|r| ReplacedKind {
                    kind: r.kind.as_str(),
                    distinct: r.distinct,
                })
                .collect();
            doc.to_text(format).into_bytes()
        } else {
            body
        };
        crate::state::ensure_private_dir(&opts.dir)?;
        crate::state::write_private(&file, &bytes)?;
        out.bytes = bytes.len();
        Ok(out)
    }
}

/// Runs the export on one host: the profile as the iDRAC sent it, and the job's id.
pub async fn export_raw(
    bmc: &Bmc,
    targets: &[String],
    format: Format,
    timeout: Duration,
    observer: &dyn Observer,
) -> Result<(Vec<u8>, String)> {
    let actions = super::manager_actions(bmc).await?;
    let Some(target) = actions.export.as_deref() else {
        return Err(HostError::new(
            &bmc.name,
            HostErrorKind::Unsupported,
            "this iDRAC lists no ExportSystemConfiguration action (iDRAC 9 firmware 3.30 or later has it)",
        )
        .into());
    };
    if !actions.export_targets.is_empty()
        && let Some(t) = targets.iter().find(|t| !actions.export_targets.contains(t))
    {
        return Err(HostError::new(
            &bmc.name,
            HostErrorKind::Unsupported,
            format!(
                "this iDRAC does not export the target {t}; it lists {}",
                actions.export_targets.join(", ")
            ),
        )
        .into());
    }
    // Ansible's and sushy's body on iDRAC9: strings, targets joined by commas.
    let body = json!({
        "ExportFormat": format.as_str(),
        "ExportUse": "Default",
        "IncludeInExport": "Default",
        "ShareParameters": {"Target": super::share_target(bmc, targets)?},
    });
    let task = dell_scp::start(&bmc.client, target, &body)
        .await
        .map_err(|e| bmc.explain(e, "starting the configuration export"))?;
    let job = task.rsplit('/').next().unwrap_or(&task).to_owned();
    let looked = watch(timeout, || async {
        let polled = match dell_scp::poll(&bmc.client, &task).await {
            Ok(p) => p,
            Err(e) => return Look::Done(Err(bmc.explain(e, &format!("reading export task {job}")))),
        };
        match polled {
            Polled::Profile(body) => Look::Done(Ok(body)),
            Polled::Task(t) => {
                observer.event(&Event::phase(
                    &bmc.name,
                    Phase::Job {
                        id: job.clone(),
                        state: t.job_state().map_or_else(|| "Running".to_owned(), |s| s.to_string()),
                        percent: u32::from(t.percent_complete.unwrap_or(0)),
                    },
                ));
                match t.job_state() {
                    // A finished export answers the profile itself; a task instead is a failure.
                    Some(state @ (JobState::Failed | JobState::Completed)) => Look::Done(Err(HostError::new(
                        &bmc.name,
                        HostErrorKind::JobFailed,
                        format!(
                            "export job {job} ended {state}{}",
                            t.message().map(|m| format!(": {m}")).unwrap_or_default()
                        ),
                    )
                    .into())),
                    _ => Look::NotYet(t.percent_complete),
                }
            }
        }
    })
    .await;
    match looked {
        Ok(body) => Ok((body?, job)),
        Err(_) => Err(HostError::new(
            &bmc.name,
            HostErrorKind::Timeout,
            format!("export job {job} did not finish within {timeout:?}"),
        )
        .into()),
    }
}

/// Sanitizes `doc` for sharing: secrets emptied and marked not to be set on import, then the
/// identifiers capture replaces (in every attribute, by the attribute's name as the field)
/// replaced by placeholders. Returns the secrets emptied and what was replaced.
pub fn sanitize(doc: &mut ScpDocument) -> (usize, Vec<Replaced>) {
    let mut emptied = 0;
    doc.for_each_attribute_mut(&mut |_, a| {
        if sensitive::classify(&a.name, &a.value) == Some(Sensitive::Secret) {
            a.value.clear();
            a.set_on_import = false;
            emptied += 1;
        }
    });
    // The sanitizer reads JSON documents by their keys: one object per attribute, keyed by its
    // name, so `…#DNSRacName` and `…#UserName` are recognised as capture recognises them.
    let mut values: Vec<Value> = Vec::new();
    doc.for_each_attribute_mut(&mut |_, a| {
        let mut m = Map::new();
        m.insert(a.name.clone(), Value::String(a.value.clone()));
        values.push(Value::Object(m));
    });
    let mut header = json!({"ServiceTag": doc.service_tag, "Model": doc.model});
    let mut sanitizer = Sanitizer::default();
    sanitizer.document(&mut header);
    for v in &mut values {
        sanitizer.document(v);
    }
    sanitizer.residue(&mut header);
    for v in &mut values {
        sanitizer.residue(v);
    }
    let mut i = 0;
    doc.for_each_attribute_mut(&mut |_, a| {
        if let Some(Value::String(s)) = values.get(i).and_then(|v| v.get(&a.name)) {
            a.value.clone_from(s);
        }
        i += 1;
    });
    doc.service_tag = header["ServiceTag"].as_str().map(str::to_owned);
    (emptied, sanitizer.replaced())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sanitized_export_keeps_settings_empties_secrets_and_replaces_identifiers() {
        let (mut doc, _) = ScpDocument::parse(
            r#"{"SystemConfiguration": {"ServiceTag": "H9Q7N83", "Model": "PowerEdge R6515", "Components": [
              {"FQDD": "iDRAC.Embedded.1", "Attributes": [
                {"Name": "IPMILan.1#CommunityName", "Value": "public", "Set On Import": "True"},
                {"Name": "IPv4Static.1#Address", "Value": "192.168.0.120", "Set On Import": "False"},
                {"Name": "NIC.1#DNSRacName", "Value": "iDRAC-H9Q7N83", "Set On Import": "False"},
                {"Name": "Users.3#UserName", "Value": "alice", "Set On Import": "True"},
                {"Name": "IPMILan.1#Enable", "Value": "Enabled", "Set On Import": "True"}]},
              {"FQDD": "BIOS.Setup.1-1", "Attributes": [
                {"Name": "LogicalProc", "Value": "Enabled", "Set On Import": "True"}]}]}}"#,
        )
        .unwrap();
        let (emptied, replaced) = sanitize(&mut doc);
        assert_eq!(emptied, 1);
        let text = doc.to_text(Format::Json);
        for gone in ["public", "192.168.0.120", "H9Q7N83", "alice"] {
            assert!(!text.contains(gone), "{gone} left in {text}");
        }
        assert!(text.contains("\"Enabled\""), "settings stay");
        assert!(doc.service_tag.as_deref().is_some_and(|t| t.starts_with("SVC")));
        assert!(replaced.iter().any(|r| r.kind.as_str() == "ipv4_address"));
        let community = &doc.components[0].attributes[0];
        assert!(!community.set_on_import, "an emptied secret is not imported as empty");
    }
}
