//! The storage and memory runs end to end: real fio and STREAM on small sizes, power from a
//! stand-in source, the target's lifecycle, and the shell implementation of a remote host.

use super::TempDir;
use host_bench::exec::{BoxFuture, Exec, Local, Output};
use host_bench::power::{PowerError, Sample};
use host_bench::run::{self, Common, MemoryRun, MemorySettings, NoProgress, PowerSource, StorageRun, StorageSettings};
use host_bench::target::{MAGIC, TargetKind};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Readings at 0, 0.5, 1 s after the work (400, 420, 410 W: 412.5 W on average), or a failure.
pub(crate) struct FakePower {
    pub(crate) fail: bool,
}

impl PowerSource for FakePower {
    fn sample_while<'a>(
        &'a self,
        _interval: Duration,
        _origin: Instant,
        work: BoxFuture<'a, ()>,
    ) -> BoxFuture<'a, Result<Vec<Sample>, PowerError>> {
        Box::pin(async move {
            work.await;
            if self.fail {
                return Err("the BMC went away".into());
            }
            Ok([400.0, 420.0, 410.0]
                .iter()
                .enumerate()
                .map(|(i, w)| Sample {
                    t_s: i as f64 * 0.5,
                    watts: *w,
                })
                .collect())
        })
    }

    fn caveat(&self) -> Option<String> {
        Some("fake readings".into())
    }
}

/// Every message, in order.
#[derive(Default)]
struct Recorded(Mutex<Vec<String>>);

impl run::Progress for Recorded {
    fn message(&self, text: &str) {
        self.0.lock().unwrap().push(text.to_owned());
    }
}

fn settings(dir: &TempDir, tests: &str) -> StorageSettings {
    StorageSettings {
        target: dir.0.join("target.fio"),
        size: Some(8 << 20),
        tests: tests.into(),
        runtime: Duration::from_secs(1),
        ramp: Duration::ZERO,
        workdir: dir.0.join("raw"),
        ..StorageSettings::default()
    }
}

#[tokio::test]
async fn a_storage_run_creates_its_target_repeats_each_test_and_attaches_power() {
    if !rftune_tests::fio_available() {
        return;
    }
    let dir = TempDir::new("run-storage");
    let local = Local::default();
    let mut s = settings(&dir, "randread,randwrite");
    s.common = Common {
        label: Some("base".into()),
        repeat: 2,
        ..Common::default()
    };
    let run = StorageRun::new(s, &local).await.unwrap();
    assert_eq!(run.kind(), TargetKind::NewFile);
    let progress = Recorded::default();
    let r = run::storage(&run, None, &FakePower { fail: false }, &progress)
        .await
        .unwrap();
    assert_eq!(
        (r.schema.as_str(), r.kind.as_str(), r.valid),
        ("rftune.bench/v1", "storage", true)
    );
    assert_eq!(r.label.as_deref(), Some("base"));
    assert_eq!(r.power_caveat.as_deref(), Some("fake readings"));
    let s = r.storage.as_ref().unwrap();
    assert_eq!((s.target_kind.as_str(), s.size.as_deref()), ("file", Some("8 MiB")));
    assert!(s.fio_version.as_deref().unwrap().starts_with("fio-"));
    for t in &s.tests {
        assert_eq!(t.runs.len(), 2, "{}", t.name);
        assert!(t.iops > 0.0 && t.power_w.is_some_and(|w| w > 400.0), "{t:?}");
        assert_eq!(t.runs[0].power_trace.len(), 3);
    }
    assert_eq!(
        progress.0.lock().unwrap().as_slice(),
        [
            "randread (1/2), run 1/2",
            "randread (1/2), run 2/2",
            "randwrite (2/2), run 1/2",
            "randwrite (2/2), run 2/2"
        ]
    );
    assert!(
        dir.0.join("raw/randwrite-2.json").exists(),
        "repeats keep their own output"
    );
    assert!(std::fs::read(dir.0.join("target.fio")).unwrap().starts_with(MAGIC));
    // The file is rftune's now: the next run reuses it.
    let again = StorageRun::new(settings(&dir, "randread"), &local).await.unwrap();
    assert!(matches!(again.kind(), TargetKind::OwnFile { .. }));
}

