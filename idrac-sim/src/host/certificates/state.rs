//! What the host keeps of its certificates beyond the one it serves: the last signing request.

/// The certificates' state.
#[derive(Debug, Default)]
pub(crate) struct Certificates {
    /// The last certificate signing request `CertificateService.GenerateCSR` made.
    pub(crate) last_csr: Option<String>,
}
