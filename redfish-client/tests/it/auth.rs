//! Sessions, Basic, re-login after expiry, logout, and secrets kept out of Debug and logs.

use super::client;
use redfish_client::resources::bios::Bios;
use redfish_client::{AuthMethod, Client, Credentials, Error};
use rftune_tests::{MockBmc, redfish_error};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use wiremock::matchers::{header, header_exists, method, path};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

const BIOS: &str = "/redfish/v1/Systems/System.Embedded.1/Bios";

#[tokio::test]
async fn session_login_uses_token_and_logout_is_sent() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("DELETE"))
        .and(path("/redfish/v1/SessionService/Sessions/1"))
        .and(header("X-Auth-Token", "token-1"))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .named("logout of session 1")
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Session);
    let bios: Bios = c.get(BIOS).await.unwrap();
    assert_eq!(bios.attributes["SysProfile"].as_str(), Some("PerfOptimized"));
    let _again: Bios = c.get(BIOS).await.unwrap();
    assert!(c.has_session().await);
    c.logout().await.unwrap();
    assert!(!c.has_session().await);
    c.logout().await.unwrap(); // idempotent: no second DELETE
    assert_eq!(bmc.logins(), 1, "one login for several requests");
    let reqs = bmc.requests().await;
    assert_eq!(reqs.iter().filter(|r| r.starts_with("GET")).count(), 2);
}

/// A client abandoned with its session open (its work dropped by a timeout) logs out on a task
/// of its own, once; after the session is gone nothing more is sent.
#[tokio::test]
async fn an_abandoned_session_is_logged_out_in_the_background() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("DELETE"))
        .and(path("/redfish/v1/SessionService/Sessions/1"))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .named("logout of the abandoned session")
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Session);
    let _: Bios = c.get(BIOS).await.unwrap();
    c.logout_in_background();
    let started = std::time::Instant::now();
    while !bmc.requests().await.iter().any(|r| r.starts_with("DELETE")) {
        assert!(started.elapsed().as_secs() < 10, "no logout was sent");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(!c.has_session().await);
    c.logout_in_background();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let deletes = bmc.requests().await.iter().filter(|r| r.starts_with("DELETE")).count();
    assert_eq!(deletes, 1);
}

#[tokio::test]
async fn basic_auth_sends_no_login() {
    let bmc = MockBmc::start("r7625").await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let _: Bios = c.get(BIOS).await.unwrap();
    c.logout().await.unwrap();
    assert_eq!(bmc.requests().await, vec![format!("GET {BIOS}")]);
}

#[tokio::test]
async fn expired_session_logs_in_again_once() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path(BIOS))
        .and(header("X-Auth-Token", "token-1"))
        .respond_with(ResponseTemplate::new(401).set_body_json(redfish_error(
            "Base.1.12.NoValidSession",
            "There is no valid session established with the implementation.",
            "Establish a session before attempting any operations.",
        )))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Session);
    let bios: Bios = c.get(BIOS).await.unwrap();
    assert!(!bios.attributes.is_empty());
    assert_eq!(bmc.logins(), 2);
}

#[tokio::test]
async fn a_session_that_dies_again_after_relogin_gets_another_relogin() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path(BIOS))
        .respond_with(ResponseTemplate::new(401))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Session);
    let bios: Bios = c.get(BIOS).await.unwrap();
    assert!(!bios.attributes.is_empty());
    assert_eq!(bmc.logins(), 3, "a re-login after each 401");
}

#[tokio::test]
async fn relogins_are_bounded_when_every_session_is_refused() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path(BIOS))
        .respond_with(ResponseTemplate::new(401))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Session);
    let err = c.get::<Bios>(BIOS).await.unwrap_err();
    let Error::SessionExpired {
        relogin_refused: false,
        method,
        url,
        ..
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(
        (method.as_str(), url.as_str()),
        ("GET", format!("{}{BIOS}", bmc.url()).as_str())
    );
    assert_eq!(err.status(), Some(401));
    assert_eq!(bmc.logins(), 4, "the first login and three re-logins");
}

