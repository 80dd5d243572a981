//! Safety checks before fio writes to a raw block device: can it be opened exclusively, is it
//! mounted (or a partition of it), does it back `/`, is it held by device-mapper/MD, does it
//! carry a filesystem, LVM, MD or partition-table signature, and does the serial the user
//! confirmed match. The checks are pure functions over a mount table and byte buffers, plus a
//! thin layer that reads /proc and /sys.
//!
//! The exclusive open ([`claim`], `O_EXCL` on a block device) is the kernel's own answer to "is
//! anything using this?": it fails with EBUSY while the device or one of its partitions is
//! mounted in any mount namespace (another container's included), is an LVM physical volume or
//! MD member in use, or is claimed by another exclusive opener. /proc/self/mounts only shows
//! this process's namespace. Held for the length of a run, the claim also keeps anyone from
//! mounting the device meanwhile; fio's own, non-exclusive opens are unaffected.
//!
//! Signatures looked for: ext2/3/4 (0xEF53 at 0x438), XFS (`XFSB` at 0), btrfs (`_BHRfS_M` at
//! 0x10040), swap (`SWAPSPACE2`/`SWAP-SPACE` ending at 4096), LVM2 PV (`LABELONE` at the start
//! of any of the first four 512-byte sectors), MD superblocks 1.1 (at 0), 1.2 (at 4096), 0.90
//! (64 KiB-aligned, 64 KiB before the end) and 1.0 (4 KiB-aligned, 8 KiB before the end), magic
//! 0xa92b4efc little-endian, NTFS (`NTFS    ` at 3), FAT (`FAT` at 54 or 82), ISO 9660
//! (`CD001` at 0x8001), GPT (`EFI PART` at 512) and an MBR partition table (0x55AA at 510 with a
//! non-empty entry). Not covered: ZFS, bcache, LUKS2 secondary headers and other exotica (wipefs
//! knows more); the "in use" checks (mounts, holders) catch most of those anyway.

use crate::{Error, Result};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Bytes read from the start of a device for [`head_signatures`].
pub const HEAD_BYTES: usize = 0x10040 + 8;

/// One mount-table entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// What is mounted (`/dev/nvme0n1p1`).
    pub source: String,
    /// Where.
    pub target: String,
    /// Filesystem type.
    pub fstype: String,
}

/// Parses /proc/self/mounts (octal escapes such as `\040` decoded).
pub fn parse_mounts(text: &str) -> Vec<Mount> {
    fn unescape(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
                out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
                i += 4;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some(Mount {
                source: unescape(f.next()?),
                target: unescape(f.next()?),
                fstype: f.next()?.to_owned(),
            })
        })
        .collect()
}

/// Mounts whose source is one of `devices` (the disk and its partitions, as /dev paths).
pub fn mounts_of<'a>(mounts: &'a [Mount], devices: &[PathBuf]) -> Vec<&'a Mount> {
    mounts
        .iter()
        .filter(|m| {
            let src = Path::new(&m.source);
            let real = std::fs::canonicalize(src).unwrap_or_else(|_| src.to_owned());
            devices.iter().any(|d| d == src || *d == real)
        })
        .collect()
}

fn at(buf: &[u8], offset: usize, magic: &[u8]) -> bool {
    buf.get(offset..offset + magic.len()) == Some(magic)
}

const MD_MAGIC: [u8; 4] = 0xa92b_4efc_u32.to_le_bytes();

/// Signatures found in the first bytes of a device (pass at least [`HEAD_BYTES`] when the
/// device is that large).
pub fn head_signatures(head: &[u8]) -> Vec<&'static str> {
    let mut found = Vec::new();
    if at(head, 0x438, &0xEF53u16.to_le_bytes()) {
        found.push("ext2/3/4 filesystem");
    }
    if at(head, 0, b"XFSB") {
        found.push("XFS filesystem");
    }
    if at(head, 0x10040, b"_BHRfS_M") {
        found.push("btrfs filesystem");
    }
    if at(head, 4086, b"SWAPSPACE2") || at(head, 4086, b"SWAP-SPACE") {
        found.push("swap space");
    }
    if (0..4).any(|s| at(head, s * 512, b"LABELONE")) {
        found.push("LVM physical volume");
    }
    if at(head, 0, &MD_MAGIC) {
        found.push("MD RAID member (superblock 1.1)");
    }
    if at(head, 4096, &MD_MAGIC) {
        found.push("MD RAID member (superblock 1.2)");
    }
    if at(head, 3, b"NTFS    ") {
        found.push("NTFS filesystem");
    }
    if at(head, 54, b"FAT") || at(head, 82, b"FAT32") {
        found.push("FAT filesystem");
    }
    if at(head, 0x8001, b"CD001") {
        found.push("ISO 9660 filesystem");
    }
    if at(head, 512, b"EFI PART") {
        found.push("GPT partition table");
    } else if at(head, 510, &[0x55, 0xAA]) && head.get(446..510).is_some_and(|e| e.iter().any(|b| *b != 0)) {
        found.push("MBR partition table");
    }
    found
}

