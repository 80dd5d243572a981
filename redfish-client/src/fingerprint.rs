//! SHA-256 certificate fingerprints, the identity rftune pins BMC certificates by. IO-free, so
//! the emulator can announce its fingerprint in the same form the client checks.

use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// A SHA-256 certificate fingerprint, written `sha256:` + 64 lowercase hex digits. Parsing also
/// accepts upper case, colons between bytes and a missing `sha256:` prefix.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// The fingerprint of a DER-encoded certificate.
    pub fn of_der(der: &[u8]) -> Self {
        Self(Sha256::digest(der).into())
    }

    /// The raw digest.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a fingerprint string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid fingerprint {0:?}: expected sha256: followed by 64 hex digits (colons allowed)")]
pub struct FingerprintParseError(String);

impl FromStr for Fingerprint {
    type Err = FingerprintParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || FingerprintParseError(s.to_owned());
        let trimmed = s.trim();
        // `openssl x509 -noout -fingerprint -sha256` prints `SHA256 Fingerprint=AB:CD:...`
        // (`sha256 Fingerprint=` in OpenSSL 3): take what follows the `=`.
        let trimmed = match trimmed.split_once('=') {
            Some((label, rest)) if label.trim().to_ascii_lowercase().starts_with("sha256") => rest.trim(),
            _ => trimmed,
        };
        let hex_part = match trimmed.split_once(':') {
            Some((prefix, rest)) if prefix.eq_ignore_ascii_case("sha256") => rest,
            _ => trimmed,
        };
        let digits: Vec<u8> = hex_part.bytes().filter(|&b| b != b':').collect();
        if digits.len() != 64 {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, pair) in digits.chunks(2).enumerate() {
            let text = std::str::from_utf8(pair).map_err(|_| bad())?;
            out[i] = u8::from_str_radix(text, 16).map_err(|_| bad())?;
        }
        Ok(Self(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn fingerprint_round_trips_and_accepts_colons_and_case() {
        let fp: Fingerprint = format!("sha256:{HEX}").parse().unwrap();
        assert_eq!(fp.to_string(), format!("sha256:{HEX}"));
        let colons: String = HEX
            .to_uppercase()
            .as_bytes()
            .chunks(2)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect::<Vec<_>>()
            .join(":");
        assert_eq!(format!("SHA256:{colons}").parse::<Fingerprint>().unwrap(), fp);
        // What `openssl x509 -noout -fingerprint -sha256` prints, in OpenSSL 1.1 and 3.
        for openssl in [
            format!("SHA256 Fingerprint={colons}"),
            format!("sha256 Fingerprint={colons}\n"),
        ] {
            assert_eq!(openssl.parse::<Fingerprint>().unwrap(), fp, "{openssl}");
        }
        assert!(format!("SHA1 Fingerprint={colons}").parse::<Fingerprint>().is_err());
        assert_eq!(HEX.parse::<Fingerprint>().unwrap(), fp);
    }

    #[test]
    fn fingerprint_rejects_bad_input() {
        assert!("sha256:abc".parse::<Fingerprint>().is_err());
        assert!(format!("sha1:{HEX}").parse::<Fingerprint>().is_err());
        assert!(format!("sha256:{}zz", &HEX[2..]).parse::<Fingerprint>().is_err());
        assert!(format!("sha256:{}é", &HEX[1..]).parse::<Fingerprint>().is_err());
    }

    #[test]
    fn fingerprint_of_der_is_sha256() {
        // SHA-256 of the empty string.
        assert_eq!(
            Fingerprint::of_der(b"").to_string(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
