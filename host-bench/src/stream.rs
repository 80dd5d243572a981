//! STREAM (McCalpin) in Rust: Copy `c=a`, Scale `b=q·c`, Add `c=a+b`, Triad `a=b+q·c`.
//!
//! One persistent thread per core, pinned. The arrays are split statically: thread *t* owns
//! elements `[t·n/T, (t+1)·n/T)` of a, b and c, allocates and first-touches them itself (so on
//! a NUMA host its pages land on its node) and runs every kernel on the same range. A barrier
//! starts and ends each kernel; the coordinator times from releasing the start barrier to the
//! end barrier, as `stream.c` times its parallel loops. Rates use the best time of all
//! iterations but the first, with 16/16/24/24 bytes per element and 1 MB = 10⁶ B. Results are
//! validated like `checkSTREAMresults`: the expected final values come from replaying the
//! scalar recurrence, and the average absolute error of each array relative to its expected
//! value must stay within 1e-13.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// STREAM's scalar.
pub const SCALAR: f64 = 3.0;
/// Relative error allowed for f64 arrays (stream.c's epsilon).
pub const EPSILON: f64 = 1e-13;
/// Kernel names in execution order.
pub const KERNELS: [&str; 4] = ["Copy", "Scale", "Add", "Triad"];
/// Bytes moved per element by each kernel.
pub const BYTES_PER_ELEMENT: [usize; 4] = [16, 16, 24, 24];

/// How to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Elements per array (all threads together).
    pub elements: usize,
    /// One worker per entry, pinned to that logical CPU.
    pub cpus: Vec<usize>,
    /// Timed passes over the four kernels; the first is not counted (STREAM's NTIMES).
    pub iterations: usize,
    /// Use non-temporal stores (the labelled "nt-stores" variant).
    pub nt_stores: bool,
}

/// The four kernels, replaceable so tests can prove that validation catches a wrong one.
#[derive(Debug, Clone, Copy)]
pub struct Kernels {
    /// The variant's label in results: `standard` or `nt-stores`.
    pub name: &'static str,
    /// `c = a`.
    pub copy: fn(c: &mut [f64], a: &[f64]),
    /// `b = q·c`.
    pub scale: fn(b: &mut [f64], c: &[f64], q: f64),
    /// `c = a + b`.
    pub add: fn(c: &mut [f64], a: &[f64], b: &[f64]),
    /// `a = b + q·c`.
    pub triad: fn(a: &mut [f64], b: &[f64], c: &[f64], q: f64),
}

fn copy(c: &mut [f64], a: &[f64]) {
    // A plain `*c = *a` loop becomes a call to memcpy, and glibc's memcpy switches to
    // non-temporal stores for large blocks: the standard variant would silently be the
    // nt-stores one. Adding +0.0 (which the compiler may not fold: it turns −0.0 into +0.0, and
    // STREAM's arrays hold only positive values) keeps an ordinary vectorised load/store loop
    // with the same 16 bytes of traffic per element.
    for (c, a) in c.iter_mut().zip(a) {
        *c = *a + 0.0;
    }
}

fn scale(b: &mut [f64], c: &[f64], q: f64) {
    for (b, c) in b.iter_mut().zip(c) {
        *b = q * *c;
    }
}

fn add(c: &mut [f64], a: &[f64], b: &[f64]) {
    for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
        *c = *a + *b;
    }
}

fn triad(a: &mut [f64], b: &[f64], c: &[f64], q: f64) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = *b + q * *c;
    }
}

impl Kernels {
    /// Plain loops (the compiler vectorises them; stores are ordinary).
    pub const STANDARD: Self = Self {
        name: "standard",
        copy,
        scale,
        add,
        triad,
    };
    /// Non-temporal stores (x86_64 `movntpd`), bypassing the caches.
    pub const NT_STORES: Self = Self {
        name: "nt-stores",
        copy: |c, a| crate::sys::nt_axpy(c, a, 1.0, a, false),
        scale: |b, c, q| crate::sys::nt_axpy(b, c, q, c, false),
        add: |c, a, b| crate::sys::nt_axpy(c, a, 1.0, b, true),
        triad: |a, b, c, q| crate::sys::nt_axpy(a, b, q, c, true),
    };
}

