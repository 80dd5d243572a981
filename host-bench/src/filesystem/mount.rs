//! Which mounted file system a directory is on, and whether it is the one the user means to
//! test: its device number matched against the kernel's mount table (`/proc/self/mountinfo`,
//! read here or through a shell on a client), and the rule [`check`] applies. The hazard it
//! guards against is a mount point whose file system is not mounted: the run would then fill
//! the file system underneath (often `/`) and measure the wrong thing.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The mounted file system holding a directory, as the kernel's mount table describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileSystem {
    /// The kernel's name for its type: `ext4`, `xfs`, `tmpfs`, `nfs4`, `lustre`, `gpfs`.
    pub fs_type: String,
    /// What is mounted: a device, `server:/export`, a pool name.
    pub source: String,
    /// Where it is mounted.
    pub mount_point: String,
    /// The mount's options, then the file system's own (`rw,relatime` and `rw,size=…`).
    pub options: String,
    /// Its device number as `major:minor`.
    pub device: String,
}

/// What a directory and its parent are, as read on the machine that holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// The directory's path with symbolic links resolved.
    pub canonical: String,
    /// Its device number (`st_dev`).
    pub device: u64,
    /// Its parent's device number; a different one makes the directory a mount point.
    pub parent_device: u64,
    /// The text of `/proc/self/mountinfo`.
    pub mountinfo: String,
}

