//! The hooks around a host's reboot, for every writer that reboots: `before-reboot` once the
//! host holds its reboot slot and what it applies is staged (a failing hook stops the host
//! there, what was staged is cleared again unless `--keep-staged`, and `on-failure` runs);
//! after the reboot, `after-verify` when the host ended as it should (a failing one fails the
//! host) or `on-failure` when it did not. A host rftune does not reboot runs no hooks.

use super::Writer;
use crate::audit::Step;
use crate::control::RebootPolicy;
use crate::error::{HostError, HostErrorKind, Result};
use crate::hooks::{self, HookPoint, Ran};
use crate::observe::Phase;
use serde_json::json;
use std::future::Future;
use std::sync::PoisonError;

impl Writer<'_> {
    /// Notes the host's service tag for its hooks' environment.
    pub fn set_service_tag(&self, tag: Option<&str>) {
        self.hooks.lock().unwrap_or_else(PoisonError::into_inner).service_tag = tag.map(str::to_owned);
    }

    /// Runs the before-reboot hook, once the host holds its reboot slot and what the reboot
    /// applies is staged. Nothing runs when rftune will not reboot the host or no hook is set.
    /// A failing hook stops the host: `undo` clears what was staged (unless `--keep-staged`;
    /// `left` says what then stays pending) and says what it did, the on-failure hook runs,
    /// and the error says what happened.
    pub async fn before_reboot<F>(&self, undo: impl FnOnce() -> F, left: &str) -> Result<()>
    where
        F: Future<Output = String>,
    {
        let opts = self.options();
        if opts.reboot == RebootPolicy::None || !opts.hooks.any() {
            return Ok(());
        }
        {
            // A host drained once stays drained through every reboot of the same write (a
            // reset to defaults, then the profile's job): the hook runs before the first.
            let mut state = self.hooks.lock().unwrap_or_else(PoisonError::into_inner);
            if state.reached {
                return Ok(());
            }
            state.reached = true;
        }
        let Some(command) = opts.hooks.before_reboot.clone() else {
            return Ok(());
        };
        self.check("the before-reboot hook")?;
        let ran = self.hook(HookPoint::BeforeReboot, &command, None).await?;
        if ran.ok() {
            return Ok(());
        }
        let left = if opts.keep_staged {
            left.to_owned()
        } else {
            undo().await
        };
        let message = format!(
            "the before-reboot hook failed ({}); the host was not rebooted, and {left}",
            ran.failure(opts.hooks.timeout)
        );
        self.on_failure(&message).await;
        // Its on-failure hook has run: nothing is left to run after a reboot that never came.
        self.hooks.lock().unwrap_or_else(PoisonError::into_inner).reached = false;
        Err(HostError::new(self.name(), HostErrorKind::HookFailed, message).into())
    }

    /// After the reboot of a host whose before-reboot point was reached: the after-verify hook
    /// when it ended `done` as it should (a failing one fails the host), else the on-failure
    /// hook with `why_not` (or the error of `finished`).
    pub async fn after_reboot<T>(&self, finished: &Result<T>, done: bool, why_not: &str) -> Result<()> {
        if !self.hooks.lock().unwrap_or_else(PoisonError::into_inner).reached {
            return Ok(());
        }
        let hooks = &self.options().hooks;
        match finished {
            Ok(_) if done => {
                let Some(command) = hooks.after_verify.clone() else {
                    return Ok(());
                };
                let ran = self.hook(HookPoint::AfterVerify, &command, None).await?;
                if ran.ok() {
                    return Ok(());
                }
                let message = format!(
                    "the host converged, but the after-verify hook failed ({})",
                    ran.failure(hooks.timeout)
                );
                Err(HostError::new(self.name(), HostErrorKind::HookFailed, message).into())
            }
            Ok(_) => {
                self.on_failure(why_not).await;
                Ok(())
            }
            Err(e) => {
                self.on_failure(&crate::error::report(e)).await;
                Ok(())
            }
        }
    }

    /// The on-failure hook, if set; its own failure is recorded, not returned (the host's
    /// failure is what the caller reports).
    async fn on_failure(&self, error: &str) {
        if let Some(command) = self.options().hooks.on_failure.clone() {
            let _ = self.hook(HookPoint::OnFailure, &command, Some(error)).await;
        }
    }

    /// Runs one hook, recorded in the audit log with its exit and output.
    async fn hook(&self, phase: HookPoint, command: &str, error: Option<&str>) -> Result<Ran> {
        self.phase(Phase::Hook(phase.as_str().to_owned()));
        let tag = self
            .hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .service_tag
            .clone();
        let ctx = hooks::Context {
            host: self.name(),
            bmc: &self.bmc.url,
            service_tag: tag.as_deref(),
            profile: &self.writes.label,
            node: self.bmc.node.as_deref(),
            error,
        };
        let timeout = self.options().hooks.timeout;
        let ran = hooks::run(command, phase, &ctx, timeout).await.unwrap_or_else(|e| Ran {
            phase: phase.as_str(),
            exit: None,
            timed_out: false,
            seconds: 0.0,
            stdout: String::new(),
            stderr: crate::error::report(&e),
        });
        let outcome = if ran.ok() { "ok" } else { "error" };
        let request = json!({"phase": phase.as_str(), "command": command});
        self.audit(Step::Hook, request, outcome, serde_json::to_value(&ran)?)?;
        let record = format!(
            "{}: {}",
            phase.as_str(),
            if ran.ok() {
                "ok".to_owned()
            } else {
                ran.failure(timeout)
            }
        );
        self.hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .records
            .push(record);
        Ok(ran)
    }
}
