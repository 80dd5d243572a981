//! Real clients against the emulator: Dell's iDRAC-Redfish-Scripting Python scripts, replayed
//! as request transcripts written from reading them ([`dell_scripts`], [`dell_scp`] for the
//! configuration profile scripts), and badfish itself, run
//! from PyPI ([`badfish`]).

mod badfish;
mod dell_ansible;
mod dell_provisioning;
mod dell_scp;
mod dell_scripts;
mod script;
