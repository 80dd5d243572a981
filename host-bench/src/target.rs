//! What `--target` names and whether the storage benchmark may write there. A pure decision
//! ([`decide`]) over what was found at the path ([`observe`]), so every case has a unit test:
//! a path under `/dev` must be an existing block device (rftune never creates a file in `/dev`),
//! a file's directory must already exist (rftune creates no directories for it), an existing
//! file is written only if rftune created it or the user passed `--overwrite`, and anything
//! that is neither a regular file nor a block device is refused.
//!
//! **How rftune knows a file is its own.** rftune creates a file target itself, exclusively
//! (`O_CREAT|O_EXCL`, so a file that appears meanwhile is never clobbered), and its first
//! [`HEADER_BYTES`] are a header that starts with the line [`MAGIC`] followed by a note for
//! whoever finds the file. fio must never write there, which takes two things: every fio job
//! runs with `--offset=HEADER_BYTES`, and the file is already `HEADER_BYTES + size` long when
//! fio opens it, because rftune lays the data region out itself ([`prepare`]). The second
//! matters as much as the first: fio lays out a file that is shorter than offset + size by
//! unlinking or truncating it and writing it again from byte 0, header included (fio 3.33's
//! `extend_file`). Laying out with written data, not a sparse `set_len`, also keeps reads from
//! measuring holes.
//!
//! A header rather than the alternatives: a sidecar marker can outlive its file and then bless
//! a user's file later put at the same path; an extended attribute is lost whenever the file is
//! recreated and is missing on some filesystems (NFS, older tmpfs); a header travels with the
//! data through renames and copies. It costs 1 MiB per target. A user's file that happened to
//! start with the line `rftune storage benchmark target v1` would be taken for rftune's.

use crate::{Error, Result, Stop};
use std::io::Read;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

/// Bytes at the start of a file target that hold rftune's header; fio's I/O starts after them
/// (`--offset`). 1 MiB keeps the data region aligned for every block size and for O_DIRECT.
pub const HEADER_BYTES: u64 = 1 << 20;

/// The first line of the header: the mark of a file rftune created.
pub const MAGIC: &[u8] = b"rftune storage benchmark target v1\n";

/// The header block: [`MAGIC`], a note for whoever finds the file, zeros up to [`HEADER_BYTES`].
pub fn header(created_at: &str) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.extend_from_slice(
        format!(
            "Created {created_at} by `rftune bench storage` as a scratch file for fio. Everything after\n\
             the first {HEADER_BYTES} bytes is benchmark data that rftune overwrites on every run; this\n\
             header marks the file as rftune's to overwrite. Delete the file when it is no longer needed.\n"
        )
        .as_bytes(),
    );
    h.resize(HEADER_BYTES as usize, 0);
    h
}

/// The directory a missing target would be created in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parent {
    /// An existing directory.
    Directory,
    /// Nothing exists there.
    Missing,
    /// Something that is not a directory.
    NotADirectory,
}

/// What exists at the target path (symbolic links followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Nothing; the file would be created in `parent`.
    Missing {
        /// What its directory is.
        parent: Parent,
    },
    /// A block device.
    BlockDevice,
    /// A regular file.
    RegularFile {
        /// Whether it starts with [`MAGIC`].
        ours: bool,
        /// Bytes allocated to it on disk.
        allocated: u64,
    },
    /// A directory.
    Directory,
    /// Anything else: `character device`, `FIFO`, `socket`.
    Other(&'static str),
}

/// What the benchmark will use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// A raw block device; [`crate::device`] decides whether it may be written.
    Device,
    /// A file that does not exist yet: rftune creates it.
    NewFile,
    /// A file rftune created earlier (it carries the header): reused.
    OwnFile {
        /// Bytes allocated to it on disk.
        allocated: u64,
    },
    /// A file rftune did not create, which `--overwrite` allows it to take over.
    Overwrite {
        /// Bytes allocated to it on disk.
        allocated: u64,
    },
}

