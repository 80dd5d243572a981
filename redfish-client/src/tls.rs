//! TLS for BMCs: system roots, a CA file, SHA-256 certificate pinning, or an explicit insecure
//! mode — all on rustls with the `ring` provider.
//!
//! iDRAC's factory certificate is self-signed with `CA:TRUE` and no SAN, so trusting it as a
//! root fails (`CaUsedAsEndEntity`). Pinning its fingerprint is the secure way to talk to such a
//! BMC: the verifier compares the SHA-256 of the presented DER certificate and still checks that
//! the handshake was signed by that certificate's key.
//!
//! Trust on first use is pinning whose pin the first handshake sets: the first certificate that
//! proves its key (the handshake signature checks out) becomes the pin of the client, and every
//! later connection must present it. The client reads the service root anonymously before it
//! sends any credential, so a password or token only ever travels over a pinned connection.

use crate::error::{Error, Result};
pub use crate::fingerprint::{Fingerprint, FingerprintParseError};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, OtherError, SignatureScheme};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

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
    /// Trust on first use: the certificate of the client's first TLS handshake, recorded then,
    /// and exactly that one on every later connection (host name not checked). The client
    /// makes an anonymous request (the service root) before it sends any credential, so the
    /// password never goes over the connection that sets the pin to an unknown certificate
    /// without the pin being in place; [`crate::Client::trusted_fingerprint`] tells which
    /// certificate it was, for a known_hosts file.
    TrustOnFirstUse,
    /// Any certificate. The connection is encrypted but not authenticated.
    Insecure,
}

impl TlsVerification {
    /// Whether this mode pins a certificate (given, or learnt on first use), which needs HTTPS.
    pub fn pins(&self) -> bool {
        matches!(self, Self::Pinned(_) | Self::TrustOnFirstUse)
    }
}

/// The error a pinning verifier returns on mismatch; the client finds it in the error chain.
#[derive(Debug, thiserror::Error)]
#[error("certificate fingerprint {found} does not match pinned {expected}")]
pub(crate) struct PinMismatch {
    pub(crate) expected: Fingerprint,
    pub(crate) found: Fingerprint,
}

/// The fingerprint of the last certificate a server presented, recorded by every verifier so
/// callers can show it in errors.
pub(crate) type Observed = Arc<Mutex<Option<Fingerprint>>>;

/// The fingerprint a client pins: set when it is built ([`TlsVerification::Pinned`]) or by its
/// first handshake ([`TlsVerification::TrustOnFirstUse`]), never changed afterwards.
pub(crate) type Trusted = Arc<OnceLock<Fingerprint>>;

/// rustls' `ring` provider, offering AES-128-GCM first. Both TLS 1.3 AEADs are mandatory and
/// safe; the AES-256 suite rustls lists first also hashes with SHA-384, which was 3–5% of a
/// fleet run's CPU on either end (a rustls server, like the emulator, follows the client's
/// order; an iDRAC may pick its own). Made once per process and shared by every client: a
/// fleet run builds one client per host.
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    static PROVIDER: OnceLock<Arc<rustls::crypto::CryptoProvider>> = OnceLock::new();
    PROVIDER
        .get_or_init(|| {
            let mut provider = rustls::crypto::ring::default_provider();
            let aes_128_first =
                |s: &rustls::SupportedCipherSuite| s.suite() != rustls::CipherSuite::TLS13_AES_128_GCM_SHA256;
            provider.cipher_suites.sort_by_key(aes_128_first);
            Arc::new(provider)
        })
        .clone()
}

/// Builds the rustls configuration for `mode`. `trusted` receives the pinned fingerprint.
pub(crate) fn client_config(mode: &TlsVerification, observed: Observed, trusted: Trusted) -> Result<ClientConfig> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| config_err("TLS protocol versions", e))?;
    let inner: Arc<dyn ServerCertVerifier> = match mode {
        TlsVerification::System => system_verifier(&provider)?,
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
        TlsVerification::Pinned(fp) => {
            // A fresh cell: the fingerprint goes in unless something already did.
            let _ = trusted.set(*fp);
            Arc::new(Fingerprinting {
                pin: Pin::Learnt(trusted),
                algorithms: provider.signature_verification_algorithms,
            })
        }
        TlsVerification::TrustOnFirstUse => Arc::new(Fingerprinting {
            pin: Pin::Learnt(trusted),
            algorithms: provider.signature_verification_algorithms,
        }),
        TlsVerification::Insecure => Arc::new(Fingerprinting {
            pin: Pin::Any,
            algorithms: provider.signature_verification_algorithms,
        }),
    };
    let verifier = Arc::new(Recording { inner, observed });
    let mut config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    // A client talks to one BMC: room for that one server's tickets (8, rustls' most per
    // server) is all its resumption needs. rustls' default room for 256 is allocated up front,
    // ~15 KiB per client: per host in flight of a fleet run.
    config.resumption = rustls::client::Resumption::in_memory_sessions(8);
    Ok(config)
}

