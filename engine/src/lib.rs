//! The rftune engine: brings Dell PowerEdge servers with AMD EPYC to a BIOS and iDRAC profile
//! and proves it — as a library that provisioning code calls, under the `rftune` command line.
//!
//! The layers, bottom up:
//! - **Connections** ([`target`], [`trust`], [`credentials`]): a [`target::ConnectConfig`] of
//!   plain values (credentials already resolved) and an inventory entry
//!   ([`fleet::BmcEntry`]) give a connected [`target::Target`]; failures explain themselves
//!   with the host, what was attempted, the iDRAC MessageId and a hint.
//! - **Reading and judging** ([`bmc`], [`cache`], [`assess`]): a host's BIOS values, pending
//!   values, jobs and registry (cached per model and BIOS version), compared with a profile.
//! - **Converging** ([`converge`]): plan → adopt / replace / refuse pending work → snapshot →
//!   iDRAC attributes → one BIOS PATCH → reboot → job → verify, with every step in the
//!   [`audit`] log and the decisions as pure functions ([`converge::decide`]).
//! - **Fleets** ([`fleet`]): bounded concurrency where one host's failure never stops the
//!   others; reboots throttled by the caller's semaphore; stop requests ([`interrupt`]).
//! - **Records** ([`snapshot`], [`derive`](mod@derive), [`capture`], [`state`]): what a host had before a
//!   change, profiles derived from hosts, sanitised captures, private state directories.
//! - **Measuring** ([`power`], [`experiment`]): power readings from the BMC, and experiments
//!   that compare profiles on real hosts with confidence intervals.
//! - **Watching** ([`watch`]): every host re-checked on a schedule, its latest result kept
//!   small and rendered as Prometheus metrics (`rftune exporter`).
//!
//! The engine never prints and never parses command lines: progress goes to an
//! [`observe::Observer`], failures are an [`Error`] whose [`HostError`] kinds a caller can act
//! on.
//!
//! ```no_run
//! use rftune_engine::{assess::Chosen, fleet::BmcEntry, observe::Silent, state::StateDirs};
//! use rftune_engine::target::{self, ConnectConfig};
//! use redfish_client::Credentials;
//!
//! # async fn run() -> rftune_engine::Result<()> {
//! let dirs = StateDirs::resolve(None)?;
//! let config = ConnectConfig::new(Credentials::new("root", "calvin"));
//! let entry = BmcEntry::from_url("https://idrac-r7625-01.example")?;
//! let host = target::connect(&entry, &config, &dirs, &Silent).await?;
//! let profile = Chosen::load("performance")?;
//! let assessment = rftune_engine::assess::assess(&host, &profile, &dirs.registry_cache(), false, false).await?;
//! println!("{} drifted attribute(s)", assessment.diff.counts().drift);
//! # Ok(())
//! # }
//! ```

pub mod assess;
pub mod audit;
pub mod bench;
pub mod bmc;
pub mod cache;
pub mod capture;
pub mod converge;
pub mod credentials;
pub mod derive;
pub mod duration;
pub mod error;
pub mod experiment;
pub mod fleet;
mod hash;
pub mod interrupt;
pub mod observe;
pub mod power;
pub mod sanitize;
pub mod snapshot;
pub mod state;
pub mod table;
pub mod target;
pub mod trust;
pub mod watch;

pub use error::{Error, HostError, HostErrorKind, Result};

/// The `tracing` target of warnings about where the password goes (plain HTTP, `--insecure`):
/// the command line shows them at every verbosity.
pub const SECURITY_LOG_TARGET: &str = "rftune::security";
