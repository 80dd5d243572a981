//! The schedule, job classification and the check loop on tokio's paused clock (no real time
//! passes: the runtime jumps to the next timer when every task waits), and the metrics text.

use super::check::{Finding, JobSeen, PowerReading};
use super::*;
use crate::error::HostError;
use bios_profiles::StatusCounts;
use std::sync::atomic::{AtomicUsize, Ordering};

const MIN: Duration = Duration::from_secs(60);

fn entries(n: usize) -> Vec<BmcEntry> {
    (0..n)
        .map(|i| {
            let mut e = BmcEntry::from_url(&format!("http://127.0.0.1:{}", 9000 + i)).unwrap();
            e.name = format!("r7625-{:04}", i + 1);
            e
        })
        .collect()
}

fn finding(drift: usize) -> Finding {
    Finding {
        counts: StatusCounts {
            in_sync: 10,
            drift,
            ..StatusCounts::default()
        },
        profile_errors: 0,
        profile_warnings: 0,
        pending_values: 0,
        jobs: Vec::new(),
        lockdown: Some(false),
        model: Some("PowerEdge R7625".into()),
        bios_version: Some("1.6.6".into()),
        service_tag: Some("R760001".into()),
        power: Some(PowerReading {
            sensor: Sensor::EnvironmentMetrics,
            watts: 412.5,
        }),
    }
}

fn job(id: &str, outcome: JobOutcome, percent: u8) -> JobSeen {
    JobSeen {
        id: id.into(),
        outcome,
        percent: Some(percent),
        message_id: Some("PR20".into()),
    }
}

#[test]
fn the_first_check_is_due_at_once_and_later_ones_within_a_tenth_of_their_slot() {
    assert_eq!(due_after(MIN, 0, 1.0), Duration::ZERO);
    assert_eq!(due_after(MIN, 3, 0.0), 3 * MIN);
    assert_eq!(due_after(MIN, 3, 1.0), Duration::from_secs(186));
    assert_eq!(due_after(MIN, 3, -1.0), Duration::from_secs(174));
    assert_eq!(due_after(MIN, 1, -7.0), Duration::from_secs(54), "jitter is clamped");
}

#[test]
fn a_check_that_overran_skips_the_slots_it_missed() {
    assert_eq!(next_slot(MIN, 0, Duration::from_secs(5)), 1);
    assert_eq!(next_slot(MIN, 4, Duration::from_secs(4 * 60 + 5)), 5);
    // Check 1 started at ~60 s and ended at 200 s: slots 2 and 3 (120 s, 180 s) are gone.
    assert_eq!(next_slot(MIN, 1, Duration::from_secs(200)), 4);
    assert_eq!(next_slot(Duration::ZERO, 2, MIN), 3);
}

#[test]
fn jobs_count_as_waiting_running_or_stuck() {
    let t0 = Instant::now();
    let after = Duration::from_secs(1800);
    let jobs = [
        job("JID_1", JobOutcome::Waiting, 0),
        job("JID_2", JobOutcome::Stuck, 0),
        job("JID_3", JobOutcome::Running, 40),
    ];
    let (counts, seen) = classify_jobs(&[], &jobs, t0, after);
    assert_eq!(
        counts,
        JobCounts {
            waiting: 1,
            running: 1,
            stuck: 1
        }
    );
    // Still at 40% half an hour later: stuck.
    let (counts, seen) = classify_jobs(&seen, &jobs, t0 + after, after);
    assert_eq!((counts.running, counts.stuck), (0, 2));
    // It moved: running again, and the clock starts over.
    let moved = [job("JID_3", JobOutcome::Running, 41)];
    let (counts, seen) = classify_jobs(&seen, &moved, t0 + after + MIN, after);
    assert_eq!((counts.running, counts.stuck), (1, 0));
    assert_eq!(seen[0].since, t0 + after + MIN);
    // A job that finished is gone from the queue, and from what is remembered.
    let (counts, seen) = classify_jobs(&seen, &[], t0 + 2 * after, after);
    assert_eq!(counts, JobCounts::default());
    assert!(seen.is_empty());
}

