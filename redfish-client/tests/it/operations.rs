//! The generic operations against fixture trees: reads, paging, expand, staging, reset, power.

use super::{client, fast_retry};
use redfish_client::odata::Link;
use redfish_client::resources::bios::{ApplyTime, Attributes, SettingsApplyTime};
use redfish_client::resources::computer_system::{PowerState, ResetType};
use redfish_client::{AuthMethod, Client, Credentials, ODataId};
use rftune_tests::MockBmc;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::{body_json, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

const SYSTEM: &str = "/redfish/v1/Systems/System.Embedded.1";

#[tokio::test]
async fn reads_system_memory_bios_pending_and_registry() {
    let bmc = MockBmc::start("r7625").await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let root = c.service_root().await.unwrap();
    assert_eq!(root.vendor.as_deref(), Some("Dell"));
    assert_eq!(c.systems().await.unwrap(), vec![ODataId::new(SYSTEM)]);
    let system = c.system(&ODataId::new(SYSTEM)).await.unwrap();
    assert_eq!(system.model.as_deref(), Some("PowerEdge R7625"));
    assert_eq!(system.power_state, Some(PowerState::On));
    let dimms = c.memory(&system).await.unwrap();
    assert_eq!(dimms.len(), 24);
    assert!(dimms.iter().all(|d| d.operating_speed_mhz == Some(4800)));
    let bios = c.bios(&system.bios_link()).await.unwrap();
    assert!(bios.supports_apply_time(ApplyTime::OnReset));
    assert!(!bios.supports_apply_time(ApplyTime::Immediate));
    let pending = c.pending_bios(&bios).await.unwrap();
    assert!(pending.attributes.is_empty());
    let registry = c.attribute_registry(&bios).await.unwrap();
    // Like a real iDRAC, Bios lists exactly the attributes the registry does not mark Hidden.
    let visible: std::collections::BTreeSet<&str> = registry
        .registry_entries
        .attributes
        .iter()
        .filter(|a| !a.is_hidden())
        .map(|a| a.attribute_name.as_str())
        .collect();
    assert!(visible.len() < registry.registry_entries.attributes.len());
    assert_eq!(
        bios.attributes
            .keys()
            .map(String::as_str)
            .collect::<std::collections::BTreeSet<_>>(),
        visible
    );
    // Memory came in one $expand request, not one per DIMM.
    let reqs = bmc.requests().await;
    assert_eq!(reqs.iter().filter(|r| r.contains("/Memory")).count(), 1, "{reqs:?}");
}

#[tokio::test]
async fn members_follow_next_links_across_pages() {
    let bmc = MockBmc::start("r7625").await;
    let page = |ids: &[&str], next: Option<&str>| {
        let mut v = json!({"Members": ids.iter().map(|i| json!({"@odata.id": i})).collect::<Vec<_>>(), "Members@odata.count": 3});
        if let Some(n) = next {
            v["Members@odata.nextLink"] = json!(n);
        }
        ResponseTemplate::new(200).set_body_json(v)
    };
    Mock::given(method("GET"))
        .and(path("/redfish/v1/Big"))
        .and(query_param("$skip", "2"))
        .respond_with(page(&["/c"], None))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/redfish/v1/Big"))
        .respond_with(page(&["/a", "/b"], Some("/redfish/v1/Big?$skip=2")))
        .with_priority(2)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let links: Vec<Link> = c.members("/redfish/v1/Big").await.unwrap();
    let ids: Vec<&str> = links.iter().map(|l| l.odata_id.as_str()).collect();
    assert_eq!(ids, ["/a", "/b", "/c"]);
}

#[tokio::test]
async fn answers_that_break_the_protocol_name_the_absolute_url() {
    let bmc = MockBmc::start("r7625").await;
    let base = bmc.url();
    let c = client(&base, AuthMethod::Basic);
    let system = c.system(&ODataId::new(SYSTEM)).await.unwrap();
    let mut bios = c.bios(&system.bios_link()).await.unwrap();
    let name = bios.attribute_registry.clone().unwrap();

    // A member link that is not a link.
    Mock::given(method("GET"))
        .and(path("/redfish/v1/Odd"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"Members": [{"@odata.id": 5}]})))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let err = c
        .expanded_members::<serde_json::Value>("/redfish/v1/Odd")
        .await
        .unwrap_err();
    assert_eq!(err.url(), Some(format!("{base}/redfish/v1/Odd").as_str()), "{err}");

    // A registry pointer without a location.
    Mock::given(method("GET"))
        .and(path(format!("/redfish/v1/Registries/{name}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"Location": []})))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let err = c.attribute_registry(&bios).await.unwrap_err();
    assert_eq!(
        err.url(),
        Some(format!("{base}/redfish/v1/Registries/{name}").as_str()),
        "{err}"
    );

    // A Bios that names no registry.
    bios.attribute_registry = None;
    let err = c.attribute_registry(&bios).await.unwrap_err();
    assert_eq!(err.url(), Some(format!("{base}{SYSTEM}/Bios").as_str()), "{err}");
}

#[tokio::test]
async fn staging_with_apply_time_returns_the_job_link() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("PATCH"))
        .and(path(format!("{SYSTEM}/Bios/Settings")))
        .and(body_json(json!({
            "@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"},
            "Attributes": {"SysProfile": "Custom", "ProcCStates": "Disabled", "CpuMinSevAsid": 100}
        })))
        .respond_with(
            ResponseTemplate::new(202)
                .insert_header("Location", "/redfish/v1/Managers/iDRAC.Embedded.1/Jobs/JID_274429394557")
                .set_body_json(json!({"@Message.ExtendedInfo": [{"MessageId": "IDRAC.2.9.SYS413", "Message": "The operation successfully completed."}]})),
        )
        .expect(1)
        .named("stage BIOS with OnReset")
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let mut attrs = Attributes::new();
    attrs.insert("SysProfile".into(), "Custom".into());
    attrs.insert("ProcCStates".into(), "Disabled".into());
    attrs.insert("CpuMinSevAsid".into(), 100.into());
    let staged = c
        .stage_settings(
            &ODataId::new(format!("{SYSTEM}/Bios/Settings")),
            &attrs,
            Some(&SettingsApplyTime::on_reset()),
        )
        .await
        .unwrap();
    assert_eq!(staged.job.unwrap().last_segment(), "JID_274429394557");
    assert_eq!(staged.messages[0].code(), "SYS413");
}

