//! Failure paths: busy services, broken connections, bad bodies. Retries are observed by
//! counting requests, never by timing.

use super::{client, fast_retry};
use redfish_client::error::TransportKind;
use redfish_client::resources::bios::Bios;
use redfish_client::resources::service_root::ServiceRoot;
use redfish_client::{AuthMethod, Client, Error, RetryPolicy};
use rftune_tests::{MockBmc, redfish_error};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

const BIOS: &str = "/redfish/v1/Systems/System.Embedded.1/Bios";

#[tokio::test]
async fn service_unavailable_with_retry_after_then_success() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path(BIOS))
        .respond_with(ResponseTemplate::new(503).insert_header("Retry-After", "0"))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let bios: Bios = c.get(BIOS).await.unwrap();
    assert!(!bios.attributes.is_empty());
    assert_eq!(bmc.requests().await.len(), 3, "two 503s, then the answer");
}

#[tokio::test]
async fn idrac_not_ready_and_429_are_retried() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path(BIOS))
        .respond_with(ResponseTemplate::new(500).set_body_json(redfish_error(
            "IDRAC.2.9.SWC0700",
            "The iDRAC is not ready.",
            "Wait for a few minutes and retry the operation.",
        )))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    Mock::given(method("GET"))
        .and(path(BIOS))
        .respond_with(ResponseTemplate::new(429))
        .up_to_n_times(1)
        .with_priority(2)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    c.get::<Bios>(BIOS).await.unwrap();
    assert_eq!(bmc.requests().await.len(), 3);
}

#[tokio::test]
async fn retries_are_bounded_and_report_the_last_failure() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path(BIOS))
        .respond_with(ResponseTemplate::new(503).set_body_json(redfish_error(
            "IDRAC.2.9.SYS446",
            "Unable to process the request because the iDRAC is busy.",
            "Retry the operation later.",
        )))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let err = c.get::<Bios>(BIOS).await.unwrap_err();
    let Error::RetriesExhausted { attempts, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(*attempts, fast_retry().max_attempts);
    assert_eq!(err.status(), Some(503));
    assert!(err.has_code("SYS446"));
    assert_eq!(bmc.requests().await.len(), 4);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let bmc = MockBmc::start("r7625").await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let err = c
        .get::<Bios>("/redfish/v1/Systems/System.Embedded.2")
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(404));
    assert_eq!(bmc.requests().await.len(), 1);
}

#[tokio::test]
async fn malformed_and_truncated_json_name_the_path() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path("/redfish/v1/Bad"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            r#"{"@odata.id":"/b","Attributes":{"A":1},"@Redfish.Settings":{"SupportedApplyTimes":7}}"#,
            "application/json",
        ))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/redfish/v1/Truncated"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(r#"{"@odata.id":"/b","Attributes":{"SysProf"#, "application/json"),
        )
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let err = c.get::<Bios>("/redfish/v1/Bad").await.unwrap_err();
    let Error::Decode { path, target, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(path, "@Redfish.Settings.SupportedApplyTimes");
    assert_eq!(*target, "Bios");
    let err = c.get::<Bios>("/redfish/v1/Truncated").await.unwrap_err();
    assert!(matches!(err, Error::Decode { .. }), "{err}");
    let html = c
        .get::<ServiceRoot>("/redfish/v1/Systems/System.Embedded.1/Bios/Settings/x")
        .await;
    assert!(html.is_err());
}

/// A read whose body arrives cut short is read again; a body of the wrong shape is not.
#[tokio::test]
async fn a_garbled_answer_to_a_read_is_read_again_and_a_wrong_shape_is_not() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path(BIOS))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(r#"{"@odata.id":"/b","Attributes":{"SysProf"#, "application/json"),
        )
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/redfish/v1/WrongShape"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(r#"{"@odata.id":"/b","Attributes":7}"#, "application/json"),
        )
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let bios: Bios = c.get(BIOS).await.unwrap();
    assert!(!bios.attributes.is_empty());
    assert_eq!(bmc.requests().await.len(), 3, "two garbled answers, then the real one");
    let err = c.get::<Bios>("/redfish/v1/WrongShape").await.unwrap_err();
    assert!(matches!(err, Error::Decode { .. }) && !err.is_garbled(), "{err}");
    assert_eq!(bmc.requests().await.len(), 4, "not read again");
}