#[test]
fn failure_reasons_come_from_the_error_kind() {
    let host = |kind| Error::from(HostError::new("r1", kind, "x"));
    for kind in [
        HostErrorKind::Unreachable,
        HostErrorKind::Credentials,
        HostErrorKind::Tls,
    ] {
        assert_eq!(Reason::of(&host(kind)), Reason::Connection);
    }
    assert_eq!(Reason::of(&host(HostErrorKind::Redfish)), Reason::Redfish);
    assert_eq!(Reason::of(&host(HostErrorKind::Timeout)), Reason::Timeout);
    assert_eq!(Reason::of(&host(HostErrorKind::ProfileNotApplicable)), Reason::Profile);
    assert_eq!(Reason::of(&host(HostErrorKind::PendingWork)), Reason::Other);
    assert_eq!(Reason::of(&Error::bad_input("bad")), Reason::Other);
}

fn schedule(once: bool) -> Schedule {
    Schedule {
        interval: 5 * MIN,
        timeout: Duration::from_secs(30),
        concurrency: 1,
        stuck_after: 60 * MIN,
        once,
    }
}

/// A check where host 1 never answers and host 3 drifts.
fn check(
    calls: Arc<AtomicUsize>,
) -> impl Fn(BmcEntry, Option<Sensor>) -> futures_util::future::BoxFuture<'static, Result<Finding>> {
    move |entry: BmcEntry, _| {
        calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            match entry.name.as_str() {
                "r7625-0001" => std::future::pending().await,
                "r7625-0003" => Ok(finding(4)),
                _ => {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Ok(finding(0))
                }
            }
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_silent_host_delays_the_others_by_its_timeout_and_no_more() {
    // One check at a time, the silent host first: the others wait for its slot, which its
    // timeout frees.
    let hosts = entries(4);
    let board = SharedBoard::new(Board::new("performance", schedule(true), &hosts));
    let (_stop, stopped) = tokio::sync::watch::channel(false);
    let start = Instant::now();
    run(hosts, board.clone(), check(Arc::default()), stopped).await;
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(30 + 1 + 1),
        "the silent host's 30 s, then host 2's and host 4's second each (host 3 answers at once)"
    );
    let b = board.lock();
    assert!(b.all_checked());
    let silent = b.hosts[0].last.as_ref().unwrap();
    let failure = silent.outcome.as_ref().unwrap_err();
    assert_eq!(failure.reason, Reason::Timeout);
    assert!(failure.message.contains("longer than 30s"), "{}", failure.message);
    assert_eq!(
        b.hosts.iter().map(HostRecord::status).collect::<Vec<_>>(),
        [
            HostStatus::Error,
            HostStatus::InSync,
            HostStatus::Drift,
            HostStatus::InSync
        ]
    );
    assert!(b.hosts.iter().all(|h| !h.running));
}

#[tokio::test(start_paused = true)]
async fn each_host_is_checked_once_per_interval_until_stopped() {
    let hosts = entries(4);
    let board = SharedBoard::new(Board::new(
        "performance",
        Schedule {
            concurrency: 4,
            ..schedule(false)
        },
        &hosts,
    ));
    let calls = Arc::new(AtomicUsize::new(0));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let watching = tokio::spawn(run(hosts, board.clone(), check(calls.clone()), stopped));
    // Checks 0..=3 of every host are due by 3 × 5 min + 10% at the latest; check 4 not before
    // 4 × 5 min − 10%.
    tokio::time::sleep(17 * MIN).await;
    stop.send(true).unwrap();
    watching.await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 16);
    let b = board.lock();
    assert_eq!(b.hosts[1].successes, 4);
    assert_eq!((b.hosts[0].successes, b.hosts[0].failures), (0, 4));
}