/// Whether `path` lies under `/dev`, judged on the path made absolute with `.` and `..`
/// resolved lexically, and on its parent directory with symbolic links resolved (so neither
/// `/tmp/../dev/x` nor a link to `/dev` slips through).
pub fn under_dev(path: &Path) -> bool {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let lexical = normalize(&absolute);
    let resolved_parent = lexical.parent().and_then(|p| std::fs::canonicalize(p).ok());
    lexical.starts_with("/dev") || resolved_parent.is_some_and(|p| p.starts_with("/dev"))
}

/// Whether `path`, with `.` and `..` resolved lexically, lies under `/dev`: [`under_dev`] for a
/// path on another machine, whose links this one cannot resolve.
pub fn lexically_under_dev(path: &Path) -> bool {
    normalize(path).starts_with("/dev")
}

fn normalize(path: &Path) -> PathBuf {
    let mut lexical = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    lexical
}

/// Decides what `path` is to the benchmark, or why it cannot be used. `in_dev` is
/// [`under_dev`]`(path)`; `overwrite` is the user's `--overwrite`.
pub fn decide(path: &Path, in_dev: bool, found: &Found, overwrite: bool) -> Result<TargetKind> {
    let p = path.display();
    let elsewhere = "or give a file path outside /dev, such as /var/tmp/rftune.fio";
    match found {
        Found::BlockDevice => Ok(TargetKind::Device),
        Found::Missing { .. } if in_dev => Err(Error::Refused(format!(
            "--target {p} does not exist: a path under /dev must be an existing block device \
             (rftune never creates files in /dev); check the name with lsblk, {elsewhere}"
        ))),
        Found::RegularFile { .. } | Found::Directory | Found::Other(_) if in_dev => Err(Error::Refused(format!(
            "--target {p} is a {}, not a block device: a path under /dev must be an existing block \
             device; check the name with lsblk, {elsewhere}",
            describe(found)
        ))),
        Found::Missing {
            parent: Parent::Directory,
        } => Ok(TargetKind::NewFile),
        Found::Missing { parent } => {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .display();
            let what = if *parent == Parent::Missing {
                "does not exist"
            } else {
                "is not a directory"
            };
            Err(Error::Refused(format!(
                "--target {p}: the directory {dir} {what}; create it first (rftune does not create \
                 directories for a target) or choose a file in an existing directory"
            )))
        }
        Found::RegularFile { ours: true, allocated } => Ok(TargetKind::OwnFile { allocated: *allocated }),
        Found::RegularFile { ours: false, allocated } if overwrite => {
            Ok(TargetKind::Overwrite { allocated: *allocated })
        }
        Found::RegularFile { ours: false, .. } => Err(Error::Refused(format!(
            "--target {p} already exists and was not created by rftune (it does not start with \
             rftune's header), so benchmarking it would destroy its contents; give a path that does \
             not exist (rftune creates the file), delete the file yourself, or pass --overwrite to \
             destroy its contents"
        ))),
        Found::Directory => Err(Error::Refused(format!(
            "--target {p} is a directory; give a file path inside it, e.g. {}",
            path.join("rftune.fio").display()
        ))),
        Found::Other(kind) => Err(Error::Refused(format!(
            "--target {p} is a {kind}: the storage benchmark writes to a regular file or a block device"
        ))),
    }
}

/// [`decide`] where only files may be benchmarked (a machine without rftune's device checks,
/// [`crate::exec::Exec::files_only`] giving `why`): a new file or one rftune created; never a
/// device, anything else that is not a regular file, or a file rftune did not create.
pub fn decide_files_only(path: &Path, in_dev: bool, found: &Found, why: &str) -> Result<TargetKind> {
    match found {
        Found::RegularFile { ours: false, .. } => Err(Error::Refused(format!(
            "{} already exists and was not created by rftune (it does not start with rftune's \
             header), so benchmarking it would destroy its contents; give a path that does not \
             exist (rftune creates the file), or delete the file yourself",
            path.display()
        ))),
        Found::Missing { .. } | Found::RegularFile { ours: true, .. } if !in_dev => decide(path, in_dev, found, false),
        _ => Err(Error::Refused(format!("{}: {why}", path.display()))),
    }
}