/// Logs in once (as `MockBmc` does), then refuses the credentials: the password changed, or
/// the account was locked, while the session was open.
struct LoginOnce(AtomicU64);

impl Respond for LoginOnce {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        if self.0.fetch_add(1, Ordering::Relaxed) == 0 {
            return ResponseTemplate::new(201)
                .insert_header("X-Auth-Token", "token-1")
                .insert_header("Location", "/redfish/v1/SessionService/Sessions/1");
        }
        ResponseTemplate::new(401).set_body_json(redfish_error(
            "IDRAC.2.9.SYS415",
            "Unable to complete the operation because an invalid username and/or password is entered, and therefore authentication failed.",
            "Enter valid user name and password and retry the operation.",
        ))
    }
}

#[tokio::test]
async fn a_refused_login_after_the_session_expired_is_an_expired_session_not_bad_credentials() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("POST"))
        .and(path("/redfish/v1/SessionService/Sessions"))
        .respond_with(LoginOnce(AtomicU64::new(0)))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    Mock::given(method("GET"))
        .and(path(BIOS))
        .and(header("X-Auth-Token", "token-1"))
        .respond_with(ResponseTemplate::new(401))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Session);
    let _: serde_json::Value = c.get("/redfish/v1/Systems").await.unwrap();
    let err = c.get::<Bios>(BIOS).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::SessionExpired {
                relogin_refused: true,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("session"), "{err}");
    assert!(
        err.has_code("SYS415"),
        "the refused login's MessageId travels along: {err}"
    );
    assert_eq!(err.status(), Some(401));
    // A login refused from the start is bad credentials, as before.
    let fresh = client(&bmc.url(), AuthMethod::Session);
    let err = fresh.get::<Bios>(BIOS).await.unwrap_err();
    assert!(matches!(err, Error::Status { status: 401, .. }), "{err}");
}

#[tokio::test]
async fn logout_is_retried_while_the_service_is_busy() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("DELETE"))
        .and(path("/redfish/v1/SessionService/Sessions/1"))
        .respond_with(ResponseTemplate::new(503).insert_header("Retry-After", "0"))
        .up_to_n_times(1)
        .with_priority(1)
        .named("busy logout")
        .mount(&bmc.server)
        .await;
    Mock::given(method("DELETE"))
        .and(path("/redfish/v1/SessionService/Sessions/1"))
        .respond_with(ResponseTemplate::new(204))
        .expect(1)
        .with_priority(2)
        .named("logout")
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Session);
    c.login().await.unwrap();
    c.logout().await.unwrap();
    let deletes = bmc.requests().await.iter().filter(|r| r.starts_with("DELETE")).count();
    assert_eq!(deletes, 2, "503, then the session is gone");
}

