//! HPE's own Redfish library and generic Redfish clients run unchanged against the emulated HPE
//! iLO 5 (the built-in dl385): HPE's python-ilorest-library (the `redfish` module under its
//! iLOrest tool, over HTTPS as it insists), DMTF's Tacklebox BIOS script (`rf_bios_settings.py` of PyPI's `redfish_utilities`, on DMTF's
//! python-redfish-library, which discovers nothing here: it is given the address) and OpenStack
//! sushy's generic BIOS interface, as Ironic's redfish driver drives an iLO. Each reads the BIOS
//! attributes, sets one for the next reset (Tacklebox PATCHes the settings object with the
//! `If-Match` of its read; sushy with `@Redfish.Settings.ETag`, which iLO's settings object does
//! not carry, so it meets the 412 and retries as it does on iLO), and after a system reset the
//! value is current. All pinned by `.ci/run`; without them each test prints one `skipped:` line
//! and passes, unless `RFTUNE_REQUIRE_TOOLS=1`.

use idrac_sim::{Fleet, ModelSource, SimConfig};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A plain-HTTP iLO with a short POST.
async fn ilo() -> Fleet {
    ilo_over(false).await
}

/// An iLO with a short POST, over HTTPS (its own self-signed certificate) when `tls`.
async fn ilo_over(tls: bool) -> Fleet {
    Fleet::start(SimConfig {
        model: ModelSource::Builtin("dl385".into()),
        tls,
        boot_time: Duration::from_millis(600),
        ..SimConfig::default()
    })
    .await
    .unwrap()
}

/// Runs `program` with `args`, the emulator's test account in `RFTUNE_SIM_USER` and
/// `RFTUNE_SIM_PASSWORD`; its exit code and output.
async fn run(program: &Path, args: &[&str]) -> (Option<i32>, String) {
    super::finished(
        tokio::process::Command::new(program)
            .args(args)
            .env("RFTUNE_SIM_USER", rftune_tests::USERNAME)
            .env("RFTUNE_SIM_PASSWORD", rftune_tests::PASSWORD),
        Duration::from_secs(120),
    )
    .await
}

/// The value a script printed for its step `name` (`name: value`).
fn step(text: &str, name: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {name:?} in {text}"))
        .to_owned()
}

/// The value of `name` in the settings object (`pending`) or the current values.
fn value(fleet: &Fleet, name: &str, pending: bool) -> String {
    let (current, written, _) = fleet.hosts()[0].host.snapshot();
    let v = if pending {
        written.get(name).or(current.get(name))
    } else {
        current.get(name)
    };
    v.and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

#[tokio::test]
async fn tacklebox_reads_the_ilo_bios_and_sets_an_attribute_that_a_system_reset_applies() {
    let Some(script) = rftune_tests::require_tool(
        "rf_bios_settings.py",
        "RFTUNE_RF_BIOS_SETTINGS",
        "set RFTUNE_RF_BIOS_SETTINGS to the rf_bios_settings.py of a venv with PyPI's redfish_utilities; .ci/run installs one",
    ) else {
        return;
    };
    let fleet = ilo().await;
    let url = fleet.hosts()[0].url.clone();
    let account = [
        "-u",
        rftune_tests::USERNAME,
        "-p",
        rftune_tests::PASSWORD,
        "-r",
        url.as_str(),
    ];
    let (code, text) = run(&script, &account).await;
    assert_eq!(code, Some(0), "{text}");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("WorkloadProfile "))
        .unwrap_or_else(|| panic!("no WorkloadProfile line in {text}"));
    // Current and future (the settings object's full copy) side by side.
    assert_eq!(line.matches("GeneralPowerEfficientCompute").count(), 2, "{line}");
    let (code, text) = run(&script, &[&account[..], &["-a", "AdminName", "tacklebox"]].concat()).await;
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("Traceback"), "{text}");
    assert_eq!(value(&fleet, "AdminName", true), "tacklebox", "staged: {text}");
    assert_eq!(value(&fleet, "AdminName", false), "", "not applied before a reset");
    let host = &fleet.hosts()[0].host;
    host.reset(&serde_json::json!({"ResetType": "ForceRestart"}));
    super::super::eventually("the reset's POST", || async {
        host.boot_remaining().is_none().then_some(())
    })
    .await;
    assert_eq!(value(&fleet, "AdminName", false), "tacklebox");
    let (code, text) = run(&script, &account).await;
    assert_eq!(code, Some(0), "{text}");
    assert!(text.lines().any(|l| l.matches("tacklebox").count() == 2), "{text}");
    eprintln!(
        "flow Tacklebox rf_bios_settings.py read, set, read on iLO: passed, {} requests",
        host.stats.total()
    );
}