#[tokio::test(start_paused = true)]
async fn a_stop_lets_the_checks_in_flight_finish_and_starts_no_more() {
    let hosts = entries(3);
    let board = SharedBoard::new(Board::new(
        "performance",
        Schedule {
            concurrency: 1,
            ..schedule(false)
        },
        &hosts[1..],
    ));
    let calls = Arc::new(AtomicUsize::new(0));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let watching = tokio::spawn(run(hosts[1..].to_vec(), board.clone(), check(calls.clone()), stopped));
    // Host 2's one-second check is in flight; host 3 waits for the slot.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(board.lock().hosts[0].running);
    stop.send(true).unwrap();
    watching.await.unwrap();
    let b = board.lock();
    assert_eq!(b.hosts[0].successes, 1, "the check in flight finished and was recorded");
    assert!(b.hosts[1].last.is_none(), "the waiting host never started");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

fn board_with_results() -> Board {
    let hosts = entries(3);
    let mut board = Board::new("performance", Schedule::default(), &hosts);
    let now = Instant::now();
    let at = UNIX_EPOCH + Duration::from_secs(1_764_554_400);
    let mut drifting = finding(3);
    drifting.pending_values = 2;
    drifting.jobs = vec![job("JID_9", JobOutcome::Stuck, 0), job("JID_8", JobOutcome::Waiting, 0)];
    board.record(0, Ok(finding(0)), Duration::from_millis(250), now, at);
    board.record(1, Ok(drifting), Duration::from_millis(1500), now, at);
    board.record(
        2,
        Err(Failure {
            reason: Reason::Timeout,
            message: "r7625-0003: no answer".into(),
        }),
        Duration::from_secs(60),
        now,
        at,
    );
    board
}

use std::time::UNIX_EPOCH;

#[test]
fn metrics_show_each_host_and_leave_out_values_a_failed_check_could_not_read() {
    let text = metrics::render(&board_with_results());
    let has = |line: &str| text.lines().any(|l| l == line);
    for line in [
        "rftune_bios_drift_attributes{host=\"r7625-0001\",profile=\"performance\"} 0",
        "rftune_bios_drift_attributes{host=\"r7625-0002\",profile=\"performance\"} 3",
        "rftune_bios_attributes{host=\"r7625-0002\",profile=\"performance\",status=\"drift\"} 3",
        "rftune_bios_pending_attributes{host=\"r7625-0002\"} 2",
        "rftune_idrac_jobs{host=\"r7625-0002\",state=\"stuck\"} 1",
        "rftune_idrac_jobs{host=\"r7625-0002\",state=\"waiting\"} 1",
        "rftune_idrac_jobs{host=\"r7625-0001\",state=\"stuck\"} 0",
        "rftune_check_success{host=\"r7625-0001\"} 1",
        "rftune_check_success{host=\"r7625-0003\"} 0",
        "rftune_check_failed{host=\"r7625-0003\",reason=\"timeout\"} 1",
        "rftune_check_last_timestamp_seconds{host=\"r7625-0003\"} 1764554400",
        "rftune_check_duration_seconds{host=\"r7625-0002\"} 1.5",
        "rftune_checks_total{host=\"r7625-0003\",result=\"failure\"} 1",
        "rftune_hosts{profile=\"performance\",state=\"in_sync\"} 1",
        "rftune_hosts{profile=\"performance\",state=\"drift\"} 1",
        "rftune_hosts{profile=\"performance\",state=\"error\"} 1",
        "rftune_hosts{profile=\"performance\",state=\"unknown\"} 0",
        "rftune_bios_info{host=\"r7625-0001\",model=\"PowerEdge R7625\",bios_version=\"1.6.6\",service_tag=\"R760001\"} 1",
        "rftune_power_watts{host=\"r7625-0001\",sensor=\"EnvironmentMetrics.PowerWatts\"} 412.5",
        "rftune_idrac_system_lockdown{host=\"r7625-0001\"} 0",
    ] {
        assert!(has(line), "missing {line:?} in\n{text}");
    }
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        if l.contains("host=\"r7625-0003\"") {
            assert!(
                l.starts_with("rftune_check") || l.starts_with("rftune_checks_total"),
                "a failed check shows only check metrics: {l}"
            );
        }
    }
    assert!(!text.contains("rftune_check_last_success_timestamp_seconds{host=\"r7625-0003\"}"));
}

#[test]
fn every_family_is_announced_once_in_the_documented_order() {
    let empty = Board::new("performance", Schedule::default(), &entries(2));
    for board in [empty, board_with_results()] {
        let text = metrics::render(&board);
        let typed: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        assert_eq!(typed, metrics::FAMILIES);
        let helped = text.lines().filter(|l| l.starts_with("# HELP ")).count();
        assert_eq!(helped, metrics::FAMILIES.len());
        // Every sample belongs to the family announced last.
        let mut family = "";
        for l in text.lines() {
            if let Some(t) = l.strip_prefix("# TYPE ") {
                family = t.split(' ').next().unwrap();
            } else if !l.starts_with('#') {
                let name = l.split(['{', ' ']).next().unwrap();
                assert_eq!(name, family, "{l}");
            }
        }
    }
    let text = metrics::render(&board_with_results());
    assert!(text.contains("rftune_hosts{profile=\"performance\",state=\"unknown\"} 0"));
    assert_eq!(
        metrics::render(&board_with_results()),
        text,
        "the same board, the same text"
    );
}
