//! `rftune bios reset-defaults`, `rftune bios password set|change|clear` and `rftune secure-boot
//! reset-keys`: the firmware steps of a provisioning run besides the profile, through the
//! engine, over one host or an inventory, each write audited and each reboot within
//! `--max-unavailable`.

use crate::Exit;
use crate::args::OutputFormat;
use crate::args::boot::{PasswordCommand, ResetDefaultsArgs, ResetKeysArgs};
use crate::documents::{self, DEFAULTS_SCHEMA, PASSWORD_SCHEMA, RESET_KEYS_SCHEMA};
use crate::render::{self, Table};
use anyhow::Result;
use redfish_client::resources::secure_boot::ResetKeysType;
use rftune_engine::defaults::DefaultsRun;
use rftune_engine::passwords::{PasswordChange, PasswordRun};
use rftune_engine::secure_boot::KeysRun;
use rftune_engine::state::StateDirs;
use std::sync::Arc;

/// Runs `rftune bios reset-defaults`.
pub async fn reset_defaults(args: &ResetDefaultsArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    crate::signals::install()?;
    let hosts = crate::config::Hosts::of(&args.target)?;
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let policy = crate::config::reboot_policy(args.reboot);
    let writes = crate::config::provision_writes("bios reset-defaults", policy, &args.restart, dirs)?;
    let audit = writes.audit.clone();
    let run = Arc::new(DefaultsRun {
        writes,
        finish_timeout: args.restart.job_timeout,
    });
    let results = hosts
        .run("bios reset-defaults", connect, dirs, Some(&audit), run, output)
        .await;
    let (doc, failed) = documents::action_document(DEFAULTS_SCHEMA, &results, Some(&audit));
    let waiting = results
        .iter()
        .filter(|r| r.result.as_ref().is_ok_and(|d| !d.rebooted))
        .count();
    if output == OutputFormat::Json {
        render::json(&doc)?;
    } else {
        let mut out = render::action::table(&results, |d| d.summary.clone());
        for r in &results {
            let Ok(d) = &r.result else { continue };
            if d.changed.is_empty() {
                continue;
            }
            let mut t = Table::new(["ATTRIBUTE", "BEFORE", "AFTER"]);
            for c in &d.changed {
                let shown = |v: &Option<redfish_client::resources::bios::AttributeValue>| {
                    v.as_ref()
                        .map_or_else(|| "(not listed)".to_owned(), ToString::to_string)
                };
                t.row([c.attribute.clone(), shown(&c.before), shown(&c.after)]);
            }
            out.push_str(&format!(
                "\n{}: changed against {}\n{}",
                d.host,
                d.snapshot.display(),
                t.render()
            ));
        }
        render::text(&out)?;
    }
    documents::action_exit(failed, results.len(), waiting, Some(&audit))
}

/// Runs `rftune bios password set|change|clear`.
pub async fn password(cmd: &PasswordCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let args = cmd.args();
    let (need_old, need_new) = cmd.needs();
    let hosts = crate::config::Hosts::of(&args.target)?;
    // The BMC password first: a --password-stdin line comes before the BIOS ones.
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let w = crate::config::bios_password(args.which);
    let (old, new) = crate::credentials::bios_passwords(&args.secrets, w.as_str(), need_old, need_new)?;
    crate::signals::install()?;
    let policy = crate::config::reboot_policy(args.reboot);
    let writes = crate::config::provision_writes("bios password", policy, &args.restart, dirs)?;
    let audit = writes.audit.clone();
    let run = Arc::new(PasswordRun {
        change: PasswordChange { which: w, old, new },
        writes,
    });
    let results = hosts
        .run("bios password", connect, dirs, Some(&audit), run, output)
        .await;
    render::action::finish(
        PASSWORD_SCHEMA,
        &results,
        &audit,
        output,
        |d| d.summary.clone(),
        |d| !d.rebooted,
    )
}

/// Runs `rftune secure-boot reset-keys`.
pub async fn reset_keys(args: &ResetKeysArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let Some(kind) = ResetKeysType::parse(&args.kind) else {
        let names: Vec<&str> = ResetKeysType::ALL.iter().map(|k| k.as_str()).collect();
        anyhow::bail!(
            "unknown key reset `{}`: one of {} (spelled exactly so)",
            args.kind,
            names.join(", ")
        );
    };
    if kind.deletes_keys() && !args.delete_keys {
        anyhow::bail!(
            "{kind} deletes Secure Boot keys: until keys are enrolled again, Secure Boot verifies nothing (and a host that requires it may not boot); give --delete-keys to confirm"
        );
    }
    crate::signals::install()?;
    let hosts = crate::config::Hosts::of(&args.target)?;
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let policy = crate::config::reboot_policy(args.reboot);
    let writes = crate::config::provision_writes("secure-boot reset-keys", policy, &args.restart, dirs)?;
    let audit = writes.audit.clone();
    let run = Arc::new(KeysRun { kind, writes });
    let results = hosts
        .run("secure-boot reset-keys", connect, dirs, Some(&audit), run, output)
        .await;
    render::action::finish(
        RESET_KEYS_SCHEMA,
        &results,
        &audit,
        output,
        |d| d.summary.clone(),
        |d| !d.rebooted,
    )
}