/// Offsets of end-relative MD superblocks for a device of `size` bytes: 0.90 and 1.0.
pub fn md_tail_offsets(size: u64) -> [(u64, &'static str); 2] {
    [
        (
            (size & !(64 * 1024 - 1)).saturating_sub(64 * 1024),
            "MD RAID member (superblock 0.90)",
        ),
        (
            size.saturating_sub(8 * 1024) & !(4 * 1024 - 1),
            "MD RAID member (superblock 1.0)",
        ),
    ]
}

/// Reads the signatures of a device or file: the head and the end-relative MD superblocks.
pub fn read_signatures(path: &Path, size: u64) -> Result<Vec<&'static str>> {
    use std::io::{Read, Seek, SeekFrom};
    let io = |what: &str| crate::io_err(format!("{what} {}", path.display()));
    let mut f = std::fs::File::open(path).map_err(io("opening"))?;
    let mut head = Vec::with_capacity(HEAD_BYTES);
    (&mut f)
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(io("reading"))?;
    let mut found = head_signatures(&head);
    for (offset, name) in md_tail_offsets(size) {
        if size >= 128 * 1024 && offset >= 4096 {
            let mut magic = [0u8; 4];
            f.seek(SeekFrom::Start(offset)).map_err(io("seeking in"))?;
            if f.read_exact(&mut magic).is_ok() && magic == MD_MAGIC {
                found.push(name);
            }
        }
    }
    Ok(found)
}

/// What the checks found about a block device.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Findings {
    /// Kernel name, e.g. `nvme0n1`.
    pub name: String,
    /// Serial (or WWID) from sysfs.
    pub serial: Option<String>,
    /// Mounts of the device or its partitions.
    pub mounted: Vec<String>,
    /// Whether it, or a partition of it, holds `/`.
    pub backs_root: bool,
    /// Device-mapper/MD devices stacked on it (sysfs `holders`).
    pub holders: Vec<String>,
    /// Signatures found.
    pub signatures: Vec<&'static str>,
}

/// The user's explicit permission to destroy data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Consent {
    /// `--destroy-data`.
    pub destroy_data: bool,
    /// `--confirm-serial`.
    pub confirm_serial: Option<String>,
}

/// Refuses a device that is in use whatever the user says: it backs `/`, it or a partition is
/// mounted, or device-mapper/MD devices are stacked on it. Writing under a live filesystem
/// corrupts it.
pub fn in_use(f: &Findings) -> Result<()> {
    let dev = &f.name;
    if f.backs_root {
        return Err(Error::Refused(format!("/dev/{dev} holds the root filesystem")));
    }
    if !f.mounted.is_empty() {
        return Err(Error::Refused(format!(
            "/dev/{dev} is mounted ({}); unmount it first",
            f.mounted.join(", ")
        )));
    }
    if !f.holders.is_empty() {
        return Err(Error::Refused(format!(
            "/dev/{dev} is in use by {} (device-mapper/MD); remove those first",
            f.holders.join(", ")
        )));
    }
    Ok(())
}

/// The checks before a device's data is destroyed by other means than fio (an NVMe namespace
/// deleted): `path` must be a block device, claimable exclusively with `open` ([`claim_with`]),
/// and not [`in_use`]. The claim is released on return.
pub fn ensure_unused(path: &Path, open: impl FnOnce(&Path) -> std::io::Result<std::fs::File>) -> Result<()> {
    if !is_block_device(path) {
        return Err(Error::Refused(format!(
            "{} is not a block device on this host, so rftune cannot check that nothing uses it \
             before destroying its data; check that it exists under that name here (lsblk, nvme \
             list) and run again",
            path.display()
        )));
    }
    let _claim = claim_with(path, open)?;
    in_use(&inspect(path)?)
}