#[tokio::test]
async fn login_is_retried_after_a_connection_reset_or_a_timeout_and_the_lost_session_is_ended() {
    let login = super::http_answer(
        "201 Created",
        &[
            ("X-Auth-Token", "token-2"),
            ("Location", "/redfish/v1/SessionService/Sessions/2"),
        ],
        b"{}",
    );
    // The BMC keeps no Context (as the sessions recorded on real iDRACs show none) but records
    // when each session was created, as iDRAC 7.x does: the lost login's session is the one of
    // the same user and address created in the seconds before the new one.
    let session = |id: u32, created: &str| {
        format!(
            r#"{{"@odata.id":"/redfish/v1/SessionService/Sessions/{id}","Id":"{id}","UserName":"root","ClientOriginIPAddress":"127.0.0.1","SessionType":"Redfish","CreatedTime":"{created}"}}"#
        )
    };
    let own = super::http_answer("200 OK", &[], session(2, "2024-08-15T15:51:05-05:00").as_bytes());
    let list = format!(
        r#"{{"Members":[{},{},{}]}}"#,
        session(2, "2024-08-15T15:51:05-05:00"),
        session(1, "2024-08-15T15:51:05-05:00"),
        session(7, "2024-08-15T09:00:00-05:00"),
    );
    let list = super::http_answer("200 OK", &[], list.as_bytes());
    let ended = super::http_answer("200 OK", &[], b"{}");
    let root = super::http_answer("200 OK", &[], br#"{"@odata.id":"/redfish/v1/Systems","Members":[]}"#);
    for first in [super::Answer::Close, super::Answer::Silent] {
        let url = super::scripted_server(vec![
            first,
            super::Answer::Reply(login.clone()),
            super::Answer::Reply(own.clone()),
            super::Answer::Reply(list.clone()),
            super::Answer::Reply(ended.clone()),
            super::Answer::Reply(root.clone()),
        ])
        .await;
        let c = Client::builder(url)
            .credentials(Credentials::new("root", "calvin"))
            .timeout(std::time::Duration::from_millis(300))
            .retry(super::fast_retry())
            .build()
            .unwrap();
        let systems: serde_json::Value = c.get("/redfish/v1/Systems").await.unwrap();
        assert_eq!(systems["Members"], serde_json::json!([]));
        assert!(c.has_session().await);
        assert_eq!(
            c.requests_sent(),
            6,
            "login, login again, its own session and the list, one DELETE (session 1, not the old session 7), the read"
        );
    }
}

#[tokio::test]
async fn bad_credentials_fail_with_sys415() {
    let bmc = MockBmc::start("r7625").await;
    let c = Client::builder(bmc.url())
        .credentials(Credentials::new("root", "wrong-password"))
        .retry(super::fast_retry())
        .build()
        .unwrap();
    let err = c.get::<Bios>(BIOS).await.unwrap_err();
    assert!(err.has_code("SYS415"), "{err}");
    assert!(!err.to_string().contains("wrong-password"));
    assert!(!format!("{err:?}").contains("wrong-password"));
}

#[tokio::test]
async fn falls_back_to_basic_without_a_session_service() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("POST"))
        .and(path("/redfish/v1/SessionService/Sessions"))
        .respond_with(ResponseTemplate::new(404))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    Mock::given(method("GET"))
        .and(path(BIOS))
        .and(header_exists("Authorization"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(serde_json::json!({"@odata.id": BIOS, "Attributes": {"A": 1}})),
        )
        .expect(1)
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Session);
    let bios: Bios = c.get(BIOS).await.unwrap();
    assert_eq!(bios.attributes["A"].as_i64(), Some(1));
}

/// Collects everything the tracing subscriber writes.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The log of the whole test binary at TRACE level: one global subscriber, installed once, so
/// callsite interest is never cached as "off" by a test that ran first.
fn global_log() -> &'static Capture {
    static LOG: std::sync::OnceLock<Capture> = std::sync::OnceLock::new();
    LOG.get_or_init(|| {
        let capture = Capture::default();
        let writer = capture.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber in this binary");
        capture
    })
}

#[tokio::test]
async fn credentials_and_tokens_stay_out_of_debug_and_logs() {
    let capture = global_log();
    let bmc = MockBmc::start("r7625").await;
    let c = client(&bmc.url(), AuthMethod::Session);
    let _: Bios = c.get(BIOS).await.unwrap();
    let _ = c.get::<Bios>("/redfish/v1/Nope").await;
    let debug = format!("{c:?}");
    c.logout().await.unwrap();
    let logs = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("session opened"), "trace logging is active: {logs}");
    // Every test's sessions log here, so no token of any test may appear.
    for secret in [rftune_tests::PASSWORD, "token-1", "token-2", "wrong-password"] {
        assert!(!logs.contains(secret), "{secret} in logs");
        assert!(!debug.contains(secret), "{secret} in Debug: {debug}");
    }
}
