//! Where the BMC password comes from: a credentials file only the user can read,
//! `--password-stdin`, `RFTUNE_PASSWORD`, or a prompt on a terminal — never an argument —
//! resolved once per command, before a fleet fans out.

use crate::args::{AuthArg, ConnectArgs};
use anyhow::{Context, Result, bail};
use redfish_client::{AuthMethod, Credentials, Password};
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

/// The BIOS passwords a change needs (`old` when `need_old`, `new` when `need_new`; the other
/// one empty), for `which` (`setup`, `system`), in order of the sources: --bios-password-file
/// (a private TOML file with `old` and `new`), --bios-password-stdin (a line each, old first,
/// after the BMC password's line), RFTUNE_BIOS_OLD_PASSWORD / RFTUNE_BIOS_NEW_PASSWORD, a
/// prompt on a terminal (the new one twice). A BIOS password is 1 to 32 printable ASCII
/// characters (the registry's rule on real iDRACs).
pub fn bios_passwords(
    args: &crate::args::boot::BiosSecretArgs,
    which: &str,
    need_old: bool,
    need_new: bool,
) -> Result<(Password, Password)> {
    let mut old = String::new();
    let mut new = String::new();
    let source;
    if let Some(path) = &args.bios_password_file {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            old: Option<String>,
            new: Option<String>,
        }
        let text = credentials::read_private(path, "BIOS password file")?;
        // The TOML error would quote the line, which may hold a password.
        let file: File = toml::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "BIOS password file {} is not valid: expected `old = \"...\"` and/or `new = \"...\"` ({})",
                path.display(),
                e.message()
            )
        })?;
        old = file.old.unwrap_or_default();
        new = file.new.unwrap_or_default();
        source = format!("BIOS password file {}", path.display());
    } else if args.bios_password_stdin {
        if need_old {
            old = stdin_line("--bios-password-stdin (the old BIOS password)")?;
        }
        if need_new {
            new = stdin_line("--bios-password-stdin (the new BIOS password)")?;
        }
        source = "--bios-password-stdin".to_owned();
    } else if std::env::var_os("RFTUNE_BIOS_OLD_PASSWORD").is_some()
        || std::env::var_os("RFTUNE_BIOS_NEW_PASSWORD").is_some()
    {
        let env = |name: &str| -> Result<String> {
            match std::env::var_os(name) {
                None => Ok(String::new()),
                Some(v) => v
                    .into_string()
                    .map_err(|_| anyhow::anyhow!("{name} is not valid UTF-8")),
            }
        };
        old = env("RFTUNE_BIOS_OLD_PASSWORD")?;
        new = env("RFTUNE_BIOS_NEW_PASSWORD")?;
        source = "RFTUNE_BIOS_OLD_PASSWORD / RFTUNE_BIOS_NEW_PASSWORD".to_owned();
    } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        if need_old {
            old = rpassword::prompt_password(format!("Current BIOS {which} password: "))
                .context("reading the BIOS password from the terminal")?;
        }
        if need_new {
            new = rpassword::prompt_password(format!("New BIOS {which} password: "))
                .context("reading the BIOS password from the terminal")?;
            let again = rpassword::prompt_password(format!("New BIOS {which} password again: "))
                .context("reading the BIOS password from the terminal")?;
            if again != new {
                bail!("the two new BIOS {which} passwords differ; nothing was sent");
            }
        }
        source = "the password prompt".to_owned();
    } else {
        bail!(
            "no BIOS {which} password: give --bios-password-file FILE (chmod 600, `old`/`new`), --bios-password-stdin, or RFTUNE_BIOS_OLD_PASSWORD / RFTUNE_BIOS_NEW_PASSWORD"
        );
    }
    let check = |value: &str, what: &str, needed: bool| -> Result<()> {
        if needed && value.is_empty() {
            bail!("no {what} BIOS {which} password from {source}");
        }
        if value.chars().count() > 32 || !value.chars().all(|c| (' '..='~').contains(&c)) {
            bail!("the {what} BIOS {which} password from {source} is not 1 to 32 printable ASCII characters");
        }
        Ok(())
    };
    check(&old, "old", need_old)?;
    check(&new, "new", need_new)?;
    if !need_old {
        old.clear();
    }
    if !need_new {
        new.clear();
    }
    Ok((Password::new(old), Password::new(new)))
}

/// The next line of standard input (after any read before), without its line ending.
fn stdin_line(what: &str) -> Result<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) => bail!("{what}: standard input has no more lines"),
        Ok(_) => Ok(line.trim_end_matches(['\r', '\n']).to_owned()),
        Err(e) => bail!("{what}: {e}"),
    }
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
