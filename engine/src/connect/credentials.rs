//! Credentials files: a TOML file only the user can read, with a `username` and a `password`.
//! How a caller gets a password otherwise (a prompt, an environment variable) is its business;
//! the engine only refuses an empty one.

use crate::error::{Context, Result, bad_input};
use redfish_client::Credentials;
use serde::Deserialize;
use std::path::Path;

/// The iDRAC factory account, used when no user name is given.
pub const DEFAULT_USERNAME: &str = "root";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CredentialsFile {
    username: Option<String>,
    password: String,
}

/// Refuses an empty password, naming where it came from: sent to a fleet, it would count as a
/// failed login on every BMC, and iDRACs block an address after a few of those.
pub fn non_empty(creds: Credentials, source: &str, url: &str) -> Result<Credentials> {
    if creds.password.expose().is_empty() {
        bad_input!(
            "empty password from {source} for {url}: not sending it (an iDRAC counts it as a failed login and blocks the address after a few)"
        );
    }
    Ok(creds)
}

/// The credentials in the file at `path` for the BMC(s) `whom` names: private, valid, and with
/// a password that is not empty (the error names the file).
pub fn from_file(path: &Path, username_override: Option<&str>, whom: &str) -> Result<Credentials> {
    let creds = read_file(path, username_override)?;
    non_empty(creds, &format!("credentials file {}", path.display()), whom)
}

/// Reads a TOML credentials file, refusing one that others can read.
pub fn read_file(path: &Path, username_override: Option<&str>) -> Result<Credentials> {
    check_private(path)?;
    let text = crate::state::read_capped(path, crate::state::MAX_CREDENTIALS_BYTES, "credentials file")?;
    // The TOML error would quote the offending line, which may hold the password.
    let parsed: CredentialsFile = toml::from_str(&text).map_err(|e| {
        crate::Error::bad_input(format!(
            "credentials file {} is not valid: expected `username = \"...\"` and `password = \"...\"` ({})",
            path.display(),
            e.message()
        ))
    })?;
    let username = username_override
        .map(str::to_owned)
        .or(parsed.username)
        .unwrap_or_else(|| DEFAULT_USERNAME.to_owned());
    Ok(Credentials::new(username, parsed.password))
}

/// The text of a file of secrets that must be private to its owner (as a credentials file),
/// for a caller that parses it itself (BIOS passwords).
pub fn read_private(path: &Path, what: &str) -> Result<String> {
    check_private(path)?;
    crate::state::read_capped(path, crate::state::MAX_CREDENTIALS_BYTES, what)
}

#[cfg(unix)]
fn check_private(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).with_context(|| format!("reading credentials file {}", path.display()))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        bad_input!(
            "credentials file {} can be read by others (mode {mode:03o}); run `chmod 600 {}`",
            path.display(),
            path.display()
        );
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_path: &Path) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(dir: &Path, text: &str, mode: u32) -> std::path::PathBuf {
        let p = dir.join("creds.toml");
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn file_must_be_private() {
        let dir = tempdir();
        let p = write(&dir, "password = \"s3cret\"\n", 0o644);
        let err = read_file(&p, None).unwrap_err().to_string();
        assert!(err.contains("chmod 600") && err.contains("644"), "{err}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let c = read_file(&p, None).unwrap();
        assert_eq!(c.username, "root");
        assert_eq!(c.password.expose(), "s3cret");
    }

    #[test]
    fn bad_file_does_not_echo_the_password() {
        let dir = tempdir();
        let p = write(&dir, "username = \"admin\"\npassword = s3cret-unquoted\n", 0o600);
        let err = crate::error::report(&read_file(&p, None).unwrap_err());
        assert!(!err.contains("s3cret"), "{err}");
        assert!(err.contains("not valid"));
    }

    #[test]
    fn an_empty_password_names_its_source() {
        let creds = Credentials::new("root", "");
        let err = non_empty(creds, "RFTUNE_PASSWORD", "https://bmc")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("empty password from RFTUNE_PASSWORD for https://bmc"),
            "{err}"
        );
        assert!(non_empty(Credentials::new("root", "calvin"), "x", "u").is_ok());
    }

    fn tempdir() -> std::path::PathBuf {
        // Kept on drop: each test's files live on until the process ends.
        let d = tempfile::tempdir().unwrap().keep();
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
