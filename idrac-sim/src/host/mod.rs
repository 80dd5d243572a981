//! One emulated iDRAC, independent of HTTP: its state and what each operation does to it.
//!
//! Time is a function of the clock, not of requests: every scheduled change happens at its own
//! instant, and each operation first replays the ones whose instant has passed (`timeline`).
//!
//! Each concern is a module that keeps its own state (`state.rs` in its directory: what it
//! holds, and the pure logic on it) and does its operations as methods of [`Host`], with the
//! routes that reach them (`routes()`, which a [`Personality`](crate::personality::Personality)
//! orders): `power` (resets, POST, shutdowns), `manager` (the iDRAC's own restarts, readiness,
//! its clock), `system` (the ComputerSystem and its boot override), `bios` (staging checked
//! against the registry, passwords, resets to defaults), `boot` (the boot sequence and what
//! changes it), `secure_boot`, `jobs` (the queue and its two views), `scp` (Server Configuration
//! Profiles), `dell_attributes` (iDRAC attributes, System Lockdown), `accounts`, `sessions`,
//! `logs` (the Lifecycle log and the audit), `events`, `network`, `certificates`, `chassis`,
//! `readings` (power readings and energy) and `service` (the service documents and the recorded
//! tree). `core` holds the [`Host`] that composes the concerns' states; `timeline` the clock.

pub(crate) mod accounts;
pub(crate) mod bios;
pub(crate) mod boot;
pub(crate) mod caller;
pub(crate) mod certificates;
pub(crate) mod chassis;
pub(crate) mod core;
pub(crate) mod dell_attributes;
pub(crate) mod events;
pub(crate) mod jobs;
pub(crate) mod json;
pub(crate) mod logs;
pub(crate) mod manager;
pub(crate) mod network;
pub(crate) mod power;
pub(crate) mod readings;
pub(crate) mod refusals;
pub(crate) mod reply;
pub(crate) mod scp;
pub(crate) mod secure_boot;
pub(crate) mod service;
pub(crate) mod sessions;
pub(crate) mod system;
pub(crate) mod timeline;

pub use caller::Caller;
pub use core::{Host, HostFaults, service_tag};
pub use manager::state::Availability;
pub use reply::{JSON, Rendered, Reply, XML};
