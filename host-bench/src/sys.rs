//! The crate's only unsafe code, audited here: pinning threads to CPUs (`sched_getaffinity` /
//! `sched_setaffinity` through `libc`, which std does not wrap), the non-temporal-store
//! STREAM kernels (`_mm_stream_pd`, which has no safe form), a filesystem's free space
//! (`statvfs`) and interrupting a child process (`kill` with SIGINT; std only sends SIGKILL).
//! Everything else is safe Rust.
//!
//! Audit notes: the `cpu_set_t` is zero-initialised plain data and only touched through libc's
//! CPU_* helpers with indices checked against `CPU_SETSIZE`; the stream kernels take slices,
//! check lengths before any pointer arithmetic, store only at 16-byte-aligned addresses inside
//! the destination slice (scalar head and tail handle the rest), and end with `sfence` so the
//! stores are visible before the caller's barrier. `statvfs` gets a NUL-terminated copy of the
//! path and a zeroed plain-data struct it fills. `kill` touches no memory; it is only sent to a
//! child that has not been reaped, so the pid cannot have been reused.
#![allow(unsafe_code)]

use std::io;

/// CPUs this process may run on.
pub(crate) fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain old data; zeroed is a valid empty set. sched_getaffinity
    // writes at most size_of::<cpu_set_t>() bytes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// Pins the calling thread to `cpu`.
pub(crate) fn pin_current_thread(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("CPU {cpu} out of range"),
        ));
    }
    // SAFETY: as above; `cpu` is below CPU_SETSIZE; pid 0 means the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Bytes available to unprivileged users, and the total size, of the filesystem holding `path`.
#[allow(
    clippy::useless_conversion,
    reason = "statvfs's field types are u64 here but u32 on some targets"
)]
pub(crate) fn filesystem_space(path: &std::path::Path) -> io::Result<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path contains a NUL byte"))?;
    // SAFETY: statvfs is plain old data, so zeroed is a valid value; `c` is NUL-terminated and
    // outlives the call; statvfs writes only into `st`.
    let st = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return Err(io::Error::last_os_error());
        }
        st
    };
    let frsize = u64::from(st.f_frsize);
    Ok((
        u64::from(st.f_bavail).saturating_mul(frsize),
        u64::from(st.f_blocks).saturating_mul(frsize),
    ))
}

/// Sends SIGINT to `child`, which must not have been waited for yet (so its pid is still its
/// own: an exited but unreaped child keeps it as a zombie).
pub(crate) fn interrupt(child: &std::process::Child) -> io::Result<()> {
    let pid = libc::pid_t::try_from(child.id())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pid out of range"))?;
    // SAFETY: kill reads and writes no memory of ours; the pid is an unreaped child's.
    if unsafe { libc::kill(pid, libc::SIGINT) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes `command`'s child start with SIGINT at its default action, so [`interrupt`] stops it
/// gracefully (fio writes its results on SIGINT). A process started in the background by a
/// non-interactive shell, or under `nohup`, ignores SIGINT, and its children inherit that.
pub(crate) fn default_sigint(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: runs in the forked child before exec and only calls signal(2), which is
    // async-signal-safe; it touches no memory of ours.
    unsafe {
        command.pre_exec(|| {
            if libc::signal(libc::SIGINT, libc::SIG_DFL) == libc::SIG_ERR {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Whether the non-temporal kernels exist on this architecture.
pub(crate) const HAS_NT_STORES: bool = cfg!(target_arch = "x86_64");

/// `dst[i] = b[i] + q * c[i]` with non-temporal stores (`q == 0` with `c == b` gives copy,
/// etc.); scalar fallback elsewhere. All three slices must have the same length.
pub(crate) fn nt_axpy(dst: &mut [f64], b: &[f64], q: f64, c: &[f64], add_b: bool) {
    assert!(
        dst.len() == b.len() && dst.len() == c.len(),
        "kernel slices differ in length"
    );
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_add_pd, _mm_loadu_pd, _mm_mul_pd, _mm_set1_pd, _mm_sfence, _mm_stream_pd};
        let n = dst.len();
        // Elements before the first 16-byte-aligned slot of dst.
        let head = (dst.as_ptr().align_offset(16)).min(n);
        for i in 0..head {
            dst[i] = if add_b { b[i] + q * c[i] } else { q * c[i] };
        }
        let pairs = (n - head) / 2;
        // SAFETY: SSE2 is part of the x86_64 baseline. For k < pairs, indices head+2k and
        // head+2k+1 are < n, so every load reads inside b and c and every store writes inside
        // dst; dst.as_ptr().add(head) is 16-byte aligned by construction, as _mm_stream_pd
        // requires, and stays aligned in steps of two f64.
        unsafe {
            let vq = _mm_set1_pd(q);
            let d = dst.as_mut_ptr().add(head);
            let pb = b.as_ptr().add(head);
            let pc = c.as_ptr().add(head);
            for k in 0..pairs {
                let prod = _mm_mul_pd(vq, _mm_loadu_pd(pc.add(2 * k)));
                let v = if add_b {
                    _mm_add_pd(_mm_loadu_pd(pb.add(2 * k)), prod)
                } else {
                    prod
                };
                _mm_stream_pd(d.add(2 * k), v);
            }
            _mm_sfence();
        }
        for i in head + 2 * pairs..n {
            dst[i] = if add_b { b[i] + q * c[i] } else { q * c[i] };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for i in 0..dst.len() {
        dst[i] = if add_b { b[i] + q * c[i] } else { q * c[i] };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nt_kernel_matches_scalar_at_every_alignment() {
        for offset in 0..3 {
            let b: Vec<f64> = (0..37).map(f64::from).collect();
            let c: Vec<f64> = (0..37).map(|i| f64::from(i) * 0.5).collect();
            let mut dst = vec![0.0; 40];
            let d = &mut dst[offset..offset + 37];
            nt_axpy(d, &b, 3.0, &c, true);
            for i in 0..37 {
                assert_eq!(d[i], b[i] + 3.0 * c[i]);
            }
            nt_axpy(d, &b, 3.0, &c, false);
            assert!((0..37).all(|i| d[i] == 3.0 * c[i]));
        }
    }

    #[test]
    fn the_temp_dirs_filesystem_has_a_size_and_some_room() {
        let (available, total) = filesystem_space(&std::env::temp_dir()).unwrap();
        assert!(total > 0 && available <= total, "{available} of {total}");
        assert!(filesystem_space(std::path::Path::new("/nonexistent/x")).is_err());
    }

    #[test]
    fn an_interrupted_child_ends_on_sigint() {
        // Also when this test runs with SIGINT ignored (started in the background by a script).
        let mut sleep = std::process::Command::new("sleep");
        sleep.arg("30");
        default_sigint(&mut sleep);
        let mut child = sleep.spawn().unwrap();
        interrupt(&child).unwrap();
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGINT));
    }

    #[test]
    fn this_thread_can_be_pinned_to_an_allowed_cpu() {
        let cpus = allowed_cpus().unwrap();
        assert!(!cpus.is_empty());
        let me = std::thread::spawn(move || pin_current_thread(cpus[0]));
        me.join().unwrap().unwrap();
    }
}