/// Decides whether a run that `writes` may use the device. Mounted devices, devices in use by
/// device-mapper/MD and the device backing `/` are refused outright (writing under a live
/// filesystem corrupts it whatever the user says); any other write needs `--destroy-data` and
/// `--confirm-serial` equal to the device's serial. Read-only tests are allowed.
pub fn decide(f: &Findings, writes: bool, consent: &Consent) -> Result<()> {
    if !writes {
        return Ok(());
    }
    in_use(f)?;
    let dev = &f.name;
    let what = if f.signatures.is_empty() {
        "no known signature".to_owned()
    } else {
        format!("it holds: {}", f.signatures.join(", "))
    };
    if !consent.destroy_data {
        return Err(Error::Refused(format!(
            "writing to /dev/{dev} destroys its data ({what}); pass --destroy-data and --confirm-serial SERIAL to go ahead, or use a file target"
        )));
    }
    match (&f.serial, &consent.confirm_serial) {
        (Some(serial), Some(given)) if serial.trim() == given.trim() => Ok(()),
        (None, _) => Err(Error::Refused(format!(
            "cannot read the serial of /dev/{dev} to confirm it (no sysfs serial or wwid)"
        ))),
        (Some(serial), Some(given)) => Err(Error::Refused(format!(
            "--confirm-serial {given} does not match /dev/{dev}'s serial {serial}"
        ))),
        (Some(_), None) => Err(Error::Refused(format!(
            "--destroy-data needs --confirm-serial with /dev/{dev}'s serial ({what})"
        ))),
    }
}

/// An exclusive hold on a block device: while it lives, the kernel refuses to mount the device
/// or let anything else claim it exclusively.
#[derive(Debug)]
pub struct Claim {
    _file: std::fs::File,
    path: PathBuf,
}

