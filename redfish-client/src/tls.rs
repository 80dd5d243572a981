//! TLS for BMCs: system roots, a CA file, SHA-256 certificate pinning, or an explicit insecure
//! mode — all on rustls with the `ring` provider.
//!
//! iDRAC's factory certificate is self-signed with `CA:TRUE` and no SAN, so trusting it as a
//! root fails (`CaUsedAsEndEntity`). Pinning its fingerprint is the secure way to talk to such a
//! BMC: the verifier compares the SHA-256 of the presented DER certificate and still checks that
//! the handshake was signed by that certificate's key.

use crate::error::{Error, Result};
pub use crate::fingerprint::{Fingerprint, FingerprintParseError};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, OtherError, SignatureScheme};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// How the client decides whether to trust the BMC's certificate.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TlsVerification {
    /// The operating system's trust store, with host name checks.
    #[default]
    System,
    /// Only the CA certificates in this PEM file, with host name checks.
    CaFile(PathBuf),
    /// Exactly the certificate with this fingerprint (host name not checked).
    Pinned(Fingerprint),
    /// Any certificate. The connection is encrypted but not authenticated.
    Insecure,
}

/// The error a pinning verifier returns on mismatch; the client finds it in the error chain.
#[derive(Debug, thiserror::Error)]
#[error("certificate fingerprint {found} does not match pinned {expected}")]
pub(crate) struct PinMismatch {
    pub(crate) expected: Fingerprint,
    pub(crate) found: Fingerprint,
}

/// The fingerprint of the last certificate a server presented, recorded by every verifier so
/// callers can show it or store it (trust on first use).
pub(crate) type Observed = Arc<Mutex<Option<Fingerprint>>>;

/// Builds the rustls configuration for `mode`.
pub(crate) fn client_config(mode: &TlsVerification, observed: Observed) -> Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| config_err("TLS protocol versions", e))?;
    let inner: Arc<dyn ServerCertVerifier> = match mode {
        TlsVerification::System => Arc::new(
            rustls_platform_verifier::Verifier::new(provider.clone())
                .map_err(|e| config_err("system trust store", e))?,
        ),
        TlsVerification::CaFile(path) => {
            let mut roots = rustls::RootCertStore::empty();
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|e| config_err(format!("CA file {}", path.display()), e))?;
            for cert in certs {
                let cert = cert.map_err(|e| config_err(format!("CA file {}", path.display()), e))?;
                roots
                    .add(cert)
                    .map_err(|e| config_err(format!("CA file {}", path.display()), e))?;
            }
            if roots.is_empty() {
                return Err(Error::config(format!(
                    "CA file {} holds no certificate",
                    path.display()
                )));
            }
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| config_err(format!("CA file {}", path.display()), e))?
        }
        TlsVerification::Pinned(fp) => Arc::new(Fingerprinting {
            expected: Some(*fp),
            algorithms: provider.signature_verification_algorithms,
        }),
        TlsVerification::Insecure => Arc::new(Fingerprinting {
            expected: None,
            algorithms: provider.signature_verification_algorithms,
        }),
    };
    let verifier = Arc::new(Recording { inner, observed });
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

fn config_err(what: impl Into<String>, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Config {
        what: what.into(),
        source: Some(Box::new(e)),
    }
}

/// Accepts the certificate whose fingerprint is `expected` (any, when `None`), and checks the
/// handshake signatures against it.
#[derive(Debug)]
struct Fingerprinting {
    expected: Option<Fingerprint>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Fingerprinting {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let found = Fingerprint::of_der(end_entity);
        match self.expected {
            Some(expected) if expected != found => Err(rustls::Error::InvalidCertificate(CertificateError::Other(
                OtherError(Arc::new(PinMismatch { expected, found })),
            ))),
            _ => Ok(ServerCertVerified::assertion()),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// Wraps any verifier to record the fingerprint of the certificate presented.
#[derive(Debug)]
struct Recording {
    inner: Arc<dyn ServerCertVerifier>,
    observed: Observed,
}

impl ServerCertVerifier for Recording {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Ok(mut slot) = self.observed.lock() {
            *slot = Some(Fingerprint::of_der(end_entity));
        }
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }

    fn requires_raw_public_keys(&self) -> bool {
        self.inner.requires_raw_public_keys()
    }
}

/// The rustls error somewhere in an error's source chain. `io::Error` hides the error it wraps
/// from `source()`, so it is unwrapped explicitly.
fn rustls_error<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(r) = e.downcast_ref::<rustls::Error>() {
            return Some(r);
        }
        if let Some(inner) = e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref())
            && let Some(r) = rustls_error(inner)
        {
            return Some(r);
        }
        current = e.source();
    }
    None
}

/// Whether a certificate was rejected anywhere in an error's source chain.
pub(crate) fn is_certificate_error(err: &(dyn std::error::Error + 'static)) -> bool {
    matches!(rustls_error(err), Some(rustls::Error::InvalidCertificate(_)))
}

/// Finds a pin mismatch anywhere in an error's source chain.
pub(crate) fn find_pin_mismatch(err: &(dyn std::error::Error + 'static)) -> Option<(Fingerprint, Fingerprint)> {
    match rustls_error(err) {
        Some(rustls::Error::InvalidCertificate(CertificateError::Other(other))) => {
            let m = other.0.downcast_ref::<PinMismatch>()?;
            Some((m.expected, m.found))
        }
        _ => None,
    }
}