/// One kernel's timings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelResult {
    /// `Copy`, `Scale`, `Add` or `Triad`.
    pub name: String,
    /// Best rate, GB/s (10⁹ B/s).
    pub best_gbs: f64,
    /// Mean time over the counted iterations, s.
    pub avg_s: f64,
    /// Best time, s.
    pub min_s: f64,
    /// Worst time, s.
    pub max_s: f64,
}

/// The outcome of checking the final arrays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    /// All three arrays within [`EPSILON`].
    pub passed: bool,
    /// Average absolute error of a, b, c relative to the expected value.
    pub relative_errors: [f64; 3],
}

/// A STREAM run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamResult {
    /// `standard` or `nt-stores`.
    pub variant: String,
    /// Elements per array.
    pub elements: usize,
    /// Bytes per array.
    pub array_bytes: u64,
    /// Worker threads.
    pub threads: usize,
    /// The CPU each worker was pinned to.
    pub cpus: Vec<usize>,
    /// Passes (the first is not counted).
    pub iterations: usize,
    /// Copy, Scale, Add, Triad.
    pub kernels: Vec<KernelResult>,
    /// Result check.
    pub validation: Validation,
}

impl StreamResult {
    /// Best rate of a kernel by name.
    pub fn gbs(&self, kernel: &str) -> Option<f64> {
        self.kernels.iter().find(|k| k.name == kernel).map(|k| k.best_gbs)
    }
}

/// Expected final (a, b, c) after `iterations` passes, replaying the scalar recurrence.
pub fn expected(iterations: usize) -> [f64; 3] {
    let (mut a, mut b, mut c) = (1.0f64, 2.0f64, 0.0f64);
    a *= 2.0;
    for _ in 0..iterations {
        c = a;
        b = SCALAR * c;
        c = a + b;
        a = b + SCALAR * c;
    }
    [a, b, c]
}

/// Runs STREAM with the standard or non-temporal kernels as configured.
pub fn run(config: &Config) -> Result<StreamResult> {
    if config.nt_stores && !crate::sys::HAS_NT_STORES {
        return Err(Error::BadInput("--nt-stores needs an x86_64 CPU".into()));
    }
    let kernels = if config.nt_stores {
        Kernels::NT_STORES
    } else {
        Kernels::STANDARD
    };
    run_with(config, kernels)
}

/// Runs STREAM with the given kernels.
pub fn run_with(config: &Config, kernels: Kernels) -> Result<StreamResult> {
    let threads = config.cpus.len();
    if threads == 0 || config.elements < threads || config.iterations < 2 {
        return Err(Error::BadInput(
            "STREAM needs at least one thread, one element per thread and two iterations".into(),
        ));
    }
    let n = config.elements;
    let barrier = Arc::new(Barrier::new(threads + 1));
    let passes = config.iterations;
    let variant = kernels.name;
    let mut handles = Vec::with_capacity(threads);
    for (t, &cpu) in config.cpus.iter().enumerate() {
        let (lo, hi) = (t * n / threads, (t + 1) * n / threads);
        let barrier = barrier.clone();
        handles.push(
            std::thread::Builder::new()
                .name(format!("stream-{t}"))
                .spawn(move || worker(cpu, hi - lo, passes, kernels, &barrier))
                .map_err(crate::io_err("starting a STREAM thread"))?,
        );
    }
    // Workers report pinning problems after the first barrier; times[k][i] per kernel.
    barrier.wait();
    let mut times: Vec<Vec<f64>> = (0..4).map(|_| Vec::with_capacity(passes)).collect();
    for _ in 0..passes {
        for kernel_times in &mut times {
            let start = Instant::now();
            barrier.wait();
            barrier.wait();
            kernel_times.push(start.elapsed().as_secs_f64());
        }
    }
    let mut sums = [0.0f64; 3];
    for h in handles {
        let part = h
            .join()
            .map_err(|_| Error::BadInput("a STREAM thread panicked".into()))?
            .map_err(crate::io_err("pinning a STREAM thread"))?;
        for (s, p) in sums.iter_mut().zip(part) {
            *s += p;
        }
    }
    let want = expected(passes);
    let relative_errors = [0, 1, 2].map(|i| (sums[i] / n as f64 / want[i]).abs());
    let kernels = KERNELS
        .iter()
        .zip(BYTES_PER_ELEMENT)
        .zip(&times)
        .map(|((name, bytes), t)| {
            let counted = &t[1..];
            let min_s = counted.iter().copied().fold(f64::INFINITY, f64::min);
            KernelResult {
                name: (*name).to_owned(),
                best_gbs: (bytes * n) as f64 / min_s / 1e9,
                avg_s: counted.iter().sum::<f64>() / counted.len() as f64,
                min_s,
                max_s: counted.iter().copied().fold(0.0, f64::max),
            }
        })
        .collect();
    Ok(StreamResult {
        variant: variant.to_owned(),
        elements: n,
        array_bytes: (n * 8) as u64,
        threads,
        cpus: config.cpus.clone(),
        iterations: passes,
        kernels,
        validation: Validation {
            passed: relative_errors.iter().all(|e| *e <= EPSILON),
            relative_errors,
        },
    })
}

