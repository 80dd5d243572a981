//! A stateful iDRAC9, iDRAC10 and HPE iLO 5 emulator served by axum over the fixture trees; each
//! host answers as the BMC its tree records ([`personality`]).
//!
//! It models what rftune depends on and no public Redfish mockup does: BIOS values staged on
//! `Bios/Settings` and validated like iDRAC (MessageIds and Base registry ids), a
//! BIOSConfiguration job created by `@Redfish.SettingsApplyTime` or `POST Jobs`, SYS011 on a
//! second commit, `ComputerSystem.Reset` driving the power state through a simulated POST that
//! runs the job (Scheduled → Running → Completed/PR19) and applies the pending values plus
//! every value the registry's presets force, DellAttributes applied immediately, System
//! Lockdown, sessions, power readings that follow load and settings, injected faults, and many
//! hosts in one process, of one model or several. An iLO keeps a full-copy BIOS settings object
//! that takes anything and is judged at the next POST (`@Redfish.Settings` `Time` and
//! `Messages`), with no jobs. `rftune sim` and `rftune demo` run it; the end-to-end tests use it.
//!
//! ```no_run
//! # async fn run() -> Result<(), idrac_sim::SimError> {
//! let fleet = idrac_sim::Fleet::start(idrac_sim::SimConfig { hosts: 3, ..Default::default() }).await?;
//! for line in fleet.listen_lines() {
//!     println!("{line}");
//! }
//! # Ok(()) }
//! ```

pub mod clock;
pub mod config;
pub mod fixture;
pub mod fleet;
pub mod generation;
pub mod host;
pub mod message_registries;
pub mod messages;
pub mod odata;
pub mod personality;
pub mod power_model;
pub mod protocol;
pub mod query;
pub mod rendered;
pub mod route;
pub mod served;
pub mod server;
pub mod stats;
pub mod synth;
pub mod tls;

pub use config::{FaultKind, FaultSpec, Latency, ModelSource, Selector, SimConfig};
pub use fleet::{Fleet, RunningHost, SimError};