#[tokio::test]
async fn sushy_sets_an_ilo_bios_attribute_for_the_next_reset_and_reads_it_applied_with_success() {
    let Some(python) = sushy_python() else { return };
    let fleet = ilo().await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/compat/sushy_bios.py");
    let script = script.to_string_lossy().into_owned();
    let url = fleet.hosts()[0].url.clone();
    let (code, text) = run(&python, &[script.as_str(), url.as_str(), "AdminName", "sushy"]).await;
    assert_eq!(code, Some(0), "{text}");
    let step = |name: &str| step(&text, name);
    assert_eq!(step("registry"), "BiosAttributeRegistryA42.v1_2_60");
    assert_eq!(step("before"), "");
    assert_eq!(step("pending"), "sushy", "the settings object holds the value");
    assert_eq!(step("current after set"), "", "not applied before the reset");
    assert_eq!(step("after reset"), "sushy");
    // sushy.resources.settings.UPDATE_SUCCESS: Base.1.0.Success alone.
    assert_eq!(
        (step("update status").as_str(), step("messages").as_str()),
        ("1", "Base.1.0.Success")
    );
    let host = &fleet.hosts()[0].host;
    assert_eq!(value(&fleet, "AdminName", false), "sushy");
    eprintln!(
        "flow sushy Bios.set_attribute and reset on iLO: passed, {} requests",
        host.stats.total()
    );
}

#[tokio::test]
async fn hpes_ilorest_library_sets_a_bios_attribute_that_the_reset_applies_and_logs_out() {
    let Some(python) = python_with(
        "RFTUNE_ILOREST_PYTHON",
        "redfish.rest.v1",
        "python-ilorest-library",
        "set RFTUNE_ILOREST_PYTHON to the python of a venv with PyPI's python-ilorest-library; .ci/run installs one",
    ) else {
        return;
    };
    let fleet = ilo_over(true).await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/compat/ilorest_bios.py");
    let script = script.to_string_lossy().into_owned();
    let url = fleet.hosts()[0].url.clone();
    let (code, text) = run(&python, &[script.as_str(), url.as_str(), "AdminName", "ilorest"]).await;
    assert_eq!(code, Some(0), "{text}");
    let step = |name: &str| step(&text, name);
    assert_eq!(step("generation"), "5", "told from the service root's Oem.Hpe");
    assert_eq!(
        (step("before").as_str(), step("pending").as_str()),
        ("", "ilorest"),
        "{text}"
    );
    assert_eq!(
        (step("patch status").as_str(), step("patch message").as_str()),
        ("200", "iLO.2.15.SystemResetRequired")
    );
    assert_eq!(
        (step("after reset").as_str(), step("messages").as_str()),
        ("ilorest", "Base.1.0.Success")
    );
    assert_eq!(step("logout status"), "200");
    let host = &fleet.hosts()[0].host;
    assert_eq!(value(&fleet, "AdminName", false), "ilorest");
    assert_eq!(
        host.ilo_sessions(rftune_tests::USERNAME)["Members@odata.count"],
        0,
        "no session left open"
    );
    eprintln!(
        "flow HPE python-ilorest-library login, PATCH, reset, read, logout on iLO: passed, {} requests",
        host.stats.total()
    );
}

/// The Python named by `variable`, else a `python3` on `PATH`, that imports `module` (of PyPI's
/// `package`); `None`, with one `skipped:` line, when there is none.
fn python_with(variable: &str, module: &str, package: &str, hint: &str) -> Option<PathBuf> {
    let found = match std::env::var_os(variable) {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => std::process::Command::new("python3")
            .args(["-c", &format!("import {module}")])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|_| PathBuf::from("python3")),
    };
    rftune_tests::tool_available(package, found.is_some(), hint)
        .then_some(found)
        .flatten()
}

/// The Python of a venv with PyPI's sushy: `RFTUNE_SUSHY_PYTHON`, else a `python3` on `PATH`
/// that imports it.
fn sushy_python() -> Option<PathBuf> {
    python_with(
        "RFTUNE_SUSHY_PYTHON",
        "sushy",
        "sushy",
        "set RFTUNE_SUSHY_PYTHON to the python of a venv with PyPI's sushy; .ci/run installs one",
    )
}