/// Body of one worker: pin, first-touch its range, run the passes between barriers, and return
/// the summed absolute errors of its a, b, c against the expected values.
fn worker(cpu: usize, len: usize, passes: usize, k: Kernels, barrier: &Barrier) -> std::io::Result<[f64; 3]> {
    let pinned = crate::sys::pin_current_thread(cpu);
    // Allocated and written here, so the pages are this thread's first touch.
    let mut a = vec![1.0f64; len];
    let mut b = vec![2.0f64; len];
    let mut c = vec![0.0f64; len];
    for x in &mut a {
        *x *= 2.0;
    }
    barrier.wait();
    for _ in 0..passes {
        barrier.wait();
        (k.copy)(&mut c, &a);
        barrier.wait();
        barrier.wait();
        (k.scale)(&mut b, &c, SCALAR);
        barrier.wait();
        barrier.wait();
        (k.add)(&mut c, &a, &b);
        barrier.wait();
        barrier.wait();
        (k.triad)(&mut a, &b, &c, SCALAR);
        barrier.wait();
    }
    pinned?;
    let want = expected(passes);
    let err = |v: &[f64], w: f64| v.iter().map(|x| (x - w).abs()).sum::<f64>();
    Ok([err(&a, want[0]), err(&b, want[1]), err(&c, want[2])])
}

/// One DIMM as the BMC's inventory describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dimm {
    /// e.g. `DIMM.Socket.A1`.
    pub id: String,
    /// `MemoryLocation.Socket`.
    pub socket: Option<u32>,
    /// `MemoryLocation.Channel`.
    pub channel: Option<u32>,
    /// Operating speed, MT/s.
    pub speed_mts: Option<u32>,
    /// Installed (capacity > 0 and not `Absent`).
    pub populated: bool,
}

/// Theoretical bandwidth of one socket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SocketPeak {
    /// Socket number.
    pub socket: u32,
    /// Populated channels.
    pub channels: u32,
    /// The slowest populated DIMM's speed (a channel runs at its slowest DIMM), MT/s.
    pub mts: u32,
    /// channels × MT/s × 8 B, GB/s.
    pub gbs: f64,
}

/// Theoretical peak memory bandwidth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// Sum over sockets, GB/s.
    pub gbs: f64,
    /// Where it came from: `--peak-gbs` or `dimm-inventory`.
    pub source: String,
    /// Per socket, when derived from DIMMs.
    pub sockets: Vec<SocketPeak>,
}

/// Socket and channel of a DIMM: `MemoryLocation.Socket`/`Channel` when given; otherwise from
/// Dell's id `DIMM.Socket.<letter><n>`, where the letter is the socket (A = 1) and each slot
/// number is taken as its own channel (exact for one DIMM per channel, an upper bound for two).
fn location(d: &Dimm) -> Option<(u32, u32)> {
    let tail = d.id.rsplit('.').next().unwrap_or_default();
    let letter = tail.chars().next().filter(char::is_ascii_alphabetic);
    let from_id_socket = letter.map(|l| u32::from(l.to_ascii_uppercase()) - u32::from('A') + 1);
    let from_id_slot = tail.get(1..).and_then(|n| n.parse::<u32>().ok());
    Some((d.socket.or(from_id_socket)?, d.channel.or(from_id_slot)?))
}

