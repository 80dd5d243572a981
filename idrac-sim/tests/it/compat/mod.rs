//! Real clients against the emulator: Dell's iDRAC-Redfish-Scripting Python scripts, replayed
//! as request transcripts written from reading them ([`dell_scripts`], [`dell_scp`] for the
//! configuration profile scripts, [`dell_provisioning`]) and run themselves as PyPI ships them
//! ([`dell_pypi`]); badfish ([`badfish`]) and Dell's Ansible collection ([`dell_ansible`]), run
//! from PyPI.

mod badfish;
mod dell_ansible;
mod dell_provisioning;
mod dell_pypi;
mod dell_scp;
mod dell_scripts;
mod script;