#[tokio::test]
async fn staging_without_a_job_is_reported_as_staged() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("PATCH"))
        .and(path(format!("{SYSTEM}/Bios/Settings")))
        .and(body_json(json!({"Attributes": {"LogicalProc": "Disabled"}})))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let mut attrs = Attributes::new();
    attrs.insert("LogicalProc".into(), "Disabled".into());
    let staged = c
        .stage_settings(&ODataId::new(format!("{SYSTEM}/Bios/Settings")), &attrs, None)
        .await
        .unwrap();
    assert!(staged.job.is_none());
}

#[tokio::test]
async fn reset_posts_to_the_action_target() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("POST"))
        .and(path(format!("{SYSTEM}/Actions/ComputerSystem.Reset")))
        .and(body_json(json!({"ResetType": "GracefulRestart"})))
        .respond_with(ResponseTemplate::new(204))
        .expect(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let system = c.system(&ODataId::new(SYSTEM)).await.unwrap();
    c.reset(&system, ResetType::GracefulRestart).await.unwrap();
}

#[tokio::test]
async fn power_readings_from_both_sources() {
    let bmc = MockBmc::start("r7625").await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let chassis = ODataId::new("/redfish/v1/Chassis/System.Embedded.1");
    let power = c.power(&chassis).await.unwrap();
    let watts = power.consumed_watts().unwrap();
    assert!(watts > 100.0, "{watts}");
    let metrics = power.power_control[0].power_metrics.as_ref().unwrap();
    assert_eq!(metrics.interval_in_min, Some(1.0));
    let env = c.environment_metrics(&chassis).await.unwrap();
    assert!(env.power_watts.unwrap().reading.is_some());
    // The Milan fixture runs iDRAC 6, which has no EnvironmentMetrics.
    let milan = MockBmc::start("r7525").await;
    let err = client(&milan.url(), AuthMethod::Basic)
        .environment_metrics(&chassis)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(404));
}

