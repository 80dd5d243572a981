//! TLS against a local server with an iDRAC-like certificate: self-signed, CA:TRUE, no SAN.

use redfish_client::error::TransportKind;
use redfish_client::resources::service_root::ServiceRoot;
use redfish_client::{AuthMethod, Client, Credentials, Error, Fingerprint, RetryPolicy, TlsVerification};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct TlsBmc {
    url: String,
    fingerprint: Fingerprint,
    cert_pem: String,
}

/// Starts an HTTPS server answering every request with a service root.
async fn start() -> TlsBmc {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "idrac-R7625A1");
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "Dell Inc.");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    let der: CertificateDer<'static> = cert.der().clone();
    let fingerprint = Fingerprint::of_der(&der);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![der],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(sock).await else {
                    return;
                };
                let mut buf = vec![0u8; 4096];
                let _ = tls.read(&mut buf).await;
                let body = br#"{"@odata.id":"/redfish/v1","Vendor":"Dell","Product":"Integrated Dell Remote Access Controller"}"#;
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = tls.write_all(head.as_bytes()).await;
                let _ = tls.write_all(body).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    TlsBmc {
        url: format!("https://{addr}"),
        fingerprint,
        cert_pem: cert.pem(),
    }
}

fn client(url: &str, tls: TlsVerification) -> Client {
    Client::builder(url)
        .tls(tls)
        .retry(RetryPolicy::none())
        .build()
        .unwrap()
}

#[tokio::test]
async fn pinned_fingerprint_is_accepted() {
    let bmc = start().await;
    let c = client(&bmc.url, TlsVerification::Pinned(bmc.fingerprint));
    let root: ServiceRoot = c.get("/redfish/v1").await.unwrap();
    assert_eq!(root.vendor.as_deref(), Some("Dell"));
    assert_eq!(c.observed_fingerprint(), Some(bmc.fingerprint));
}

#[tokio::test]
async fn other_fingerprint_is_rejected_naming_both() {
    let bmc = start().await;
    let wrong = Fingerprint::of_der(b"some other certificate");
    let c = client(&bmc.url, TlsVerification::Pinned(wrong));
    let err = c.get::<ServiceRoot>("/redfish/v1").await.unwrap_err();
    let Error::PinMismatch { expected, found, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(expected, &wrong.to_string());
    assert_eq!(found, &bmc.fingerprint.to_string());
}

#[tokio::test]
async fn system_roots_reject_the_self_signed_certificate_but_record_it() {
    let bmc = start().await;
    let c = client(&bmc.url, TlsVerification::System);
    let err = c.get::<ServiceRoot>("/redfish/v1").await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport {
                kind: TransportKind::Certificate,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        c.observed_fingerprint(),
        Some(bmc.fingerprint),
        "available for a helpful message"
    );
}

#[tokio::test]
async fn the_certificate_as_its_own_ca_fails_which_is_why_pinning_exists() {
    let bmc = start().await;
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join(format!("{}.pem", bmc.fingerprint.as_bytes()[0]));
    std::fs::write(&ca, &bmc.cert_pem).unwrap();
    let c = client(&bmc.url, TlsVerification::CaFile(ca));
    let err = c.get::<ServiceRoot>("/redfish/v1").await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport {
                kind: TransportKind::Certificate,
                ..
            }
        ),
        "{err}"
    );
    let missing = Client::builder(&bmc.url)
        .tls(TlsVerification::CaFile(dir.join("missing.pem")))
        .build();
    assert!(matches!(missing, Err(Error::Config { .. })));
}

#[tokio::test]
async fn insecure_mode_accepts_anything() {
    let bmc = start().await;
    let c = client(&bmc.url, TlsVerification::Insecure);
    c.get::<ServiceRoot>("/redfish/v1").await.unwrap();
}

#[tokio::test]
async fn trust_on_first_use_pins_the_first_certificate_for_every_later_connection() {
    let bmc = rftune_tests::tls::SwitchingTlsBmc::start(2).await;
    let first = Fingerprint::of_der(&bmc.certificates[0]);
    let second = Fingerprint::of_der(&bmc.certificates[1]);
    let c = Client::builder(&bmc.url)
        .credentials(Credentials::new(rftune_tests::USERNAME, rftune_tests::PASSWORD))
        .tls(TlsVerification::TrustOnFirstUse)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    assert_eq!(
        c.trusted_fingerprint(),
        None,
        "nothing trusted before the first handshake"
    );
    let root = c.service_root().await.unwrap();
    assert_eq!(root.vendor.as_deref(), Some("Dell"));
    assert_eq!(c.trusted_fingerprint(), Some(first));
    // The login opens a new connection, which presents the second certificate.
    let err = c.get::<ServiceRoot>("/redfish/v1/Systems").await.unwrap_err();
    let Error::PinMismatch { expected, found, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!((expected, found), (&first.to_string(), &second.to_string()));
    assert_eq!(c.trusted_fingerprint(), Some(first), "the pin never moves");
    let requests = bmc.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert!(!requests[0].contains(rftune_tests::PASSWORD), "{requests:?}");
}

#[tokio::test]
async fn trust_on_first_use_reads_the_service_root_anonymously_before_sending_credentials() {
    for method in [AuthMethod::Basic, AuthMethod::Session] {
        let bmc = rftune_tests::tls::SwitchingTlsBmc::start(2).await;
        let c = Client::builder(&bmc.url)
            .credentials(Credentials::new(rftune_tests::USERNAME, rftune_tests::PASSWORD))
            .auth_method(method)
            .tls(TlsVerification::TrustOnFirstUse)
            .retry(RetryPolicy::none())
            .build()
            .unwrap();
        // The first request of the client wants credentials: the pin must be set before them.
        let err = c.get::<ServiceRoot>("/redfish/v1/Systems").await.unwrap_err();
        assert!(matches!(err, Error::PinMismatch { .. }), "{method:?}: {err}");
        let requests = bmc.requests();
        assert_eq!(requests.len(), 1, "{method:?}: {requests:?}");
        assert!(requests[0].starts_with("GET /redfish/v1 "), "{requests:?}");
        assert!(!requests[0].contains("authorization"), "{requests:?}");
        assert!(!requests[0].contains(rftune_tests::PASSWORD), "{requests:?}");
    }
}

#[tokio::test]
async fn trust_on_first_use_keeps_working_with_the_same_certificate() {
    let bmc = rftune_tests::tls::SwitchingTlsBmc::start(1).await;
    let c = Client::builder(&bmc.url)
        .credentials(Credentials::new(rftune_tests::USERNAME, rftune_tests::PASSWORD))
        .tls(TlsVerification::TrustOnFirstUse)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    c.login().await.unwrap();
    assert!(c.has_session().await);
    assert_eq!(c.trusted_fingerprint(), Some(Fingerprint::of_der(&bmc.certificates[0])));
    let requests = bmc.requests();
    assert!(
        requests[0].starts_with("GET /redfish/v1 ") && requests[1].starts_with("POST "),
        "{requests:?}"
    );
}

#[tokio::test]
async fn pins_need_https() {
    for tls in [
        TlsVerification::TrustOnFirstUse,
        TlsVerification::Pinned(Fingerprint::of_der(b"x")),
    ] {
        let err = Client::builder("http://127.0.0.1:9").tls(tls).build().unwrap_err();
        assert!(err.to_string().contains("plain HTTP"), "{err}");
    }
}