/// The service root, read before any credential is sent, is read again when it comes cut
/// short, as every other read is.
#[tokio::test]
async fn a_garbled_service_root_is_read_again() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path("/redfish/v1"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(r#"{"@odata.id":"/redfish/v1","Oem":{"Dell"#, "application/json"),
        )
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let root = c.service_root().await.unwrap();
    assert!(root.oem.is_some(), "the real root, read the third time");
    assert_eq!(bmc.requests().await.len(), 3, "two garbled answers, then the real one");
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let bmc = MockBmc::start("r7625").await;
    let c = Client::builder(bmc.url())
        .credentials(redfish_client::Credentials::new("root", "calvin"))
        .auth_method(AuthMethod::Basic)
        .max_body_bytes(1_000)
        .build()
        .unwrap();
    let err = c.get::<Bios>(BIOS).await.unwrap_err();
    assert!(matches!(err, Error::BodyTooLarge { limit: 1_000, .. }), "{err}");
    // Chunked bodies without a Content-Length are cut off while reading.
    let url = raw_server(vec![chunked_response(20_000)]).await;
    let c = Client::builder(url)
        .max_body_bytes(10_000)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let err = c.get::<serde_json::Value>("/redfish/v1").await.unwrap_err();
    assert!(matches!(err, Error::BodyTooLarge { .. }), "{err}");
}

#[tokio::test]
async fn connection_reset_mid_response_is_retried_for_reads() {
    let full = br#"{"@odata.id":"/redfish/v1","Vendor":"Dell"}"#;
    let partial =
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"@odata.id\":\"/red"
            .to_vec();
    let good = http_response(full);
    let url = raw_server(vec![partial, good]).await;
    let c = Client::builder(url).retry(fast_retry()).build().unwrap();
    let root: ServiceRoot = c.get("/redfish/v1").await.unwrap();
    assert_eq!(root.vendor.as_deref(), Some("Dell"));
    assert_eq!(c.requests_sent(), 2);
}

