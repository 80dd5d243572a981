//! The rftune engine: brings Dell PowerEdge servers with AMD EPYC to a BIOS and iDRAC profile
//! and proves it — as a library that provisioning code calls, under the `rftune` command line.
//! Every BMC operation the command line performs is here; the command line only configures and
//! renders.
//!
//! Start from the re-exports below. The layers, bottom up:
//! - **Reaching hosts** ([`connect`], [`lifecycle`], [`fleet`]): a [`ConnectConfig`] of plain
//!   values (credentials already resolved) and an inventory entry ([`BmcEntry`]) give a
//!   connected [`Bmc`]. [`Access`] runs an [`Operation`] on one host or a fleet with the same
//!   life every time — connect, log in, work, always log out — and, where work is audited, the
//!   records of a failed connection or login. One host's failure never stops the others.
//! - **Vendors** ([`backend`]): each BMC's way of doing things — where its resources are, what
//!   its pending values mean, its job queue, its readiness, its own settings, its actions —
//!   chosen from what the service reports; every operation asks its host's backend.
//! - **Reading and judging** ([`read`], [`assess`], [`inventory`]): a host's BIOS values,
//!   pending values, jobs and registry (cached per model and BIOS version), compared with a
//!   [`LoadedProfile`].
//! - **Changing** ([`write`](mod@write), [`converge`], [`control`], [`jobs`]): every write goes through
//!   one pipeline ([`write`](mod@write): the host's lock, a backend rftune writes to, the refusals of
//!   pending work and lockdown, one reboot slot, the snapshot, the reboot with its hooks, the
//!   waits, the audit log, a stop honoured between steps). On it: the apply of a profile as
//!   named steps (plan → adopt / replace / refuse pending work → snapshot → iDRAC attributes →
//!   one BIOS PATCH → reboot → job → verify), SCP imports, resets to defaults, BIOS passwords,
//!   one-time boots, Secure Boot key resets, power on/off/cycle ([`switch`]), job and pending-value
//!   housekeeping. [`plan`] writes what an apply will do for review and holds a later apply
//!   to it; [`hooks`] are the commands run around each reboot; [`lock`] keeps to one run per
//!   host.
//! - **Records** ([`snapshot`], [`derive`](mod@derive), [`capture`], [`state`]): what a host had
//!   before a change, profiles derived from hosts, sanitised captures, private state directories.
//! - **Measuring and watching** ([`meter`], [`bench`](mod@bench), [`watch`]): power readings
//!   from the BMC, what a benchmark records of the BMC's server, and the exporter's schedule of
//!   checks.
//!
//! The engine never prints and never parses command lines: progress goes to an [`Observer`],
//! failures are an [`Error`] a caller can match (a [`HostError`] of a [`HostErrorKind`], a stop,
//! bad input, a failed command, a Redfish error kept as itself).
//!
//! ```no_run
//! use rftune_engine::{Access, ApplyOptions, ApplyRun, BmcEntry, ConnectConfig, Limits, LoadedProfile, Silent, StateDirs};
//! use redfish_client::Credentials;
//! use std::sync::Arc;
//!
//! # async fn run() -> rftune_engine::Result<()> {
//! let dirs = StateDirs::resolve(None)?;
//! let access = Access::new(ConnectConfig::new(Credentials::new("root", "calvin")), dirs.clone(), Arc::new(Silent));
//! let hosts = vec![BmcEntry::from_url("https://idrac-r7625-01.example")?];
//! let run = Arc::new(ApplyRun::new(LoadedProfile::load("performance")?, &dirs, ApplyOptions::default(), 1)?);
//! access
//!     .fleet(&hosts, &Limits::default(), Some(run.audit()), run.clone(), |_, host| match host.result {
//!         Ok(done) => println!("{}: {}", host.entry.name, done.summary),
//!         Err(e) => eprintln!("{e:#}"),
//!     })
//!     .await;
//! # Ok(())
//! # }
//! ```

pub mod assess;
pub mod audit;
pub mod backend;
pub mod bench;
pub mod boot;
mod cache;
pub mod capture;
pub mod connect;
pub mod control;
pub mod converge;
pub mod defaults;
pub mod derive;
pub mod duration;
pub mod error;
pub mod fleet;
pub mod hash;
pub mod hooks;
pub mod interrupt;
pub mod inventory;
pub mod jobs;
pub mod lifecycle;
pub mod lock;
pub mod marker;
pub mod meter;
pub mod observe;
pub mod passwords;
pub mod plan;
pub mod read;
pub mod restore;
pub mod sanitize;
pub mod scp;
pub mod secure_boot;
pub mod snapshot;
pub mod state;
pub mod switch;
pub mod table;
pub mod wait;
pub mod watch;
pub mod write;

pub use assess::{Assess, AssessOptions, Assessment, LoadedProfile};
pub use cache::RegistryCache;
pub use connect::{Bmc, ConnectConfig};
pub use control::RebootPolicy;
pub use converge::{ApplyOptions, ApplyOutcome, ApplyRun, HostApply};
pub use error::{Error, HostError, HostErrorKind, Result};
pub use fleet::{BmcEntry, HostResult, Limits};
pub use lifecycle::{Access, Operation};
pub use observe::{Event, Observer, Silent};
pub use state::StateDirs;

/// The `tracing` target of warnings about where the password goes (`--insecure`):
/// the command line shows them at every verbosity.
pub const SECURITY_LOG_TARGET: &str = "rftune::security";