/// Peak bandwidth from a DIMM inventory: per socket, distinct populated (socket, channel)
/// pairs × the socket's slowest MT/s × 8 B; `None` when no DIMM gives a location and speed.
pub fn peak_from_dimms(dimms: &[Dimm]) -> Option<Peak> {
    let mut sockets: std::collections::BTreeMap<u32, (std::collections::BTreeSet<u32>, u32)> = Default::default();
    for d in dimms.iter().filter(|d| d.populated) {
        let (Some((socket, channel)), Some(speed)) = (location(d), d.speed_mts) else {
            continue;
        };
        let e = sockets.entry(socket).or_insert_with(|| (Default::default(), u32::MAX));
        e.0.insert(channel);
        e.1 = e.1.min(speed);
    }
    let sockets: Vec<SocketPeak> = sockets
        .into_iter()
        .map(|(socket, (channels, mts))| SocketPeak {
            socket,
            channels: channels.len() as u32,
            mts,
            gbs: channels.len() as f64 * f64::from(mts) * 8.0 / 1000.0,
        })
        .collect();
    (!sockets.is_empty()).then(|| Peak {
        gbs: sockets.iter().map(|s| s.gbs).sum(),
        source: "dimm-inventory".into(),
        sockets,
    })
}

/// Triad above this fraction of peak means caches, not memory, were measured.
pub const MAX_PLAUSIBLE_FRACTION: f64 = 0.95;

/// Elements per array for `llc_bytes` of last-level cache: each array at least 4× the total.
pub fn elements_for_llc(llc_bytes: u64) -> usize {
    (4 * llc_bytes).div_ceil(8) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(elements: usize) -> Config {
        Config {
            elements,
            cpus: crate::host::online_cpus().into_iter().take(2).collect(),
            iterations: 4,
            nt_stores: false,
        }
    }

    #[test]
    fn stream_validates_and_reports_four_kernels() {
        let r = run(&config(100_003)).unwrap();
        assert!(r.validation.passed, "{:?}", r.validation);
        assert_eq!(r.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), KERNELS);
        assert!(
            r.kernels
                .iter()
                .all(|k| k.best_gbs > 0.0 && k.min_s <= k.avg_s && k.avg_s <= k.max_s)
        );
        assert_eq!(r.variant, "standard");
        if crate::sys::HAS_NT_STORES {
            let nt = run(&Config {
                nt_stores: true,
                ..config(100_003)
            })
            .unwrap();
            assert!(nt.validation.passed && nt.variant == "nt-stores", "{nt:?}");
        }
    }

    #[test]
    fn validation_catches_a_wrong_kernel() {
        fn sloppy_triad(a: &mut [f64], b: &[f64], c: &[f64], q: f64) {
            for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
                *a = *b + q * *c * (1.0 + 1e-12);
            }
        }
        fn scale_skips_last(b: &mut [f64], c: &[f64], q: f64) {
            let n = b.len() - 1;
            for (b, c) in b[..n].iter_mut().zip(c) {
                *b = q * *c;
            }
        }
        for wrong in [
            Kernels {
                triad: sloppy_triad,
                ..Kernels::STANDARD
            },
            Kernels {
                scale: scale_skips_last,
                ..Kernels::STANDARD
            },
        ] {
            let r = run_with(&config(10_000), wrong).unwrap();
            assert!(!r.validation.passed, "{:?}", r.validation);
        }
    }

    #[test]
    fn expected_values_follow_stream_c() {
        // One pass by hand: a=2, c=2, b=6, c=8, a=6+24=30.
        assert_eq!(expected(1), [30.0, 6.0, 8.0]);
    }

    #[test]
    fn peak_counts_channels_per_socket_at_the_slowest_speed() {
        let dimm = |id: &str, socket, channel, speed| Dimm {
            id: id.into(),
            socket,
            channel,
            speed_mts: Some(speed),
            populated: true,
        };
        // R7625-like: 12 channels × 4800 MT/s × 8 B = 460.8 GB/s per socket.
        let mut dimms: Vec<Dimm> = (0..12).map(|ch| dimm("x", Some(1), Some(ch), 4800)).collect();
        dimms.extend((1..=12).map(|n| dimm(&format!("DIMM.Socket.B{n}"), None, None, 4400)));
        dimms.push(Dimm {
            populated: false,
            ..dimm("DIMM.Socket.B13", None, None, 4800)
        });
        let p = peak_from_dimms(&dimms).unwrap();
        assert_eq!(p.sockets.len(), 2);
        assert_eq!((p.sockets[0].channels, p.sockets[0].mts), (12, 4800));
        assert!((p.sockets[0].gbs - 460.8).abs() < 1e-9);
        assert!((p.sockets[1].gbs - 12.0 * 4400.0 * 8.0 / 1000.0).abs() < 1e-9);
        assert!(peak_from_dimms(&[]).is_none());
        assert_eq!(elements_for_llc(32 << 20), 16 << 20);
    }
}
