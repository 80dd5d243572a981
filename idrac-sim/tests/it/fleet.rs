//! Many hosts in one process, sessions, stats, TLS and the inventory file.

use super::{client, config, raw, start};
use idrac_sim::SimConfig;
use redfish_client::oem::dell;
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use redfish_client::{Client, Credentials, Error, Fingerprint, ODataId, RetryPolicy, TlsVerification};
use serde_json::Value;
use std::time::Duration;

#[tokio::test]
async fn hosts_have_their_own_state_and_service_tags() {
    let fleet = start(SimConfig { hosts: 3, ..config() }).await;
    let ports: Vec<u16> = fleet.hosts().iter().map(|h| h.addr.port()).collect();
    assert_eq!(ports[1], ports[0] + 1);
    assert_eq!(ports[2], ports[0] + 2);
    let c0 = client(&fleet, 0);
    let change: Attributes = [("MemTest".to_owned(), "Enabled".into())].into_iter().collect();
    c0.stage_settings(
        &ODataId::new(dell::BIOS_SETTINGS),
        &change,
        Some(&SettingsApplyTime::on_reset()),
    )
    .await
    .unwrap();
    let c1 = client(&fleet, 1);
    assert!(
        c1.dell().jobs().await.unwrap().is_empty(),
        "host 1 does not see host 0's job"
    );
    let mut tags = Vec::new();
    for i in 0..3 {
        let root = client(&fleet, i).service_root().await.unwrap();
        tags.push(dell::service_tag(&root).unwrap().to_owned());
    }
    tags.dedup();
    assert_eq!(tags.len(), 3);
    let inv = fleet.inventory_toml();
    assert_eq!(inv.matches("[[bmc]]").count(), 3);
    assert!(inv.contains("name = \"r7625-0002\""));
}

