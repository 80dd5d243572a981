//! Memory per host in flight of a fleet drift check, counted by this test binary's allocator.
//! The engine's fleet diff (connect over pinned TLS, log in, read, judge, log out) runs over
//! emulated iDRACs that answer each request after a delay, so all hosts of a run are in flight
//! at once. Peak memory at two concurrencies, on a warm registry cache, tells what one more host
//! in flight costs: the figure that multiplied by `--concurrency` (512 by default) is most of
//! a fleet run's memory (`benches/fleet_diff.sh` measures the whole of it).
//!
//! The emulator runs in this process too, on a runtime of its own: only the client's threads
//! are counted.
#![allow(clippy::unwrap_used)]

use rftune_engine::assess::{Assess, LoadedProfile};
use rftune_engine::connect::{Bmc, ConnectConfig};
use rftune_engine::fleet::{self, Limits};
use rftune_engine::observe::{Observer, Silent};
use rftune_engine::{Access, Assessment, BmcEntry, Operation, RegistryCache, Result, StateDirs};
use rftune_tests::TempDir;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::time::Duration;

/// What one more host in flight may cost, in bytes. Measured at 97–104 KiB in a debug build
/// on a quiet machine (the lower of the larger fleet's runs; single runs gave 92–129 KiB: the
/// hosts run in lockstep and receive their BIOS values in the same millisecond, so the peak
/// varies with how many still wait for a thread to decode them), and 86–137 KiB while other
/// builds loaded both cores, once each host's result is handed over before its logout, its
/// BIOS values are the last read, and neither rustls' session cache nor hyper's read buffer is
/// larger than one host needs; 160–165 KiB before that, which this bound still refuses. A
/// release `rftune diff` of 1,000 or 10,000 hosts, 512 in flight, then peaks at 92–105 MiB RSS
/// (`benches/fleet_diff.sh`), 184–205 MiB before.
const MAX_BYTES_PER_HOST: isize = 150 * 1024;

/// Hosts in flight in the smaller and the larger run.
const FEW: usize = 8;
const MANY: usize = 40;

/// System's allocator, counting the bytes live on the threads marked [`COUNTED`]: the client's
/// runtime and the test's own thread while it drives that runtime. The emulator's threads are
/// not marked. Nothing allocated on one side is freed on the other: they share only sockets.
struct Counting;

thread_local! {
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

/// Bytes allocated and not yet freed on counted threads, and the most there were since the
/// last [`start_peak`].
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn counted() -> bool {
    // Not during the thread's teardown, when its locals are gone.
    COUNTED.try_with(Cell::get).unwrap_or(false)
}

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes as isize, Ordering::Relaxed) + bytes as isize;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

fn shrank(bytes: usize) {
    LIVE.fetch_sub(bytes as isize, Ordering::Relaxed);
}

/// Starts a new peak from what is live now, and returns that.
fn start_peak() -> isize {
    let live = LIVE.load(Ordering::Relaxed);
    PEAK.store(live, Ordering::Relaxed);
    live
}

