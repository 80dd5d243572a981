//! What every host serves beyond its tree, named once for the tree's completion (which lists
//! and advertises it) and for the hosts (which serve it): the types of the documents a host
//! renders from its state, and the Server Configuration Profile targets. A leaf: it knows
//! neither.

/// The types of the documents a host renders from its state rather than from the tree, which
/// `$metadata` and `JsonSchemas` list along with the tree's.
pub const RENDERED_TYPES: [&str; 16] = [
    "#Session.v1_6_0.Session",
    "#SessionCollection.SessionCollection",
    "#DellJob.v1_5_0.DellJob",
    "#DellJobCollection.DellJobCollection",
    "#Job.v1_2_1.Job",
    "#JobCollection.JobCollection",
    "#LogEntry.v1_15_0.LogEntry",
    "#LogEntry.v1_9_0.LogEntry",
    "#LogEntryCollection.LogEntryCollection",
    "#EventDestination.v1_11_0.EventDestination",
    "#EventDestinationCollection.EventDestinationCollection",
    "#CertificateService.v1_0_4.CertificateService",
    "#CertificateLocations.v1_0_2.CertificateLocations",
    "#CertificateCollection.CertificateCollection",
    "#Certificate.v1_3_0.Certificate",
    "#Certificate.v1_7_0.Certificate",
];

/// The Server Configuration Profile targets a real Manager lists for export and import.
pub use redfish_client::oem::dell::scp::TARGETS as SCP_TARGETS;
