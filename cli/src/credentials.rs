//! Where the BMC password comes from: a credentials file only the user can read,
//! `--password-stdin`, `RFTUNE_PASSWORD`, or a prompt on a terminal — never an argument —
//! resolved once per command, before a fleet fans out.

use crate::args::{AuthArg, ConnectArgs};
use anyhow::{Context, Result, bail};
use redfish_client::{AuthMethod, Credentials};
use rftune_engine::connect::ConnectConfig;
use rftune_engine::connect::credentials;
use rftune_engine::fleet::BmcEntry;
use std::io::{BufRead, IsTerminal};
use std::sync::OnceLock;

/// The connection settings of `args` for `entries`, with the password resolved once, before
/// any host is contacted: from --credentials, --password-stdin, RFTUNE_PASSWORD, or one prompt
/// on a terminal. Hosts whose inventory entry names a credentials file use that file (the
/// engine reads it); when every entry does, nothing is asked.
pub fn connect_config(args: &ConnectArgs, entries: &[BmcEntry]) -> Result<ConnectConfig> {
    let credentials = if entries.iter().all(|e| e.credentials.is_some()) {
        None
    } else {
        let whom = match entries {
            [one] => one.url.clone(),
            many => format!("the {} BMCs", many.len()),
        };
        Some(resolve(args, &whom)?)
    };
    Ok(ConnectConfig {
        credentials,
        username: args.username.clone(),
        auth: match args.auth {
            AuthArg::Session => AuthMethod::Session,
            AuthArg::Basic => AuthMethod::Basic,
        },
        ca_cert: args.ca_cert.clone(),
        fingerprint: args.fingerprint.clone().or_else(|| {
            // An exported fingerprint never fights an explicit --insecure or --ca-cert.
            let env = std::env::var("RFTUNE_FINGERPRINT")
                .ok()
                .filter(|f| !f.trim().is_empty());
            env.filter(|_| !args.insecure && args.ca_cert.is_none())
        }),
        trust_on_first_use: args.trust_on_first_use,
        insecure: args.insecure,
        timeout: args.timeout,
        retry_for: args.retry_for,
    })
}

/// Resolves the credentials for `whom` (a URL, or `the 20 BMCs`), in order: --credentials,
/// --password-stdin, RFTUNE_PASSWORD, a terminal prompt. An empty password is refused, naming
/// where it came from.
fn resolve(args: &ConnectArgs, whom: &str) -> Result<Credentials> {
    if let Some(path) = &args.credentials {
        return Ok(credentials::from_file(path, args.username.as_deref(), whom)?);
    }
    let username = args
        .username
        .clone()
        .unwrap_or_else(|| credentials::DEFAULT_USERNAME.to_owned());
    if args.password_stdin {
        let creds = Credentials::new(username, stdin_password()?);
        return Ok(credentials::non_empty(
            creds,
            "--password-stdin (the first line of standard input)",
            whom,
        )?);
    }
    if let Some(p) = std::env::var_os("RFTUNE_PASSWORD") {
        let p = p
            .into_string()
            .map_err(|_| anyhow::anyhow!("RFTUNE_PASSWORD is not valid UTF-8"))?;
        return Ok(credentials::non_empty(
            Credentials::new(username, p),
            "RFTUNE_PASSWORD",
            whom,
        )?);
    }
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        let p = rpassword::prompt_password(format!("Password for {username} at {whom}: "))
            .context("reading the password from the terminal")?;
        return Ok(credentials::non_empty(
            Credentials::new(username, p),
            "the password prompt",
            whom,
        )?);
    }
    bail!("no password for {whom}: set RFTUNE_PASSWORD, pipe it with --password-stdin, or use --credentials FILE")
}

/// The first line of stdin, read once per process (every BMC of a fleet shares it).
fn stdin_password() -> Result<String> {
    static LINE: OnceLock<Result<String, String>> = OnceLock::new();
    LINE.get_or_init(|| {
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) => Err("--password-stdin: standard input is empty".to_owned()),
            Ok(_) => Ok(line.trim_end_matches(['\r', '\n']).to_owned()),
            Err(e) => Err(format!("--password-stdin: {e}")),
        }
    })
    .clone()
    .map_err(anyhow::Error::msg)
}
