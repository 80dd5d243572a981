//! HTTPS for the emulator: a generated certificate shaped like an iDRAC's factory one
//! (self-signed, CA:TRUE, no SAN, Dell's subject, ten years' validity), what it says for the
//! Redfish `Certificate` that describes it, and a listener that completes TLS handshakes
//! concurrently.

use redfish_client::Fingerprint;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// A certificate and the acceptor built from it; shared by every host of a fleet.
#[derive(Clone)]
pub struct Identity {
    /// The SHA-256 of the DER certificate, as announced in the listen line.
    pub fingerprint: Fingerprint,
    /// PEM of the certificate.
    pub cert_pem: String,
    /// What the certificate says, for the hosts' `Certificate` resource.
    pub certificate: Arc<WebCertificate>,
    acceptor: TlsAcceptor,
}

/// The subject (and issuer: it is self-signed) of the web server certificate, as a real
/// iDRAC's factory certificate names it (the R750 captures' `SecurityCertificate`), but for
/// the common name: the fleet shares one certificate.
pub const SUBJECT: [(&str, &str); 6] = [
    ("CommonName", "idrac-SIM"),
    ("Organization", "Dell Inc."),
    ("OrganizationalUnit", "Remote Access Group"),
    ("City", "Round Rock"),
    ("State", "Texas"),
    ("Country", "US"),
];

/// What the web server certificate says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebCertificate {
    /// PEM of the certificate.
    pub pem: String,
    /// Its serial number, upper-case hex as a real iDRAC shows it.
    pub serial: String,
    /// First valid day, `YYYY-MM-DD` (from midnight UTC).
    pub not_before: String,
    /// Last valid day, `YYYY-MM-DD`, ten years on.
    pub not_after: String,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("fingerprint", &self.fingerprint)
            .finish_non_exhaustive()
    }
}

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("generating the emulator's TLS certificate: {0}")]
pub struct TlsError(String);

impl Identity {
    /// Generates a fresh iDRAC-like certificate.
    pub fn generate() -> Result<Self, TlsError> {
        let err = |e: &dyn std::fmt::Display| TlsError(e.to_string());
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(|e| err(&e))?;
        params.distinguished_name = distinguished_name(&SUBJECT.map(|(k, v)| (k, v.to_owned())));
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let (y, m, d) = crate::clock::ymd(std::time::SystemTime::now());
        let day = d.min(28);
        params.not_before = rcgen::date_time_ymd(y, m, day);
        params.not_after = rcgen::date_time_ymd(y + 10, m, day);
        // Positive, 20 bytes, as the R750 captures' serials are.
        let mut serial: Vec<u8> = (0..20).map(|_| fastrand::u8(..)).collect();
        serial[0] &= 0x7f;
        serial[0] |= 0x10;
        params.serial_number = Some(rcgen::SerialNumber::from_slice(&serial));
        let key = rcgen::KeyPair::generate().map_err(|e| err(&e))?;
        let cert = params.self_signed(&key).map_err(|e| err(&e))?;
        let certificate = Arc::new(WebCertificate {
            pem: cert.pem(),
            serial: serial.iter().map(|b| format!("{b:02X}")).collect(),
            not_before: format!("{y:04}-{m:02}-{day:02}"),
            not_after: format!("{:04}-{m:02}-{day:02}", y + 10),
        });
        let der: CertificateDer<'static> = cert.der().clone();
        let fingerprint = Fingerprint::of_der(&der);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| err(&e))?
            .with_no_client_auth()
            .with_single_cert(
                vec![der],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .map_err(|e| err(&e))?;
        Ok(Self {
            fingerprint,
            cert_pem: cert.pem(),
            certificate,
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }
}

/// A distinguished name from Redfish's names for its parts (`CommonName`, `City`, ...), in
/// that order; names it does not know are left out.
pub fn distinguished_name(parts: &[(&str, String)]) -> rcgen::DistinguishedName {
    let mut dn = rcgen::DistinguishedName::new();
    for (name, value) in parts {
        let kind = match *name {
            "CommonName" => rcgen::DnType::CommonName,
            "Organization" => rcgen::DnType::OrganizationName,
            "OrganizationalUnit" => rcgen::DnType::OrganizationalUnitName,
            "City" => rcgen::DnType::LocalityName,
            "State" => rcgen::DnType::StateOrProvinceName,
            "Country" => rcgen::DnType::CountryName,
            _ => continue,
        };
        dn.push(kind, value.as_str());
    }
    dn
}

/// An `axum::serve` listener that accepts TCP and hands over connections once their TLS
/// handshake completes; slow or failed handshakes never block other clients.
pub struct TlsListener {
    incoming: mpsc::Receiver<(TlsStream<TcpStream>, std::net::SocketAddr)>,
    local: std::net::SocketAddr,
}

impl TlsListener {
    /// Wraps a bound TCP listener.
    pub fn new(tcp: TcpListener, identity: &Identity) -> std::io::Result<Self> {
        let local = tcp.local_addr()?;
        let (tx, incoming) = mpsc::channel(256);
        let acceptor = identity.acceptor.clone();
        tokio::spawn(async move {
            loop {
                let (sock, peer) = match tcp.accept().await {
                    Ok(c) => c,
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                if tx.is_closed() {
                    return;
                }
                // No Nagle: a small response on a kept-alive connection must not wait ~40 ms
                // for the client's delayed ACK.
                let _ = sock.set_nodelay(true);
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    if let Ok(Ok(tls)) = tokio::time::timeout(Duration::from_secs(10), acceptor.accept(sock)).await {
                        let _ = tx.send((tls, peer)).await;
                    }
                });
            }
        });
        Ok(Self { incoming, local })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.incoming.recv().await {
            Some(c) => c,
            // The acceptor task ended: nothing more will come, so wait forever like an idle socket.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}