/// A keep-alive HTTP/1.1 server that answers every request with `{}` after `delay` (so that
/// concurrent requests overlap) and counts the connections it accepted.
async fn counting_server(delay: Duration) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut seen = Vec::new();
                loop {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                    // GETs carry no body: each blank line ends one request.
                    while let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                        seen.drain(..end + 4);
                        tokio::time::sleep(delay).await;
                        let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
                        if sock.write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), accepted)
}

/// A client of `url` with Basic authentication and quick retries, to build.
fn basic_client(url: &str) -> redfish_client::ClientBuilder {
    Client::builder(url)
        .credentials(Credentials::new(rftune_tests::USERNAME, rftune_tests::PASSWORD))
        .auth_method(AuthMethod::Basic)
        .retry(fast_retry())
}

/// Requests made at the same time share one keep-alive connection by default (one handshake
/// per BMC); `connections(n)` allows n.
#[tokio::test]
async fn concurrent_requests_share_one_connection_unless_more_are_allowed() {
    for (allowed, expected) in [(None, 1), (Some(3), 3)] {
        let (url, accepted) = counting_server(Duration::from_millis(100)).await;
        let mut builder = basic_client(&url);
        if let Some(n) = allowed {
            builder = builder.connections(n);
        }
        let c = builder.build().unwrap();
        let get = |p: &'static str| {
            let c = c.clone();
            async move { c.get_value(p).await.unwrap() }
        };
        let (a, b, d) = tokio::join!(get("/redfish/v1/A"), get("/redfish/v1/B"), get("/redfish/v1/C"));
        assert_eq!((a, b, d), (json!({}), json!({}), json!({})));
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            expected,
            "connections with {allowed:?}"
        );
    }
    assert!(Client::builder("http://127.0.0.1:1").connections(0).build().is_err());
}

/// One request after another stays on one connection on a multi-threaded runtime too, where
/// the HTTP pool takes a connection back on another task: a request that came too early would
/// open a second connection (a second TLS handshake per BMC) while the first was coming back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_one_after_another_reuse_the_one_connection() {
    let (url, accepted) = counting_server(Duration::ZERO).await;
    let c = basic_client(&url).build().unwrap();
    for i in 0..30 {
        assert_eq!(c.get_value(&format!("/redfish/v1/R{i}")).await.unwrap(), json!({}));
    }
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "connections for 30 requests in turn"
    );
}

/// A BMC closes a keep-alive connection it considers idle (iDRAC does, after a few seconds).
/// The next request goes out on a new connection, and a write is sent exactly once: the closed
/// connection is noticed before anything is written on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_the_bmc_closed_while_idle_is_replaced_and_a_write_goes_out_once() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut got = Vec::new();
                // One request per connection: answer it as keep-alive, then close.
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let line = String::from_utf8_lossy(&got)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                log.lock().unwrap().push(line);
                let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
                let _ = sock.write_all(answer.as_bytes()).await;
            });
        }
    });
    let c = basic_client(&url).build().unwrap();
    assert_eq!(c.get_value("/redfish/v1/A").await.unwrap(), json!({}));
    tokio::time::sleep(Duration::from_millis(50)).await;
    c.patch("/redfish/v1/B", &json!({"X": 1})).await.unwrap();
    assert_eq!(c.get_value("/redfish/v1/C").await.unwrap(), json!({}));
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "GET /redfish/v1/A HTTP/1.1",
            "PATCH /redfish/v1/B HTTP/1.1",
            "GET /redfish/v1/C HTTP/1.1"
        ]
    );
}