impl Claim {
    /// The device claimed.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Opens `path` read-only with `O_EXCL`: for a block device, Linux fails with EBUSY when the
/// device is mounted or held anywhere; for other files the flag means nothing without
/// `O_CREAT`.
pub fn open_exclusive(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
}

/// Claims `path` with `open` ([`open_exclusive`], or a stand-in in tests): EBUSY becomes a
/// refusal saying what holds such devices and what to do.
pub fn claim_with(path: &Path, open: impl FnOnce(&Path) -> std::io::Result<std::fs::File>) -> Result<Claim> {
    let p = path.display();
    match open(path) {
        Ok(file) => Ok(Claim {
            _file: file,
            path: path.to_owned(),
        }),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Err(Error::Refused(format!(
            "{p} is in use: the kernel refused to open it exclusively (EBUSY), so it or one of its \
             partitions is mounted (perhaps in another mount namespace or container) or held by \
             LVM, MD, multipath or another program; unmount it or stop what holds it (see lsblk {p} \
             and the device's holders under /sys/class/block), then run again"
        ))),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => Err(Error::Io {
            what: format!("opening {p} exclusively to check that nothing uses it (raw devices need root)"),
            source: e,
        }),
        Err(e) => Err(Error::Io {
            what: format!("opening {p} exclusively to check that nothing uses it"),
            source: e,
        }),
    }
}

/// [`claim_with`] using [`open_exclusive`].
pub fn claim(path: &Path) -> Result<Claim> {
    claim_with(path, open_exclusive)
}

/// Everything that must hold before the storage benchmark writes to the block device `path`:
/// the exclusive claim (with `open`), then [`inspect`] and [`decide`]. Returns the claim, to be
/// held until the writing is done; a run that only reads needs none.
pub fn check_for_writing(
    path: &Path,
    writes: bool,
    consent: &Consent,
    open: impl FnOnce(&Path) -> std::io::Result<std::fs::File>,
) -> Result<Option<Claim>> {
    if !writes {
        return Ok(None);
    }
    let claim = claim_with(path, open)?;
    decide(&inspect(path)?, true, consent)?;
    Ok(Some(claim))
}

/// Whether `path` is a block device.
pub fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

fn sysfs_trim(p: impl AsRef<Path>) -> Option<String> {
    let s = std::fs::read_to_string(p).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}

/// Gathers [`Findings`] for a block device from /proc/self/mounts and /sys.
pub fn inspect(path: &Path) -> Result<Findings> {
    let meta = std::fs::metadata(path).map_err(crate::io_err(format!("reading {}", path.display())))?;
    let rdev = meta.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}"))
        .map_err(crate::io_err(format!("finding {} in /sys", path.display())))?;
    let name = sys
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The device and its partitions (subdirectories with a `partition` file), as /dev paths.
    let mut parts = vec![sys.clone()];
    parts.extend(
        std::fs::read_dir(&sys)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("partition").exists()),
    );
    let devs: Vec<PathBuf> = parts
        .iter()
        .filter_map(|p| p.file_name())
        .map(|n| Path::new("/dev").join(n))
        .collect();
    let mounts = parse_mounts(&std::fs::read_to_string("/proc/self/mounts").unwrap_or_default());
    let mounted: Vec<String> = mounts_of(&mounts, &devs)
        .iter()
        .map(|m| format!("{} on {}", m.source, m.target))
        .collect();
    let root_dev = std::fs::metadata("/").map(|m| m.dev()).ok();
    let backs_root = root_dev.is_some_and(|d| {
        parts
            .iter()
            .any(|p| sysfs_trim(p.join("dev")).is_some_and(|mm| mm == format!("{}:{}", libc::major(d), libc::minor(d))))
    });
    let holders = parts
        .iter()
        .flat_map(|p| std::fs::read_dir(p.join("holders")).into_iter().flatten().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let serial = ["device/serial", "device/wwid", "wwid"]
        .iter()
        .find_map(|f| sysfs_trim(sys.join(f)));
    let size = sysfs_trim(sys.join("size"))
        .and_then(|s| s.parse::<u64>().ok())
        .map_or(0, |s| s * 512);
    Ok(Findings {
        name,
        serial,
        mounted,
        backs_root,
        holders,
        signatures: read_signatures(path, size)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(offset: usize, bytes: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; HEAD_BYTES];
        b[offset..offset + bytes.len()].copy_from_slice(bytes);
        b
    }

    #[test]
    fn head_signatures_are_recognised() {
        assert_eq!(head_signatures(&with(0x438, &[0x53, 0xEF])), ["ext2/3/4 filesystem"]);
        assert_eq!(head_signatures(&with(0, b"XFSB")), ["XFS filesystem"]);
        assert_eq!(head_signatures(&with(1024, b"LABELONE")), ["LVM physical volume"]);
        assert_eq!(
            head_signatures(&with(4096, &[0xfc, 0x4e, 0x2b, 0xa9])),
            ["MD RAID member (superblock 1.2)"]
        );
        assert_eq!(head_signatures(&with(0x10040, b"_BHRfS_M")), ["btrfs filesystem"]);
        assert_eq!(head_signatures(&with(512, b"EFI PART")), ["GPT partition table"]);
        assert!(head_signatures(&vec![0u8; HEAD_BYTES]).is_empty());
        assert!(head_signatures(&[]).is_empty(), "a short read is not a signature");
        // An MBR boot signature with an empty partition table is not a partition table.
        assert!(head_signatures(&with(510, &[0x55, 0xAA])).is_empty());
    }

    #[test]
    fn end_relative_md_superblocks_are_found_in_a_file_pretending_to_be_a_device() {
        let dir_tmp = tempfile::tempdir().unwrap();
        let dir = dir_tmp.path().to_path_buf();
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("fake-disk");
        let size = 10 * 1024 * 1024 + 12_345;
        for (offset, name) in md_tail_offsets(size) {
            let f = std::fs::File::create(&path).unwrap();
            f.set_len(size).unwrap();
            std::os::unix::fs::FileExt::write_all_at(&f, &MD_MAGIC, offset).unwrap();
            assert_eq!(read_signatures(&path, size).unwrap(), [name]);
        }
        assert_eq!(md_tail_offsets(1 << 20)[0].0, (1 << 20) - 65536);
        assert_eq!(md_tail_offsets(1 << 20)[1].0, (1 << 20) - 8192);
        assert!(!is_block_device(&path));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn mount_table_parsing_and_matching() {
        let table = "/dev/nvme0n1p2 / ext4 rw 0 0\n/dev/nvme1n1 /mnt/my\\040data xfs rw 0 0\nproc /proc proc rw 0 0\n";
        let m = parse_mounts(table);
        assert_eq!(m[1].target, "/mnt/my data");
        let hits = mounts_of(&m, &["/dev/nvme1n1".into()]);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].fstype, "xfs");
        assert!(mounts_of(&m, &["/dev/nvme2n1".into()]).is_empty());
    }

    fn busy(_: &Path) -> std::io::Result<std::fs::File> {
        Err(std::io::Error::from_raw_os_error(libc::EBUSY))
    }

    #[test]
    fn a_device_the_kernel_reports_busy_is_refused_with_what_to_do() {
        let e = claim_with(Path::new("/dev/nvme1n1"), busy).unwrap_err();
        assert!(matches!(e, Error::Refused(_)), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains("/dev/nvme1n1 is in use") && e.contains("another mount namespace") && e.contains("unmount"),
            "{e}"
        );
        let denied = claim_with(Path::new("/dev/nvme1n1"), |_| {
            Err(std::io::Error::from_raw_os_error(libc::EACCES))
        })
        .unwrap_err()
        .to_string();
        assert!(denied.contains("/dev/nvme1n1") && denied.contains("root"), "{denied}");
        let dir_tmp = tempfile::tempdir().unwrap();
        let dir = dir_tmp.path().to_path_buf();
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f");
        std::fs::write(&file, b"x").unwrap();
        let claim = claim_with(&file, open_exclusive).unwrap();
        assert_eq!(claim.path(), file.as_path());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn checks_for_writing_stop_at_a_busy_device_before_reading_it() {
        let consent = Consent {
            destroy_data: true,
            confirm_serial: Some("S".into()),
        };
        // The path does not exist: had the checks gone past the exclusive open, reading it
        // would have failed with an I/O error instead of the refusal.
        let e = check_for_writing(Path::new("/nonexistent/nvme9n1"), true, &consent, busy).unwrap_err();
        assert!(e.to_string().contains("is in use"), "{e}");
        let no_open = |_: &Path| -> std::io::Result<std::fs::File> { panic!("reads need no claim") };
        assert!(
            check_for_writing(Path::new("/nonexistent/nvme9n1"), false, &consent, no_open)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_namespace_to_delete_must_be_a_block_device_here() {
        for path in ["/nonexistent/nvme9n1", "/dev/null"] {
            let e = ensure_unused(Path::new(path), busy).unwrap_err().to_string();
            assert!(e.contains(path) && e.contains("not a block device"), "{e}");
        }
        let mounted = Findings {
            name: "nvme0n1".into(),
            mounted: vec!["/dev/nvme0n1p1 on /srv".into()],
            ..Findings::default()
        };
        let e = in_use(&mounted).unwrap_err().to_string();
        assert!(
            e.contains("/dev/nvme0n1 is mounted (/dev/nvme0n1p1 on /srv); unmount it first"),
            "{e}"
        );
        assert!(
            in_use(&Findings {
                name: "nvme0n1".into(),
                ..Findings::default()
            })
            .is_ok()
        );
    }

    #[test]
    fn refusals() {
        let clean = Findings {
            name: "nvme1n1".into(),
            serial: Some("S4X1NE0M".into()),
            ..Findings::default()
        };
        let yes = Consent {
            destroy_data: true,
            confirm_serial: Some("S4X1NE0M".into()),
        };
        assert!(decide(&clean, false, &Consent::default()).is_ok(), "reads are harmless");
        let e = decide(&clean, true, &Consent::default()).unwrap_err().to_string();
        assert!(e.contains("--destroy-data"), "{e}");
        assert!(decide(&clean, true, &yes).is_ok());
        let wrong = Consent {
            confirm_serial: Some("OTHER".into()),
            ..yes.clone()
        };
        assert!(
            decide(&clean, true, &wrong)
                .unwrap_err()
                .to_string()
                .contains("does not match")
        );
        let no_serial = Findings {
            serial: None,
            ..clean.clone()
        };
        assert!(decide(&no_serial, true, &yes).is_err());
        let signed = Findings {
            signatures: vec!["XFS filesystem"],
            ..clean.clone()
        };
        assert!(
            decide(&signed, true, &Consent::default())
                .unwrap_err()
                .to_string()
                .contains("XFS")
        );
        assert!(decide(&signed, true, &yes).is_ok());
        for refused in [
            Findings {
                mounted: vec!["/dev/nvme1n1p1 on /data".into()],
                ..clean.clone()
            },
            Findings {
                backs_root: true,
                ..clean.clone()
            },
            Findings {
                holders: vec!["dm-0".into()],
                ..clean.clone()
            },
        ] {
            assert!(
                decide(&refused, true, &yes).is_err(),
                "{refused:?} must be refused even with consent"
            );
        }
    }
}
