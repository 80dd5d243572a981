//! Real clients against the emulator: Dell's iDRAC-Redfish-Scripting Python scripts, replayed
//! as request transcripts written from reading them ([`dell_scripts`], [`dell_scp`] for the
//! configuration profile scripts, [`dell_provisioning`]) and run themselves as PyPI ships them
//! ([`dell_pypi`]); badfish ([`badfish`]), Dell's Ansible collection ([`dell_ansible`]) and
//! DMTF's redfishtool ([`redfishtool`]), run from PyPI. [`dell_idrac10`] replays the iDRAC10
//! flows of Dell's current scripts against the 17G tree. [`hpe_clients`] runs DMTF's Tacklebox
//! BIOS script and sushy's BIOS interface against the HPE iLO 5.

mod badfish;
mod dell_ansible;
mod dell_idrac10;
mod dell_provisioning;
mod dell_pypi;
mod dell_scp;
mod dell_scripts;
mod hpe_clients;
mod redfishtool;
mod script;

/// Waits at most `within` for `command` (killed if dropped) and gives its exit code and its
/// output, stdout then stderr.
async fn finished(command: &mut tokio::process::Command, within: std::time::Duration) -> (Option<i32>, String) {
    let out = tokio::time::timeout(within, command.kill_on_drop(true).output())
        .await
        .unwrap_or_else(|_| panic!("{command:?} finished within {within:?}"))
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}