// The only unsafe code: a global allocator is an unsafe trait, and each method hands its
// arguments to System's unchanged.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `layout` is System's.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() && counted() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() && counted() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from System with `layout` (every allocation here goes there).
        unsafe { System.dealloc(ptr, layout) };
        if counted() {
            shrank(layout.size());
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, and the caller's contract for `new_size` is System's.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() && counted() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The fleet diff's work on each host, counting the hosts in it at once.
struct InFlight {
    assess: Assess,
    now: AtomicUsize,
    most: AtomicUsize,
}

impl Operation for InFlight {
    type Output = Assessment;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<Assessment> {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let assessed = self.assess.run(bmc, observer).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        assessed
    }
}

/// One `diff` over `hosts`, all at once, as a run of `rftune diff -o jsonl` makes it, each
/// host's result dropped as it comes; `cache` holds the registry already, as it does for a
/// run's hosts after the first. Returns the peak bytes above those live before, and the most
/// hosts that were in flight.
fn diff_peak(
    client: &tokio::runtime::Runtime,
    access: &Access,
    profile: &Arc<LoadedProfile>,
    cache: &Arc<RegistryCache>,
    hosts: &[BmcEntry],
) -> (isize, usize) {
    COUNTED.set(true);
    // What the previous run left winding down (its connections' tasks) is gone first, so
    // nothing freed during this run is counted against it.
    client.block_on(async {
        let mut last = LIVE.load(Ordering::Relaxed);
        for _ in 0..40 {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let now = LIVE.load(Ordering::Relaxed);
            if now == last {
                break;
            }
            last = now;
        }
    });
    let before = start_peak();
    let most = client.block_on(async {
        let op = Arc::new(InFlight {
            assess: Assess {
                profile: profile.clone(),
                cache: cache.clone(),
                strict: false,
            },
            now: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
        });
        let limits = Limits {
            concurrency: hosts.len(),
            ..Limits::default()
        };
        access
            .fleet(hosts, &limits, None, op.clone(), |_, host| {
                let assessment = host.result.unwrap();
                assert!(
                    !assessment.diff.is_clean(),
                    "the emulator's defaults drift from `performance`"
                );
            })
            .await;
        op.most.load(Ordering::SeqCst)
    });
    let peak = PEAK.load(Ordering::Relaxed) - before;
    COUNTED.set(false);
    (peak, most)
}

#[test]
fn each_host_in_flight_of_a_fleet_diff_costs_under_150_kib() {
    let emulator = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let sim = emulator
        .block_on(idrac_sim::Fleet::start(idrac_sim::SimConfig {
            hosts: MANY,
            // Each request waits as long as on a slow network: every host of a run is in
            // flight before the first one is done (six requests in turn each).
            latency: Some(idrac_sim::Latency {
                min: Duration::from_millis(100),
                max: Duration::from_millis(100),
            }),
            ..idrac_sim::SimConfig::default()
        }))
        .unwrap();
    let scratch = TempDir::new();
    let inventory = scratch.path().join("fleet.toml");
    std::fs::write(&inventory, sim.inventory_toml()).unwrap();
    let hosts = fleet::read_inventory(&inventory).unwrap();
    let dirs = StateDirs::resolve(Some(&scratch.path().join("state"))).unwrap();
    let mut connect = ConnectConfig::new(redfish_client::Credentials::new("root", "calvin"));
    connect.timeout = Duration::from_secs(30);
    let access = Access::new(connect, dirs.clone(), Arc::new(Silent));
    let profile = Arc::new(LoadedProfile::load("performance").unwrap());

    // Two workers, as `rftune` has on a two-core machine; their threads are counted.
    let client = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .on_thread_start(|| COUNTED.set(true))
        .enable_all()
        .build()
        .unwrap();
    // The first run fills the registry cache (and whatever a process sets up once): the
    // measured runs share what does not grow with the hosts.
    let cache = Arc::new(dirs.registry_cache());
    diff_peak(&client, &access, &profile, &cache, &hosts);
    let (few_bytes, few) = diff_peak(&client, &access, &profile, &cache, &hosts[..FEW]);
    // The larger run's peak depends on how the hosts' simultaneous answers meet the two
    // threads: the lowest of three runs.
    let (many_bytes, many) = std::cmp::min(
        std::cmp::min(
            diff_peak(&client, &access, &profile, &cache, &hosts),
            diff_peak(&client, &access, &profile, &cache, &hosts),
        ),
        diff_peak(&client, &access, &profile, &cache, &hosts),
    );
    assert_eq!(
        (few, many),
        (FEW, MANY),
        "every host of a run was in flight at once (the emulator's delay is meant to make sure)"
    );
    let per_host = (many_bytes - few_bytes) / (MANY - FEW) as isize;
    println!(
        "peak {} KiB with {FEW} hosts in flight, {} KiB with {MANY}: {} KiB per host",
        few_bytes / 1024,
        many_bytes / 1024,
        per_host / 1024
    );
    assert!(
        per_host < MAX_BYTES_PER_HOST,
        "a host in flight costs {} KiB (peak {} KiB with {FEW} hosts, {} KiB with {MANY}); at most {} KiB was measured once each host's result was handed over before its logout",
        per_host / 1024,
        few_bytes / 1024,
        many_bytes / 1024,
        MAX_BYTES_PER_HOST / 1024
    );
}
