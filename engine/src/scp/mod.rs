//! Server Configuration Profiles (SCP), Dell's bulk configuration document, against hosts and
//! profiles: exporting one per host through the iDRAC's local export ([`export`]), previewing
//! and importing one with apply's reboot policy, rolling limits, snapshot and audit
//! ([`import`]), and converting between SCPs and rftune profiles ([`profile`]): a profile
//! derived from an SCP's BIOS and iDRAC attributes (never a host's identity or secrets,
//! [`sensitive`]), and the SCP fragment a resolved profile means for one host.
//!
//! The document model, both formats and the `Group.N#Attr` ↔ `Group.N.Attr` mapping live in
//! `redfish_client::oem::dell::scp`, which the emulator shares.

pub mod export;
pub mod import;
pub mod profile;
pub mod sensitive;

pub use redfish_client::oem::dell::scp::{
    BIOS_FQDD, Component, ComponentKind, Format, ScpAttribute, ScpDocument, attribute_name, scp_name,
};

use crate::connect::Bmc;
use crate::error::{Result, bad_input};
use redfish_client::oem::dell::scp as dell_scp;
use std::path::Path;

/// An SCP file read: the document, its format and its text exactly as in the file (what an
/// import sends).
#[derive(Debug, Clone)]
pub struct ScpFile {
    /// The document.
    pub document: ScpDocument,
    /// Its format.
    pub format: Format,
    /// The file's text.
    pub text: String,
    /// The file's name (for `why` lines and messages).
    pub name: String,
}

impl ScpFile {
    /// Reads and parses `path`; a bad document is refused naming the file and the line.
    pub fn load(path: &Path) -> Result<Self> {
        let text = crate::state::read_capped(path, crate::state::MAX_DOCUMENT_BYTES, "Server Configuration Profile")?;
        let (document, format) = match ScpDocument::parse(&text) {
            Ok(parsed) => parsed,
            Err(e) => bad_input!("{}: not a Server Configuration Profile: {e}", path.display()),
        };
        let name = path
            .file_name()
            .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        Ok(Self {
            document,
            format,
            text,
            name,
        })
    }
}

/// The `ShareParameters.Target` values an iDRAC lists, in its spelling; `parse_targets` maps
/// any case to these.
pub use redfish_client::oem::dell::scp::TARGETS;

/// The Manager's configuration profile actions. The Manager's model and firmware are noted on
/// the way: an iDRAC10 (a `17G Monolithic` Manager) takes its targets as a list, where
/// iDRAC9 takes them joined, and nothing else an export reads names the generation.
pub(crate) async fn manager_actions(bmc: &Bmc) -> Result<dell_scp::Actions> {
    let backend = bmc.backend();
    // A BMC that takes no such profiles (an HPE iLO) says so before anything else.
    bmc.require(&backend, crate::backend::Backend::scp, "Server Configuration Profile")?;
    let manager = bmc.backend_place(&backend, |p| &p.manager)?;
    let read: serde_json::Value = match bmc.client.get(manager.path()).await {
        Ok(read) => read,
        Err(e) => {
            let e = bmc.explain(e, "reading the Manager's configuration profile actions");
            return Err(bmc
                .presumed_failure(e, |b| b.scp().is_some(), "Server Configuration Profile")
                .await);
        }
    };
    if let Ok(typed) = serde_json::from_value::<redfish_client::resources::manager::Manager>(read.clone()) {
        bmc.note_manager(&typed);
    }
    Ok(dell_scp::Actions::from_manager(&read))
}

/// `ShareParameters.Target` for `targets`, shaped as the host's backend takes it.
pub(crate) fn share_target(bmc: &Bmc, targets: &[String]) -> Result<serde_json::Value> {
    let backend = bmc.backend();
    let shapes = bmc.require(&backend, crate::backend::Backend::scp, "Server Configuration Profiles")?;
    Ok(shapes.targets(targets))
}

/// `BIOS,IDRAC` (any case) as the iDRAC spells the targets; `ALL` alone or not at all.
pub fn parse_targets(text: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for t in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let Some(known) = TARGETS.iter().find(|k| k.eq_ignore_ascii_case(t)) else {
            bad_input!("{t:?} is not an SCP target: give one or more of {}", TARGETS.join(", "));
        };
        if !out.iter().any(|o| o == known) {
            out.push((*known).to_owned());
        }
    }
    if out.is_empty() {
        bad_input!("no SCP target given: give one or more of {}", TARGETS.join(", "));
    }
    if out.len() > 1 && out.iter().any(|t| t == "ALL") {
        bad_input!("ALL cannot be combined with other targets (it already covers them)");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_spelled_as_the_idrac_lists_them_and_all_stands_alone() {
        assert_eq!(parse_targets("bios, idrac").unwrap(), ["BIOS", "IDRAC"]);
        assert_eq!(
            parse_targets("system,lifecyclecontroller").unwrap(),
            ["System", "LifecycleController"]
        );
        assert!(parse_targets("ALL,BIOS").unwrap_err().to_string().contains("ALL"));
        assert!(
            parse_targets("BIOS,Everything")
                .unwrap_err()
                .to_string()
                .contains("Everything")
        );
        assert!(parse_targets(" , ").is_err());
    }
}
