//! The address a `--bmc` names: a URL as given, or a bare host name or address, which means
//! `https://`.

use crate::error::{Result, bad_input};

/// The URL a `--bmc` names: as given when it has a scheme; a bare host name or address,
/// optionally with `:PORT` (an IPv6 address in brackets, `[fe80::1]:443`), means `https://`.
/// Credentials in the address are refused (they would sit in argv and shell history).
pub fn bmc_url(text: &str) -> Result<String> {
    let text = text.trim();
    let url = if text.contains("://") {
        text.to_owned()
    } else {
        if text.matches(':').count() > 1 && !text.starts_with('[') {
            bad_input!("--bmc {text:?}: an IPv6 address goes in brackets, e.g. [{text}] or https://[{text}]:443");
        }
        if text.is_empty() || text.contains(['/', '?', '#']) {
            bad_input!(
                "--bmc {text:?} is not a URL or a host name (expected e.g. idrac-r7625.example, 10.0.0.5:443 or https://idrac.example)"
            );
        }
        format!("https://{text}")
    };
    let parsed = url::Url::parse(&url).map_err(|e| {
        crate::Error::bad_input(format!(
            "--bmc {text:?} is not a URL ({e}); expected e.g. https://idrac.example or idrac.example"
        ))
    })?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        bad_input!(
            "--bmc: the address carries credentials; give the address alone (credentials come from RFTUNE_USERNAME/RFTUNE_PASSWORD, --credentials FILE or --password-stdin)"
        );
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        bad_input!("--bmc {text:?} names no host");
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_host_means_https() {
        assert_eq!(bmc_url("idrac-r7625.example").unwrap(), "https://idrac-r7625.example");
        assert_eq!(bmc_url("10.0.0.5:8443").unwrap(), "https://10.0.0.5:8443");
        assert_eq!(bmc_url("[fe80::1]").unwrap(), "https://[fe80::1]");
        assert_eq!(bmc_url("[::1]:9001").unwrap(), "https://[::1]:9001");
        assert_eq!(bmc_url("http://127.0.0.1:9001").unwrap(), "http://127.0.0.1:9001");
        let v6 = bmc_url("fe80::1").unwrap_err().to_string();
        assert!(v6.contains("brackets"), "{v6}");
        let creds = bmc_url("root:calvin@idrac").unwrap_err().to_string();
        assert!(creds.contains("credentials") && !creds.contains("calvin"), "{creds}");
        assert!(bmc_url("https://root:calvin@idrac").is_err());
        assert!(bmc_url("idrac/redfish").is_err());
        assert!(bmc_url("").is_err());
    }
}