fn describe(found: &Found) -> &'static str {
    match found {
        Found::Missing { .. } => "missing path",
        Found::BlockDevice => "block device",
        Found::RegularFile { .. } => "regular file",
        Found::Directory => "directory",
        Found::Other(kind) => kind,
    }
}

/// Looks at what is at `path` (following symbolic links).
pub fn observe(path: &Path) -> Result<Found> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let parent = match std::fs::metadata(dir) {
                Ok(m) if m.is_dir() => Parent::Directory,
                Ok(_) => Parent::NotADirectory,
                Err(_) => Parent::Missing,
            };
            return Ok(Found::Missing { parent });
        }
        Err(e) => {
            return Err(crate::io_err(format!(
                "reading --target {} (check the path and its permissions)",
                path.display()
            ))(e));
        }
    };
    let t = meta.file_type();
    Ok(if t.is_block_device() {
        Found::BlockDevice
    } else if t.is_file() {
        Found::RegularFile {
            ours: starts_with_magic(path)?,
            allocated: meta.blocks() * 512,
        }
    } else if t.is_dir() {
        Found::Directory
    } else if t.is_char_device() {
        Found::Other("character device")
    } else if t.is_fifo() {
        Found::Other("FIFO")
    } else if t.is_socket() {
        Found::Other("socket")
    } else {
        Found::Other("special file")
    })
}

fn starts_with_magic(path: &Path) -> Result<bool> {
    let io = crate::io_err(format!(
        "reading the start of --target {} to see whether rftune created it",
        path.display()
    ));
    let mut head = Vec::with_capacity(MAGIC.len());
    std::fs::File::open(path)
        .and_then(|f| f.take(MAGIC.len() as u64).read_to_end(&mut head))
        .map_err(io)?;
    Ok(head == MAGIC)
}

/// Bytes the layout of a file target at `size` bytes of data still has to allocate.
pub fn to_allocate(kind: TargetKind, size: u64) -> u64 {
    let end = HEADER_BYTES.saturating_add(size);
    match kind {
        TargetKind::Device => 0,
        TargetKind::NewFile => end,
        TargetKind::OwnFile { allocated } | TargetKind::Overwrite { allocated } => end.saturating_sub(allocated),
    }
}

/// Free space a file target leaves on its filesystem: 1% of the filesystem and at least
/// 256 MiB, for the results, logs and everything else living there.
pub fn margin(total: u64) -> u64 {
    (total / 100).max(256 << 20)
}

/// Refuses a layout of `needed` bytes that would leave less than [`margin`] free on a
/// filesystem with `available` of `total` bytes free to unprivileged users.
pub fn check_space(path: &Path, size: u64, needed: u64, available: u64, total: u64) -> Result<()> {
    let keep = margin(total);
    if needed.saturating_add(keep) <= available {
        return Ok(());
    }
    Err(Error::Refused(format!(
        "laying out --target {} for --size {} needs {} of free space (plus {} that must stay \
         free), but only {} is available; choose a smaller --size, free some space, or put the \
         target on a filesystem with more room",
        path.display(),
        crate::units::format_size(size),
        crate::units::approx_size(needed),
        crate::units::approx_size(keep),
        crate::units::approx_size(available)
    )))
}

/// Where to measure the free space for a file target: its directory when rftune will create it,
/// else the file itself.
pub fn filesystem_of(path: &Path, kind: TargetKind) -> &Path {
    if kind == TargetKind::NewFile {
        path.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    } else {
        path
    }
}

