//! Redirects are never followed: a 3xx is an error naming both URLs, so a BMC (or whoever
//! answers in its place) cannot send the password or the session token anywhere else.

use super::client;
use redfish_client::resources::bios::Bios;
use redfish_client::resources::service_root::ServiceRoot;
use redfish_client::{AuthMethod, Error};
use rftune_tests::MockBmc;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const BIOS: &str = "/redfish/v1/Systems/System.Embedded.1/Bios";
const SESSIONS: &str = "/redfish/v1/SessionService/Sessions";

/// A server on another loopback address that records whatever reaches it.
async fn elsewhere() -> MockServer {
    let listener = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
    MockServer::builder().listener(listener).start().await
}

/// Every header and body the other server received, as text, to search for secrets.
async fn seen_by(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| {
            format!(
                "{} {} {:?} {}",
                r.method,
                r.url,
                r.headers,
                String::from_utf8_lossy(&r.body)
            )
        })
        .collect()
}

#[tokio::test]
async fn a_307_on_login_is_refused_and_the_password_goes_nowhere_else() {
    let bmc = MockBmc::start("r7625").await;
    let other = elsewhere().await;
    let target = format!("{}{SESSIONS}", other.uri());
    Mock::given(method("POST"))
        .and(path(SESSIONS))
        .respond_with(ResponseTemplate::new(307).insert_header("Location", target.as_str()))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Session);
    let err = c.get::<Bios>(BIOS).await.unwrap_err();
    assert_eq!(
        seen_by(&other).await,
        Vec::<String>::new(),
        "nothing reaches the other server"
    );
    let Error::Redirect {
        status: 307,
        location: Some(location),
        ..
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(location, &target);
    let shown = err.to_string();
    assert!(shown.contains(&format!("{}{SESSIONS}", bmc.url())), "{shown}");
    assert!(shown.contains(&target), "{shown}");
    assert!(!shown.contains(rftune_tests::PASSWORD), "{shown}");
    let posts = bmc.requests().await.iter().filter(|r| r.starts_with("POST")).count();
    assert_eq!(posts, 1, "a redirect is not retried");
    assert_eq!(
        bmc.requests().await.iter().filter(|r| r.starts_with("GET")).count(),
        0,
        "no fallback to Basic after a refused redirect"
    );
}

#[tokio::test]
async fn a_302_on_a_read_does_not_carry_the_session_token_along() {
    let bmc = MockBmc::start("r7625").await;
    let other = elsewhere().await;
    let target = format!("{}{BIOS}", other.uri());
    Mock::given(method("GET"))
        .and(path(BIOS))
        .respond_with(ResponseTemplate::new(302).insert_header("Location", target.as_str()))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Session);
    let err = c.get::<Bios>(BIOS).await.unwrap_err();
    assert_eq!(
        seen_by(&other).await,
        Vec::<String>::new(),
        "nothing reaches the other server"
    );
    let shown = err.to_string();
    assert!(
        shown.contains(&format!("{}{BIOS}", bmc.url())) && shown.contains(&target),
        "{shown}"
    );
    assert!(matches!(err, Error::Redirect { status: 302, .. }), "{err}");
    assert_eq!(
        bmc.requests().await.iter().filter(|r| r.starts_with("GET")).count(),
        1,
        "a redirect is not retried"
    );
}

#[tokio::test]
async fn a_redirect_with_basic_authentication_or_on_the_service_root_is_refused_too() {
    let bmc = MockBmc::start("r7625").await;
    let other = elsewhere().await;
    for p in [BIOS, "/redfish/v1"] {
        Mock::given(method("GET"))
            .and(path(p))
            .respond_with(ResponseTemplate::new(301).insert_header("Location", format!("{}{p}", other.uri()).as_str()))
            .with_priority(1)
            .mount(&bmc.server)
            .await;
    }
    let c = client(&bmc.url(), AuthMethod::Basic);
    assert!(c.get::<Bios>(BIOS).await.is_err());
    assert!(c.service_root().await.is_err());
    let _: Result<ServiceRoot, _> = c.get("/redfish/v1").await;
    assert_eq!(
        seen_by(&other).await,
        Vec::<String>::new(),
        "nothing reaches the other server"
    );
}
