//! Certificate trust against an emulated iDRAC with its self-signed, SAN-less certificate.

use super::{Run, TempDir, stderr, stdout};
use idrac_sim::{Fleet, SimConfig};

async fn tls_fleet() -> Fleet {
    Fleet::start(SimConfig::default()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn untrusted_certificate_fails_fast_and_shows_the_fingerprint_to_pin() {
    let fleet = tls_fleet().await;
    let url = &fleet.hosts()[0].url;
    let fp = fleet.fingerprint().unwrap().to_string();
    let out = Run::new(&["inventory", "--bmc", url]).output().await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("the server's TLS certificate is not trusted"), "{err}");
    assert!(
        err.contains("hint: iDRAC factory certificates are self-signed"),
        "{err}"
    );
    assert!(err.contains(&format!("pass --fingerprint {fp}")), "{err}");
    // Said once: no dependency log line repeating it, no URL repeated inside the cause.
    assert_eq!(err.matches("CaUsedAsEndEntity").count(), 1, "{err}");
    assert_eq!(err.matches(url.as_str()).count(), 1, "{err}");
    assert_eq!(
        fleet.hosts()[0].host.stats.total(),
        0,
        "the handshake failed before any request"
    );
    let out = Run::new(&[
        "inventory",
        "--bmc",
        url,
        "--fingerprint",
        &fp.to_uppercase().replace("SHA256:", "sha256:"),
    ])
    .output()
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn trust_on_first_use_records_then_pins() {
    let fleet = tls_fleet().await;
    let url = &fleet.hosts()[0].url;
    let state = TempDir::new();
    let out = Run::new(&["inventory", "--bmc", url, "--trust-on-first-use", "-o", "json"])
        .state_dir(&state.0)
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("trusting its certificate"), "{}", stderr(&out));
    let known = std::fs::read_to_string(state.0.join("known_hosts")).unwrap();
    let host = url.trim_start_matches("https://");
    assert_eq!(known, format!("{host} {}\n", fleet.fingerprint().unwrap()));
    // Later runs use the record without the flag, and say nothing about it.
    let out = Run::new(&["bios", "get", "--bmc", url, "-a", "SysProfile"])
        .state_dir(&state.0)
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    // A changed certificate is refused, naming the file to edit.
    std::fs::write(
        state.0.join("known_hosts"),
        format!("{host} sha256:{}\n", "ab".repeat(32)),
    )
    .unwrap();
    let out = Run::new(&["inventory", "--bmc", url, "--trust-on-first-use"])
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("does not match the expected"), "{err}");
    assert!(err.contains("changed since it was recorded in"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn insecure_is_loud_even_with_quiet() {
    let fleet = tls_fleet().await;
    for quiet in [false, true] {
        let mut args = vec!["inventory", "--bmc", &fleet.hosts()[0].url, "--insecure", "-o", "json"];
        if quiet {
            args.push("-q");
        }
        let out = Run::new(&args).output().await;
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("TLS certificate verification is OFF"),
            "quiet={quiet}: {}",
            stderr(&out)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_http_is_warned_about_once_per_run() {
    let one = rftune_tests::MockBmc::start("r7625").await;
    let two = rftune_tests::MockBmc::start("c6615").await;
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(
        &inventory,
        format!(
            "[[bmc]]\nname = \"a\"\nurl = \"{}\"\n\n[[bmc]]\nname = \"a-again\"\nurl = \"{}\"\n\n[[bmc]]\nname = \"b\"\nurl = \"{}\"\n",
            one.url(),
            one.url(),
            two.url()
        ),
    )
    .unwrap();
    let out = Run::new(&["inventory", "--inventory", inventory.to_str().unwrap(), "-o", "json"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("plain HTTP")).collect();
    // Once for the run (a fleet of hundreds would otherwise print hundreds of lines), naming
    // a host and saying it holds for every http:// BMC of the run.
    assert_eq!(warnings.len(), 1, "once per run: {err}");
    let named = [&one, &two]
        .iter()
        .any(|bmc| warnings[0].contains(bmc.url().trim_start_matches("http://")));
    assert!(named, "{err}");
    assert!(
        warnings[0].contains("unencrypted") && warnings[0].contains("every http:// BMC of this run"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fingerprint_for_an_http_url_is_refused_before_anything_is_sent() {
    let bmc = rftune_tests::MockBmc::start("r7625").await;
    let fp = format!("sha256:{}", "ab".repeat(32));
    let out = Run::new(&["inventory", "--bmc", &bmc.url(), "--fingerprint", &fp])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("--fingerprint") && err.contains("plain HTTP"), "{err}");
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(
        &inventory,
        format!(
            "[[bmc]]\nname = \"pinned\"\nurl = \"{}\"\nfingerprint = \"{fp}\"\n",
            bmc.url()
        ),
    )
    .unwrap();
    let out = Run::new(&["inventory", "--inventory", inventory.to_str().unwrap()])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    // A fleet lists each host's error with its results, on stdout.
    let err = stdout(&out);
    assert!(
        err.contains("pinned:") && err.contains("inventory") && err.contains("plain HTTP"),
        "{err}"
    );
    assert_eq!(bmc.requests().await, Vec::<String>::new(), "nothing was sent");
}

#[tokio::test(flavor = "multi_thread")]
async fn trust_on_first_use_refuses_a_certificate_that_changes_later_in_the_same_run() {
    let bmc = rftune_tests::tls::SwitchingTlsBmc::start(2).await;
    let first = redfish_client::Fingerprint::of_der(&bmc.certificates[0]);
    let second = redfish_client::Fingerprint::of_der(&bmc.certificates[1]);
    let state = TempDir::new();
    let out = Run::new(&[
        "inventory",
        "--bmc",
        &bmc.url,
        "--trust-on-first-use",
        "--retry-for",
        "0s",
    ])
    .state_dir(&state.0)
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    for request in bmc.requests() {
        assert!(!request.contains(rftune_tests::PASSWORD), "password sent: {request}");
        assert!(!request.contains("authorization"), "credentials sent: {request}");
        assert!(!request.contains("x-auth-token"), "token sent: {request}");
    }
    assert_eq!(
        bmc.requests().len(),
        1,
        "only the anonymous service root: {:?}",
        bmc.requests()
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{second} does not match the expected {first}")),
        "{err}"
    );
    let known = std::fs::read_to_string(state.0.join("known_hosts")).unwrap();
    assert_eq!(known, format!("{} {first}\n", bmc.url.trim_start_matches("https://")));
}

#[tokio::test(flavor = "multi_thread")]
async fn https_to_a_plain_http_port_says_so_at_once_without_retrying() {
    let fleet = Fleet::start(SimConfig {
        tls: false,
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let https = fleet.hosts()[0].url.replacen("http://", "https://", 1);
    let out = Run::new(&["inventory", "--bmc", &https, "--insecure"]).output().await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("speaks plain HTTP, not HTTPS"), "{err}");
    assert!(err.contains("hint: this port answers in plain HTTP"), "{err}");
    assert!(!err.contains("is the BMC up"), "{err}");
    assert!(
        !err.contains("gave up after"),
        "asking again cannot help, so it is not retried: {err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn openssl_fingerprint_lines_pin_and_exported_settings_never_fight_explicit_flags() {
    let fleet = tls_fleet().await;
    let host = &fleet.hosts()[0];
    let fp = fleet.fingerprint().unwrap().to_string();
    let hex = fp.trim_start_matches("sha256:").to_uppercase();
    let colons: Vec<String> = hex
        .as_bytes()
        .chunks(2)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    // What `openssl x509 -noout -fingerprint -sha256` prints, given through the environment.
    let openssl = format!("sha256 Fingerprint={}", colons.join(":"));
    let out = Run::new(&["inventory", "--bmc", &host.url])
        .env("RFTUNE_FINGERPRINT", &openssl)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // An exported RFTUNE_BMC does not conflict with an explicit --inventory.
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let out = Run::new(&["inventory", "--inventory", inventory.to_str().unwrap()])
        .env("RFTUNE_BMC", "https://127.0.0.1:9")
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // And alone, RFTUNE_BMC names the host.
    let out = Run::new(&["inventory", "--fingerprint", &openssl])
        .env("RFTUNE_BMC", &host.url)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("PowerEdge"), "{}", stdout(&out));
}
