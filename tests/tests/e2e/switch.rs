//! Moving a host between shipped profiles, end to end on the emulator: after one profile is
//! applied, `diff` with another lists every value the other wants different, and applying it
//! leaves the host as one that only ever had the other.

use super::{Run, client, sim, stderr, stdout};
use redfish_client::ODataId;
use redfish_client::oem::dell::{self, AttributeGroup};
use redfish_client::resources::bios::Attributes;
use serde_json::Value;
use std::collections::BTreeSet;

async fn apply(url: &str, profile: &str) {
    let out = Run::new(&[
        "apply",
        "--bmc",
        url,
        "--profile",
        profile,
        "--reboot",
        "force",
        "--job-timeout",
        "20s",
        "--boot-timeout",
        "20s",
    ])
    .output()
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "apply {profile}: {}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// What a host shows: its BIOS values and its iDRAC System attributes.
async fn state(url: &str) -> (Attributes, Attributes) {
    let c = client(url);
    let bios = c.bios(&ODataId::new(dell::BIOS)).await.unwrap().attributes;
    let system = c.dell().attributes(AttributeGroup::System).await.unwrap().attributes;
    (bios, system)
}

/// The names whose values differ between `a` and `b`, except `identity` (what tells two
/// emulated hosts apart from the start: service tags, serial numbers).
fn differing(a: &Attributes, b: &Attributes, identity: &BTreeSet<String>) -> BTreeSet<String> {
    a.keys()
        .chain(b.keys())
        .filter(|k| !identity.contains(*k) && a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// `first` then `second` on host 0, `second` alone on host 1 of a fresh R7625 pair: the diff
/// after `first` names every attribute on which the hosts then differ, and after `second` they
/// no longer differ anywhere. Returns the attributes the diff listed as changes.
async fn moved_equals_fresh(first: &str, second: &str) -> BTreeSet<String> {
    let fleet = sim("r7625", 2, |_| {}).await;
    let (moved, fresh) = (&fleet.hosts()[0].url, &fleet.hosts()[1].url);
    let (b0, s0) = state(moved).await;
    let (b1, s1) = state(fresh).await;
    let identity: BTreeSet<String> = differing(&b0, &b1, &BTreeSet::new())
        .union(&differing(&s0, &s1, &BTreeSet::new()))
        .cloned()
        .collect();
    tokio::join!(apply(moved, first), apply(fresh, second));
    let (b0, s0) = state(moved).await;
    let (b1, s1) = state(fresh).await;
    // What the second profile makes the host show differently; an attribute it hides (the fabric
    // P-state once ApbDis is off, the link width once the links are not forced) has no value to
    // want, and goes when it is applied.
    let wanted: BTreeSet<String> = differing(&b0, &b1, &identity)
        .union(&differing(&s0, &s1, &identity))
        .filter(|k| b1.contains_key(*k) || s1.contains_key(*k))
        .cloned()
        .collect();
    assert!(!wanted.is_empty(), "{first} and {second} differ somewhere");
    let out = Run::new(&["diff", "--bmc", moved, "-p", second, "-o", "json"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed: BTreeSet<String> = doc["hosts"][0]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !matches!(c["status"].as_str(), Some("in_sync" | "not_applicable")))
        .map(|c| c["attribute"].as_str().unwrap().to_owned())
        .collect();
    let unlisted: Vec<&String> = wanted.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "after {first}, diff -p {second} does not list {unlisted:?} although a host with only {second} differs there"
    );
    apply(moved, second).await;
    let (b0, s0) = state(moved).await;
    assert_eq!(
        differing(&b0, &b1, &identity),
        BTreeSet::new(),
        "BIOS after {first} → {second}"
    );
    assert_eq!(
        differing(&s0, &s1, &identity),
        BTreeSet::new(),
        "iDRAC after {first} → {second}"
    );
    listed
}

#[tokio::test(flavor = "multi_thread")]
async fn low_latency_then_power_efficiency_ends_as_power_efficiency_alone() {
    let listed = moved_equals_fresh("low-latency", "power-efficiency").await;
    // What low-latency leaves that power-efficiency used not to name: SMT off, the data fabric
    // barred from idle, the fabric pinned, the socket links forced.
    for name in ["LogicalProc", "DfCState", "ApbDis", "DynamicLinkWidthManagement"] {
        assert!(listed.contains(name), "{name} not listed: {listed:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn low_latency_then_performance_ends_as_performance_alone() {
    let listed = moved_equals_fresh("low-latency", "performance").await;
    for name in [
        "ApbDis",
        "DfCState",
        "DynamicLinkWidthManagement",
        "LogicalProc",
        "SysProfile",
    ] {
        assert!(listed.contains(name), "{name} not listed: {listed:?}");
    }
}
