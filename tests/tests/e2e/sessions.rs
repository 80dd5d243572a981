//! Sessions rftune opens are the sessions it ends: a login whose answer is lost (the connection
//! reset, or the answer cut short) is sent again, and the session the lost one opened is ended
//! too, so a flaky network does not fill a BMC's few session slots for its idle timeout.

use super::{Run, TempDir, sim, stderr};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn applies_over_connections_that_reset_or_cut_answers_leave_no_session_open() {
    for fault in ["reset:0.2", "malformed:0.2"] {
        let fleet = sim("r7625", 20, |c| {
            c.faults = vec![fault.parse().unwrap()];
            c.seed = 7;
        })
        .await;
        let dir = TempDir::new();
        let state = TempDir::new();
        let inventory = dir.0.join("fleet.toml");
        std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
        let args = [
            "apply",
            "--inventory",
            inventory.to_str().unwrap(),
            "-p",
            "performance",
            "--reboot",
            "force",
            "--max-unavailable",
            "20",
            "--job-timeout",
            "30s",
            "--boot-timeout",
            "30s",
            "--timeout",
            "5s",
            "--retry-for",
            "30s",
            "-o",
            "json",
        ];
        for run in 1..=2 {
            let out = Run::new(&args).state_dir(&state.0).output().await;
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            assert!(
                out.status.code() == Some(0),
                "{fault}, run {run}: {}\n{}",
                doc["summary"],
                stderr(&out)
            );
        }
        let created: u64 = (0..20)
            .map(|i| {
                fleet.hosts()[i].host.stats.to_json("")["sessions_created"]
                    .as_u64()
                    .unwrap()
            })
            .sum();
        assert!(
            created > 40,
            "{fault}: some logins lost their answers and were sent again ({created} sessions for 40 logins)"
        );
        let open: Vec<(String, u64)> = fleet
            .hosts()
            .iter()
            .map(|h| {
                (
                    h.name.clone(),
                    h.host.sessions(false)["Members@odata.count"].as_u64().unwrap(),
                )
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        assert!(open.is_empty(), "{fault}: sessions left open: {open:?}");
    }
}