/// The major and minor numbers of a Linux `dev_t` (glibc's encoding, which the kernel's
/// `new_encode_dev` matches).
pub fn split_device(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

/// Undoes the octal escapes (`\040` for a space) the kernel writes in mount table paths.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)))
            .map(|d| d.iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0')));
        match octal.and_then(|v| u8::try_from(v).ok()) {
            Some(b) => {
                out.push(b);
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `path` is `mount_point` or below it.
fn under(path: &str, mount_point: &str) -> bool {
    mount_point == "/"
        || path == mount_point
        || path.strip_prefix(mount_point).is_some_and(|rest| rest.starts_with('/'))
}

/// The mount holding the directory `observed` describes: among the mount table's entries with
/// its device number, the one with the longest mount point above its path, the last one listed
/// when a mount point is mounted over. `None` when no entry matches (a mount namespace whose
/// table does not show it).
pub fn identify(observed: &Observed) -> Option<FileSystem> {
    let (major, minor) = split_device(observed.device);
    let device = format!("{major}:{minor}");
    let mut best: Option<FileSystem> = None;
    for line in observed.mountinfo.lines() {
        let Some((head, tail)) = line.split_once(" - ") else {
            continue;
        };
        let head: Vec<&str> = head.split_whitespace().collect();
        let tail: Vec<&str> = tail.split_whitespace().collect();
        let (Some(dev), Some(mount_point), Some(mount_options)) = (head.get(2), head.get(4), head.get(5)) else {
            continue;
        };
        let mount_point = unescape(mount_point);
        if *dev != device || !under(&observed.canonical, &mount_point) {
            continue;
        }
        if best.as_ref().is_some_and(|b| b.mount_point.len() > mount_point.len()) {
            continue;
        }
        best = Some(FileSystem {
            fs_type: tail.first().copied().unwrap_or_default().to_owned(),
            source: tail.get(1).map(|s| unescape(s)).unwrap_or_default(),
            options: match tail.get(2) {
                Some(superblock) => format!("{mount_options} ({superblock})"),
                None => (*mount_options).to_owned(),
            },
            mount_point,
            device: device.clone(),
        });
    }
    best
}

/// Whether `actual` is the type the user named: the same name, or a FUSE file system of that
/// name (`fuse.glusterfs` for `glusterfs`).
fn same_type(actual: &str, named: &str) -> bool {
    actual == named || actual.strip_prefix("fuse.") == Some(named)
}

/// Refuses a target that is not on the file system the user means: with `fs_type` named, one
/// of another type; without, one that is not a mount point of its own (same device as its
/// parent), which is what an unmounted mount point looks like. Returns the file system.
pub fn check(target: &Path, observed: &Observed, fs_type: Option<&str>, on: &str) -> Result<FileSystem> {
    let found = identify(observed).ok_or_else(|| {
        let (major, minor) = split_device(observed.device);
        Error::Refused(format!(
            "{} on {on}: no entry of the mount table has its device {major}:{minor}, so which file system \
             holds it cannot be told",
            target.display()
        ))
    })?;
    let what = format!(
        "{} on {on} is on {} ({} mounted at {})",
        target.display(),
        found.fs_type,
        found.source,
        found.mount_point
    );
    match fs_type {
        Some(named) if same_type(&found.fs_type, named) => Ok(found),
        Some(named) => Err(Error::Refused(format!(
            "{what}, not {named}: if the {named} file system is not mounted there, mount it; if the type is \
             what you mean to test, say --fs-type {}",
            found.fs_type
        ))),
        None if observed.device != observed.parent_device => Ok(found),
        None => Err(Error::Refused(format!(
            "{what}, the same file system as its parent directory: the target is not a mount point, which \
             is what an unmounted file system looks like, and the run would fill {}. Mount the file system \
             there, or name the type you expect with --fs-type (e.g. --fs-type {}) to test a directory \
             inside a mounted file system",
            found.mount_point, found.fs_type
        ))),
    }
}

/// A POSIX shell script printing what [`parse_observed`] reads about `dir`: its canonical path,
/// its and its parent's device numbers, then the mount table.
pub fn script(quoted_dir: &str) -> String {
    format!("cd -- {quoted_dir} || exit 3; pwd -P; stat -c %d . ..; echo --; cat /proc/self/mountinfo")
}

/// Parses the output of [`script`].
pub fn parse_observed(text: &str) -> Result<Observed> {
    let (head, mountinfo) = text.split_once("\n--\n").unwrap_or((text, ""));
    let mut lines = head.lines();
    let bad = || Error::Parse {
        what: "a directory's mount".into(),
        detail: format!("unexpected answer {:?}", head.chars().take(200).collect::<String>()),
    };
    let canonical = lines.next().ok_or_else(bad)?.to_owned();
    let mut dev = || lines.next().and_then(|l| l.trim().parse::<u64>().ok()).ok_or_else(bad);
    Ok(Observed {
        canonical,
        device: dev()?,
        parent_device: dev()?,
        mountinfo: mountinfo.to_owned(),
    })
}

/// What `dir` and its parent are on this machine.
pub fn observe_local(dir: &Path) -> Result<Observed> {
    use std::os::unix::fs::MetadataExt;
    let io = |what: &str| crate::io_err(format!("{what} {}", dir.display()));
    let canonical = std::fs::canonicalize(dir).map_err(io("resolving"))?;
    let device = std::fs::metadata(&canonical).map_err(io("reading"))?.dev();
    let parent = canonical.parent().unwrap_or(&canonical);
    let parent_device = std::fs::metadata(parent).map_err(io("reading the parent of"))?.dev();
    Ok(Observed {
        canonical: canonical.display().to_string(),
        device,
        parent_device,
        mountinfo: std::fs::read_to_string("/proc/self/mountinfo").map_err(io("reading the mount table for"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine's table, shortened: `/dev/shm` is mounted twice (the later one is seen),
    /// and a path with a space is escaped.
    const TABLE: &str = "24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334760k\n\
        25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683772k\n\
        27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n\
        30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683772k\n\
        41 27 0:45 / /mnt/my\\040pfs rw,noatime shared:7 - lustre 10.0.0.1@o2ib:/scratch rw,flock\n";

    fn observed(canonical: &str, device: u64, parent_device: u64) -> Observed {
        Observed {
            canonical: canonical.into(),
            device,
            parent_device,
            mountinfo: TABLE.into(),
        }
    }

    #[test]
    fn device_numbers_split_as_glibc_does() {
        assert_eq!(split_device(65024), (254, 0));
        assert_eq!(split_device(27), (0, 27));
        // major 259 minor 65536 (an NVMe partition numbered past 255): glibc's makedev.
        let (major, minor): (u64, u64) = (259, 65536);
        let dev = ((major & 0xfff) << 8) | (minor & 0xff) | ((minor & !0xff) << 12) | ((major & !0xfff) << 32);
        assert_eq!(split_device(dev), (major, minor));
    }

    #[test]
    fn the_mount_is_found_by_device_and_longest_mount_point() {
        let shm = identify(&observed("/dev/shm/bench", 27, 27)).unwrap();
        assert_eq!((shm.fs_type.as_str(), shm.mount_point.as_str()), ("tmpfs", "/dev/shm"));
        assert_eq!(shm.options, "rw,relatime (rw,size=24683772k)");
        assert_eq!(shm.device, "0:27");
        let root = identify(&observed("/dev/shmx/bench", 65024, 65024)).unwrap();
        assert_eq!((root.fs_type.as_str(), root.mount_point.as_str()), ("ext4", "/"));
        let lustre = identify(&observed("/mnt/my pfs", 45, 65024)).unwrap();
        assert_eq!(lustre.mount_point, "/mnt/my pfs");
        assert_eq!(lustre.source, "10.0.0.1@o2ib:/scratch");
        assert_eq!(identify(&observed("/x", 12345, 1)), None);
    }

    #[test]
    fn an_unmounted_mount_point_is_refused_unless_its_type_is_named() {
        let t = Path::new("/mnt/pfs");
        // /mnt/pfs on the root file system: what an unmounted mount point looks like.
        let e = check(t, &observed("/mnt/pfs", 65024, 65024), None, "this host").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("refused: /mnt/pfs on this host is on ext4 (/dev/vda mounted at /)"),
            "{text}"
        );
        assert!(
            text.contains("would fill /") && text.contains("--fs-type ext4"),
            "{text}"
        );
        let e = check(t, &observed("/mnt/pfs", 65024, 65024), Some("lustre"), "this host").unwrap_err();
        assert!(e.to_string().contains("not lustre"), "{e}");
        assert_eq!(
            check(t, &observed("/mnt/pfs", 65024, 65024), Some("ext4"), "this host")
                .unwrap()
                .fs_type,
            "ext4"
        );
        // A mount point of its own needs no name; a named type must still match.
        let mounted = observed("/mnt/my pfs", 45, 65024);
        assert_eq!(check(t, &mounted, None, "h").unwrap().fs_type, "lustre");
        assert!(check(t, &mounted, Some("nfs"), "h").is_err());
        assert!(same_type("fuse.glusterfs", "glusterfs") && !same_type("nfs4", "nfs"));
    }

    #[test]
    fn the_shell_script_reads_what_the_local_reader_reads() {
        let dir = std::env::temp_dir();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(script(&crate::exec::shell_quote(&dir.display().to_string()).unwrap()))
            .output()
            .unwrap();
        let shell = parse_observed(&String::from_utf8_lossy(&out.stdout)).unwrap();
        let local = observe_local(&dir).unwrap();
        assert_eq!(
            (shell.canonical.as_str(), shell.device, shell.parent_device),
            (local.canonical.as_str(), local.device, local.parent_device)
        );
        assert_eq!(identify(&shell), identify(&local));
        assert!(identify(&local).is_some(), "{local:?}");
        assert!(parse_observed("nonsense").is_err());
    }
}