#[tokio::test]
async fn a_failing_power_source_fails_the_run_and_removes_the_file_it_created_unless_optional() {
    if !rftune_tests::fio_available() {
        return;
    }
    let dir = TempDir::new("run-power");
    let local = Local::default();
    let run = StorageRun::new(settings(&dir, "randread"), &local).await.unwrap();
    let e = run::storage(&run, None, &FakePower { fail: true }, &NoProgress)
        .await
        .unwrap_err();
    let chain = format!("{e}: {}", std::error::Error::source(&e).unwrap());
    assert!(
        chain.contains("the file this run created was removed") && chain.contains("the BMC went away"),
        "{chain}"
    );
    assert!(!dir.0.join("target.fio").exists());
    let mut s = settings(&dir, "randread");
    s.common.power_optional = true;
    let run = StorageRun::new(s, &local).await.unwrap();
    let r = run::storage(&run, None, &FakePower { fail: true }, &NoProgress)
        .await
        .unwrap();
    assert_eq!(r.problems, ["no power readings: the BMC went away"]);
    assert!(r.valid && r.storage.unwrap().tests[0].power_w.is_none());
}

/// A host without rftune, reached through a shell: host-bench's POSIX implementations, run here;
/// the commands it ran are kept.
#[derive(Default)]
struct Shell {
    local: Local,
    ran: Mutex<Vec<Vec<String>>>,
}

impl Exec for Shell {
    fn describe(&self) -> String {
        "a shell".into()
    }

    fn run<'a>(&'a self, argv: &'a [String], timeout: Option<Duration>) -> BoxFuture<'a, host_bench::Result<Output>> {
        self.ran.lock().unwrap().push(argv.to_vec());
        self.local.run(argv, timeout)
    }
}

#[tokio::test]
async fn over_a_shell_only_files_rftune_created_are_benchmarked() {
    if !rftune_tests::fio_available() {
        return;
    }
    let dir = TempDir::new("run-shell");
    let shell = Shell::default();
    let user = dir.0.join("user.db");
    std::fs::write(&user, b"precious").unwrap();
    for (target, refusal) in [
        (user.clone(), "not created by rftune"),
        ("/dev/null".into(), "fio runs only on files"),
    ] {
        let s = StorageSettings {
            target,
            ..settings(&dir, "randwrite")
        };
        let e = StorageRun::new(s, &shell).await.unwrap_err().to_string();
        assert!(e.contains(refusal), "{e}");
    }
    let mut consent = settings(&dir, "randwrite");
    consent.consent.destroy_data = true;
    assert!(
        StorageRun::new(consent, &shell).await.is_err(),
        "no raw devices over a shell"
    );
    assert_eq!(std::fs::read(&user).unwrap(), b"precious");
    // Two seconds: fio logs IOPS once a second, and a one-second run may end before its first.
    let mut two_seconds = StorageSettings {
        runtime: Duration::from_secs(2),
        ..settings(&dir, "randwrite")
    };
    two_seconds.common.repeat = 2;
    let run = StorageRun::new(two_seconds, &shell).await.unwrap();
    shell.ran.lock().unwrap().clear();
    let r = run::storage(&run, None, &run::NoPower, &NoProgress).await.unwrap();
    assert!(r.valid, "{:?}", r.problems);
    let ran = shell.ran.lock().unwrap().clone();
    assert_eq!(ran.iter().filter(|a| a[0] == "fio").count(), 2, "{ran:?}");
    assert_eq!(
        ran.iter().filter(|a| a[0] == "mkdir").count(),
        1,
        "the work directory is created once per run, not per fio run: {ran:?}"
    );
    assert!(
        !r.storage.unwrap().tests[0].runs[0].iops_trace.is_empty(),
        "the IOPS logs came back"
    );
    assert!(r.host.kernel.is_some() && r.power_caveat.is_none());
    assert!(std::fs::read(dir.0.join("target.fio")).unwrap().starts_with(MAGIC));
}

#[tokio::test]
async fn a_memory_run_repeats_stream_with_one_power_trace_across_the_runs() {
    let run = MemoryRun::new(MemorySettings {
        threads: Some(1),
        array_mib: Some(2.0),
        iterations: 2,
        peak: Some(host_bench::stream::Peak {
            gbs: 1.0e6,
            source: "test".into(),
            sockets: Vec::new(),
        }),
        common: Common {
            repeat: 2,
            ..Common::default()
        },
        ..MemorySettings::default()
    })
    .unwrap();
    let r = run::memory(&run, None, &FakePower { fail: false }, &NoProgress)
        .await
        .unwrap();
    assert!(r.valid, "{:?}", r.problems);
    let m = r.memory.unwrap();
    assert_eq!(m.runs.len(), 2);
    let t: Vec<f64> = m.power_trace.iter().map(|s| s.t_s).collect();
    assert_eq!(
        t,
        [0.0, 0.5, 1.0, 1.0, 1.5, 2.0],
        "the second run's readings follow the first's"
    );
    assert!(m.power_w.is_some() && m.triad_gbs_per_watt.is_some() && m.peak.unwrap().source == "test");
    let e = MemoryRun::new(MemorySettings {
        threads: Some(100_000),
        ..MemorySettings::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("usable logical CPUs"), "{e}");
}