#[tokio::test]
async fn stats_count_by_method_and_path_and_can_be_reset() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let c = Client::builder(url)
        .credentials(Credentials::new("root", "calvin"))
        .auth_method(redfish_client::AuthMethod::Basic)
        .build()
        .unwrap();
    c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
    c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
    c.service_root().await.unwrap();
    let stats: Value = raw()
        .get(format!("{url}/_sim/stats"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["requests"]["total"], 3, "{stats}");
    assert_eq!(stats["requests"]["by_method"]["GET"], 3);
    assert_eq!(stats["requests"]["by_path"][format!("GET {}", dell::BIOS)], 2);
    assert_eq!(stats["sessions_created"], 0);
    raw().post(format!("{url}/_sim/stats/reset")).send().await.unwrap();
    let stats: Value = raw()
        .get(format!("{url}/_sim/stats"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["requests"]["total"], 0);
}

#[tokio::test]
async fn sessions_expire_are_limited_and_log_out() {
    let fleet = start(SimConfig {
        session_limit: 2,
        session_timeout: Duration::from_millis(300),
        ..config()
    })
    .await;
    let url = &fleet.hosts()[0].url;
    let login = || super::login(url);
    let a = login().await;
    assert_eq!(a.status(), 201);
    let token = a.headers()["X-Auth-Token"].to_str().unwrap().to_owned();
    let location = a.headers()["Location"].to_str().unwrap().to_owned();
    assert_eq!(login().await.status(), 201);
    let full = login().await;
    assert_eq!(full.status(), 400);
    let body: Value = full.json().await.unwrap();
    assert_eq!(
        body["error"]["@Message.ExtendedInfo"][0]["MessageId"],
        "IDRAC.2.9.RAC0218"
    );
    let ok = raw()
        .get(format!("{url}{}", dell::BIOS))
        .header("X-Auth-Token", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let out = raw()
        .delete(format!("{url}{location}"))
        .header("X-Auth-Token", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 200);
    let gone = raw()
        .get(format!("{url}{}", dell::BIOS))
        .header("X-Auth-Token", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 401);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        login().await.status(),
        201,
        "idle sessions expired and freed their slots"
    );
    let bad = raw()
        .post(format!("{url}/redfish/v1/SessionService/Sessions"))
        .json(&serde_json::json!({"UserName": "root", "Password": "wrong"}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 401);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(
        body["error"]["@Message.ExtendedInfo"][0]["MessageId"],
        "IDRAC.2.9.SYS415"
    );
}

#[tokio::test]
async fn https_with_an_idrac_like_certificate_and_pinning() {
    let fleet = start(SimConfig {
        tls: true,
        hosts: 2,
        ..config()
    })
    .await;
    let fp = fleet.fingerprint().unwrap();
    let line = &fleet.listen_lines()[0];
    assert_eq!(
        line,
        &format!("rftune-sim: listening {} fingerprint {fp}", fleet.hosts()[0].url)
    );
    let printed: Fingerprint = line.rsplit(' ').next().unwrap().parse().unwrap();
    for h in fleet.hosts() {
        let c = Client::builder(&h.url)
            .tls(TlsVerification::Pinned(printed))
            .retry(RetryPolicy::none())
            .build()
            .unwrap();
        assert_eq!(c.service_root().await.unwrap().vendor.as_deref(), Some("Dell"));
    }
    let c = Client::builder(&fleet.hosts()[0].url)
        .tls(TlsVerification::System)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    assert!(
        matches!(c.service_root().await.unwrap_err(), Error::Transport { .. }),
        "self-signed: not trusted by system roots"
    );
    let wrong = Fingerprint::of_der(b"x");
    let c = Client::builder(&fleet.hosts()[0].url)
        .tls(TlsVerification::Pinned(wrong))
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    assert!(matches!(c.service_root().await.unwrap_err(), Error::PinMismatch { .. }));
}

#[tokio::test]
async fn other_models_and_the_registry_pointer() {
    for model in ["r7525", "c6615"] {
        let fleet = start(SimConfig {
            model: model.parse().unwrap(),
            ..config()
        })
        .await;
        let c = client(&fleet, 0);
        let bios = c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
        let registry = c.attribute_registry(&bios).await.unwrap();
        // Bios lists exactly the attributes the served registry does not mark Hidden.
        let visible: std::collections::BTreeSet<&str> = registry
            .registry_entries
            .attributes
            .iter()
            .filter(|a| !a.is_hidden())
            .map(|a| a.attribute_name.as_str())
            .collect();
        assert!(visible.len() < registry.registry_entries.attributes.len(), "{model}");
        assert_eq!(
            bios.attributes
                .keys()
                .map(String::as_str)
                .collect::<std::collections::BTreeSet<_>>(),
            visible,
            "{model}"
        );
        let system = c.system(&ODataId::new(dell::SYSTEM)).await.unwrap();
        assert!(!c.memory(&system).await.unwrap().is_empty());
    }
}

#[tokio::test]
async fn basic_auth_accepts_the_account_and_names_bad_credentials() {
    let fleet = start(config()).await;
    let url = format!("{}{}", fleet.hosts()[0].url, dell::BIOS);
    let ok = raw().get(&url).basic_auth("root", Some("calvin")).send().await.unwrap();
    assert_eq!(ok.status(), 200);
    let bad = raw().get(&url).basic_auth("root", Some("wrong")).send().await.unwrap();
    assert_eq!(bad.status(), 401);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(
        body["error"]["@Message.ExtendedInfo"][0]["MessageId"],
        "IDRAC.2.9.SYS415"
    );
    let garbled = raw()
        .get(&url)
        .header("Authorization", "Basic !!not-base64")
        .send()
        .await
        .unwrap();
    assert_eq!(garbled.status(), 401);
    let none = raw().get(&url).send().await.unwrap();
    assert_eq!(none.status(), 401);
}

/// `rftune sim --log-requests` shows what a subscriber set up like `rftune`'s (level `warn` with
/// the request target at `info`, no target, no time) prints: one line per request, and nothing
/// without the option.
#[tokio::test]
async fn the_request_log_is_one_line_per_request_at_the_level_rftune_shows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("requests.log");
    let log = std::sync::Arc::new(std::fs::File::create(&path).unwrap());
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(format!(
            "warn,{}=info",
            idrac_sim::server::REQUEST_LOG
        )))
        .with_writer(log)
        .with_ansi(false)
        .with_target(false)
        .without_time()
        .finish();
    // The test's runtime has one thread, so the emulator's tasks log to this subscriber.
    let _guard = tracing::subscriber::set_default(subscriber);
    let quiet = start(config()).await;
    client(&quiet, 0).service_root().await.unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "",
        "nothing is logged unless asked"
    );

    let fleet = start(SimConfig {
        log_requests: true,
        ..config()
    })
    .await;
    let c = client(&fleet, 0);
    c.service_root().await.unwrap();
    c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
    let _ = c.get_value("/redfish/v1/Nope").await;
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let tag = &fleet.hosts()[0].host.service_tag;
    let line =
        |method: &str, uri: &str, status: u16| format!(" INFO host={tag} method={method} uri={uri} status={status}");
    assert_eq!(
        lines,
        [
            line("GET", "/redfish/v1", 200),
            line("POST", "/redfish/v1/SessionService/Sessions", 201),
            line("GET", dell::BIOS, 200),
            line("GET", "/redfish/v1/Nope", 404),
        ],
        "{text}"
    );
}