#[tokio::test]
async fn a_broken_write_is_not_resent() {
    let partial = b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{".to_vec();
    let url = raw_server(vec![partial, http_response(b"{}")]).await;
    let c = Client::builder(url).retry(fast_retry()).build().unwrap();
    let err = c
        .patch(
            "/redfish/v1/Systems/1/Bios/Settings",
            &serde_json::json!({"Attributes": {}}),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport {
                kind: TransportKind::Interrupted,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        c.requests_sent(),
        1,
        "a PATCH that may have been applied is not repeated"
    );
}

#[tokio::test]
async fn unreachable_and_silent_hosts() {
    // A port nothing listens on: bind, learn the port, close.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let c = Client::builder(format!("http://127.0.0.1:{port}"))
        .retry(RetryPolicy {
            max_attempts: 2,
            ..fast_retry()
        })
        .build()
        .unwrap();
    let err = c.get::<ServiceRoot>("/redfish/v1").await.unwrap_err();
    let Error::RetriesExhausted { last, .. } = &err else {
        panic!("{err}")
    };
    assert!(
        matches!(
            **last,
            Error::Transport {
                kind: TransportKind::Connect,
                ..
            }
        ),
        "{last}"
    );
    // A server that accepts and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let c = Client::builder(format!("http://{addr}"))
        .timeout(Duration::from_millis(200))
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let err = c.get::<ServiceRoot>("/redfish/v1").await.unwrap_err();
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

/// `body` gzip-compressed, in a response that says so (`Content-Encoding: gzip`).
fn gzip_response(body: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(body).unwrap();
    let packed = gz.finish().unwrap();
    let mut r = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        packed.len()
    )
    .into_bytes();
    r.extend_from_slice(&packed);
    r
}

/// HPE's iLO sends its BIOS registry gzip-encoded whether or not the client asked: the body is
/// inflated before it is decoded, within the same size cap (a small body inflating past the
/// cap is refused, not expanded), and a body that claims gzip but is not fails with a reason.
#[tokio::test]
async fn a_gzip_encoded_body_is_inflated_within_the_size_cap() {
    let registry = br#"{"@odata.id":"/redfish/v1/registrystore/bios/en/","Vendor":"HPE"}"#;
    let url = raw_server(vec![gzip_response(registry)]).await;
    let c = Client::builder(url).retry(RetryPolicy::none()).build().unwrap();
    let root: ServiceRoot = c.get("/redfish/v1/registrystore/bios/en/").await.unwrap();
    assert_eq!(root.vendor.as_deref(), Some("HPE"));

    let mut padded = br#"{"Vendor":"HPE","Pad":""#.to_vec();
    padded.extend(std::iter::repeat_n(b' ', 50_000));
    padded.extend_from_slice(br#""}"#);
    let url = raw_server(vec![gzip_response(&padded)]).await;
    let c = Client::builder(url)
        .max_body_bytes(10_000)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let err = c.get::<serde_json::Value>("/redfish/v1").await.unwrap_err();
    assert!(matches!(err, Error::BodyTooLarge { limit: 10_000, .. }), "{err}");

    let bogus = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}".to_vec();
    let url = raw_server(vec![bogus]).await;
    let c = Client::builder(url).retry(RetryPolicy::none()).build().unwrap();
    let err = c.get::<serde_json::Value>("/redfish/v1").await.unwrap_err();
    assert!(err.to_string().contains("does not inflate"), "{err}");
}

fn http_response(body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

fn chunked_response(size: usize) -> Vec<u8> {
    let mut r = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    let chunk = vec![b' '; 1000];
    for _ in 0..size / 1000 {
        r.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        r.extend_from_slice(&chunk);
        r.extend_from_slice(b"\r\n");
    }
    r.extend_from_slice(b"0\r\n\r\n");
    r
}

/// A loopback server that answers the n-th connection with the n-th scripted bytes, then closes.
async fn raw_server(script: Vec<Vec<u8>>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        for reply in script {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut buf = vec![0u8; 8192];
            let mut seen = Vec::new();
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            let _ = sock.write_all(&reply).await;
            let _ = sock.shutdown().await;
        }
    });
    format!("http://{addr}")
}

/// rftune's defaults give each attempt as long as the whole retry budget (60 s each).
fn timeout_as_long_as_the_budget(url: String) -> Client {
    let budget = Duration::from_millis(300);
    Client::builder(url)
        .timeout(budget)
        .retry(RetryPolicy {
            max_elapsed: budget,
            ..fast_retry()
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_timed_out_read_gets_another_attempt_even_when_the_timeout_spends_the_budget() {
    use super::Answer;
    let root = super::http_answer("200 OK", &[], br#"{"@odata.id":"/redfish/v1","Vendor":"Dell"}"#);
    let url = super::scripted_server(vec![Answer::Silent, Answer::Reply(root)]).await;
    let c = timeout_as_long_as_the_budget(url);
    let root: ServiceRoot = c.get("/redfish/v1").await.unwrap();
    assert_eq!(root.vendor.as_deref(), Some("Dell"));
    assert_eq!(c.requests_sent(), 2);
}

#[tokio::test]
async fn a_read_that_times_out_twice_past_the_budget_stops() {
    use super::Answer;
    let root = super::http_answer("200 OK", &[], br#"{"@odata.id":"/redfish/v1"}"#);
    let url = super::scripted_server(vec![Answer::Silent, Answer::Silent, Answer::Reply(root)]).await;
    let c = timeout_as_long_as_the_budget(url);
    let err = c.get::<ServiceRoot>("/redfish/v1").await.unwrap_err();
    let Error::RetriesExhausted { attempts: 2, last, .. } = &err else {
        panic!("{err}")
    };
    assert!(
        matches!(
            **last,
            Error::Transport {
                kind: TransportKind::Timeout,
                ..
            }
        ),
        "{last}"
    );
}

#[tokio::test]
async fn a_timed_out_write_is_not_resent() {
    use super::Answer;
    let url = super::scripted_server(vec![Answer::Silent, Answer::Reply(http_response(b"{}"))]).await;
    let c = timeout_as_long_as_the_budget(url);
    let err = c
        .patch(
            "/redfish/v1/Systems/1/Bios/Settings",
            &serde_json::json!({"Attributes": {}}),
        )
        .await
        .unwrap_err();
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
    assert_eq!(
        c.requests_sent(),
        1,
        "a PATCH that may have been applied is not repeated"
    );
}