/// Makes a file target ready for fio at `size` bytes of data: creates it exclusively
/// ([`TargetKind::NewFile`]) or opens it, writes the header (new files and `--overwrite`), and lays
/// the data region out with written (not sparse) data up to `HEADER_BYTES + size`, so fio
/// neither rewrites the file from byte 0 nor reads holes. Each 4 KiB block differs from every
/// other, so a deduplicating or compressing drive cannot shortcut the benchmark. Stops early on
/// `stop`. A file it created is removed again when it fails, so an error leaves no partial file.
pub fn prepare(path: &Path, kind: TargetKind, size: u64, stop: &Stop) -> Result<()> {
    let new = kind == TargetKind::NewFile;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(new)
        .open(path)
        .map_err(crate::io_err(if new {
            format!("creating --target {} (it must not exist yet)", path.display())
        } else {
            format!("opening --target {} for writing", path.display())
        }))?;
    let laid_out = lay_out(&file, path, kind, size, stop);
    if laid_out.is_err() && new {
        drop(file);
        let _ = std::fs::remove_file(path);
    }
    laid_out
}

fn lay_out(file: &std::fs::File, path: &Path, kind: TargetKind, size: u64, stop: &Stop) -> Result<()> {
    let p = path.display();
    if matches!(kind, TargetKind::NewFile | TargetKind::Overwrite { .. }) {
        file.write_all_at(&header(&crate::utc_now()), 0)
            .map_err(crate::io_err(format!("writing rftune's header to {p}")))?;
    }
    let end = HEADER_BYTES.checked_add(size).ok_or_else(|| {
        Error::BadInput(format!(
            "--target {p}: a size of {size} bytes plus the header overflows"
        ))
    })?;
    let mut pos = file
        .metadata()
        .map_err(crate::io_err(format!("reading the size of {p}")))?
        .len()
        .max(HEADER_BYTES);
    let mut chunk = pattern(LAYOUT_CHUNK);
    while pos < end {
        if stop.requested() {
            return Err(Error::Interrupted(format!("laying out {p}")));
        }
        let n = (end - pos).min(LAYOUT_CHUNK as u64) as usize;
        for (i, block) in chunk[..n].chunks_mut(4096).enumerate() {
            let stamp = (pos / 4096 + i as u64).to_le_bytes();
            let k = stamp.len().min(block.len());
            block[..k].copy_from_slice(&stamp[..k]);
        }
        file.write_all_at(&chunk[..n], pos).map_err(crate::io_err(format!(
            "laying out --target {p} ({} of {} bytes written)",
            pos - HEADER_BYTES,
            size
        )))?;
        pos += n as u64;
    }
    file.sync_all()
        .map_err(crate::io_err(format!("flushing --target {p} to disk")))
}

/// Bytes written per call while laying out a target.
const LAYOUT_CHUNK: usize = 1 << 20;

