//! Previewing and importing a Server Configuration Profile: the actions' parameters, the
//! analysis when the job's step is due, and an import's application: the iDRAC attributes at
//! once, the BIOS attributes in the POST it restarts the host for (or waits for, `NoReboot`).

use super::analysis::{note, result};
use super::parameters::{buffer, choice, local_only, targets};
use super::state::{ShutdownType, Task};
use super::values::text_of;
use crate::clock::wall;
use crate::host::caller::Caller;
use crate::host::core::{Host, State};
use crate::host::jobs::state::{JobKind, ScpKind};
use crate::host::power::state::Shutdown;
use crate::host::reply::Reply;
use crate::messages;
use redfish_client::oem::dell::scp::scp_name;
use redfish_client::oem::dell::{self, AttributeGroup, JobState};
use serde_json::Value;
use std::time::Instant;

/// The message a `NoReboot` import's job shows while it waits for a reboot: the text an
/// earlier revision of Dell's PowerShell import script compares the job's message with (the
/// Python scripts look for "No reboot Server" in it). Its MessageId is assumed.
const NO_REBOOT: &str =
    "No reboot Server Configuration Profile Import job scheduled, Waiting for System Reboot to complete the operation.";

impl Host {
    /// `…ImportSystemConfigurationPreview` of a local buffer (`ShareParameters.Target` ALL,
    /// the only value a real Manager lists for it).
    pub fn scp_preview(&self, caller: &Caller, body: &Value) -> Reply {
        let action = "ImportSystemConfigurationPreview";
        let checked = (|| {
            local_only(action, body)?;
            let t = targets(body)?;
            if t.iter().any(|t| !t.eq_ignore_ascii_case("ALL")) {
                return Err(messages::action_parameter(
                    action,
                    "ShareParameters/Target",
                    Some(&t.join(",")),
                    &["ALL"],
                ));
            }
            buffer(action, body)
        })();
        let profile = match checked {
            Ok(p) => p,
            Err(problem) => return Reply::error(400, vec![problem]),
        };
        let mut s = self.change();
        let mut task = self.new_task(ScpKind::Preview, caller);
        task.profile = profile;
        self.queue_scp(
            &mut s,
            ScpKind::Preview,
            task,
            ("SYS192", "Previewing Server Configuration Profile."),
        )
    }

    /// `…ImportSystemConfiguration` of a local buffer: `ShareParameters.Target`,
    /// `ShutdownType` (Graceful by default), `HostPowerState` (On by default; Off powers the
    /// host off once the job is done). `TimeToWait` and `ExecutionMode` are accepted and not
    /// emulated, and so is Ansible's `EndHostPowerState`, which no Manager lists.
    pub fn scp_import(&self, caller: &Caller, body: &Value) -> Reply {
        let action = "ImportSystemConfiguration";
        let checked = (|| {
            local_only(action, body)?;
            let t = targets(body)?;
            let shutdown = match choice(action, body, "ShutdownType", &["Graceful", "Forced", "NoReboot"])? {
                Some("Forced") => ShutdownType::Forced,
                Some("NoReboot") => ShutdownType::NoReboot,
                _ => ShutdownType::Graceful,
            };
            let off = choice(action, body, "HostPowerState", &["On", "Off"])? == Some("Off");
            choice(
                action,
                body,
                "ExecutionMode",
                &["Default", "DeployOnSledInsert", "InstantDeploy"],
            )?;
            Ok((t, shutdown, off, buffer(action, body)?))
        })();
        let (targets, shutdown, off, profile) = match checked {
            Ok(c) => c,
            Err(problem) => return Reply::error(400, vec![problem]),
        };
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        let mut task = self.new_task(ScpKind::Import, caller);
        task.targets = targets;
        task.shutdown = shutdown;
        task.power_off_after = off;
        task.profile = profile;
        self.queue_scp(
            &mut s,
            ScpKind::Import,
            task,
            ("SYS191", "Importing Server Configuration Profile."),
        )
    }

