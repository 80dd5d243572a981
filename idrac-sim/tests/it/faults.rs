//! Each injected fault, observed by the client as the right error or a successful retry.

use super::{client, config, eventually, start};
use idrac_sim::SimConfig;
use redfish_client::error::TransportKind;
use redfish_client::oem::dell;
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use redfish_client::resources::computer_system::ResetType;
use redfish_client::resources::task::JobOutcome;
use redfish_client::{Error, ODataId};
use std::time::Duration;

fn faulty(spec: &str) -> SimConfig {
    SimConfig {
        faults: vec![spec.parse().unwrap()],
        seed: 3,
        ..config()
    }
}

fn one_change() -> Attributes {
    [("MemTest".to_owned(), "Enabled".into())].into_iter().collect()
}

#[tokio::test]
async fn transient_503s_are_retried_to_success() {
    let fleet = start(faulty("503:0.5")).await;
    let c = client(&fleet, 0);
    for _ in 0..10 {
        c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
    }
    let total = fleet.hosts()[0].host.stats.total();
    assert!(
        total > 11,
        "some requests were answered 503 and retried ({total} requests)"
    );
}

#[tokio::test]
async fn connection_resets_are_retried_for_reads() {
    let fleet = start(faulty("reset:0.3")).await;
    let c = client(&fleet, 0);
    for _ in 0..10 {
        c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
    }
    assert!(c.requests_sent() > 11, "{}", c.requests_sent());
}

#[tokio::test]
async fn a_hanging_bmc_times_out() {
    let fleet = start(faulty("timeout")).await;
    let c = redfish_client::Client::builder(&fleet.hosts()[0].url)
        .timeout(Duration::from_millis(300))
        .retry(redfish_client::RetryPolicy::none())
        .build()
        .unwrap();
    let err = c.service_root().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport {
                kind: TransportKind::Timeout,
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn malformed_json_is_a_decode_error() {
    let fleet = start(faulty("malformed")).await;
    let err = client(&fleet, 0).service_root().await.unwrap_err();
    assert!(matches!(err, Error::Decode { .. }), "{err}");
}

#[tokio::test]
async fn expired_sessions_are_renewed_transparently() {
    let fleet = start(faulty("session-expiry:0.3")).await;
    let c = client(&fleet, 0);
    for _ in 0..10 {
        c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
    }
    let stats = fleet.hosts()[0].host.stats.to_json("x");
    assert!(stats["sessions_created"].as_u64().unwrap() > 1, "{stats}");
}

async fn stage_and_reset(fleet: &idrac_sim::Fleet) -> (redfish_client::Client, ODataId) {
    let c = client(fleet, 0);
    let staged = c
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &one_change(),
            Some(&SettingsApplyTime::on_reset()),
        )
        .await
        .unwrap();
    let system = c.system(&ODataId::new(dell::SYSTEM)).await.unwrap();
    c.reset(&system, ResetType::PowerCycle).await.unwrap();
    (c, staged.job.unwrap())
}

#[tokio::test]
async fn a_stuck_job_reports_pr30_and_applies_nothing() {
    let fleet = start(faulty("stuck-job")).await;
    let (c, job) = stage_and_reset(&fleet).await;
    let j = eventually("PR30", || async {
        let j = c.dell().job(job.last_segment()).await.ok()?;
        (j.outcome() == JobOutcome::Stuck).then_some(j)
    })
    .await;
    assert!(j.failure().unwrap().to_string().contains("PR30"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (bios, pending, _) = fleet.hosts()[0].host.snapshot();
    assert_eq!(bios["MemTest"].as_str(), Some("Disabled"));
    assert_eq!(pending.len(), 1);
}

#[tokio::test]
async fn a_failing_job_ends_failed() {
    let fleet = start(faulty("job-fails")).await;
    let (c, job) = stage_and_reset(&fleet).await;
    let j = eventually("failure", || async {
        let j = c.dell().job(job.last_segment()).await.ok()?;
        (j.outcome() == JobOutcome::Failed).then_some(j)
    })
    .await;
    assert!(j.failure().is_some());
    assert_eq!(fleet.hosts()[0].host.snapshot().0["MemTest"].as_str(), Some("Disabled"));
}

#[tokio::test]
async fn a_host_that_never_returns_stays_in_post() {
    let fleet = start(faulty("no-return")).await;
    let (c, job) = stage_and_reset(&fleet).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let lc = c.dell().lc_status().await.unwrap();
    assert_eq!((lc.is_ready(), lc.server_status.as_deref()), (false, Some("InPOST")));
    let j = c.dell().job(job.last_segment()).await.unwrap();
    assert_eq!(j.outcome(), JobOutcome::Running, "the job started and never ends");
}

#[tokio::test]
async fn faults_hit_only_the_selected_hosts() {
    let fleet = start(SimConfig {
        hosts: 10,
        ..faulty("stuck-job@20%")
    })
    .await;
    let affected = fleet.hosts().iter().filter(|h| h.host.faults.stuck_job).count();
    assert_eq!(affected, 2);
    let fleet = start(SimConfig {
        hosts: 4,
        ..faulty("503@2,4")
    })
    .await;
    let affected: Vec<usize> = fleet
        .hosts()
        .iter()
        .filter(|h| !h.host.faults.request.is_empty())
        .map(|h| h.host.index)
        .collect();
    assert_eq!(affected, vec![1, 3]);
}

/// A body over the size limit, or a chunked body that breaks off, is answered in Redfish JSON
/// with a MessageId, not in plain text.
#[tokio::test]
async fn oversized_and_broken_bodies_are_answered_in_redfish_json() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let fleet = start(config()).await;
    let url = fleet.hosts()[0].url.clone();
    let addr = url.trim_start_matches("http://").to_owned();
    let exchange = |head: String, body: Vec<u8>| {
        let addr = addr.clone();
        async move {
            let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
            stream.write_all(head.as_bytes()).await.unwrap();
            let _ = stream.write_all(&body).await;
            let mut answer = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
            String::from_utf8_lossy(&answer).into_owned()
        }
    };
    let big = vec![b' '; 3 << 20];
    let head = format!(
        "PATCH {} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Basic cm9vdDpjYWx2aW4=\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        dell::BIOS_SETTINGS,
        big.len()
    );
    let text = exchange(head, big).await;
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(
        text.contains("GeneralError") && text.contains("application/json"),
        "{text}"
    );

    // Chunked encoding that breaks off: a chunk size that is not hex.
    let request = format!(
        "PATCH {} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Basic cm9vdDpjYWx2aW4=\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\n{{\"At\r\nzz\r\n",
        dell::BIOS_SETTINGS
    );
    let text = exchange(request, Vec::new()).await;
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    assert!(
        text.contains("\"MessageId\"") && text.contains("application/json"),
        "{text}"
    );
}