/// The system trust store's verifier, built once per process and shared by every client:
/// loading the store opens every file under `/etc/ssl/certs`, which a fleet of a thousand
/// hosts must not do a thousand times.
fn system_verifier(provider: &Arc<rustls::crypto::CryptoProvider>) -> Result<Arc<dyn ServerCertVerifier>> {
    static SYSTEM: OnceLock<Arc<rustls_platform_verifier::Verifier>> = OnceLock::new();
    if let Some(v) = SYSTEM.get() {
        return Ok(v.clone());
    }
    let built = Arc::new(
        rustls_platform_verifier::Verifier::new(provider.clone()).map_err(|e| config_err("system trust store", e))?,
    );
    Ok(SYSTEM.get_or_init(|| built).clone())
}

fn config_err(what: impl Into<String>, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Config {
        what: what.into(),
        source: Some(Box::new(e)),
    }
}

/// Which certificate a [`Fingerprinting`] verifier accepts.
#[derive(Debug)]
enum Pin {
    /// The one whose fingerprint is in the cell; while the cell is empty, the first one that
    /// completes a handshake signature fills it (trust on first use).
    Learnt(Trusted),
    /// Any (insecure).
    Any,
}

/// Accepts the pinned certificate (any, in insecure mode), and checks the handshake signatures
/// against it.
#[derive(Debug)]
struct Fingerprinting {
    pin: Pin,
    algorithms: WebPkiSupportedAlgorithms,
}

impl Fingerprinting {
    /// Refuses `cert` unless it is the pinned one. With no pin yet, accepts it for now: the pin
    /// is set only once the certificate has proven its key ([`Self::settle`]).
    fn check(&self, cert: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        match &self.pin {
            Pin::Learnt(cell) => match cell.get() {
                Some(expected) => matches(*expected, Fingerprint::of_der(cert)),
                None => Ok(()),
            },
            Pin::Any => Ok(()),
        }
    }

    /// After a valid handshake signature: pins `cert` if nothing is pinned yet, and checks it
    /// against the pin (a concurrent first handshake may have set another one meanwhile).
    fn settle(&self, cert: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        match &self.pin {
            Pin::Learnt(cell) => {
                let found = Fingerprint::of_der(cert);
                matches(*cell.get_or_init(|| found), found)
            }
            Pin::Any => Ok(()),
        }
    }
}

fn matches(expected: Fingerprint, found: Fingerprint) -> Result<(), rustls::Error> {
    if expected == found {
        return Ok(());
    }
    Err(rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(
        Arc::new(PinMismatch { expected, found }),
    ))))
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
        self.check(end_entity)?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let valid = rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)?;
        self.settle(cert)?;
        Ok(valid)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let valid = rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)?;
        self.settle(cert)?;
        Ok(valid)
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

/// Whether the TLS handshake failed because the server answered in plain HTTP (rustls reads
/// an HTTP response where a TLS record belongs: `InvalidContentType`).
pub(crate) fn is_plain_http_answer(err: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        rustls_error(err),
        Some(rustls::Error::InvalidMessage(
            rustls::InvalidMessage::InvalidContentType
        ))
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aes_128_gcm_is_offered_first_and_every_default_suite_still_is() {
        let ours = &provider().cipher_suites;
        let default = rustls::crypto::ring::default_provider().cipher_suites;
        assert_eq!(ours[0].suite(), rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
        assert_eq!(ours.len(), default.len());
        assert!(default.iter().all(|d| ours.iter().any(|o| o.suite() == d.suite())));
    }

    fn first_use() -> (Fingerprinting, Trusted) {
        let trusted = Trusted::default();
        let verifier = Fingerprinting {
            pin: Pin::Learnt(trusted.clone()),
            algorithms: rustls::crypto::ring::default_provider().signature_verification_algorithms,
        };
        (verifier, trusted)
    }

    #[test]
    fn first_use_pins_only_a_certificate_that_proved_its_key_then_refuses_others() {
        let (verifier, trusted) = first_use();
        let a = CertificateDer::from(b"certificate A".to_vec());
        let b = CertificateDer::from(b"certificate B".to_vec());
        // Presenting a certificate is not enough: the pin waits for a valid handshake signature.
        verifier.check(&b).unwrap();
        assert_eq!(trusted.get(), None);
        verifier.settle(&a).unwrap();
        assert_eq!(trusted.get(), Some(&Fingerprint::of_der(&a)));
        verifier.check(&a).unwrap();
        for refused in [verifier.check(&b), verifier.settle(&b)] {
            let err = refused.unwrap_err();
            let found = find_pin_mismatch(&err);
            assert_eq!(found, Some((Fingerprint::of_der(&a), Fingerprint::of_der(&b))), "{err}");
        }
    }
}