    pub(crate) fn preview_now(&self, s: &mut State, id: &str, task: &mut Task, at: Instant) {
        let profile = match &task.profile {
            Ok(p) => p.clone(),
            Err(why) => {
                task.messages.push(note("SYS079", &format!("The Preview operation indicates the input file for Server Configuration Profile is not compliant with the configuration profile schema: {why}"), &[]));
                return self.finish_scp(s, id, JobState::Failed, "SYS079", "The Preview operation indicates the input file for Server Configuration Profile is not compliant with the configuration profile schema.", at);
            }
        };
        let staged = self.analyse(s, &profile, &task.targets);
        task.messages = staged.results.clone();
        if !staged.bios.is_empty() {
            task.messages.push(note(
                "SYS087",
                "A system reboot will occur when the previewed configuration XML file is imported to the system.",
                &[],
            ));
            let secs = self.config.boot_time.as_secs().max(1).to_string();
            task.messages.push(note(
                "SYS088",
                &format!("Estimated time for applying configuration changes is {secs} seconds."),
                &[&secs],
            ));
        }
        let (state, code, text) = match (staged.changes, staged.failures) {
            (0, 0) => (
                JobState::Completed,
                "SYS069",
                "No changes were applied since the current component configuration matched the requested configuration.",
            ),
            (0, _) => (
                JobState::Failed,
                "SYS080",
                "Preview of Server Configuration Profile import operation indicated that no configuration changes will be successful.",
            ),
            (_, 0) => (
                JobState::Completed,
                "SYS081",
                "Successfully previewed Server Configuration Profile import operation.",
            ),
            _ => (
                JobState::Completed,
                "SYS082",
                "Completed the preview of Server Configuration Profile import operation. Some changes specified in the configuration profile will not be successfully applied in an import operation.",
            ),
        };
        self.finish_scp(s, id, state, code, text, at);
    }

    pub(crate) fn import_now(&self, s: &mut State, id: &str, task: &mut Task, at: Instant) {
        let profile = match &task.profile {
            Ok(p) => p.clone(),
            Err(why) => {
                task.messages.push(note(
                    "SYS047",
                    &format!(
                        "Input file for import configuration is not compliant with the configuration schema: {why}"
                    ),
                    &[],
                ));
                return self.finish_scp(
                    s,
                    id,
                    JobState::Failed,
                    "SYS047",
                    "Input file for import configuration is not compliant with the configuration schema.",
                    at,
                );
            }
        };
        let busy = s.jobs.queue.values().any(|j| {
            j.id != id
                && (j.is_open_bios()
                    || (j.kind == JobKind::Scp(ScpKind::Import)
                        && matches!(j.state, JobState::Running | JobState::Paused)))
        });
        if busy {
            return self.finish_scp(
                s,
                id,
                JobState::Failed,
                "SYS074",
                "Unable to apply configuration changes because another configuration job is in progress.",
                at,
            );
        }
        task.staged = self.analyse(s, &profile, &task.targets);
        task.messages = task.staged.results.clone();
        if task.staged.is_empty() {
            let (state, code, text) = if task.staged.failures == 0 {
                (
                    JobState::Completed,
                    "SYS069",
                    "No changes were applied since the current component configuration matched the requested configuration.",
                )
            } else {
                (
                    JobState::Failed,
                    "SYS067",
                    "Unable to complete application of configuration profile values.",
                )
            };
            return self.finish_scp(s, id, state, code, text, at);
        }
        if task.shutdown == ShutdownType::NoReboot {
            // The whole job waits for a reboot, iDRAC attributes included (Dell's Ansible
            // documentation: the job pauses until the server is rebooted manually).
            task.waiting_for_post = true;
            Self::set_job(s, id, JobState::Paused, "SYS296", NO_REBOOT);
            return;
        }
        self.apply_manager(s, task);
        if task.staged.bios.is_empty() {
            task.messages.push(note(
                "SYS054",
                "No configuration changes requiring a system restart need to be applied.",
                &[],
            ));
            return self.end_import(s, id, task, at);
        }
        task.waiting_for_post = true;
        Self::set_job(
            s,
            id,
            JobState::Running,
            "SYS056",
            "Waiting for the system to shut down.",
        );
        if !s.power.on {
            self.start_post(s, at);
        } else if task.shutdown == ShutdownType::Forced {
            s.power.shutdown = None;
            self.start_post(s, at);
        } else if self.config.graceful_os {
            s.power.shutdown = Some(Shutdown {
                at: at + self.config.boot_time.mul_f64(0.3),
                then_boot: true,
            });
        } else {
            // The OS did not shut down: nothing of the BIOS part is applied.
            task.waiting_for_post = false;
            task.staged.bios.clear();
            self.finish_scp(
                s,
                id,
                JobState::Failed,
                "SYS051",
                "The system could not be shut down within the specified time.",
                at,
            );
        }
    }