/// `len` pseudo-random bytes (xorshift64*): incompressible, cheap, reproducible.
fn pattern(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(path: &str, in_dev: bool, found: Found) -> String {
        decide(Path::new(path), in_dev, &found, false).unwrap_err().to_string()
    }

    fn temp_dir(tag: &str) -> PathBuf {
        // Kept on drop: the test removes it.
        let dir = tempfile::Builder::new().prefix(tag).tempdir().unwrap().keep();
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn under_dev_sees_through_dot_dot_and_relative_paths() {
        assert!(under_dev(Path::new("/dev/nvme0n1")));
        assert!(under_dev(Path::new("/dev/disk/by-id/nvme-x")));
        assert!(under_dev(Path::new("/tmp/../dev/nvme9n1")));
        assert!(!under_dev(Path::new("/var/tmp/rftune.fio")));
        assert!(!under_dev(Path::new("/device/x")), "a prefix of a name is not /dev");
        assert!(
            !under_dev(Path::new("relative/x.fio")),
            "tests run in the crate's directory"
        );
    }

    #[test]
    fn under_dev_only_block_devices_are_accepted() {
        let dir = Found::Missing {
            parent: Parent::Directory,
        };
        let e = refused("/dev/nvme9n1", true, dir);
        assert!(
            e.contains("/dev/nvme9n1 does not exist") && e.contains("existing block device"),
            "{e}"
        );
        let e = refused("/dev/null", true, Found::Other("character device"));
        assert!(e.contains("character device, not a block device"), "{e}");
        let e = refused(
            "/dev/shm/x",
            true,
            Found::RegularFile {
                ours: true,
                allocated: 0,
            },
        );
        assert!(e.contains("regular file, not a block device"), "{e}");
        assert_eq!(
            decide(Path::new("/dev/nvme0n1"), true, &Found::BlockDevice, false).unwrap(),
            TargetKind::Device
        );
    }

    #[test]
    fn a_file_needs_an_existing_directory() {
        let e = refused(
            "/nonexistent/dir/x.fio",
            false,
            Found::Missing {
                parent: Parent::Missing,
            },
        );
        assert!(
            e.contains("the directory /nonexistent/dir does not exist; create it first"),
            "{e}"
        );
        let e = refused(
            "/etc/passwd/x.fio",
            false,
            Found::Missing {
                parent: Parent::NotADirectory,
            },
        );
        assert!(e.contains("/etc/passwd is not a directory"), "{e}");
        let new = Found::Missing {
            parent: Parent::Directory,
        };
        assert_eq!(
            decide(Path::new("x.fio"), false, &new, false).unwrap(),
            TargetKind::NewFile
        );
        assert!(refused("/var/tmp", false, Found::Directory).contains("/var/tmp/rftune.fio"));
        assert!(refused("/run/x.sock", false, Found::Other("socket")).contains("is a socket"));
    }

    #[test]
    fn a_user_file_is_refused_unless_overwrite_and_rftunes_own_file_is_reused() {
        let user = Found::RegularFile {
            ours: false,
            allocated: 4096,
        };
        let e = refused("/data/db.bin", false, user.clone());
        assert!(
            e.contains("/data/db.bin already exists and was not created by rftune") && e.contains("--overwrite"),
            "{e}"
        );
        assert_eq!(
            decide(Path::new("/data/db.bin"), false, &user, true).unwrap(),
            TargetKind::Overwrite { allocated: 4096 }
        );
        let own = Found::RegularFile {
            ours: true,
            allocated: 8192,
        };
        assert_eq!(
            decide(Path::new("/var/tmp/r.fio"), false, &own, false).unwrap(),
            TargetKind::OwnFile { allocated: 8192 }
        );
    }

    #[test]
    fn prepare_writes_the_header_lays_out_the_data_and_never_clobbers() {
        let dir = temp_dir("prepare");
        let file = dir.join("t.fio");
        let go = Stop::default();
        prepare(&file, TargetKind::NewFile, 3 << 20, &go).unwrap();
        let bytes = std::fs::read(&file).unwrap();
        assert_eq!(bytes.len() as u64, HEADER_BYTES + (3 << 20));
        assert!(bytes.starts_with(MAGIC));
        assert!(
            bytes[HEADER_BYTES as usize..].iter().filter(|b| **b == 0).count() < 3 << 15,
            "data, not zeros"
        );
        let blocks: std::collections::HashSet<&[u8]> = bytes[HEADER_BYTES as usize..].chunks(4096).collect();
        assert_eq!(blocks.len(), 3 << 8, "every 4 KiB block differs");
        assert!(matches!(observe(&file).unwrap(), Found::RegularFile { ours: true, .. }));
        let e = prepare(&file, TargetKind::NewFile, 1 << 20, &go)
            .unwrap_err()
            .to_string();
        assert!(e.contains("it must not exist yet"), "{e}");
        assert!(file.exists(), "a file prepare did not create is never removed");
        // A larger size extends rftune's file after the data already there.
        prepare(&file, TargetKind::OwnFile { allocated: 0 }, 4 << 20, &go).unwrap();
        let grown = std::fs::read(&file).unwrap();
        assert_eq!(grown.len() as u64, HEADER_BYTES + (4 << 20));
        assert_eq!(grown[..bytes.len()], bytes[..]);
        // --overwrite puts the header on a user's file.
        let user = dir.join("user.bin");
        std::fs::write(&user, b"precious").unwrap();
        prepare(&user, TargetKind::Overwrite { allocated: 0 }, 1 << 20, &go).unwrap();
        assert!(std::fs::read(&user).unwrap().starts_with(MAGIC));
        // Stopped while laying out: the file it created is gone again.
        let stop = Stop::default();
        stop.request();
        let stopped = dir.join("stopped.fio");
        let e = prepare(&stopped, TargetKind::NewFile, 8 << 20, &stop).unwrap_err();
        assert!(matches!(e, Error::Interrupted(_)), "{e}");
        assert!(!stopped.exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn space_is_checked_with_a_margin_against_what_is_still_to_allocate() {
        let gib = 1u64 << 30;
        assert_eq!(margin(100 * gib), gib);
        assert_eq!(margin(gib), 256 << 20);
        assert_eq!(to_allocate(TargetKind::NewFile, 4 * gib), 4 * gib + HEADER_BYTES);
        assert_eq!(to_allocate(TargetKind::OwnFile { allocated: 5 * gib }, 4 * gib), 0);
        assert_eq!(
            to_allocate(TargetKind::Overwrite { allocated: gib }, 4 * gib),
            3 * gib + HEADER_BYTES
        );
        let p = Path::new("/var/tmp/r.fio");
        assert!(check_space(p, 4 * gib, 4 * gib, 6 * gib, 100 * gib).is_ok());
        let e = check_space(p, 4 * gib, 4 * gib, 4 * gib + (512 << 20), 100 * gib)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--target /var/tmp/r.fio for --size 4 GiB needs 4.0 GiB of free space")
                && e.contains("plus 1.0 GiB that must stay free")
                && e.contains("only 4.5 GiB is available"),
            "{e}"
        );
        let e = check_space(p, 500 << 40, 500 << 40, 76 * gib, 250 * gib)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("500.0 TiB of free space") && e.contains("smaller --size"),
            "{e}"
        );
    }

    #[test]
    fn observe_tells_files_directories_and_missing_parents_apart() {
        let dir = temp_dir("observe");
        let file = dir.join("f");
        std::fs::write(&file, b"data").unwrap();
        assert!(matches!(
            observe(&file).unwrap(),
            Found::RegularFile { ours: false, .. }
        ));
        assert_eq!(observe(&dir).unwrap(), Found::Directory);
        assert_eq!(
            observe(&dir.join("new")).unwrap(),
            Found::Missing {
                parent: Parent::Directory
            }
        );
        assert_eq!(
            observe(&dir.join("no/new")).unwrap(),
            Found::Missing {
                parent: Parent::Missing
            }
        );
        assert_eq!(
            observe(&file.join("new")).unwrap(),
            Found::Missing {
                parent: Parent::NotADirectory
            }
        );
        assert_eq!(
            observe(Path::new("/dev/null")).unwrap(),
            Found::Other("character device")
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn where_only_files_may_be_benchmarked_devices_and_user_files_are_refused() {
        let why = "files only here";
        let files_only = |path: &str, found: Found| {
            decide_files_only(Path::new(path), lexically_under_dev(Path::new(path)), &found, why)
        };
        let new = Found::Missing {
            parent: Parent::Directory,
        };
        assert_eq!(files_only("/var/tmp/r.fio", new.clone()).unwrap(), TargetKind::NewFile);
        let own = Found::RegularFile {
            ours: true,
            allocated: 9,
        };
        assert_eq!(
            files_only("/var/tmp/r.fio", own).unwrap(),
            TargetKind::OwnFile { allocated: 9 }
        );
        let user = Found::RegularFile {
            ours: false,
            allocated: 9,
        };
        let e = files_only("/data/db.bin", user).unwrap_err().to_string();
        assert!(
            e.contains("/data/db.bin already exists and was not created by rftune") && !e.contains("--overwrite"),
            "{e}"
        );
        for (path, found) in [
            ("/dev/nvme0n1", Found::BlockDevice),
            ("/dev/null", Found::Other("special file")),
            ("/tmp/../dev/x", new),
            ("/var/tmp", Found::Directory),
        ] {
            let e = files_only(path, found).unwrap_err().to_string();
            assert!(e.ends_with(": files only here"), "{path}: {e}");
        }
        assert!(lexically_under_dev(Path::new("/dev/./sda")) && !lexically_under_dev(Path::new("dev/sda")));
    }
}
