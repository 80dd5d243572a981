//! An HTTPS server that presents a different iDRAC-shaped certificate (self-signed, CA:TRUE,
//! no SAN) on later connections than on the first: what a client that trusts on first use
//! must refuse after its first handshake.

use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The server. Connection `n` (0-based) presents certificate `min(n, certificates - 1)`; every
/// answer closes the connection, so each request of a client makes a new handshake.
pub struct SwitchingTlsBmc {
    /// `https://127.0.0.1:PORT`.
    pub url: String,
    /// The DER certificates, in the order the server presents them.
    pub certificates: Vec<Vec<u8>>,
    received: Arc<Mutex<Vec<String>>>,
}

impl SwitchingTlsBmc {
    /// Starts on 127.0.0.1 with `certificates` freshly generated certificates (at least one).
    /// It answers `GET /redfish/v1` with a Dell service root, a login with 201 and the token
    /// `token-1`, and anything else with 404.
    ///
    /// # Panics
    /// When the certificates cannot be generated or the port cannot be bound (test setup).
    pub async fn start(certificates: usize) -> Self {
        let mut acceptors = Vec::new();
        let mut ders = Vec::new();
        for n in 0..certificates.max(1) {
            let (der, acceptor) = identity(n);
            ders.push(der);
            acceptors.push(acceptor);
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let received: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = received.clone();
        tokio::spawn(async move {
            let mut connection = 0usize;
            while let Ok((sock, _)) = listener.accept().await {
                let acceptor = acceptors[connection.min(acceptors.len() - 1)].clone();
                connection += 1;
                let log = log.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(sock).await else {
                        return;
                    };
                    let Some(request) = read_request(&mut tls).await else {
                        return;
                    };
                    let answer = answer(&request);
                    if let Ok(mut log) = log.lock() {
                        log.push(request);
                    }
                    let _ = tls.write_all(&answer).await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        Self {
            url: format!("https://{addr}"),
            certificates: ders,
            received,
        }
    }

    /// Every request that completed a handshake, head and body as text, in order.
    pub fn requests(&self) -> Vec<String> {
        self.received.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

fn identity(n: usize) -> (Vec<u8>, tokio_rustls::TlsAcceptor) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("certificate parameters");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, format!("idrac-SWITCH{n}"));
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "Dell Inc.");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let key = rcgen::KeyPair::generate().expect("key pair");
    let cert = params.self_signed(&key).expect("self-signed certificate");
    let der: CertificateDer<'static> = cert.der().clone();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![der.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .expect("server configuration");
    (der.to_vec(), tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// One HTTP/1.1 request: the head, then as many body bytes as `Content-Length` says.
async fn read_request<S: AsyncReadExt + Unpin>(stream: &mut S) -> Option<String> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&seen[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while seen.len() < head_end + length {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    Some(String::from_utf8_lossy(&seen).into_owned())
}

fn answer(request: &str) -> Vec<u8> {
    let line = request.lines().next().unwrap_or_default();
    let (status, headers, body) = if line.starts_with("GET /redfish/v1 ") || line.starts_with("GET /redfish/v1/ ") {
        (
            "200 OK",
            String::new(),
            r#"{"@odata.id":"/redfish/v1","Vendor":"Dell","Product":"Integrated Dell Remote Access Controller","Links":{"Sessions":{"@odata.id":"/redfish/v1/SessionService/Sessions"}}}"#,
        )
    } else if line.starts_with("POST /redfish/v1/SessionService/Sessions ") {
        (
            "201 Created",
            "X-Auth-Token: token-1\r\nLocation: /redfish/v1/SessionService/Sessions/1\r\n".to_owned(),
            r#"{"@odata.id":"/redfish/v1/SessionService/Sessions/1","Id":"1"}"#,
        )
    } else {
        (
            "404 Not Found",
            String::new(),
            r#"{"error":{"code":"Base.1.12.ResourceNotFound","message":"not found"}}"#,
        )
    };
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