    /// The iDRAC, System and Lifecycle Controller attributes and the accounts, applied now.
    fn apply_manager(&self, s: &mut State, task: &mut Task) {
        for (group, attrs) in std::mem::take(&mut task.staged.dell_attributes) {
            let entry = s.dell_attributes.groups.entry(group).or_default();
            entry.extend(attrs);
            if group == AttributeGroup::Idrac {
                s.bios.view = None;
            }
        }
        let users = std::mem::take(&mut task.staged.users);
        if !users.is_empty()
            && let Err(problems) = self.patch_users_attributes(s, &task.caller, &users)
        {
            task.staged.failures += users.len();
            task.staged.changes = task.staged.changes.saturating_sub(users.len());
            for (key, value) in &users {
                let name = scp_name(key).unwrap_or_else(|| key.clone());
                task.messages
                    .push(result(&name, None, &text_of(value), problems.first()));
            }
        }
    }

    /// The end of an import: its state from what was applied and what failed.
    fn end_import(&self, s: &mut State, id: &str, task: &mut Task, at: Instant) {
        task.waiting_for_post = false;
        let (state, code, text) = match (task.staged.changes, task.staged.failures) {
            (_, 0) => (
                JobState::Completed,
                "SYS053",
                "Successfully imported and applied Server Configuration Profile.",
            ),
            (0, _) => (
                JobState::Failed,
                "SYS067",
                "Unable to complete application of configuration profile values.",
            ),
            _ => (
                JobState::CompletedWithErrors,
                "SYS055",
                "Import of Server Configuration Profile operation completed with errors.",
            ),
        };
        self.finish_scp(s, id, state, code, text, at);
        Self::lc_log_at(s, wall(at), "JCP037", &[id], "Configuration", Some(dell::MANAGER));
    }

    /// Early in POST: an import waiting for it starts applying.
    pub(crate) fn scp_post_starts(&self, s: &mut State, at: Instant) {
        let waiting: Vec<String> = s
            .scp
            .tasks
            .iter()
            .filter(|(_, t)| t.waiting_for_post)
            .map(|(id, _)| id.clone())
            .collect();
        for id in waiting {
            if let Some(job) = s.jobs.queue.get_mut(&id)
                && matches!(job.state, JobState::Running | JobState::Paused)
            {
                job.state = JobState::Running;
                job.message_id = "SYS058";
                job.message = "Applying configuration changes.";
                job.percent = 10;
                job.actual_start = Some(wall(at));
            }
        }
    }

    /// Later in POST: the running import applies its BIOS attributes (with every value the
    /// registry's presets force) and, after `NoReboot`, the rest.
    pub(crate) fn scp_post_ends(&self, s: &mut State, at: Instant) {
        let running: Vec<String> = s
            .scp
            .tasks
            .iter()
            .filter(|(id, t)| t.waiting_for_post && s.jobs.queue.get(*id).is_some_and(|j| j.message_id == "SYS058"))
            .map(|(id, _)| id.clone())
            .collect();
        for id in running {
            let Some(mut task) = s.scp.tasks.remove(&id) else {
                continue;
            };
            if self.faults.job_fails {
                task.waiting_for_post = false;
                self.finish_scp(
                    s,
                    &id,
                    JobState::Failed,
                    "SYS067",
                    "Unable to complete application of configuration profile values.",
                    at,
                );
                s.scp.tasks.insert(id, task);
                continue;
            }
            self.apply_manager(s, &mut task);
            let bios = std::mem::take(&mut task.staged.bios);
            if !bios.is_empty() {
                let mut candidate = s.bios.known();
                candidate.extend(bios);
                let evaluation = self.evaluate(&candidate);
                for (name, value) in evaluation.values() {
                    s.bios.inferred.remove(name);
                    s.bios.values.insert(name.clone(), value.clone());
                }
                s.bios.view = None;
            }
            self.end_import(s, &id, &mut task, at);
            if task.power_off_after {
                s.power.on = false;
                s.power.post = None;
            }
            s.scp.tasks.insert(id, task);
        }
    }
}
