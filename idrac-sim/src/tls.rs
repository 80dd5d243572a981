//! HTTPS for the emulator: a generated certificate shaped like an iDRAC's factory one
//! (self-signed, CA:TRUE, no SAN), and a listener that completes TLS handshakes concurrently.

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
    acceptor: TlsAcceptor,
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
        params.distinguished_name.push(rcgen::DnType::CommonName, "idrac-SIM");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "Dell Inc.");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationalUnitName, "Remote Access Group");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let key = rcgen::KeyPair::generate().map_err(|e| err(&e))?;
        let cert = params.self_signed(&key).map_err(|e| err(&e))?;
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
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }
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
